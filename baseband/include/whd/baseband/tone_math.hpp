/// @file tone_math.hpp
/// Per-frame frequency-domain steps shared by the backends (profile §4): the
/// channel estimate from the two preamble symbols, the SNR estimate, the pilot
/// common phase, the header decision and payload-bit packing.
#pragma once

#include <whd/baseband/demap.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/transport/sample_types.hpp>

#include <array>
#include <cstdint>

namespace whd::baseband {

/// The channel of one frame on the used tones, and what equalisation needs.
struct channel_estimate {
  std::array<cf32, profile::NOF_USED> h{};    ///< LS estimate averaged over both preamble symbols
  std::array<cf32, profile::NOF_USED> inv{};  ///< 1 / h (0 where h is 0)
  double snr_dB = 0.0;                         ///< signal over whole-band noise (whd-tx's SNR)
};

/// Channel and SNR from the FFTs of the two preamble windows (N bins each, CFO-corrected).
channel_estimate estimate_channel(const cf32* y0, const cf32* y1);

/// e^{-j theta} of a symbol m >= 2: theta = arg sum_p Y[p] conj(H[p]) P[m].
cf32 pilot_derotation(const cf32* y, const channel_estimate& ch, long long m);

/// Decide the 48 header bits from the header symbol's FFT: the 7 repetitions are
/// combined (maximum-ratio, after the pilot phase) before deciding.
std::array<uint8_t, profile::HEADER_BITS> decide_header(const cf32* y, const channel_estimate& ch);

/// Demap one data symbol's FFT (N bins) to its payload bytes (bytes_per_symbol(mod)).
void demap_symbol(const cf32* y, const channel_estimate& ch, cf32 derotation, profile::modulation mod, uint8_t* out);

} // namespace whd::baseband
