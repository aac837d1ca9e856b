/// @file demap.hpp
/// The constellations of profile §5 and the hard-decision demapping of equalised
/// tones to payload bits, shared by the CPU and GPU backends so that they decide
/// alike, and by the transmitter. Decisions
/// equal liquid-dsp's modemcf_demodulate for LIQUID_MODEM_QPSK and _QAM16.
#pragma once

#include <whd/baseband/profile.hpp>

#include <cmath>
#include <complex>
#include <cstdint>

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

// ---------------------------------------------------------------- soft decisions
// LLR = ln P(b = 0 | z) / P(b = 1 | z), positive for 0, max-log over the points of
// §5, of an equalised point z = s + n' whose complex noise n' has variance 1 / w:
// LLR = w (min over points with b = 1 of |z - s|^2 - min over points with b = 0).
// Each expression below is that difference written so that its sign is decided
// by one comparison with the hard decision's threshold (a product or a difference
// of floats is 0 or of the right sign), so a non-zero LLR always agrees with the
// hard bit. Values come MSB first, as the payload's bits do.

/// QPSK (points +-a on each axis): out[0] for bit1 (Q < 0), out[1] for bit0 (I < 0).
WHD_HD void llr_qpsk(float i, float q, float w, float* out)
{
  constexpr float K = 4.0f * profile::QPSK_A;
  out[0] = K * w * q;
  out[1] = K * w * i;
}

/// One 16-QAM axis (levels -3c, -c, +c, +3c; Gray 00 01 11 10): the high bit is 1
/// for x > 0, the low bit 1 for |x| < 2c.
WHD_HD void llr_qam16_axis(float x, float w, float* out)
{
  constexpr float c = profile::QAM16_C;
  const float ax = std::fabs(x);
  // High bit: -4c x inside +-2c; beyond, the outer point on x's side against the
  // inner one on the other: -8c (x - c) for x > 2c, -8c (x + c) for x < -2c.
  const float hi = ax <= 2.0f * c ? -4.0f * c * x : -8.0f * c * (x > 0.0f ? x - c : x + c);
  out[0] = w * hi;
  out[1] = w * (4.0f * c) * (ax - 2.0f * c); // outer (0) against inner (1)
}

/// 16-QAM: out[0..1] from I (b3 b2), out[2..3] from Q (b1 b0).
WHD_HD void llr_qam16(float i, float q, float w, float* out)
{
  llr_qam16_axis(i, w, out);
  llr_qam16_axis(q, w, out + 2);
}

// ---------------------------------------------------------------- a symbol's neighbours
// A data symbol's derotation is the average of its own (the pilots', refined on QPSK) and
// those of its neighbours m - 1 and m + 1 among the frame's whole symbols (a frame's
// first and last symbols have one), as unit vectors, made unit again. Both backends
// decode every symbol with the same neighbours, whatever their pieces and chunks: each
// reads the windows either side of its run (halo symbols) for their derotations alone.

/// Neighbours a symbol's derotation is averaged with, on either side.
inline constexpr int PHASE_NEIGHBOURS = 1;
/// Symbols an inner symbol's derotation averages (the noise model's phase term divides
/// by it).
inline constexpr int PHASE_SYMBOLS = 2 * PHASE_NEIGHBOURS + 1;

/// The unit vector of (re, im), 1 where it is 0 (or not finite).
WHD_HD void unit_rotation(float re, float im, float& ur, float& ui)
{
  const float mag = std::sqrt(re * re + im * im);
  const bool ok = mag > 0.0f && mag < INFINITY;
  ur = ok ? re / mag : 1.0f;
  ui = ok ? im / mag : 0.0f;
}

/// The weight w = 1 / (noise variance of an equalised tone) = |H|^2 / s2_eff, from
/// the tone's 1/H and a frame's 1 / s2_eff (llr_inv_noise); 0 where 1/H is 0.
WHD_HD float llr_weight(float inv_re, float inv_im, float inv_noise)
{
  const float d2 = inv_re * inv_re + inv_im * inv_im;
  return d2 > 0.0f ? inv_noise / d2 : 0.0f;
}

/// 1 / s2_eff of a frame from its preamble sums (tone_math.hpp's estimate_channel):
/// sig = sum |H_ls|^2 and diff = sum |Y0 - Y1|^2 over the used tones, and the taps
/// the channel was projected on (0: plain least squares). The noise per bin is
/// s2 = diff / (2 NOF_USED); the channel estimate's own error, s2 / 2 per tone
/// (two symbols averaged) times taps / NOF_USED after the projection, adds to it
/// on each equalised point (times |s|^2, 1 on average), and so does the pilots'
/// common-phase estimate (a phase error of variance s2 / (2 sum |H_p|^2) turns the
/// point by s delta: |s|^2 s2 / (2 NOF_PILOTS) on a flat channel): s2_eff = s2 (1 + e),
/// e = taps / (2 NOF_USED) (or 1/2 unprojected) + 1 / (2 NOF_PILOTS). On a QPSK frame
/// (`refined_phase`: the data refine each symbol's phase, QPSK_PHASE_STEPS) the phase
/// term is that of all the used tones, 1 / (2 NOF_USED): the estimate's error with the
/// data known, which it reaches at the SNRs where the term matters at all. Either term is
/// divided by PHASE_SYMBOLS: a symbol's derotation averages its neighbours' (inner
/// symbols: three). With the
/// header as a third training symbol (`training` = 3), the estimate's error is s2 / 3 a
/// tone: the channel term is taps / (3 NOF_USED) (or 1/3). A noiseless frame is held at
/// 90 dB of SNR per tone, so that weights stay finite.
WHD_HD float llr_inv_noise(double sig, double diff, int nof_taps, bool refined_phase, int training = 2)
{
  const double U = profile::NOF_USED;
  const double noise = diff / (2.0 * U);
  const double signal = sig / U > noise / 2.0 ? sig / U - noise / 2.0 : 0.0;
  const double e = (nof_taps > 0 ? double(nof_taps) / (double(training) * U) : 1.0 / double(training)) +
                   1.0 / (2.0 * PHASE_SYMBOLS * (refined_phase ? profile::NOF_USED : profile::NOF_PILOTS));
  double eff = noise * (1.0 + e);
  eff = eff > signal * 1e-9 ? eff : signal * 1e-9;
  eff = eff > 1e-30 ? eff : 1e-30;
  return float(1.0 / eff);
}

// ---------------------------------------------------------------- a QPSK symbol's phase
// The pilots' common phase (16 tones) is refined on QPSK symbols by the data tones:
// Newton steps towards the maximum over delta of the symbol's log-likelihood with the
// data unknown, sum over data tones of ln cosh(u_I) + ln cosh(u_Q), u = LLR / 2 of the
// point turned by e^{-j delta}, plus the pilots' S cos(delta), S = 2 x 1/s2_eff x
// |sum_p Y conj(H) P| (their log-likelihood, whose maximum the pilots' estimate is). At the Es/N0 of MCS 0 (1.5 dB a tone) two steps
// take the phase error's variance from 0.023 to 0.007 rad^2 (the pilots alone:
// 1 / (2 x 16 x Es/N0)). tanh is replaced by soft_sign, so that both backends compute
// the same rational function instead of their own libraries' tanh.

/// Newton steps a symbol takes.
inline constexpr int QPSK_PHASE_STEPS = 2;
/// The largest step, and the largest refinement, in radians (small_rotation's range).
inline constexpr float QPSK_PHASE_LIMIT = 0.5f;

/// tanh's stand-in: x (27 + x^2) / (27 + 9 x^2) inside |x| < 3 (within 0.025 of tanh),
/// +-1 beyond (where it meets it continuously).
WHD_HD float soft_sign(float x)
{
  const float x2 = x * x;
  const float r = x * (27.0f + x2) / (27.0f + 9.0f * x2);
  return x >= 3.0f ? 1.0f : x <= -3.0f ? -1.0f : r;
}

/// One data tone's terms of the log-likelihood's first and second derivatives in
/// delta, at the point z (already turned by the current delta) of weight w.
WHD_HD void add_qpsk_phase_terms(float zr, float zi, float w, float& d1, float& d2)
{
  constexpr float K = 2.0f * profile::QPSK_A; // u = LLR / 2 (llr_qpsk)
  const float ur = K * w * zr;
  const float ui = K * w * zi;
  const float tr = soft_sign(ur);
  const float ti = soft_sign(ui);
  d1 += tr * ui - ti * ur;
  d2 += ((1.0f - tr * tr) * ui * ui - tr * ur) + ((1.0f - ti * ti) * ur * ur - ti * ui);
}

/// cos and sin of |delta| <= QPSK_PHASE_LIMIT by their series to the ninth power
/// (error below 1e-8), the same operations on both backends.
WHD_HD void small_rotation(float delta, float& c, float& s)
{
  const float x2 = delta * delta;
  c = 1.0f - x2 * (0.5f - x2 * (1.0f / 24.0f - x2 * (1.0f / 720.0f - x2 * (1.0f / 40320.0f))));
  s = delta * (1.0f - x2 * (1.0f / 6.0f - x2 * (1.0f / 120.0f - x2 * (1.0f / 5040.0f - x2 * (1.0f / 362880.0f)))));
}

/// The next delta from the data's sums d1, d2 at delta and the pilots' S: a Newton
/// step where the likelihood is concave there (else delta stays), each step and the
/// sum held to QPSK_PHASE_LIMIT.
WHD_HD float qpsk_phase_step(float d1, float d2, float pilots, float delta)
{
  float c, s;
  small_rotation(delta, c, s);
  const float g1 = d1 - pilots * s;
  const float g2 = d2 - pilots * c;
  if (!(g2 < 0.0f) || !(g1 == g1)) {
    return delta;
  }
  float step = -g1 / g2;
  step = step > QPSK_PHASE_LIMIT ? QPSK_PHASE_LIMIT : step < -QPSK_PHASE_LIMIT ? -QPSK_PHASE_LIMIT : step;
  const float next = delta + step;
  return next > QPSK_PHASE_LIMIT ? QPSK_PHASE_LIMIT : next < -QPSK_PHASE_LIMIT ? -QPSK_PHASE_LIMIT : next;
}

/// The int8 form of an LLR: round(LLR x scale) (to nearest, ties to even),
/// saturated to +-127; NaN gives 0.
WHD_HD int8_t llr_to_int8(float llr, float scale)
{
  float v = llr * scale;
  if (!(v == v)) {
    return 0;
  }
  // Saturated first, then rounded: the same value as rounding first (127.5 rounds to
  // 128 and saturates to 127 either way).
  v = v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v;
#if defined(__CUDA_ARCH__)
  return int8_t(rintf(v));
#else
  // Round to nearest, ties to even, without a libm call (x86-64's baseline has no
  // rounding instruction): adding and taking away 1.5 x 2^23 leaves |v| <= 127 rounded
  // (IEEE arithmetic: the compiler keeps both additions without -ffast-math).
  constexpr float MAGIC = 12582912.0f;
  return int8_t((v + MAGIC) - MAGIC);
#endif
}

/// The largest binary16 value: f16 LLRs are saturated to it.
inline constexpr float LLR_F16_MAX = 65504.0f;

/// The constellation point of index i (QPSK i < 4, 16-QAM i < 16), §5: what the
/// transmitter sends and what a receiver measures its error against.
inline std::complex<float> constellation_point(profile::modulation mod, unsigned i)
{
  const auto p = mod == profile::modulation::qpsk ? profile::qpsk_point(i) : profile::qam16_point(i);
  return {p[0], p[1]};
}

} // namespace whd::baseband
