/// @file gpu_fec.hpp
/// The FEC of coded frames (profile 2) in the GPU receiver, in the chunk that decodes
/// each frame's last symbol: fec::gpu_coded_decoder (the CPU's definitions bit for bit)
/// sized for the runs a capture needs. Internal to the receive chain.
#pragma once

#include "gpu_coded.hpp"

#include <whd/fec/gpu_coded_decoder.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace whd::baseband::gpu {

class gpu_fec {
public:
  /// The FEC of `ends` on `stream` (their streams complete before it, in stream order):
  /// each frame's L bytes to its d_info, RS's (corrected, failed) to d_rs[2 i], [2 i + 1].
  /// The decoder is made, or made larger, when a run needs more than it holds (a
  /// capture's largest frames set its size: once or twice a capture).
  /// `viterbi_done` (optional): recorded on `stream` between the Viterbi and RS kernels.
  void run(const std::vector<coded_end>& ends, uint32_t* d_rs, cudaStream_t stream, cudaEvent_t viterbi_done = nullptr);

  std::size_t device_bytes() const noexcept { return decoder_ ? decoder_->device_bytes() : 0; }

private:
  std::unique_ptr<fec::gpu_coded_decoder> decoder_;
  fec::gpu_coded_capacity cap_{0, 0, 0, 0};
  std::vector<fec::gpu_coded_frame> frames_;
};

} // namespace whd::baseband::gpu
