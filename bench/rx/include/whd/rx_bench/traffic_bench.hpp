/// @file traffic_bench.hpp
/// `whd-bench traffic`: the traffic shapes users record, decoded as users run
/// whd-rx. Each shape is made once with the generator library (and kept for later
/// runs), then decoded per backend:
///   - gpu, cpu: the whole whd-rx process (`whd-rx CAPTURE --backend B -q -o PAYLOAD
///     --report FILE`), timed from outside, spawn to exit; its report gives the frames,
///     the data symbols and its own set-up/decode split;
///   - liquid: the plain liquid-dsp chain (guard skip, fft_execute, modemcf_demodulate
///     per data tone) in this process over the frames located beforehand: a
///     sub-region with no frame search, no process and no file.
/// Figures as x real time by air time (capture samples / 2.538 GS/s over the time)
/// and ns per data symbol; and whether the GPU's frames and payload equal the CPU's.
#pragma once

#include <whd/baseband/profile.hpp>
#include <whd/rx_bench/bench_env.hpp>
#include <whd/transport/link_pack.hpp>
#include <whd/transport/sample_types.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace whd::rx_bench {

/// One traffic shape: what whd-tx would be told to make it (SNR and seed are common).
struct traffic_shape {
  std::string name;
  std::vector<profile::modulation> mods; ///< cycled over the frames
  uint64_t nof_frames = 0;               ///< at scale 1
  uint32_t nd = 0;                       ///< data symbols per frame
  int taps = 1;                          ///< multipath taps (1: flat)
  double cfo_Hz = 0.0;
  bool random_phase = false;
  uint64_t gap_samples = 777;            ///< silence (noise) between frames, and after the last
  /// Coded frames (profile 2): MCS cycled over the frames (their constellations
  /// replace mods); empty: uncoded.
  std::vector<int> mcs = {};
};

/// The shapes: long, packets, tiny, bursty, and the coded long-mcs2 and packets-mcs12
/// (see traffic_bench.cpp for each).
const std::vector<traffic_shape>& traffic_shapes();
/// The shape named `name`, or nullopt.
std::optional<traffic_shape> find_traffic_shape(std::string_view name);
/// One line that says what a shape is ("16 x 65536 qam16, 4 taps, CFO 300 kHz, random phase").
std::string describe(const traffic_shape& s);

/// SNR and seed of every shape's capture.
inline constexpr double TRAFFIC_SNR_DB = 30.0;
inline constexpr uint64_t TRAFFIC_SEED = 7;

/// How a shape is decoded.
enum class traffic_backend { gpu, cpu, liquid };
/// "gpu", "cpu" or "liquid".
std::string_view to_string(traffic_backend b);
/// Parses "gpu", "cpu" or "liquid".
std::optional<traffic_backend> parse_traffic_backend(std::string_view s);

/// What to measure.
struct traffic_bench_config {
  std::vector<std::string> shapes{"long", "packets", "tiny", "bursty"};
  std::vector<datatype> types{datatype::ci8, datatype::cf32_le};
  /// Backends in the order run; nullopt: gpu when a GPU is present, then cpu and liquid.
  std::optional<std::vector<traffic_backend>> backends;
  /// Link forms the GPU backend runs a cf32 capture with, a row each (whd-rx --link);
  /// integer captures cross as stored: one GPU row.
  std::vector<transport::link_format> links{transport::link_format::f32};
  int repeats = 3;                                  ///< runs of each backend (median reported)
  double scale = 1.0;                               ///< frame counts scaled by this (at least one frame)
  std::filesystem::path dir = "/dev/shm/whd-shapes"; ///< the captures, made when missing, kept
  std::filesystem::path payload_dir = "/dev/shm";   ///< each whd-rx run's payload, report and stderr (removed after)
  std::filesystem::path rx;                         ///< the whd-rx binary (needed for gpu and cpu)
  std::string commit, command;
};

/// One backend on one capture.
struct traffic_row {
  std::string shape, datatype;
  traffic_backend backend = traffic_backend::cpu;
  /// gpu: how the capture crossed ("stored" for ci8 and ci16; f32, half or int8 for cf32); else empty.
  std::string link;
  std::string error;          ///< non-empty: the run failed (what whd-rx said); no figures
  timing_summary time;        ///< whole process (gpu, cpu) or the chain over the located frames (liquid)
  double x_realtime_air = 0.0;      ///< air seconds over time.median_s
  double ns_per_data_symbol = 0.0;  ///< time.median_s over data_symbols
  uint64_t frames = 0, header_failures = 0, data_symbols = 0, payload_bytes = 0;
  // gpu, cpu: the report's own timing of the median run (none where whd-rx could not
  // read its process start time)
  std::optional<double> report_setup_s;  ///< process start to the first samples handed to the backend
  std::optional<double> report_decode_s; ///< the rest, to the payload written
  std::optional<double> report_wall_s;   ///< process start to payload written, as the process saw it
  std::optional<uint64_t> truth_bit_errors; ///< payload against NAME.truth, when the capture has one
  // liquid
  unsigned threads = 0;         ///< threads of the plain chain
  double locate_s = 0.0;        ///< locating its frames beforehand (not in its time)
  std::optional<bool> frames_match_cpu; ///< its frames are the CPU backend's (start, mod, symbols), when cpu ran
};

/// The GPU's decode against the CPU's (the reference) on one capture.
struct traffic_agreement {
  std::string shape, datatype;
  std::string link; ///< the GPU row's (traffic_row::link)
  uint64_t frames_gpu = 0, frames_cpu = 0;
  uint64_t differing_frames = 0; ///< frames at the same index that differ, plus the count difference
  bool same_frames = false;      ///< start, mod, nd, seq, symbols, truncated of every frame
  bool same_payload = false;     ///< the payload files are byte for byte equal
  uint64_t differing_bits = 0;   ///< payload bits that differ (8 a byte either lacks)
  /// Packed (half, int8): quantisation may move values near a decision, so bits may
  /// differ; shown, not counted as a problem.
  bool packed() const noexcept { return link == "half" || link == "int8"; }
};

/// One capture of a shape.
struct traffic_capture {
  std::string shape, datatype;
  std::string path;          ///< the SigMF meta
  std::string description;   ///< describe() of the shape as made (scaled)
  uint64_t frames_sent = 0, data_symbols_sent = 0, samples = 0;
  double air_s = 0.0;        ///< samples / sample rate
  bool made = false;         ///< made in this run (false: reused)
  double make_s = 0.0;       ///< time to make it, when made
};

/// Everything a run measured.
struct traffic_bench_result {
  bench_env env;
  std::string dir, payload_dir, rx;
  int repeats = 0;
  double scale = 1.0;
  std::vector<traffic_backend> backends;
  std::vector<transport::link_format> links; ///< the GPU's for cf32 captures
  std::vector<traffic_capture> captures;
  std::vector<traffic_row> rows;
  std::vector<traffic_agreement> agreement;
  /// Rows that failed, plain-chain frames that are not the CPU backend's, and GPU/CPU
  /// comparisons that found a difference (on a link that crosses unpacked).
  uint64_t nof_problems() const;
};

/// Makes the missing captures, then decodes each with each backend `repeats` times;
/// `progress` gets one line per step. A whd-rx run that fails is recorded in its row
/// (error) and the run goes on.
/// @throws std::invalid_argument (unknown shape, bad setting), std::runtime_error (no
///   whd-rx at cfg.rx, a folder that cannot be written), transport::capture_error
traffic_bench_result run_traffic_bench(const traffic_bench_config& cfg, const std::function<void(std::string_view)>& progress);

std::string to_json(const traffic_bench_result& r);
std::string to_markdown(const traffic_bench_result& r);

} // namespace whd::rx_bench
