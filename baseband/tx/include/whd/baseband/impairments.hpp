/// @file impairments.hpp
/// What the air and a radio do to the transmitted samples, for test captures:
/// a multipath channel, a carrier frequency offset, a complex gain and additive
/// white Gaussian noise. Every random draw comes from a seed the caller chooses (and
/// prints), so a capture is reproducible bit for bit; every stage can impair any
/// block of a capture on its own (given the samples before it), so blocks may be
/// made in any order, on any thread, with the same result.
///
/// Order, as on a real link: y[n] = g e^{j phi} e^{j 2 pi f n / fs} (h * s)[n] + w[n],
/// n the sample index from the start of the capture.
#pragma once

#include <whd/baseband/profile.hpp>
#include <whd/transport/sample_types.hpp>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

namespace whd::baseband {

/// Independent seeds for the four random streams of a capture, derived from one
/// master seed (splitmix64), so that changing e.g. the noise leaves the payload.
struct impairment_seeds {
  uint64_t payload = 0; ///< random payload bytes
  uint64_t channel = 0; ///< multipath taps
  uint64_t phase = 0;   ///< random carrier phase
  uint64_t noise = 0;   ///< AWGN
};

/// Seeds of the streams for master seed `seed`.
impairment_seeds derive_seeds(uint64_t seed);

/// Seed of stream `index` of a family of independent streams (frame i's payload,
/// sample n's noise): output `index` (from 0) of splitmix64 started at `seed`. Any
/// index is reached at once, so streams can be drawn in any order.
uint64_t derive_stream_seed(uint64_t seed, uint64_t index);

// ---------------------------------------------------------------- multipath

/// Draws a multipath channel of `nof_taps` taps at delays 0, 1, ..., nof_taps - 1
/// samples: tap l is complex Gaussian with mean power 10^(-decay_dB_per_tap * l / 10)
/// (an exponentially decaying power profile), then all taps are scaled together to
/// unit energy (sum |h_l|^2 = 1). One tap gives h = {1} (a flat channel, no draw).
/// @param nof_taps 1 .. profile::G (the delay spread stays inside the guard)
/// @param decay_dB_per_tap >= 0 [dB]
/// @throws std::invalid_argument outside those ranges
std::vector<cf32> multipath_taps(int nof_taps, double decay_dB_per_tap, uint64_t seed);

/// Mean of |H[k]|^2 over the profile's 352 used tones, H the 512-point DFT of the
/// taps: the factor by which the channel scales the power of a frame.
double used_tone_power_gain(std::span<const cf32> taps);

/// A streaming FIR channel: out[n] = sum_l h[l] in[n - l], with the input before
/// the first call taken as zero and the history kept across calls.
class multipath_channel {
public:
  explicit multipath_channel(std::vector<cf32> taps);
  /// Filter the next samples in place.
  void run(std::span<cf32> inout);
  /// Filter a block given with the inputs before it: out[n] = sum_l h[l] in[n + L - 1 - l],
  /// L the number of taps; the same values run() gives for those samples. Keeps no
  /// state, so blocks may be filtered on several threads at once.
  /// @param[in] in out.size() + L - 1 samples: the L - 1 inputs before the block, then the block
  /// @param[out] out the filtered block
  /// @throws std::invalid_argument on other sizes
  void filter(std::span<const cf32> in, std::span<cf32> out) const;
  const std::vector<cf32>& taps() const noexcept { return taps_; }

private:
  std::vector<cf32> taps_;
  std::vector<cf32> history_; // the last taps - 1 inputs, oldest first, then the block being filtered
};

// ---------------------------------------------------------------- carrier

/// Rotates sample n (the index from the start of the capture) by
/// e^{j 2 pi cfo_Hz n / rate_sps}: a phase continuous over the whole capture. The
/// phase at each block's first sample is computed in double from its index, and
/// advanced by a double-precision phasor inside the block, so it does not drift
/// over long captures.
class carrier_offset {
public:
  carrier_offset(double cfo_Hz, double rate_sps);
  /// Rotate samples [first_sample, first_sample + inout.size()), and multiply them
  /// by `gain` in the same pass.
  void run(uint64_t first_sample, std::span<cf32> inout, std::complex<double> gain = 1.0) const;
  double cycles_per_sample() const noexcept { return cycles_per_sample_; }

private:
  double cycles_per_sample_;
};

// ---------------------------------------------------------------- noise

/// The capture's SNR definition (shared/vectors/README.md): mean signal power over
/// the frames against the noise power over the whole band.
/// @return complex noise power E|w|^2 for `signal_power` and `snr_dB`
double noise_power_for_snr(double signal_power, double snr_dB);

/// Adds complex white Gaussian noise of power E|w|^2 = `noise_power` (each of I and
/// Q has variance noise_power / 2) over the whole band. Sample n's noise is drawn
/// from a stream of its own, derive_stream_seed(seed, n) (splitmix64, Marsaglia's
/// polar method), so that it depends on the seed and n alone: a capture's blocks
/// get the same noise in any order and on any thread. The normal draws are made here
/// from the generator's bits (not by std::normal_distribution, which differs between
/// standard libraries), so a seed gives the same noise everywhere.
class awgn {
public:
  awgn(double noise_power, uint64_t seed);
  /// Add noise to the next samples (those after the previous call's; sample 0 first).
  void add(std::span<cf32> inout);
  /// Add the noise of samples [first_sample, first_sample + inout.size()).
  void add_at(uint64_t first_sample, std::span<cf32> inout) const;
  double noise_power() const noexcept { return power_; }

private:
  double power_;
  uint64_t seed_;
  uint64_t next_sample_ = 0;
};

// ---------------------------------------------------------------- the chain

/// The impairments of one capture.
struct impairment_config {
  std::optional<double> snr_dB;  ///< SNR per the definition above; none: noiseless
  double cfo_Hz = 0.0;           ///< carrier frequency offset [Hz]
  int nof_taps = 1;              ///< multipath taps; 1: no multipath
  double tap_decay_dB = 3.0;     ///< power profile slope of the taps [dB per tap]
  double gain = 1.0;             ///< amplitude gain (linear, > 0)
  double phase_rad = 0.0;        ///< carrier phase [rad], unless random_phase
  bool random_phase = false;     ///< draw the phase uniformly in [0, 2 pi) from the phase seed
  double sample_rate_sps = profile::SAMPLE_RATE_SPS; ///< to turn cfo_Hz into cycles per sample
};

/// The chain channel -> CFO -> gain and phase -> noise, applied block by block to
/// the clean samples of a capture in order.
class impairment_chain {
public:
  /// @param clean_signal_power mean power of the clean frames (1 for the profile's
  ///   normalisation): the reference of the SNR together with the channel and gain
  /// @throws std::invalid_argument on a bad configuration
  impairment_chain(const impairment_config& cfg, const impairment_seeds& seeds, double clean_signal_power = 1.0);

  /// Impair samples [first_sample, first_sample + inout.size()) in place; calls must
  /// follow each other without gaps.
  void run(uint64_t first_sample, std::span<cf32> inout);

  /// Impair samples [first_sample, first_sample + out.size()) from their clean values
  /// given with the taps().size() - 1 clean samples before them (zeros before sample
  /// 0), without state: blocks may be impaired in any order, on several threads at
  /// once. Equal to run() over the same blocks (the CFO's phasor starts again at each
  /// block's first sample, as in run()).
  /// @param[in] clean out.size() + taps().size() - 1 clean samples, the block's last
  /// @param[out] out the impaired block
  /// @throws std::invalid_argument on other sizes
  void apply(uint64_t first_sample, std::span<const cf32> clean, std::span<cf32> out) const;

  const std::vector<cf32>& taps() const noexcept { return channel_.taps(); }
  /// g e^{j phi}.
  std::complex<double> complex_gain() const noexcept { return gain_; }
  /// Mean power of the impaired frames without noise: gain^2 * used_tone_power_gain * clean.
  double signal_power() const noexcept { return signal_power_; }
  /// Noise power E|w|^2; 0 when noiseless.
  double noise_power() const noexcept { return noise_ ? noise_->noise_power() : 0.0; }

private:
  multipath_channel channel_;
  carrier_offset cfo_;
  std::complex<double> gain_;
  double signal_power_;
  std::optional<awgn> noise_;
  uint64_t next_sample_ = 0;
};

} // namespace whd::baseband
