/// @file demap.hpp
/// The constellations of profile §5 and the hard-decision demapping of equalised
/// tones to payload bits, shared by the CPU and GPU backends so that they decide
/// alike, and by the transmitter. Decisions
/// equal liquid-dsp's modemcf_demodulate for LIQUID_MODEM_QPSK and _QAM16.
#pragma once

#include <whd/baseband/profile.hpp>

#include <cmath>
#include <complex>

#if defined(__CUDACC__)
#define WHD_HD __host__ __device__ __forceinline__
#else
#define WHD_HD inline
#endif

namespace whd::baseband {

/// QPSK index of an equalised point: bit1 (first, MSB) = Q < 0, bit0 = I < 0.
WHD_HD unsigned demap_qpsk(float i, float q) { return (q < 0.0f ? 2u : 0u) | (i < 0.0f ? 1u : 0u); }

/// Two Gray bits (MSB first) of one 16-QAM axis: b_hi = x > 0, b_lo = |x| < 2c.
WHD_HD unsigned demap_qam16_axis(float x)
{
  // |x| < 2c decides as x < 2c && x > -2c does (NaN included), in one comparison.
  const float two_c = 2.0f * profile::QAM16_C;
  return (x > 0.0f ? 2u : 0u) | (std::fabs(x) < two_c ? 1u : 0u);
}

/// 16-QAM index b3 b2 b1 b0 of an equalised point: I gives b3 b2, Q gives b1 b0.
WHD_HD unsigned demap_qam16(float i, float q) { return (demap_qam16_axis(i) << 2) | demap_qam16_axis(q); }

/// The constellation point of index i (QPSK i < 4, 16-QAM i < 16), §5: what the
/// transmitter sends and what a receiver measures its error against.
inline std::complex<float> constellation_point(profile::modulation mod, unsigned i)
{
  const auto p = mod == profile::modulation::qpsk ? profile::qpsk_point(i) : profile::qam16_point(i);
  return {p[0], p[1]};
}

} // namespace whd::baseband
