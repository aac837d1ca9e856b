/// @file sample_codec.hpp
/// Conversion between the on-disk sample formats (profile §6) and cf32. Private to
/// the transport library: the capture reader decodes with it, the SigMF writer
/// encodes with it.
#pragma once

#include <whd/transport/sample_types.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>

namespace whd::transport::detail {

// Captures are little-endian and every target (x86-64, aarch64) is too, so a sample
// is decoded by memcpy. A big-endian port would add the byte swap here and only here.
static_assert(std::endian::native == std::endian::little, "capture I/O assumes a little-endian host");

/// Decode `out.size()` samples of type `t` from `in` (`out.size() * bytes_per_sample(t)`
/// bytes) to cf32, integers as they are (ci16 1000 -> 1000.0f).
inline void decode(datatype t, std::span<const std::byte> in, std::span<cf32> out)
{
  switch (t) {
  case datatype::cf32_le: std::memcpy(out.data(), in.data(), out.size_bytes()); return;
  // A cf32 is two floats (I, Q) by the standard's layout of std::complex, so the
  // integers convert as one flat array: a loop the compiler vectorises.
  case datatype::ci16_le: {
    auto* f = reinterpret_cast<float*>(out.data());
    for (std::size_t k = 0; k < 2 * out.size(); ++k) {
      int16_t v;
      std::memcpy(&v, in.data() + 2 * k, 2);
      f[k] = static_cast<float>(v);
    }
    return;
  }
  case datatype::ci8: {
    auto* f = reinterpret_cast<float*>(out.data());
    const auto* s = reinterpret_cast<const int8_t*>(in.data());
    for (std::size_t k = 0; k < 2 * out.size(); ++k) {
      f[k] = static_cast<float>(s[k]);
    }
    return;
  }
  }
}

/// round(x), saturated to [LO, HI]; NaN becomes 0 (a recording has no NaN integer).
template <typename Int>
inline Int saturate_round(float x)
{
  constexpr auto LO = static_cast<float>(std::numeric_limits<Int>::min());
  constexpr auto HI = static_cast<float>(std::numeric_limits<Int>::max());
  if (std::isnan(x)) {
    return 0;
  }
  if (x <= LO) {
    return std::numeric_limits<Int>::min();
  }
  if (x >= HI) {
    return std::numeric_limits<Int>::max();
  }
  return static_cast<Int>(std::round(x));
}

/// Encode `in` times `scale` as type `t` into `out` (`in.size() * bytes_per_sample(t)`
/// bytes): cf32 is x * scale exactly as float arithmetic gives it; integer types are
/// round(x * scale) (half away from zero), saturated to the type's range.
inline void encode(datatype t, std::span<const cf32> in, float scale, std::span<std::byte> out)
{
  switch (t) {
  case datatype::cf32_le:
    if (scale == 1.0f) {
      std::memcpy(out.data(), in.data(), in.size_bytes());
      return;
    }
    for (std::size_t k = 0; k < in.size(); ++k) {
      const cf32 v = in[k] * scale;
      std::memcpy(out.data() + 8 * k, &v, 8);
    }
    return;
  case datatype::ci16_le:
    for (std::size_t k = 0; k < in.size(); ++k) {
      const int16_t iq[2] = {saturate_round<int16_t>(in[k].real() * scale),
                             saturate_round<int16_t>(in[k].imag() * scale)};
      std::memcpy(out.data() + 4 * k, iq, 4);
    }
    return;
  case datatype::ci8:
    for (std::size_t k = 0; k < in.size(); ++k) {
      const int8_t iq[2] = {saturate_round<int8_t>(in[k].real() * scale),
                            saturate_round<int8_t>(in[k].imag() * scale)};
      std::memcpy(out.data() + 2 * k, iq, 2);
    }
    return;
  }
}

} // namespace whd::transport::detail
