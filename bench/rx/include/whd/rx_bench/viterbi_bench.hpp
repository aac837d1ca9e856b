/// @file viterbi_bench.hpp
/// `whd-bench viterbi`: the CPU soft Viterbi (fec::decode_tiles, one thread) against
/// libfec's K=7 rate-1/2 decoder (viterbi27, the same generators), in decoded bits per
/// second of one core, on the same noisy streams, with the bits each gets wrong.
#pragma once

#include <whd/rx_bench/bench_env.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace whd::rx_bench {

struct viterbi_bench_config {
  uint64_t stream_bits = 1u << 20; ///< trellis steps per stream (one encoder's)
  unsigned streams = 8;            ///< streams per timed run
  unsigned repeats = 7;            ///< timed runs; the median is reported
  double ebn0_dB = 4.0;            ///< noise of the streams (rate 1/2, BPSK per coded bit)
  uint64_t seed = 1;
  std::string commit, command;
};

struct viterbi_row {
  std::string decoder;          ///< what ran
  std::string rate;             ///< the code rate it decoded
  double median_s = 0.0, min_s = 0.0, max_s = 0.0; ///< seconds per timed run (all streams)
  uint64_t bits = 0;            ///< decoded bits per timed run
  uint64_t bit_errors = 0;      ///< against the encoded bits, one run
  double mbps() const { return median_s > 0 ? double(bits) / median_s / 1e6 : 0.0; }
};

struct viterbi_bench_result {
  bench_env env;
  viterbi_bench_config cfg;
  bool vectorised = false;
  std::vector<viterbi_row> rows;
};

viterbi_bench_result run_viterbi_bench(const viterbi_bench_config& cfg, const std::function<void(std::string_view)>& progress);
std::string to_json(const viterbi_bench_result& r);
std::string to_markdown(const viterbi_bench_result& r);

} // namespace whd::rx_bench
