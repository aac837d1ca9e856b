// capture_reader::release_mapped: pages of the mapped capture that were read
// leave the process's resident set when released (what lets a run over a capture
// larger than memory stay bounded), and reading them again still gives the file's
// bytes.
#include <whd/transport/capture.hpp>

#include "transport_test_util.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <numeric>

namespace {

namespace tr = whd::transport;

/// Resident pages of this process mapped from files (RssFile of /proc/self/status), bytes.
uint64_t rss_file_bytes()
{
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) {
    return 0;
  }
  char line[256];
  uint64_t kb = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long v = 0;
    if (std::sscanf(line, "RssFile: %llu kB", &v) == 1) {
      kb = v;
    }
  }
  std::fclose(f);
  return kb * 1024;
}

TEST(transport_mapped, released_pages_leave_the_resident_set_and_read_back_the_same)
{
  if (rss_file_bytes() == 0) {
    GTEST_SKIP() << "no RssFile in /proc/self/status on this system";
  }
  whd::test::temp_dir dir;
  constexpr std::size_t SAMPLES = std::size_t(32) << 20; // 64 MiB of ci8
  std::vector<uint8_t> bytes(2 * SAMPLES);
  std::iota(bytes.begin(), bytes.end(), uint8_t(0));
  whd::test::write_bytes(dir / "big.ci8", bytes.data(), bytes.size());
  tr::capture_reader reader(tr::open_capture(dir / "big.ci8"));
  const auto map = reader.mapped();
  if (map.empty()) {
    GTEST_SKIP() << "the file could not be mapped here";
  }
  ASSERT_EQ(map.size(), bytes.size());
  // Touch every page, as link packing does.
  const long page = ::sysconf(_SC_PAGESIZE);
  unsigned sum = 0;
  for (std::size_t i = 0; i < map.size(); i += std::size_t(page)) {
    sum += unsigned(map[i]);
  }
  const uint64_t before = rss_file_bytes();
  // Release all but the last 8 MiB of samples.
  const uint64_t keep_from = SAMPLES - (uint64_t(4) << 20);
  reader.release_mapped(0, keep_from);
  const uint64_t after = rss_file_bytes();
  EXPECT_GE(before, after + (uint64_t(48) << 20)) << "RssFile " << before << " -> " << after << " bytes (touch sum " << sum << ")";
  // A released page maps again on the next read, with the file's bytes.
  for (std::size_t i = 0; i < map.size(); i += 4093) {
    ASSERT_EQ(uint8_t(map[i]), bytes[i]) << "byte " << i;
  }
  // Ranges that are empty, reversed, past the end or not page-aligned are harmless.
  reader.release_mapped(10, 10);
  reader.release_mapped(100, 5);
  reader.release_mapped(SAMPLES - 3, SAMPLES * 4);
  reader.release_mapped(1, 3);
  EXPECT_EQ(uint8_t(map[2]), bytes[2]);
  EXPECT_EQ(uint8_t(map.back()), bytes.back());
}

TEST(transport_mapped, release_before_mapping_does_nothing)
{
  whd::test::temp_dir dir;
  std::vector<uint8_t> bytes(4096 * 4, 7);
  whd::test::write_bytes(dir / "small.ci8", bytes.data(), bytes.size());
  tr::capture_reader reader(tr::open_capture(dir / "small.ci8"));
  reader.release_mapped(0, 8192);
  std::vector<whd::cf32> out(8192);
  EXPECT_EQ(reader.read(0, out), out.size());
  EXPECT_EQ(out[100], whd::cf32(7, 7));
}

} // namespace
