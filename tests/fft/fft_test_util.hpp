/// @file fft_test_util.hpp
/// References and measures shared by the FFT tests: a float64 DFT (O(N^2)) and a
/// float64 FFT, relative L2 error with the worst bin, seeded random inputs, and exact
/// binary16 conversions.
#pragma once

#include <whd/fft/fft512.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace whd::fft::test {

using cd = std::complex<double>;

/// The accuracy bound for every input type: relative L2 error of one
/// transform against float64 on the same input values (a float32 FFT lands near
/// 1e-7..3e-7 with correctly rounded twiddles).
inline constexpr double REL_L2_BOUND = 1e-6;

/// exp(sign * 2 pi i k / n) in double, with the angle reduced exactly first.
inline cd unit(long long k, long long n, int sign)
{
  const long long m = ((k % n) + n) % n;
  const double a = 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
  return {std::cos(a), sign * std::sin(a)};
}

/// Float64 DFT of x (forward: sign -1, unnormalised), O(N^2): the reference of references.
inline std::vector<cd> dft(const std::vector<cd>& x, int sign = -1)
{
  const auto n = static_cast<long long>(x.size());
  std::vector<cd> y(x.size());
  for (long long b = 0; b < n; ++b) {
    cd acc = 0.0;
    for (long long k = 0; k < n; ++k) {
      acc += x[static_cast<std::size_t>(k)] * unit(b * k, n, sign);
    }
    y[static_cast<std::size_t>(b)] = acc;
  }
  return y;
}

/// Float64 radix-2 FFT (forward: sign -1), for references over many transforms;
/// checked against dft() in the CPU tests.
inline std::vector<cd> fft64(std::vector<cd> x, int sign = -1)
{
  const std::size_t n = x.size();
  for (std::size_t i = 1, j = 0; i < n; ++i) {
    std::size_t bit = n >> 1;
    for (; (j & bit) != 0; bit >>= 1) {
      j ^= bit;
    }
    j ^= bit;
    if (i < j) {
      std::swap(x[i], x[j]);
    }
  }
  std::vector<cd> w(n / 2);
  for (std::size_t k = 0; k < n / 2; ++k) {
    w[k] = unit(static_cast<long long>(k), static_cast<long long>(n), sign);
  }
  for (std::size_t len = 2; len <= n; len <<= 1) {
    for (std::size_t i = 0; i < n; i += len) {
      for (std::size_t k = 0; k < len / 2; ++k) {
        const cd a = x[i + k], b = x[i + k + len / 2] * w[k * (n / len)];
        x[i + k] = a + b;
        x[i + k + len / 2] = a - b;
      }
    }
  }
  return x;
}

/// Relative L2 error of `got` against `ref` and where it is worst.
struct error_report {
  double rel_l2 = 0.0;
  std::size_t worst_index = 0;
  double worst_abs = 0.0;
  bool all_finite = true;
  std::string str() const
  {
    std::ostringstream o;
    o << "rel L2 " << rel_l2 << ", worst |err| " << worst_abs << " at index " << worst_index
      << (all_finite ? "" : ", NON-FINITE values (unwritten or NaN)");
    return o.str();
  }
};

template <class T>
error_report compare(const std::vector<T>& got, const std::vector<cd>& ref, std::size_t offset = 0)
{
  error_report e;
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const cd g(static_cast<double>(got[offset + i].real()), static_cast<double>(got[offset + i].imag()));
    if (!std::isfinite(g.real()) || !std::isfinite(g.imag())) {
      e.all_finite = false;
    }
    const double d = std::abs(g - ref[i]);
    num += d * d;
    den += std::norm(ref[i]);
    if (!(d <= e.worst_abs)) {
      e.worst_abs = d;
      e.worst_index = i;
    }
  }
  e.rel_l2 = den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
  if (!e.all_finite || !std::isfinite(e.rel_l2)) {
    e.rel_l2 = std::numeric_limits<double>::infinity();
  }
  return e;
}

/// A seeded generator; the test prints its seed so a failure can be replayed.
inline std::mt19937_64 seeded(std::uint64_t seed)
{
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::cout << "[ seed     ] " << seed << '\n';
  return std::mt19937_64(seed);
}

/// n uniform complex samples in [-1, 1)^2.
inline std::vector<cf32> random_cf32(std::mt19937_64& g, std::size_t n)
{
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<cf32> x(n);
  for (auto& s : x) {
    s = {u(g), u(g)};
  }
  return x;
}

/// float -> IEEE binary16, round to nearest even (normal and subnormal range).
inline std::uint16_t to_half(float f)
{
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const int exp = static_cast<int>((u >> 23) & 0xFFu) - 127 + 15;
  std::uint32_t mant = u & 0x7FFFFFu;
  if (exp >= 31) {
    return static_cast<std::uint16_t>(sign | 0x7C00u);
  }
  if (exp <= 0) {
    if (exp < -10) {
      return static_cast<std::uint16_t>(sign);
    }
    mant |= 0x800000u;
    const int shift = 14 - exp;
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u) != 0)) {
      ++h;
    }
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0)) {
    ++h;
  }
  return static_cast<std::uint16_t>(sign | h);
}

/// IEEE binary16 -> double (exact).
inline double from_half(std::uint16_t h)
{
  const int sign = (h & 0x8000) != 0 ? -1 : 1;
  const int exp = (h >> 10) & 0x1F;
  const int mant = h & 0x3FF;
  if (exp == 0) {
    return sign * std::ldexp(mant, -24);
  }
  if (exp == 31) {
    return mant == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  }
  return sign * std::ldexp(mant + 1024, exp - 25);
}

/// One transform's input as double.
inline std::vector<cd> to_cd(const cf32* x, std::size_t n = N)
{
  std::vector<cd> y(n);
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = {x[i].real(), x[i].imag()};
  }
  return y;
}

} // namespace whd::fft::test
