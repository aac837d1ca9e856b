/// @file bench_util.hpp
/// Small pieces the cpu, ber and compare benchmarks share: a scratch folder,
/// a payload sink into a preallocated buffer, bit differences, a wall clock.
#pragma once

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

/// Seconds since `t0`.
inline double seconds_since(std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Whole file's bytes. @throws std::runtime_error when it cannot be read
std::vector<uint8_t> read_bytes(const std::filesystem::path& path);

} // namespace whd::rx_bench
