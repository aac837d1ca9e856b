// Non-finite samples taken as 0 (non_finite.hpp).
#include <whd/baseband/non_finite.hpp>

#include <cstring>

namespace whd::baseband {

namespace {
/// 1 when `x` is NaN or infinite (all exponent bits set), else 0. On the bits and
/// without branches, so that the counting loop below vectorises (the detector runs
/// it over every sample of a capture).
inline uint32_t non_finite(float x)
{
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return (b & 0x7F800000u) == 0x7F800000u ? 1u : 0u;
}
} // namespace

std::size_t zero_non_finite(std::span<cf32> x)
{
  std::size_t n = 0;
  for (const cf32& v : x) {
    n += non_finite(v.real()) | non_finite(v.imag());
  }
  if (n == 0) {
    return 0; // the usual case: read only
  }
  for (cf32& v : x) {
    if ((non_finite(v.real()) | non_finite(v.imag())) != 0) {
      v = cf32{};
    }
  }
  return n;
}

} // namespace whd::baseband
