/// @file cpu_bench.hpp
/// `whd-bench cpu`: the CPU backend (make_cpu_receiver: frame location, CFO,
/// channel estimate, pilot phase, equalisation, demapping) over a whole capture,
/// on all threads and on one, against the plain liquid-dsp chain (guard skip,
/// fft_execute, modemcf_demodulate per data tone; no CFO, pilots or equalisation)
/// over the same located symbols, in the same run. Throughput as profile §8 states it.
#pragma once

#include <whd/baseband/profile.hpp>
#include <whd/rx_bench/bench_env.hpp>
#include <whd/transport/sample_types.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace whd::rx_bench {

/// What to measure.
struct cpu_bench_config {
  std::filesystem::path capture;   ///< an existing capture; empty: generate one in a temporary folder
  uint64_t symbols = 1u << 16;     ///< data symbols of a generated capture (rounded up to whole frames)
  uint32_t nd = 4096;              ///< data symbols per generated frame
  profile::modulation mod = profile::modulation::qam16;
  datatype type = datatype::ci8;   ///< sample format of a generated capture
  double snr_dB = 30.0;
  double cfo_Hz = 3e5;
  int taps = 4;
  uint64_t seed = 1;
  unsigned threads = 0;            ///< "all threads" (0: hardware threads)
  int warmup = 1;                  ///< untimed runs of each chain first
  int repeats = 5;                 ///< timed runs of each chain (median reported)
  std::string commit, command;
};

/// One chain at one thread count.
struct cpu_bench_row {
  std::string chain;   ///< "whd cpu" or "plain liquid-dsp"
  unsigned threads = 0;
  timing_summary time;
  double ns_per_symbol = 0.0;
};

/// Everything a run measured.
struct cpu_bench_result {
  bench_env env;
  std::string capture;           ///< what was read ("generated: ..." or the path)
  std::string datatype;
  uint64_t frames = 0;
  uint64_t data_symbols = 0;
  int bits_per_symbol = 0;
  double locate_s = 0.0;         ///< frame location once, for the plain chain (not in its time)
  std::vector<cpu_bench_row> rows;
  /// Plain chain's ns/symbol over ours, per thread count (> 1: ours is faster).
  std::vector<std::pair<unsigned, double>> speedup;
  bool truth_checked = false;    ///< a generated capture: ours compared with its truth
  uint64_t truth_bit_errors = 0;
  uint64_t truth_bits = 0;
};

/// Run it; `progress` gets one line per step.
/// @throws std::runtime_error (no frame in the capture), transport::capture_error
cpu_bench_result run_cpu_bench(const cpu_bench_config& cfg, const std::function<void(std::string_view)>& progress);

std::string to_json(const cpu_bench_result& r);
std::string to_markdown(const cpu_bench_result& r);

} // namespace whd::rx_bench
