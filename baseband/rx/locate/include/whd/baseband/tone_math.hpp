/// @file tone_math.hpp
/// Per-frame frequency-domain steps shared by the backends (profile §4): the
/// channel estimate from the two preamble symbols, the SNR estimate, the pilot
/// common phase, the header decision and payload-bit packing.
#pragma once

#include <whd/baseband/demap.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/baseband/rx_types.hpp>
#include <whd/transport/sample_types.hpp>

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

namespace whd::baseband {

/// The channel of one frame on the used tones, and what equalisation needs.
struct channel_estimate {
  std::array<cf32, profile::NOF_USED> h{};    ///< LS over the training symbols (preamble, header), projected
  std::array<cf32, profile::NOF_USED> inv{};  ///< 1 / h (0 where h is 0)
  double snr_dB = 0.0;                         ///< signal over whole-band noise (whd-tx's SNR)
  int taps = 0;                                ///< taps the estimate was projected on (0: plain LS)
  /// 1 / the noise variance of an equalised point, |H|^2 aside (demap.hpp's
  /// llr_inv_noise): the soft decisions' scale. estimate_channel gives the pilots'
  /// phase term; set_frame_modulation the frame's once its header is read.
  float llr_inv_noise = 0.0f;
  double sig = 0.0;  ///< sum |H_ls|^2 over the used tones (the preamble's)
  double diff = 0.0; ///< sum |Y0 - Y1|^2 over the used tones
  int training = 2;  ///< symbols the estimate averages: the preamble's 2, 3 with the header
};

/// The soft decisions' scale of a frame of modulation `mod` (QPSK symbols' phase is
/// refined by their data: demap.hpp's llr_inv_noise).
inline void set_frame_modulation(channel_estimate& ch, profile::modulation mod)
{
  ch.llr_inv_noise = llr_inv_noise(ch.sig, ch.diff, ch.taps, mod == profile::modulation::qpsk, ch.training);
}

/// Projects a least-squares channel estimate onto the channels whose impulse
/// response fits in a window of taps, which removes most of the estimation noise
/// (taps / NOF_USED of it remains: 0.4 dB of SNR lost instead of 1.8 dB for
/// two-symbol LS alone) and leaves such channels unchanged.
class channel_smoother {
public:
  /// Taps [first_tap, first_tap + nof_taps) relative to the FFT window's start
  /// (negative taps wrap around: paths that arrive before the window).
  /// With min_taps < nof_taps, apply(h, diff) keeps between min_taps and nof_taps of
  /// them a frame, the window's first (channel_taps.hpp's chosen_taps).
  channel_smoother(int first_tap, int nof_taps, int min_taps);
  channel_smoother(int first_tap, int nof_taps) : channel_smoother(first_tap, nof_taps, nof_taps) {}
  /// h <- Q Q^H h over the used tones (every tap).
  void apply(std::array<cf32, profile::NOF_USED>& h) const;
  /// h <- Q_K Q_K^H h over the first K columns, K = chosen_taps from Q^H h and `diff`
  /// (sum |Y0 - Y1|^2 over the used tones); returns K.
  int apply(std::array<cf32, profile::NOF_USED>& h, double diff) const;
  int nof_taps() const noexcept { return nof_taps_; }
  int min_taps() const noexcept { return min_taps_; }
  /// The basis Q as stored: NOF_USED x nof_taps() entries, row-major ([u * nof_taps() + l],
  /// used tone u, tap l), orthonormal columns; for backends that project on their own.
  const std::vector<std::complex<double>>& basis() const noexcept { return q_; }

private:
  /// Q^H h, then h <- the first `keep` columns' part of Q a (keep < 0: chosen_taps').
  int project(std::array<cf32, profile::NOF_USED>& h, int keep, double diff = 0.0) const;

  int nof_taps_;
  int min_taps_;
  std::vector<std::complex<double>> q_; ///< NOF_USED x nof_taps, orthonormal columns, row-major
  /// Q's real and imaginary parts apart, row-major as q_ ([u * T + l]) and transposed
  /// ([l * NOF_USED + u]): apply()'s two products run along contiguous rows of each.
  std::vector<double> q_re_, q_im_, qt_re_, qt_im_;
};

/// Channel and SNR from the FFTs of the two preamble windows (N bins each, CFO-corrected).
/// `smoother` (may be null: plain LS) removes estimation noise.
channel_estimate estimate_channel(const cf32* y0, const cf32* y1, const channel_smoother* smoother = nullptr);

/// The header symbol `y2`, once its CRC has passed (fields `f`), as a third training
/// symbol: each used tone's known value (the header's BPSK on the data tones, P[2] on the
/// pilots) taken out, the window's common phase against `ch` taken out (from all the used
/// tones), averaged with the preamble's two at equal weight and projected again (the
/// tap count chosen with the noise of three symbols). `ch` becomes that estimate
/// (training 3); its SNR and preamble sums stay.
void add_header_to_channel(channel_estimate& ch, const cf32* y0, const cf32* y1, const cf32* y2, const profile::header_fields& f,
                           const channel_smoother* smoother = nullptr);

/// A used tone's known value in the header symbol of fields `f`: +-1.
std::array<float, profile::NOF_USED> header_tone_values(const profile::header_fields& f);

/// e^{-j theta} of a symbol m >= 2: theta = arg sum_p Y[p] conj(H[p]) P[m].
cf32 pilot_derotation(const cf32* y, const channel_estimate& ch, long long m);

/// The derotation a data symbol m is decided with: pilot_derotation, refined on a QPSK
/// symbol by its data tones (refine_qpsk_derotation).
cf32 data_derotation(const cf32* y, const channel_estimate& ch, long long m, profile::modulation mod);

/// `derotation` (the pilots', whose weighted sum has magnitude `pilot_mag`) turned by
/// QPSK_PHASE_STEPS Newton steps of the QPSK symbol's likelihood (demap.hpp).
cf32 refine_qpsk_derotation(const cf32* y, const channel_estimate& ch, cf32 derotation, float pilot_mag);

/// The 48 header bits' soft values (positive: bit 0) from the header symbol's FFT: the
/// 7 repetitions combined (maximum-ratio, after the pilot phase); profile::decide_header
/// decides them.
std::array<float, profile::HEADER_BITS> header_soft(const cf32* y, const channel_estimate& ch);

/// Demap one data symbol's FFT (N bins) to its payload bytes (bytes_per_symbol(mod)),
/// when `out` is not null, and, when `llr` is not null, to its bits' max-log LLRs
/// (bits_per_symbol(mod) values, payload order; demap.hpp), from the same equalised
/// points (demap_symbol.cpp; a coded frame needs only the LLRs).
void demap_symbol(const cf32* y, const channel_estimate& ch, cf32 derotation, profile::modulation mod, uint8_t* out,
                  float* llr = nullptr);

/// The IEEE binary16 nearest to `f` (ties to even; NaN stays NaN, beyond 65504
/// rounds to infinity): the device's __float2half_rn, on any host compiler.
uint16_t float_to_half(float f);

/// `n` LLRs in the stored form of `f` (rx_types.hpp): n x llr_value_bytes(f) bytes
/// at `out`, little-endian; `scale` is int8's.
void encode_llrs(const float* llr, std::size_t n, llr_format f, float scale, uint8_t* out);

} // namespace whd::baseband
