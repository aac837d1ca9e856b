/// @file coded_ber_bench.hpp
/// `whd-bench ber --mcs`: the decoded bit and frame error rates of profile 2's coded
/// frames against Eb/N0 per information bit, as coding people judge a decoder:
/// - rx cpu (and rx gpu where a GPU is): the whole receiver, generated captures
///   (AWGN or a 4-tap channel, random phase) -> receiver (channel estimation
///   included) -> information bytes against the truth;
/// - genie: the same coded bits through the channel on each data tone with the
///   channel known, float max-log LLRs, a full-length float Viterbi, RS
///   (fec::decode_frame_float): the best this code gives;
/// - tiles: the genie's LLRs through the project's decoder (int8, tiles;
///   viterbi.hpp): what the one definition costs against the genie;
/// - hard: the genie's hard decisions (LLR = +-1 step) through the same decoder;
/// - theory: uncoded Gray QPSK / 16-QAM at the same Eb/N0.
/// Eb/N0 per information bit of each frame: Es/N0 per data tone = Eb/N0 B R with
/// R = 8 L / (Nd Ncbps) (RS, tail and pad included), and the generator's
/// SNR_dB = 10 log10(Es/N0) - 10 log10(512/352) (ber_bench.hpp).
#pragma once

#include <whd/rx_bench/bench_env.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace whd::rx_bench {

/// Estimation errors of the receiver's a genie row can be given (coded_ber_config).
struct genie_error_set {
  bool channel = false; ///< the channel estimate's: LS over two symbols, projected on the fewest taps kept
  bool phase = false;   ///< the pilots' common phase, a symbol at a time
};

struct coded_ber_config {
  std::vector<int> mcs{0, 1, 2, 7};
  std::vector<int> taps{1, 4};             ///< channels: 1 (AWGN) and multipath of this many taps
  std::map<int, std::vector<double>> ebn0_dB; ///< points per MCS; defaults where absent
  uint64_t min_info_bits = 100'000'000;    ///< information bits every row of a point holds at least
  uint32_t nd = 64;                        ///< data symbols per frame
  uint32_t frames_per_chunk = 64;          ///< frames per generated capture
  uint64_t seed = 1;
  unsigned cpu_threads = 0;                ///< CPU receiver and the genie's threads (0: all)
  bool rx_cpu = true;                      ///< the whole CPU receiver
  bool rx_gpu = true;                      ///< the whole GPU receiver, where a GPU is present
  /// Taps the receivers project their channel estimate on (rx_config::channel_taps; 0:
  /// plain least squares); -1: the receivers' default.
  int channel_taps = -1;
  /// The fewest taps a frame keeps (rx_config::channel_taps_min); -1: the receivers' default.
  int channel_taps_min = -1;
  /// Estimation errors the genie rows' LLRs carry, drawn as the receiver's would be (a
  /// measure of what each costs the code; none: the true genie).
  genie_error_set genie_errors;
  std::vector<double> targets{1e-4, 1e-5};
  std::string commit, command;
};

/// One variant's tallies at one Eb/N0.
struct coded_tally {
  uint64_t bits = 0, errors = 0;     ///< information bits compared, wrong
  uint64_t frames = 0, frame_errors = 0; ///< frames compared, frames with any wrong bit (a missed frame counts)
  uint64_t rs_failed = 0;            ///< codewords RS could not correct
  double seconds = 0.0;
  double ber() const { return bits ? double(errors) / double(bits) : 0.0; }
  double fer() const { return frames ? double(frame_errors) / double(frames) : 0.0; }
};

struct coded_point {
  double ebn0_dB = 0.0, snr_dB = 0.0, rate = 0.0;
  double theory_uncoded = 0.0; ///< uncoded Gray BER of the MCS's constellation at this Eb/N0
  std::map<std::string, coded_tally> rows; ///< "rx cpu", "rx gpu", "genie", "tiles", "hard"
};

struct coded_curve {
  int mcs = 0;
  int taps = 1;
  std::vector<coded_point> points;
  /// Eb/N0 [dB] at which a row crosses each target (log-linear between the two
  /// points that bracket it; none when they do not).
  std::map<std::string, std::vector<std::optional<double>>> crossings;
};

struct coded_ber_result {
  bench_env env;
  coded_ber_config cfg;
  std::vector<coded_curve> curves;
  double seconds = 0.0;
};

coded_ber_result run_coded_ber_bench(const coded_ber_config& cfg, const std::function<void(std::string_view)>& progress);
std::string to_json(const coded_ber_result& r);
std::string to_markdown(const coded_ber_result& r);

/// The default Eb/N0 points of an MCS [dB].
std::vector<double> default_coded_grid(int mcs);

} // namespace whd::rx_bench
