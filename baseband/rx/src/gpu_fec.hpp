/// @file gpu_fec.hpp
/// The FEC of coded frames (profile 2) on the device, in the chunk that decodes each
/// frame's last symbol: the Viterbi of viterbi.hpp's definition (one thread a tile,
/// integer metrics, the same tiles, starts and tie-breaks: the CPU's bits exactly),
/// un-parsing and RS(224,216) (reed_solomon.hpp's: libfec's decoder, more than 4
/// corrections a failure). Internal to the receive chain.
#pragma once

#include "gpu_coded.hpp"

#include <whd/transport/cuda.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace whd::baseband::gpu {

/// One frame of a run, as the kernels read it (plain data, uploaded per run).
struct fec_job {
  const int8_t* streams;  ///< 8 Ce soft values (fec::demultiplex_symbols' layout)
  uint8_t* info;          ///< L bytes out
  uint8_t* decoded;       ///< 8 Q bytes of Viterbi output, encoder-major (scratch)
  uint64_t ce, nin, q, periods;
  uint64_t codewords, last_k;
  uint32_t pin, pout;
  uint8_t input[8], which[8];
};

/// Enqueues the FEC of coded frames; owns its scratch (grown when a run needs more,
/// which a capture does once or twice: its largest frames set the size).
class gpu_fec {
public:
  gpu_fec() = default;
  /// The FEC of `ends` on `stream` (their streams complete before it, in stream order):
  /// each frame's L bytes to its d_info, RS's (corrected, failed) to d_rs[2 i], [2 i + 1].
  /// `viterbi_done` (optional): recorded on `stream` between the Viterbi and RS kernels.
  void run(const std::vector<coded_end>& ends, uint32_t* d_rs, cudaStream_t stream, cudaEvent_t viterbi_done = nullptr);

  /// Tiles one Viterbi launch decodes at most (its decisions' scratch: 5.6 KB a tile).
  static constexpr std::size_t MAX_TILES = std::size_t(1) << 16;

  std::size_t device_bytes() const noexcept
  {
    return dec_.size_bytes() + decoded_.size_bytes() + d_jobs_.size_bytes() + d_tiles_at_.size_bytes() + d_words_at_.size_bytes();
  }

private:
  cuda::device_buffer<uint64_t> dec_;     ///< decisions, [step][tile] of one launch
  cuda::device_buffer<uint8_t> decoded_;  ///< every job's 8 Q bytes
  cuda::pinned_buffer<fec_job> h_jobs_;
  cuda::device_buffer<fec_job> d_jobs_;
  cuda::pinned_buffer<uint64_t> h_tiles_at_, h_words_at_; ///< prefix sums per job: tiles, codewords
  cuda::device_buffer<uint64_t> d_tiles_at_, d_words_at_;
};

} // namespace whd::baseband::gpu
