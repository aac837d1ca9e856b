/// @file bench_util.hpp
/// Small pieces the receive-chain benchmarks share: a scratch folder, a payload
/// sink into a preallocated buffer, bit differences, a wall clock, number
/// formatting, frame location once over a capture, and the generated capture.
#pragma once

#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/rx_types.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace whd::rx_bench {

/// A fresh folder under the temporary folder (mkdtemp), removed at scope exit.
class scratch_dir {
public:
  explicit scratch_dir(const std::string& tag);
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

private:
  std::filesystem::path path_;
};

/// Keeps the payload in a buffer reserved once, so repeated runs time no reallocation.
class buffer_sink final : public baseband::payload_sink {
public:
  explicit buffer_sink(std::size_t reserve) { bytes_.reserve(reserve); }
  void write(std::span<const uint8_t> b) override { bytes_.insert(bytes_.end(), b.begin(), b.end()); }
  void clear() noexcept { bytes_.clear(); }
  const std::vector<uint8_t>& bytes() const noexcept { return bytes_; }

private:
  std::vector<uint8_t> bytes_;
};

/// Bit differences over the common length, plus 8 per byte of length difference.
uint64_t bit_differences(std::span<const uint8_t> a, std::span<const uint8_t> b);

/// A seed for item (a, b, c) of a run seeded with `seed`: the streams of different items
/// are unrelated (a splitmix-style finaliser over the mixed words).
uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);

/// The wall clock the benchmarks time regions with.
using steady = std::chrono::steady_clock;

/// Seconds since `t0`.
inline double seconds_since(steady::time_point t0)
{
  return std::chrono::duration<double>(steady::now() - t0).count();
}

/// `v` formatted by `spec`, one printf conversion of a double ("%.2f").
std::string format_value(const char* spec, double v);

/// Whole file's bytes. @throws std::runtime_error when it cannot be read
std::vector<uint8_t> read_bytes(const std::filesystem::path& path);

/// Every frame of a source, located once (as both backends locate them).
std::vector<baseband::located_frame> locate_all(const transport::sample_source& src, const baseband::rx_config& cfg);

/// A generated benchmark capture: frames of one modulation through multipath, CFO,
/// a random carrier phase and noise.
struct impaired_capture {
  profile::modulation mod = profile::modulation::qam16;
  uint32_t nd = 1;          ///< data symbols per frame
  uint64_t nof_frames = 1;
  uint64_t seed = 1;        ///< the generator's master seed
  double snr_dB = 30.0;
  double cfo_Hz = 0.0;
  int taps = 1;             ///< multipath taps
};

/// Generates `c` and writes it as a SigMF capture of `type` samples at `base`.
/// @throws as baseband::write_capture
baseband::output_summary write_impaired_capture(const impaired_capture& c, const std::filesystem::path& base, datatype type,
                                                const std::string& description);

} // namespace whd::rx_bench
