/// @file compare_bench.hpp
/// `whd-bench compare CAPTURE`: one capture through every backend and link
/// packing available (CPU; GPU with the f32, half and int8 links for a cf32
/// capture, one GPU row for ci8 and ci16, which cross as stored), each timed end
/// to end (capture file opened -> payload file written, profile §8), their payload
/// bits compared pair by pair (and with NAME.truth when it lies beside the
/// capture), and each one's speed-up over the plain liquid-dsp chain (guard skip,
/// fft_execute, modemcf_demodulate) measured on the same machine in the same run.
#pragma once

#include <whd/rx_bench/bench_env.hpp>
#include <whd/transport/link_pack.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace whd::rx_bench {

/// What to measure.
struct compare_bench_config {
  std::filesystem::path capture;   ///< SigMF or raw capture (profile §6)
  std::optional<std::filesystem::path> truth; ///< payload truth; none: NAME.truth beside the capture if present
  unsigned threads = 0;            ///< CPU threads for the CPU backend and the plain chain (0: all)
  bool gpu = true;                 ///< include the GPU backend when a GPU is present
  std::vector<transport::link_format> links{transport::link_format::f32, transport::link_format::half,
                                            transport::link_format::int8};
  std::size_t gpu_batch = 1u << 15; ///< GPU data symbols per batch
  bool plain_one_thread = true;    ///< also time the plain chain on one thread (slow on large captures)
  int warmup = 1;
  int repeats = 5;
  std::string commit, command;
};

/// One backend or chain.
struct compare_row {
  std::string name;        ///< "cpu", "gpu f32", ..., "plain liquid-dsp"
  std::string region;      ///< "end-to-end" or "located symbols"
  unsigned threads = 0;
  timing_summary time;
  double ns_per_symbol = 0.0;
  double speedup_vs_plain = 0.0; ///< plain chain (all threads) ns/symbol over this row's
  std::optional<uint64_t> truth_bit_errors;
};

/// Bit differences between two backends' payloads.
struct compare_pair {
  std::string a, b;
  uint64_t bits_compared = 0;
  uint64_t differences = 0;
};

struct compare_bench_result {
  bench_env env;
  std::string capture, datatype, truth;
  uint64_t samples = 0, frames = 0, data_symbols = 0, payload_bytes = 0;
  int bits_per_symbol = 0;
  std::vector<compare_row> rows;
  std::vector<compare_pair> pairs;
};

/// Run it; `progress` gets one line per step.
/// @throws transport::capture_error, std::runtime_error, whd::cuda::cuda_error
compare_bench_result run_compare_bench(const compare_bench_config& cfg, const std::function<void(std::string_view)>& progress);

std::string to_json(const compare_bench_result& r);
std::string to_markdown(const compare_bench_result& r);

} // namespace whd::rx_bench
