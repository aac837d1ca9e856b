/// @file false_alarm_sources.hpp
/// Captures that hold no frame, computed on demand from the sample index (random
/// access and thread-safe like a file, without holding them in memory): complex
/// Gaussian noise, tones, constants. For the false-alarm tests of both backends.
#pragma once

#include <whd/transport/capture.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <numbers>
#include <span>

namespace whd::test {

using cf32 = whd::cf32;

/// splitmix64: a counter-based generator, so sample n is a pure function of (seed, n).
inline uint64_t splitmix64(uint64_t x)
{
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// A source whose samples are computed on demand from their index (random access
/// and thread-safe like a file, without holding 10^7 samples in memory).
class function_source final : public whd::transport::sample_source {
public:
  function_source(uint64_t nof_samples, std::function<cf32(uint64_t)> sample)
      : size_(nof_samples), sample_(std::move(sample))
  {
  }
  uint64_t size() const override { return size_; }
  std::size_t read(uint64_t first, std::span<cf32> out) const override
  {
    const std::size_t n = first >= size_ ? 0 : std::size_t(std::min<uint64_t>(out.size(), size_ - first));
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = sample_(first + i);
    }
    return n;
  }
  whd::datatype type() const override { return whd::datatype::cf32_le; }
  std::size_t read_raw(uint64_t first, std::span<std::byte> out) const override
  {
    return read(first, std::span<cf32>(reinterpret_cast<cf32*>(out.data()), out.size() / sizeof(cf32)));
  }
  void release(uint64_t, uint64_t) const override {}

private:
  uint64_t size_;
  std::function<cf32(uint64_t)> sample_;
};

/// Complex white Gaussian noise of unit power: Box-Muller on two uniforms from
/// the hash of (seed, n).
inline cf32 gaussian_noise(uint64_t seed, uint64_t n)
{
  const uint64_t a = splitmix64(seed ^ (2 * n)), b = splitmix64(seed ^ (2 * n + 1));
  const double u1 = (double(a >> 11) + 1.0) * 0x1.0p-53; // (0, 1]
  const double u2 = double(b >> 11) * 0x1.0p-53;         // [0, 1)
  const double r = std::sqrt(-std::log(u1)); // E r^2 = 1: unit complex power
  const double ph = 2.0 * std::numbers::pi * u2;
  return {float(r * std::cos(ph)), float(r * std::sin(ph))};
}

/// e^{j 2 pi f n}, the phase reduced in double.
inline cf32 tone(double cycles_per_sample, uint64_t n)
{
  const double ph = 2.0 * std::numbers::pi * std::remainder(cycles_per_sample * double(n), 1.0);
  return {float(std::cos(ph)), float(std::sin(ph))};
}

} // namespace whd::test
