#include <whd/baseband/tone_math.hpp>

#include <whd/baseband/channel_taps.hpp>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace whd::baseband {

namespace p = profile;

channel_smoother::channel_smoother(int first_tap, int nof_taps, int min_taps)
    : nof_taps_(nof_taps), min_taps_(std::min(min_taps, nof_taps))
{
  if (nof_taps < 1 || nof_taps > p::NOF_USED / 2) {
    throw std::invalid_argument("channel_smoother: tap count out of range");
  }
  if (min_taps < 1) {
    throw std::invalid_argument("channel_smoother: the least tap count must be at least 1");
  }
  using c64 = std::complex<double>;
  const std::size_t U = p::NOF_USED, T = std::size_t(nof_taps);
  q_.assign(U * T, c64{});
  // Columns e^{-j 2 pi k l / N} on the used tones, orthonormalised by modified
  // Gram-Schmidt in double (well defined even where the band gap makes the tap
  // basis itself ill-conditioned: only the spanned space matters).
  for (std::size_t l = 0; l < T; ++l) {
    const double tap = double(first_tap + int(l));
    for (std::size_t u = 0; u < U; ++u) {
      const double ph = -2.0 * std::numbers::pi * double(p::USED_K[u]) * tap / p::N;
      q_[u * T + l] = c64(std::cos(ph), std::sin(ph));
    }
    for (int pass = 0; pass < 2; ++pass) { // twice is enough for orthogonality in double
      for (std::size_t j = 0; j < l; ++j) {
        c64 dot{};
        for (std::size_t u = 0; u < U; ++u) {
          dot += std::conj(q_[u * T + j]) * q_[u * T + l];
        }
        for (std::size_t u = 0; u < U; ++u) {
          q_[u * T + l] -= dot * q_[u * T + j];
        }
      }
    }
    double norm = 0.0;
    for (std::size_t u = 0; u < U; ++u) {
      norm += std::norm(q_[u * T + l]);
    }
    const double inv = 1.0 / std::sqrt(norm);
    for (std::size_t u = 0; u < U; ++u) {
      q_[u * T + l] *= inv;
    }
  }
  q_re_.resize(U * T);
  q_im_.resize(U * T);
  qt_re_.resize(U * T);
  qt_im_.resize(U * T);
  for (std::size_t u = 0; u < U; ++u) {
    for (std::size_t l = 0; l < T; ++l) {
      q_re_[u * T + l] = qt_re_[l * U + u] = q_[u * T + l].real();
      q_im_[u * T + l] = qt_im_[l * U + u] = q_[u * T + l].imag();
    }
  }
}

namespace {
/// a[l] = sum_u conj(Q[u][l]) h[u], each sum in order of u, Q's parts row-major
/// (T per row): each tone's terms are added to every tap's sum at once.
__attribute__((target_clones("avx512f", "avx2", "default"))) void project_onto_taps(const double* q_re, const double* q_im,
                                                                                   const cf32* h, std::size_t T, double* a_re,
                                                                                   double* a_im)
{
  std::fill_n(a_re, T, 0.0);
  std::fill_n(a_im, T, 0.0);
  for (std::size_t u = 0; u < p::NOF_USED; ++u) {
    const double hr = h[u].real(), hi = h[u].imag();
    const double* qr = q_re + u * T;
    const double* qi = q_im + u * T;
    for (std::size_t l = 0; l < T; ++l) {
      a_re[l] += qr[l] * hr + qi[l] * hi;
      a_im[l] += qr[l] * hi - qi[l] * hr;
    }
  }
}

/// h[u] = sum_l Q[u][l] a[l], each sum in order of l, Q's parts transposed
/// (NOF_USED per row): each tap's terms are added to every tone's sum at once.
__attribute__((target_clones("avx512f", "avx2", "default"))) void expand_taps(const double* qt_re, const double* qt_im,
                                                                             const double* a_re, const double* a_im, std::size_t T,
                                                                             double* h_re, double* h_im)
{
  std::fill_n(h_re, p::NOF_USED, 0.0);
  std::fill_n(h_im, p::NOF_USED, 0.0);
  for (std::size_t l = 0; l < T; ++l) {
    const double ar = a_re[l], ai = a_im[l];
    const double* qr = qt_re + l * p::NOF_USED;
    const double* qi = qt_im + l * p::NOF_USED;
    for (std::size_t u = 0; u < p::NOF_USED; ++u) {
      h_re[u] += qr[u] * ar - qi[u] * ai;
      h_im[u] += qr[u] * ai + qi[u] * ar;
    }
  }
}
} // namespace

void channel_smoother::apply(std::array<cf32, p::NOF_USED>& h) const
{
  project(h, nof_taps_);
}

int channel_smoother::apply(std::array<cf32, p::NOF_USED>& h, double diff) const
{
  return project(h, -1, diff);
}

int channel_smoother::project(std::array<cf32, p::NOF_USED>& h, int keep, double diff) const
{
  // a = Q^H h, then h = Q a, in double: the complex products written out as the
  // compiler forms them (-fcx-limited-range: conj(q) h = (qr hr + qi hi, qr hi - qi hr),
  // q a = (qr ar - qi ai, qr ai + qi ar)), every sum in the order of the plain loops
  // over complex<double>, so the result is theirs bit for bit; tone_math.cpp is
  // built without fused multiply-add, which the AVX-512 clones could otherwise use.
  const std::size_t T = std::size_t(nof_taps_);
  std::array<double, p::NOF_USED / 2> a_re, a_im;
  std::array<double, p::NOF_USED> h_re, h_im;
  project_onto_taps(q_re_.data(), q_im_.data(), h.data(), T, a_re.data(), a_im.data());
  if (keep < 0) {
    keep = chosen_taps([&](int l) { return a_re[std::size_t(l)] * a_re[std::size_t(l)] + a_im[std::size_t(l)] * a_im[std::size_t(l)]; },
                       nof_taps_, min_taps_, diff);
  }
  expand_taps(qt_re_.data(), qt_im_.data(), a_re.data(), a_im.data(), std::size_t(keep), h_re.data(), h_im.data());
  for (std::size_t u = 0; u < p::NOF_USED; ++u) {
    h[u] = cf32(float(h_re[u]), float(h_im[u]));
  }
  return keep;
}

namespace {
/// ch.inv = 1 / ch.h (0 where h is 0).
void set_inverse(channel_estimate& ch)
{
  for (std::size_t u = 0; u < ch.h.size(); ++u) {
    const float mag2 = std::norm(ch.h[u]);
    ch.inv[u] = mag2 > 0.0f ? std::conj(ch.h[u]) / mag2 : cf32{};
  }
}

/// conj(acc) / |acc| (1 where acc is 0), |acc| into `mag`.
cf32 unit_derotation(cf32 acc, float& mag)
{
  mag = std::abs(acc);
  return mag > 0.0f ? std::conj(acc) / mag : cf32(1.0f, 0.0f);
}
} // namespace

channel_estimate estimate_channel(const cf32* y0, const cf32* y1, const channel_smoother* smoother)
{
  channel_estimate ch;
  double sig = 0.0, diff = 0.0;
  for (int u = 0; u < p::NOF_USED; ++u) {
    const int b = p::USED_BIN[std::size_t(u)];
    const cf32 h = (y0[b] + y1[b]) * (0.5f * p::preamble_value(u));
    ch.h[std::size_t(u)] = h;
    sig += std::norm(h);
    diff += std::norm(y0[b] - y1[b]);
  }
  if (smoother != nullptr) {
    ch.taps = smoother->apply(ch.h, diff);
  }
  set_inverse(ch);
  // E|Y0 - Y1|^2 = 2 s2 per tone; E|H_est|^2 = |H|^2 + s2 / 2.
  const double noise = diff / (2.0 * p::NOF_USED);
  const double signal = std::max(sig / p::NOF_USED - noise / 2.0, 0.0);
  // Per-tone SNR scaled to the whole band: the signal fills NOF_USED of N bins.
  const double snr = noise > 0.0 ? signal / noise * double(p::NOF_USED) / p::N : 1e15;
  ch.snr_dB = snr > 0.0 ? std::min(10.0 * std::log10(snr), 150.0) : -150.0;
  ch.sig = sig;
  ch.diff = diff;
  ch.llr_inv_noise = llr_inv_noise(sig, diff, ch.taps, false);
  return ch;
}

std::array<float, p::NOF_USED> header_tone_values(const p::header_fields& f)
{
  const auto h = p::header_bits(f);
  std::array<float, p::NOF_USED> x{};
  for (int d = 0; d < p::NOF_DATA; ++d) {
    x[std::size_t(p::DATA_USED[std::size_t(d)])] = (h[std::size_t(d % p::HEADER_BITS)] ^ unsigned(p::pn(d))) != 0 ? -1.0f : 1.0f;
  }
  for (int i = 0; i < p::NOF_PILOTS; ++i) {
    x[std::size_t(p::PILOT_USED[std::size_t(i)])] = p::pilot_value(p::HEADER_SYMBOL);
  }
  return x;
}

void add_header_to_channel(channel_estimate& ch, const cf32* y0, const cf32* y1, const cf32* y2, const p::header_fields& f,
                           const channel_smoother* smoother)
{
  const auto x = header_tone_values(f);
  cf32 acc{};
  for (int u = 0; u < p::NOF_USED; ++u) {
    acc += y2[p::USED_BIN[std::size_t(u)]] * x[std::size_t(u)] * std::conj(ch.h[std::size_t(u)]);
  }
  float mag;
  const cf32 rot = unit_derotation(acc, mag);
  for (int u = 0; u < p::NOF_USED; ++u) {
    const int b = p::USED_BIN[std::size_t(u)];
    const cf32 pre = (y0[b] + y1[b]) * (0.5f * p::preamble_value(u)); // estimate_channel's
    ch.h[std::size_t(u)] = (pre * 2.0f + y2[b] * x[std::size_t(u)] * rot) * (1.0f / 3.0f);
  }
  ch.taps = smoother != nullptr ? smoother->apply(ch.h, ch.diff * (2.0 / 3.0)) : 0;
  set_inverse(ch);
  ch.training = 3;
  ch.llr_inv_noise = llr_inv_noise(ch.sig, ch.diff, ch.taps, false, ch.training);
}

namespace {
/// sum_p Y[p] conj(H[p]) P[m].
cf32 pilot_sum(const cf32* y, const channel_estimate& ch, long long m)
{
  cf32 acc{};
  for (int i = 0; i < p::NOF_PILOTS; ++i) {
    const int u = p::PILOT_USED[std::size_t(i)];
    acc += y[p::PILOT_BIN[std::size_t(i)]] * std::conj(ch.h[std::size_t(u)]);
  }
  return acc * p::pilot_value(m);
}
} // namespace

cf32 pilot_derotation(const cf32* y, const channel_estimate& ch, long long m)
{
  float mag;
  return unit_derotation(pilot_sum(y, ch, m), mag);
}

cf32 data_derotation(const cf32* y, const channel_estimate& ch, long long m, p::modulation mod)
{
  float mag;
  const cf32 rot = unit_derotation(pilot_sum(y, ch, m), mag);
  return mod == p::modulation::qpsk ? refine_qpsk_derotation(y, ch, rot, mag) : rot;
}

std::array<float, p::HEADER_BITS> header_soft(const cf32* y, const channel_estimate& ch)
{
  const cf32 rot = pilot_derotation(y, ch, p::HEADER_SYMBOL);
  std::array<float, p::HEADER_BITS> acc{};
  for (int d = 0; d < p::NOF_DATA; ++d) {
    const int u = p::DATA_USED[std::size_t(d)];
    // Maximum-ratio: Re(Y conj(H)) weights each repetition by its channel power.
    const float soft = (y[p::DATA_BIN[std::size_t(d)]] * std::conj(ch.h[std::size_t(u)]) * rot).real();
    acc[std::size_t(d % p::HEADER_BITS)] += p::pn(d) ? -soft : soft;
  }
  return acc;
}

uint16_t float_to_half(float f)
{
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) {
    return uint16_t(sign | 0x7e00u); // NaN (quiet)
  }
  if (u >= 0x477ff000u) {
    return uint16_t(sign | 0x7c00u); // 65520 and above round to infinity
  }
  if (u < 0x38800000u) {
    // Below 2^-14: a subnormal half, 2^-24 steps. Adding 0.5 (2^-1) puts the value's
    // 2^-24 multiples in the low mantissa bits of a float of exponent -1, rounded to
    // nearest even by the addition itself; the bits above are 0.5's.
    float x;
    std::memcpy(&x, &u, 4);
    const float y = x + 0.5f;
    uint32_t v;
    std::memcpy(&v, &y, 4);
    return uint16_t(sign | (v - 0x3f000000u));
  }
  // Normal: rebias the exponent (127 -> 15) and drop 13 mantissa bits, rounding
  // to nearest, ties to the even result (add 0xfff plus the lowest kept bit).
  const uint32_t odd = (u >> 13) & 1u;
  u += 0xc8000fffu + odd; // (15 - 127) << 23, modulo 2^32, plus the rounding
  return uint16_t(sign | (u >> 13));
}

void encode_llrs(const float* llr, std::size_t n, llr_format f, float scale, uint8_t* out)
{
  switch (f) {
  case llr_format::int8:
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = uint8_t(llr_to_int8(llr[i], scale));
    }
    break;
  case llr_format::f16:
    for (std::size_t i = 0; i < n; ++i) {
      const uint16_t h = float_to_half(std::clamp(llr[i], -LLR_F16_MAX, LLR_F16_MAX));
      std::memcpy(out + 2 * i, &h, 2);
    }
    break;
  case llr_format::f32: std::memcpy(out, llr, n * sizeof(float)); break;
  }
}

} // namespace whd::baseband
