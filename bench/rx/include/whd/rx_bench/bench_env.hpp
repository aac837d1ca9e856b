/// @file bench_env.hpp
/// What every whd-bench report records about where and how it ran (device and
/// driver when a GPU is present, CPU model, host threads, commit, date, command),
/// and the repeated-timing summary the cpu, ber and compare reports share.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace whd::rx_bench {

/// The machine and the run.
struct bench_env {
  bool gpu = false;            ///< a CUDA device is usable
  std::string device = "none"; ///< GPU name, or "none"
  std::string driver = "-";    ///< CUDA driver version "13.0", or "-"
  std::string no_gpu_reason;   ///< why GPU rows are skipped ("" when a GPU is present)
  std::string cpu;             ///< /proc/cpuinfo model name
  unsigned host_threads = 0;   ///< std::thread::hardware_concurrency
  std::string liquid_version;  ///< liquid-dsp's LIQUID_VERSION
  std::string commit, date, command;
};

/// Collects the environment; `allow_gpu` false records the GPU as skipped by request.
bench_env collect_env(const std::string& commit, const std::string& command, bool allow_gpu = true);

/// JSON object of the environment.
nlohmann::json to_json(const bench_env& e);
/// Markdown bullet lines of the environment.
std::string to_markdown(const bench_env& e);

/// Repeated timings of one measured region [s]: median and spread (min..max).
struct timing_summary {
  double median_s = 0.0, min_s = 0.0, max_s = 0.0;
  int repeats = 0;
};
/// Summary of the timings (at least one).
timing_summary summarise(std::vector<double> seconds);

/// profile §8 figures of a region that processed `symbols` data symbols of
/// `bits_per_symbol` bits: ns per symbol (median, min, max), x real time and raw Gbps.
nlohmann::json throughput_json(const timing_summary& t, uint64_t symbols, int bits_per_symbol);

} // namespace whd::rx_bench
