// The fused kernel for the half link (see gpu_symbol_kernels.cuh).
#include "gpu_symbol_kernels.cuh"

namespace whd::baseband::gpu {

template void launch_decode_form<transport::link_format::half>(fft::exchange, const batch_view&, cudaStream_t);

} // namespace whd::baseband::gpu
