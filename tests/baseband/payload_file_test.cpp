// The payload file sink (whd-rx -o, the benches' end-to-end regions): the bytes
// written in pieces come back whole, and every failure names the file and is
// raised where the caller can hear it, a full disk included.
#include "file_bytes.hpp"
#include <whd/baseband/payload_sinks.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace {

namespace bb = whd::baseband;
namespace fs = std::filesystem;

std::vector<uint8_t> read_all(const fs::path& p)
{
  return whd::test::file_bytes(p);
}

/// The message of what `f` throws as std::runtime_error ("" when it throws nothing).
template <class F>
std::string thrown(F&& f)
{
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

/// Whether `dir` is on tmpfs (memory, as /dev/shm usually is).
bool on_tmpfs(const fs::path& dir)
{
  struct statfs sfs {};
  return ::statfs(dir.c_str(), &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
}

/// `n` bytes from a generator seeded with `seed`.
std::vector<uint8_t> random_bytes(std::size_t n, unsigned seed)
{
  std::mt19937 g(seed);
  std::vector<uint8_t> bytes(n);
  for (auto& b : bytes) {
    b = static_cast<uint8_t>(g());
  }
  return bytes;
}

/// A file of this process's own in the test folder: two test runs at once (two build
/// trees) must not write each other's files.
fs::path temp_file(const std::string& name) { return fs::path(testing::TempDir()) / (std::to_string(::getpid()) + "-" + name); }

TEST(payload_file_sink, pieces_of_every_size_come_back_whole)
{
  const fs::path path = temp_file("payload_file_sink_pieces.bin");
  const std::vector<uint8_t> bytes = random_bytes(3 << 20, 4100);
  {
    bb::payload_file_sink sink(path.string());
    std::size_t at = 0;
    for (std::size_t n = 0; at < bytes.size(); n = (n * 7 + 1) % 300000) { // empty, tiny and large pieces
      const std::size_t k = std::min(n, bytes.size() - at);
      sink.write(std::span<const uint8_t>(bytes.data() + at, k));
      at += k;
    }
    sink.close();
    sink.close(); // a second close does nothing
  }
  EXPECT_EQ(read_all(path), bytes);
  fs::remove(path);
}

TEST(payload_file_sink, large_writes_spread_over_threads_come_back_whole)
{
  // Writes from PARALLEL_FROM on go out in pieces at their offsets, several threads
  // at once; small ones between them are buffered: the file must be the bytes in order.
  // In the temporary folder, and in memory (tmpfs), where pwrite makes no pages ahead.
  std::vector<fs::path> paths{temp_file("payload_file_sink_parallel.bin")};
  if (fs::is_directory("/dev/shm")) {
    paths.push_back(fs::path("/dev/shm") / (std::to_string(::getpid()) + "-payload_file_sink_parallel.bin"));
  }
  const std::vector<uint8_t> bytes = random_bytes(40 << 20, 4101);
  // Every way of taking large writes; the file grows ahead of them and must be cut
  // back to what was written.
  const struct {
    unsigned threads;
    bb::payload_write method;
  } ways[] = {{1, bb::payload_write::map}, {2, bb::payload_write::map}, {5, bb::payload_write::map},
              {8, bb::payload_write::map}, {1, bb::payload_write::pwrite}, {4, bb::payload_write::pwrite},
              {2, bb::payload_write::split}, {8, bb::payload_write::split}, {0, bb::payload_write::automatic}};
  for (const fs::path& path : paths) {
    for (auto [threads, method] : ways) {
      {
        bb::payload_file_sink sink(path.string(), threads, method);
        // automatic: pwrite on a disk, automatic (pwrite or split, write by write) on tmpfs.
        if (method == bb::payload_write::automatic && !on_tmpfs(path.parent_path())) {
          method = bb::payload_write::pwrite;
        }
        EXPECT_EQ(sink.method(), method);
        std::size_t at = 0;
        for (std::size_t k = 0; at < bytes.size(); ++k) {
          const std::size_t n = std::min(k % 3 == 0 ? std::size_t(17) : bb::payload_file_sink::PARALLEL_FROM * (k % 7) + 12345, bytes.size() - at);
          sink.behind(k % 4 < 2); // heard only by the automatic way; the others keep theirs
          sink.write(std::span<const uint8_t>(bytes.data() + at, n));
          at += n;
        }
        EXPECT_EQ(sink.size(), bytes.size());
        EXPECT_EQ(sink.method(), method) << "the file took the way asked for to the end (a refused mapping falls back to pwrite)";
        sink.close();
      }
      EXPECT_EQ(read_all(path), bytes) << path << ", " << threads << " threads, " << bb::to_string(method);
    }
    fs::remove(path);
  }
}

TEST(payload_file_sink, the_automatic_way_is_pwrite_on_a_disk_and_split_only_while_writes_wait_on_tmpfs)
{
  // On tmpfs (/dev/shm) a write told that more wait behind it goes the split way:
  // its copiers' mapping grows the file ahead of the writes (sparse, cut back at
  // close); one told that none wait is pwritten, and the file holds no more than
  // what was written. On a disk the automatic way is pwrite whatever it is told.
  const fs::path shm = "/dev/shm/payload_file_sink_auto-" + std::to_string(::getpid()) + ".bin";
  if (!on_tmpfs("/dev/shm")) {
    GTEST_SKIP() << "/dev/shm is not tmpfs here";
  }
  const std::vector<uint8_t> bytes = random_bytes(2 * bb::payload_file_sink::PARALLEL_FROM + 777, 10);
  const std::size_t half = bytes.size() / 2; // each half a large write
  auto file_size = [&] {
    struct stat st {};
    EXPECT_EQ(::stat(shm.c_str(), &st), 0);
    return uint64_t(st.st_size);
  };
  for (const bool waiting : {false, true}) {
    {
      bb::payload_file_sink sink(shm.string());
      EXPECT_EQ(sink.method(), bb::payload_write::automatic);
      EXPECT_TRUE(sink.positioned());
      sink.behind(false);
      sink.write(std::span<const uint8_t>(bytes).first(half));
      EXPECT_EQ(file_size(), half) << "none waiting: pwritten, nothing ahead";
      sink.behind(waiting);
      sink.write(std::span<const uint8_t>(bytes).subspan(half));
      if (waiting) {
        EXPECT_GT(file_size(), bytes.size()) << "more waiting: split, the mapping's file grown ahead";
      } else {
        EXPECT_EQ(file_size(), bytes.size()) << "none waiting: pwritten, nothing ahead";
      }
      sink.close();
    }
    EXPECT_EQ(read_all(shm), bytes) << "waiting " << waiting;
  }
  fs::remove(shm);
  // On a disk (where the temporary folder is one): pwrite, told or not.
  const fs::path disk = temp_file("payload_file_sink_auto.bin");
  if (!on_tmpfs(disk.parent_path())) {
    bb::payload_file_sink sink(disk.string());
    sink.behind(true);
    EXPECT_EQ(sink.method(), bb::payload_write::pwrite);
    sink.close();
    fs::remove(disk);
  }
  EXPECT_FALSE(bb::payload_file_sink("/dev/null").positioned()); // a device: written in order
}

TEST(payload_file_sink, pwrite_into_tmpfs_makes_no_pages_ahead_of_the_writes)
{
  // On a disk the file is allocated ahead of the writes (and cut back at close); on
  // tmpfs that would make memory pages ahead, on the writer's thread: there the file
  // holds no more than what was written, at every point, and comes back whole.
  const fs::path shm = "/dev/shm/payload_file_sink_ahead-" + std::to_string(::getpid()) + ".bin";
  if (!on_tmpfs("/dev/shm")) {
    GTEST_SKIP() << "/dev/shm is not tmpfs here";
  }
  const std::vector<uint8_t> bytes = random_bytes(3 * bb::payload_file_sink::PARALLEL_FROM + 4321, 9);
  {
    bb::payload_file_sink sink(shm.string(), 0, bb::payload_write::pwrite);
    const std::size_t piece = bb::payload_file_sink::PARALLEL_FROM + 1000; // large writes: the ones that reserve
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      const std::size_t n = std::min(piece, bytes.size() - at);
      sink.write(std::span<const uint8_t>(bytes).subspan(at, n));
      struct stat st {};
      ASSERT_EQ(::stat(shm.c_str(), &st), 0);
      EXPECT_LE(uint64_t(st.st_size), sink.size()) << "after " << at + n << " bytes"; // (a small write waits in a buffer)
      EXPECT_LE(uint64_t(st.st_blocks) * 512, (sink.size() + 4095) / 4096 * 4096 + 4096) << "after " << at + n << " bytes";
    }
    sink.close();
  }
  EXPECT_EQ(read_all(shm), bytes);
  fs::remove(shm);
}

TEST(payload_file_sink, a_file_that_cannot_be_made_is_named)
{
  const std::string path = (fs::path(testing::TempDir()) / "no_such_dir" / "payload.bin").string();
  const std::string what = thrown([&] { bb::payload_file_sink sink(path); });
  EXPECT_NE(what.find(path), std::string::npos) << what;
  EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
}

TEST(payload_file_sink, a_full_disk_is_heard_at_the_latest_on_close)
{
  if (!fs::exists("/dev/full")) {
    GTEST_SKIP() << "no /dev/full on this system";
  }
  bb::payload_file_sink sink("/dev/full");
  const std::vector<uint8_t> bytes(100, 0x5A); // small enough to sit in the stdio buffer
  std::string what = thrown([&] { sink.write(bytes); });
  if (what.empty()) {
    what = thrown([&] { sink.close(); });
  }
  EXPECT_NE(what.find("/dev/full"), std::string::npos) << what;
  EXPECT_NE(what.find("No space left on device"), std::string::npos) << what;
}

TEST(payload_file_sink, writing_after_close_is_an_error)
{
  const fs::path path = temp_file("payload_file_sink_closed.bin");
  bb::payload_file_sink sink(path.string());
  sink.close();
  const std::vector<uint8_t> bytes(8, 1);
  EXPECT_NE(thrown([&] { sink.write(bytes); }).find(path.string()), std::string::npos);
  fs::remove(path);
}

} // namespace
