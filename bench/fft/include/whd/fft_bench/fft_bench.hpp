/// @file fft_bench.hpp
/// `whd-bench fft`: times the project's 512-point transform against cuFFT on the
/// present GPU (CUDA events, warm-up, median of repeats), measures the device-to-device
/// copy ceiling in the same run, and tunes the variant per input type.
#pragma once

#include <whd/fft/tune_cache.hpp>
#include <whd/fft/variant.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace whd::fft::bench {

/// What to measure.
struct fft_bench_config {
  std::vector<int> log2_batches{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}; ///< batches 2^k
  int warmup = 3;                 ///< untimed launches before each measurement
  int repeats = 21;               ///< timed samples; the median is reported
  double sample_ms = 2.0;         ///< each sample runs back-to-back launches for about this long
  bool tune = false;              ///< time every variant first and keep the fastest per input type
  int tune_log2_batch = 16;       ///< batch the tuner times
  int tune_repeats = 9;           ///< samples per variant when tuning
  std::size_t nof_per_scale = 1;  ///< int8 input: transforms sharing one scale
  std::uint64_t seed = 1;         ///< of the random inputs
  std::filesystem::path tune_cache; ///< read (and written with tune) here
  std::string commit;             ///< the build's git commit, for the record
  std::string command;            ///< the command line, for the record
};

/// Per-transform time of one implementation: the median and spread of the samples.
struct timing {
  double median_ns = 0.0;
  double min_ns = 0.0;
  double max_ns = 0.0;
  int samples = 0;
  int launches_per_sample = 0;
};

/// One line of the table.
struct bench_row {
  std::string impl;        ///< "whd VARIANT", "cufft", "cufft convert+c2c", "cufft half-native"
  input_type input = input_type::cf32;
  std::size_t batch = 0;
  timing t;
  double bytes_per_fft = 0.0; ///< fewest bytes the problem moves: input read once, output written once
  double gflops = 0.0;        ///< 5 N log2 N / time
  double gbps = 0.0;          ///< bytes_per_fft / time
  double pct_of_ceiling = 0.0;
};

/// The copy ceiling measured in the same run (bytes read plus bytes written).
struct copy_ceiling {
  std::size_t bytes = 0;            ///< bytes copied per measurement
  double memcpy_gbps = 0.0;         ///< cudaMemcpyAsync device to device
  double kernel8_gbps = 0.0;        ///< copy kernel, 8-byte accesses as the FFT's loads
  double kernel16_gbps = 0.0;       ///< copy kernel, 16-byte accesses
  double ceiling_gbps = 0.0;        ///< the largest of the three
};

/// The GPU and software the run saw.
struct device_info {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t memory_bytes = 0;
  int sm_clock_khz = 0;          ///< peak, as the driver reports it
  int memory_clock_khz = 0;      ///< peak
  int memory_bus_bits = 0;
  double datasheet_gbps = 0.0;   ///< 2 * memory clock * bus width
  int driver_version = 0;
  int runtime_version = 0;
  int cufft_version = 0;
};

/// One variant's time in the tuner.
struct tune_entry {
  input_type input = input_type::cf32;
  variant v;
  double ns_per_fft = 0.0;
};

/// Everything a run measured.
struct fft_bench_result {
  device_info device;
  std::string date;     ///< UTC, ISO 8601
  std::string commit;
  std::string command;
  copy_ceiling ceiling;
  std::vector<tune_entry> tune;   ///< empty without --tune
  tuned_choice choice;            ///< the variants timed as "ours"
  std::vector<bench_row> rows;
  /// Ours against cuFFT on the same random inputs, relative L2 (a sanity check).
  std::vector<std::pair<std::string, double>> checks;
};

/// Run the benchmark. `progress` receives one line per step (for the app's log).
/// @throws whd::cuda::cuda_error, std::runtime_error (cuFFT failures, no device)
fft_bench_result run_fft_bench(const fft_bench_config& config, const std::function<void(std::string_view)>& progress);

/// The result as JSON text.
std::string to_json(const fft_bench_result& r);
/// The result as a Markdown report: device, date, command, ceiling, table.
std::string to_markdown(const fft_bench_result& r);

/// Current UTC time, ISO 8601.
std::string utc_now();

} // namespace whd::fft::bench
