/// @file cufft_chain.hpp
/// The baseline chain of the pipeline benchmark: unpack and derotate into a
/// complex-float buffer, cuFFT's batched C2C transform, then the same pilot,
/// equalisation and demapping step as the fused kernel, as a separate kernel.
#pragma once

#include "gpu_symbol_decoder.hpp"

#include <whd/transport/cuda.hpp>

#include <cufft.h>

#include <map>

namespace whd::rx_bench {

class cufft_chain {
public:
  /// Work space for batches of up to `max_symbols`.
  explicit cufft_chain(std::size_t max_symbols);
  ~cufft_chain();
  cufft_chain(const cufft_chain&) = delete;
  cufft_chain& operator=(const cufft_chain&) = delete;

  /// Enqueue the three steps for a batch on `stream` (no sync).
  void run(transport::link_format fmt, const baseband::gpu::batch_view& b, cudaStream_t stream);

private:
  cufftHandle plan_for(std::size_t count);
  std::size_t max_symbols_;
  cuda::device_buffer<float2> work_;
  std::map<std::size_t, cufftHandle> plans_;
};

} // namespace whd::rx_bench
