/// @file fec_bench.hpp
/// `whd-bench fec`: the FEC of coded frames alone. On the GPU device-resident (soft
/// values on the device to information bytes on the device: the receiver's gpu_fec),
/// per stage (Viterbi, RS and the rest); on the CPU the coded decoder over all host
/// threads; both on the same frames, their bytes compared. With gpus = N > 1 also the
/// same frames split over N GPUs (a host thread each enqueuing, wall time from the
/// first enqueue to the last GPU done) beside one GPU timed the same way.
#pragma once

#include <whd/rx_bench/bench_env.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace whd::rx_bench {

struct fec_bench_config {
  int mcs = 2;
  uint32_t nd = 4096;       ///< data symbols per frame
  unsigned frames = 64;     ///< frames per run
  double flip = 0.01;       ///< fraction of soft values turned against their bit
  unsigned repeats = 10;    ///< timed runs (median)
  unsigned cpu_threads = 0; ///< 0: all
  int gpus = 1;             ///< N > 1: the frames also split over N GPUs, against one GPU host-timed alike
  uint64_t seed = 1;
  std::string commit, command;
};

struct fec_bench_row {
  std::string what;
  double median_s = 0.0, min_s = 0.0, max_s = 0.0;
  double info_gbps = 0.0; ///< information bits per second of the median
};

struct fec_bench_result {
  bench_env env;
  fec_bench_config cfg;
  uint64_t info_bits = 0, coded_bits = 0;
  bool same_bytes = false; ///< GPU's information bytes = CPU's (each GPU count's)
  int gpus_present = 0;    ///< CUDA devices present (the N-GPU rows need cfg.gpus of them)
  uint64_t rs_failed = 0, rs_corrected = 0;
  std::vector<fec_bench_row> rows;
};

fec_bench_result run_fec_bench(const fec_bench_config& cfg, const std::function<void(std::string_view)>& progress);
std::string to_json(const fec_bench_result& r);
std::string to_markdown(const fec_bench_result& r);

} // namespace whd::rx_bench
