/// @file demap_symbol.cpp
/// demap_symbol (tone_math.hpp): a data symbol's tones equalised, decided and
/// soft-decided one step at a time over all NOF_DATA tones, in arrays of I, Q and
/// weight (structure of arrays), so that each step is a loop the compiler vectorises.
/// The values are demap.hpp's functions, called per tone as before; only the loop
/// around them changed. This file is built with -fno-trapping-math
/// (baseband/rx/CMakeLists.txt): GCC then evaluates both arms of those functions'
/// conditional expressions and selects (a vector blend), where with trapping math it
/// keeps the branches, which random data mispredicts about half the time. That
/// changes no value: the same IEEE operations on the same operands, rounded alike
/// (-ffp-contract=off as tone_math.cpp); tests/baseband/demap_symbol_test.cpp holds
/// the result to the per-tone loop bit for bit (NaN payloads too, but where two NaNs
/// of non-finite inputs meet in one product, which the compiler orders as it likes).
/// The clones stop at AVX2: with an AVX-512 clone the whole process ran about 5 %
/// slower on a two-core Xeon (the 512-bit license's lower clock reaches the FFT too).
#include <whd/baseband/tone_math.hpp>

#include <array>

namespace whd::baseband {

namespace p = profile;

namespace {

/// One symbol's equalised data tones and their LLR weights, tone order.
struct equalised_tones {
  alignas(64) std::array<float, p::NOF_DATA> re;
  alignas(64) std::array<float, p::NOF_DATA> im;
  alignas(64) std::array<float, p::NOF_DATA> w;
};

/// The data tones' bins and inverse channel gathered apart (plain copies: no
/// arithmetic), so that the loops after them read contiguous arrays.
struct gathered_tones {
  alignas(64) std::array<cf32, p::NOF_DATA> y;
  alignas(64) std::array<cf32, p::NOF_DATA> inv;
};

void gather(const cf32* y, const channel_estimate& ch, gathered_tones& g)
{
  for (std::size_t d = 0; d < std::size_t(p::NOF_DATA); ++d) {
    g.y[d] = y[p::DATA_BIN[d]];
    g.inv[d] = ch.inv[std::size_t(p::DATA_USED[d])];
  }
}

/// z = y inv derotation per tone (the products as std::complex forms them under
/// -fcx-limited-range) and, when `weights`, llr_weight of the tone's 1/H.
__attribute__((target_clones("avx2", "default"))) void equalise(const gathered_tones& g, cf32 derotation,
                                                                          float inv_noise, bool weights, equalised_tones& e)
{
  for (std::size_t d = 0; d < std::size_t(p::NOF_DATA); ++d) {
    const cf32 z = g.y[d] * g.inv[d] * derotation;
    e.re[d] = z.real();
    e.im[d] = z.imag();
  }
  if (weights) {
    for (std::size_t d = 0; d < std::size_t(p::NOF_DATA); ++d) {
      e.w[d] = llr_weight(g.inv[d].real(), g.inv[d].imag(), inv_noise);
    }
  }
}

/// Hard decisions packed MSB first: two 16-QAM tones a byte.
__attribute__((target_clones("avx2", "default"))) void decide_qam16(const equalised_tones& e, uint8_t* out)
{
  for (std::size_t b = 0; b < std::size_t(p::NOF_DATA) / 2; ++b) {
    out[b] = uint8_t((demap_qam16(e.re[2 * b], e.im[2 * b]) << 4) | demap_qam16(e.re[2 * b + 1], e.im[2 * b + 1]));
  }
}

/// Hard decisions packed MSB first: four QPSK tones a byte.
__attribute__((target_clones("avx2", "default"))) void decide_qpsk(const equalised_tones& e, uint8_t* out)
{
  for (std::size_t b = 0; b < std::size_t(p::NOF_DATA) / 4; ++b) {
    const std::size_t d = 4 * b;
    out[b] = uint8_t((demap_qpsk(e.re[d], e.im[d]) << 6) | (demap_qpsk(e.re[d + 1], e.im[d + 1]) << 4) |
                     (demap_qpsk(e.re[d + 2], e.im[d + 2]) << 2) | demap_qpsk(e.re[d + 3], e.im[d + 3]));
  }
}

/// Four LLRs a tone, tone order (llr_qam16).
__attribute__((target_clones("avx2", "default"))) void soft_qam16(const equalised_tones& e, float* llr)
{
  for (std::size_t d = 0; d < std::size_t(p::NOF_DATA); ++d) {
    llr_qam16(e.re[d], e.im[d], e.w[d], llr + 4 * d);
  }
}

/// Two LLRs a tone, tone order (llr_qpsk).
__attribute__((target_clones("avx2", "default"))) void soft_qpsk(const equalised_tones& e, float* llr)
{
  for (std::size_t d = 0; d < std::size_t(p::NOF_DATA); ++d) {
    llr_qpsk(e.re[d], e.im[d], e.w[d], llr + 2 * d);
  }
}

/// The data tones' sums of the phase's derivatives (add_qpsk_phase_terms), in eight
/// partial sums (tone d in sum d mod 8, added in that order) so that the loop vectorises.
__attribute__((target_clones("avx2", "default"))) void qpsk_phase_sums(const equalised_tones& e, float& d1, float& d2)
{
  constexpr std::size_t W = 8;
  static_assert(p::NOF_DATA % W == 0);
  float a1[W] = {}, a2[W] = {};
  for (std::size_t d = 0; d < std::size_t(p::NOF_DATA); d += W) {
    for (std::size_t i = 0; i < W; ++i) {
      add_qpsk_phase_terms(e.re[d + i], e.im[d + i], e.w[d + i], a1[i], a2[i]);
    }
  }
  d1 = 0.0f;
  d2 = 0.0f;
  for (std::size_t i = 0; i < W; ++i) {
    d1 += a1[i];
    d2 += a2[i];
  }
}

} // namespace

cf32 refine_qpsk_derotation(const cf32* y, const channel_estimate& ch, cf32 derotation, float pilot_mag)
{
  gathered_tones g;
  equalised_tones e;
  gather(y, ch, g);
  const float pilots = 2.0f * ch.llr_inv_noise * pilot_mag;
  float delta = 0.0f;
  float c = 1.0f, s = 0.0f;
  for (int i = 0; i < QPSK_PHASE_STEPS; ++i) {
    // The weights do not depend on the rotation: made in the first step only.
    equalise(g, derotation * cf32(c, -s), ch.llr_inv_noise, i == 0, e);
    float d1, d2;
    qpsk_phase_sums(e, d1, d2);
    delta = qpsk_phase_step(d1, d2, pilots, delta);
    small_rotation(delta, c, s);
  }
  return derotation * cf32(c, -s);
}

void demap_symbol(const cf32* y, const channel_estimate& ch, cf32 derotation, p::modulation mod, uint8_t* out, float* llr)
{
  gathered_tones g;
  equalised_tones e;
  gather(y, ch, g);
  equalise(g, derotation, ch.llr_inv_noise, llr != nullptr, e);
  const bool qam16 = mod == p::modulation::qam16;
  if (out != nullptr) {
    qam16 ? decide_qam16(e, out) : decide_qpsk(e, out);
  }
  if (llr != nullptr) {
    qam16 ? soft_qam16(e, llr) : soft_qpsk(e, llr);
  }
}

} // namespace whd::baseband
