/// @file ber_bench.hpp
/// `whd-bench ber`: bit error rate against Eb/N0 on an AWGN channel, through
/// the whole receiver (generator -> receiver -> payload compared with the truth),
/// for the CPU backend and, when a GPU is present, the GPU backend with each link
/// packing (profile §7), beside uncoded Gray theory; and the calibration of the
/// soft output (LLRs) at each point: the empirical ln P(0|L)/P(1|L) against L.
///
/// Eb/N0 to the generator's SNR. The generator's SNR is the mean time-domain
/// signal power over the frames against the noise power over the whole band
/// (impairments.hpp). Every used tone of every symbol (preamble, header, pilots,
/// data) carries unit mean energy and the guard repeats body samples, so the
/// frames' mean power is S = (1/N^2) N (N/NOF_USED) NOF_USED = 1 per sample with
/// the profile's 1/sqrt(NOF_USED) scaling (§2). The receiver's unnormalised
/// N-point DFT puts a data tone's energy at N^2 S / NOF_USED and white noise of
/// power N0 per sample at N N0 per bin, so per data tone
///   Es/N0 = SNR * N / NOF_USED = SNR * 512/352   (SNR + 1.627 dB),
///   Eb/N0 = Es/N0 / B,  B = 2 (QPSK) or 4 (16-QAM) bits per tone;
/// hence SNR_dB = Eb/N0_dB + 10 log10(B) - 10 log10(512/352). The guard's 64
/// samples (0.51 dB of energy per symbol) are discarded by the receiver and do not
/// enter the ratio; neither do the pilots (16 of 352 tones). This is the mapping of
/// tests/baseband/ber_theory.hpp (tone_es_n0) as well.
#pragma once

#include <whd/baseband/llr_calibration.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/rx_bench/bench_env.hpp>
#include <whd/transport/link_pack.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace whd::rx_bench {

// ---------------------------------------------------------------- theory

/// Q(x) = P(N(0,1) > x).
double q_function(double x);
/// Uncoded Gray bit error probability at Eb/N0 (linear): QPSK Pb = Q(sqrt(2 Eb/N0));
/// 16-QAM Pb = (3 Q(a) + 2 Q(3a) - Q(5a)) / 4 with a = sqrt(4/5 Eb/N0) (exact for
/// Gray square 16-QAM: K. Cho, D. Yoon, IEEE Trans. Commun. 50(7), 2002).
double theory_ber(profile::modulation mod, double ebn0);
/// Eb/N0 [dB] at which theory gives `ber` (bisection over -10..40 dB).
double theory_ebn0_dB(profile::modulation mod, double ber);
/// The generator's SNR [dB] for an Eb/N0 [dB] (see the file comment).
double snr_dB_for_ebn0(profile::modulation mod, double ebn0_dB);

// ---------------------------------------------------------------- the measurement

/// What to measure.
struct ber_bench_config {
  std::vector<profile::modulation> mods{profile::modulation::qpsk, profile::modulation::qam16};
  std::vector<double> ebn0_qpsk_dB{3, 4, 5, 6, 7, 8, 9, 10};       ///< QPSK points [dB]
  std::vector<double> ebn0_qam16_dB{7, 8, 9, 10, 11, 12, 13, 14}; ///< 16-QAM points [dB]
  uint64_t target_errors = 200;   ///< a point stops once every backend has this many bit errors ...
  uint64_t max_bits = 20'000'000; ///< ... or this many bits compared
  uint32_t nd = 64;               ///< data symbols per frame
  uint32_t frames_per_chunk = 16; ///< frames per generated capture (one chunk of a point)
  double cfo_Hz = 0.0;            ///< carrier offset of every capture [Hz]
  uint64_t seed = 1;              ///< master seed; chunk seeds derive from it, the point and the chunk
  unsigned cpu_threads = 0;       ///< CPU backend threads (0: all)
  bool cpu = true;                ///< measure the CPU backend
  bool gpu = true;                ///< measure the GPU backend when a GPU is present
  /// GPU rows (gpu_config::link): the receiver sends the capture as stored, so only
  /// f32 is measured by default; other links give the same decisions.
  std::vector<transport::link_format> links{transport::link_format::f32};
  std::vector<double> targets{1e-3, 1e-4}; ///< BERs at which the distance from theory is reported
  /// Soft output: the CPU backend and the GPU's f32 link also write f32 LLRs, whose
  /// calibration against the truth is reported per point (llr_calibration.hpp).
  bool llr = true;
  std::string commit, command;
};

/// One Eb/N0 point of one backend.
struct ber_point {
  double ebn0_dB = 0.0, esn0_dB = 0.0, snr_dB = 0.0;
  uint64_t bits = 0, errors = 0;
  uint64_t frames_sent = 0, frames_missed = 0; ///< missed frames' bits are not in `bits`
  uint64_t bits_differing_from_f32 = 0;        ///< GPU half/int8: decisions that differ from the f32 link's
  double seconds = 0.0;                        ///< receiver time spent on the point
  std::optional<baseband::llr_calibration> llr; ///< soft values against the truth (ber_bench_config::llr)
  double ber() const { return bits ? double(errors) / double(bits) : 0.0; }
};

/// Where a curve crosses a target BER.
struct ber_crossing {
  double target = 0.0;
  double theory_ebn0_dB = 0.0;
  std::optional<double> ebn0_dB;   ///< interpolated; none when the points do not bracket the target
  std::optional<double> distance_dB; ///< ebn0_dB - theory_ebn0_dB
  std::string note;
};

/// One backend (and link) over the points of one modulation.
struct ber_curve {
  profile::modulation mod = profile::modulation::qpsk;
  std::string backend;   ///< "cpu" or "gpu"
  std::string link;      ///< "-" (cpu), "f32", "half", "int8"
  std::vector<ber_point> points;
  std::vector<ber_crossing> crossings;
  std::string label() const { return link == "-" ? backend : backend + " " + link; }
};

/// A link's distance from the f32 link at a target BER (same captures, so paired).
struct link_delta {
  profile::modulation mod = profile::modulation::qpsk;
  std::string link;
  double target = 0.0;
  std::optional<double> delta_dB;  ///< Eb/N0(link) - Eb/N0(f32) at the target
};

/// Everything a run measured.
struct ber_bench_result {
  bench_env env;
  ber_bench_config cfg;
  std::vector<ber_curve> curves;
  std::vector<link_delta> link_deltas;
  double seconds = 0.0;
};

/// Run it; `progress` gets one line per point.
/// @throws std::invalid_argument (bad configuration), whd::cuda::cuda_error
ber_bench_result run_ber_bench(const ber_bench_config& cfg, const std::function<void(std::string_view)>& progress);

/// The crossing of `points` (increasing Eb/N0) with `target`: the loss against
/// theory, Eb/N0 - theory_ebn0_dB(BER), is interpolated linearly in log10(BER)
/// between the two points that bracket the target (which removes the curvature
/// of log BER from the interpolation error).
ber_crossing find_crossing(profile::modulation mod, const std::vector<ber_point>& points, double target);

std::string to_json(const ber_bench_result& r);
std::string to_markdown(const ber_bench_result& r);

} // namespace whd::rx_bench
