/// @file ber_theory.hpp
/// Uncoded bit error probability of the profile's Gray-mapped constellations
/// (§5) on an AWGN tone, as a function of the tone's Es/N0 (linear), and the
/// per-tone Es/N0 a capture's SNR definition gives.
#pragma once

#include <whd/baseband/profile.hpp>
#include <whd/transport/sample_types.hpp>

#include <array>
#include <cmath>
#include <complex>
#include <numbers>
#include <span>

namespace whd::test {

/// Q(x) = P(N(0,1) > x).
inline double q_function(double x) { return 0.5 * std::erfc(x / std::numbers::sqrt2); }

/// Gray QPSK: each bit is an antipodal decision at distance a = sqrt(Es/2) from
/// its boundary with noise variance N0/2 per dimension, Pb = Q(sqrt(Es/N0)) =
/// Q(sqrt(2 Eb/N0)) (J. G. Proakis, Digital Communications: Gray QPSK is two
/// independent BPSK streams, one per dimension).
inline double qpsk_ber(double es_n0) { return q_function(std::sqrt(es_n0)); }

/// Gray 16-QAM, exact: each dimension is a Gray 4-PAM with levels +-c, +-3c,
/// Es = 10 c^2; with a = c / sqrt(N0/2) = sqrt(Es/(5 N0)) the sign bit errs with
/// (Q(a) + Q(3a))/2 and the inner/outer bit with (2Q(a) + Q(3a) - Q(5a))/2, so
/// Pb = (3Q(a) + 2Q(3a) - Q(5a)) / 4, a = sqrt(4/5 Eb/N0)
/// (K. Cho, D. Yoon, "On the general BER expression of one- and two-dimensional
/// amplitude modulations", IEEE Trans. Commun. 50(7), 2002, the square 16-QAM case).
inline double qam16_ber(double es_n0)
{
  const double a = std::sqrt(es_n0 / 5.0);
  return (3.0 * q_function(a) + 2.0 * q_function(3.0 * a) - q_function(5.0 * a)) / 4.0;
}

inline double ber(whd::profile::modulation mod, double es_n0)
{
  return mod == whd::profile::modulation::qpsk ? qpsk_ber(es_n0) : qam16_ber(es_n0);
}

/// Es/N0 of a data tone, at the FFT output, for a capture whose SNR (mean signal
/// power per sample over the frames against the noise power per sample over the
/// whole band, shared/vectors/README.md) is `snr` (linear), with flat channel.
///
/// A symbol's body x[n] = (1/sqrt(352)) sum_k X[k] e^{+j 2 pi k n / 512} (§2) with
/// unit mean energy on the 352 used tones has mean power per sample
/// (1/512)(512/352) * 352 = 1; the guard copies 64 of those samples, the preamble,
/// header and pilots put unit energy on their tones too, so every symbol of a
/// frame has the same mean power per sample, and that power is the SNR's signal
/// power S. The receiver's forward DFT of the 512 body samples gives a tone
/// amplitude (512 / sqrt(352)) X[k] sqrt(S), energy 512^2 S / 352, and noise of
/// power 512 N per bin (white noise of power N per sample). So
/// Es/N0 = (512 / 352) * S / N = (N_FFT / NOF_USED) * snr: +1.63 dB over the SNR.
/// The guard's 64 samples are discarded by the receiver: they are energy spent
/// per symbol (576/512, 0.51 dB) but do not change a power ratio, so they enter
/// only an Eb/N0 referred to the transmitted energy, which this project does not use.
inline double tone_es_n0(double snr) { return snr * double(whd::profile::N) / double(whd::profile::NOF_USED); }

/// |H[k]|^2 / mean over the used tones of |H|^2 for each data tone d, H the
/// frequency response of `taps` (delays 0, 1, ... samples): the factor by which a
/// multipath channel scales a data tone's Es/N0 against the SNR (the SNR's signal
/// power includes the channel's mean gain over the used tones).
inline std::array<double, whd::profile::NOF_DATA> relative_tone_power(std::span<const cf32> taps)
{
  namespace p = whd::profile;
  auto response = [&](int k) {
    std::complex<double> h;
    for (std::size_t l = 0; l < taps.size(); ++l) {
      h += std::complex<double>(taps[l]) * std::polar(1.0, -2.0 * std::numbers::pi * double(k) * double(l) / p::N);
    }
    return std::norm(h);
  };
  double mean = 0.0;
  for (int k : p::USED_K) {
    mean += response(k);
  }
  mean /= double(p::NOF_USED);
  std::array<double, p::NOF_DATA> out{};
  for (std::size_t d = 0; d < out.size(); ++d) {
    out[d] = response(p::DATA_K[d]) / mean;
  }
  return out;
}

} // namespace whd::test
