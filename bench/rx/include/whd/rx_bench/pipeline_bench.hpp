/// @file pipeline_bench.hpp
/// `whd-bench pipeline`: the GPU receive chain's regions (profile §8) on a
/// 16-QAM capture of >= 10^6 data symbols, beside a cuFFT-based chain and the
/// copy ceilings measured in the same run.
///  (a) device-resident: packed samples already on the GPU -> bits on the GPU
///  (b) pipeline: packed samples in pinned host memory -> bits in pinned host memory
///  (c) end-to-end: capture file (page cache) opened -> payload file written
#pragma once

#include <whd/rx_bench/bench_env.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace whd::rx_bench {

/// What to measure.
struct pipeline_bench_config {
  std::filesystem::path capture = "/tmp/whd-bench-pipeline"; ///< ci8 SigMF base; made with the generator if missing
  uint32_t nof_frames = 16;              ///< frames of the generated capture
  uint32_t nd = 65536;                   ///< data symbols per frame (16 x 65536 = 1,048,576)
  double snr_dB = 30.0;
  double cfo_Hz = 3e5;
  int taps = 4;
  uint64_t seed = 1;
  std::size_t symbols_per_batch = 1u << 15; ///< regions (a) and (b); (c) uses the receiver's default
  int nof_streams = 2;                   ///< batches in flight per GPU, regions (b) and (c) (the receiver's default)
  int nof_gpus = 1;                      ///< also measure the pipeline and end to end over this many GPUs
  int repeats = 7;                       ///< timed repeats per region (median reported)
  bool end_to_end = true;                ///< also region (c) and the CPU backend end to end
  std::filesystem::path payload;         ///< where region (c) writes the payload (default: beside the capture)
  std::vector<std::size_t> e2e_batches;  ///< region (c)'s symbols per batch, a row each (empty: the receiver's default)
  std::vector<unsigned> e2e_threads;     ///< region (c)'s host thread counts (whd-rx -j), a row each on 1 and --gpus GPUs
  unsigned cpu_threads = 0;              ///< CPU backend threads (0: all)
  std::string commit;
  std::string command;
};

/// One measured region.
struct region_row {
  std::string region;    ///< "device-resident", "pipeline", "end-to-end"
  std::string engine;    ///< "whd fused", "cufft chain", "whd cpu", "h2d copy"
  std::string link;      ///< "int8", "half", "f32"; end-to-end: the capture's datatype (it crosses as stored), or "-"
  uint64_t symbols = 0;
  double median_s = 0.0, min_s = 0.0, max_s = 0.0;
  double link_bytes = 0.0;  ///< bytes that crossed host->device in the region
  double ns_per_symbol() const { return symbols ? median_s * 1e9 / double(symbols) : 0.0; }
};

/// Everything a run measured.
struct pipeline_bench_result {
  bench_env env;
  uint64_t data_symbols = 0;
  double locate_s = 0.0;          ///< frame location on the host (CPU, once)
  double h2d_gbps = 0.0;          ///< pinned host -> device copy ceiling (cudaMemcpyAsync, 1 GiB, median)
  double d2h_gbps = 0.0;
  double d2d_gbps = 0.0;          ///< device copy, bytes read + written
  std::vector<std::pair<std::string, double>> pack_ns_per_symbol; ///< host packing per link form
  std::vector<region_row> rows;
  std::vector<std::pair<std::string, uint64_t>> bit_differences; ///< vs the CPU backend's payload
  std::vector<std::pair<std::string, double>> stage_seconds;      ///< end-to-end breakdown (first repeat)
};

/// Run it. `progress` gets one line per step.
/// @throws whd::cuda::cuda_error, std::runtime_error
pipeline_bench_result run_pipeline_bench(const pipeline_bench_config& cfg, const std::function<void(std::string_view)>& progress);

std::string to_json(const pipeline_bench_result& r);
std::string to_markdown(const pipeline_bench_result& r);

} // namespace whd::rx_bench
