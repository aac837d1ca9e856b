#include "bench_util.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

namespace whd::rx_bench {

scratch_dir::scratch_dir(const std::string& tag)
{
  std::string name = (std::filesystem::temp_directory_path() / ("whd-bench-" + tag + "-XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr) {
    throw std::runtime_error("cannot create a scratch folder like " + name + " (set TMPDIR to a writable folder)");
  }
  path_ = name;
}

scratch_dir::~scratch_dir()
{
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

uint64_t bit_differences(std::span<const uint8_t> a, std::span<const uint8_t> b)
{
  const std::size_t m = std::min(a.size(), b.size());
  uint64_t n = 0;
  for (std::size_t i = 0; i < m; ++i) {
    n += uint64_t(std::popcount(unsigned(a[i] ^ b[i])));
  }
  return n + 8 * uint64_t(std::max(a.size(), b.size()) - m);
}

std::vector<uint8_t> read_bytes(const std::filesystem::path& path)
{
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    throw std::runtime_error("cannot read " + path.string());
  }
  return {std::istreambuf_iterator<char>(f), {}};
}

uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
  uint64_t x = seed ^ (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xBF58476D1CE4E5B9ull) ^ (c * 0x94D049BB133111EBull);
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  return x;
}

std::string format_value(const char* spec, double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::vector<baseband::located_frame> locate_all(const transport::sample_source& src, const baseband::rx_config& cfg)
{
  std::vector<baseband::located_frame> frames;
  baseband::frame_locator loc(cfg);
  uint64_t pos = 0;
  while (auto ev = loc.next(src, pos)) {
    pos = ev->resume;
    if (ev->frame) {
      frames.push_back(*ev->frame);
    }
  }
  return frames;
}

baseband::output_summary write_impaired_capture(const impaired_capture& c, const std::filesystem::path& base, datatype type,
                                                const std::string& description)
{
  baseband::capture_config cc;
  cc.mods = {c.mod};
  cc.nds = {c.nd};
  cc.nof_frames = c.nof_frames;
  cc.seed = c.seed;
  cc.impairments.snr_dB = c.snr_dB;
  cc.impairments.cfo_Hz = c.cfo_Hz;
  cc.impairments.nof_taps = c.taps;
  cc.impairments.random_phase = true;
  baseband::output_config oc;
  oc.base = base;
  oc.type = type;
  oc.description = description;
  return baseband::write_capture(cc, oc);
}

} // namespace whd::rx_bench
