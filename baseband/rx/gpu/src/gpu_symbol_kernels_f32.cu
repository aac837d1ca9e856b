// The fused kernel for the f32 link (see gpu_symbol_kernels.cuh).
#include "gpu_symbol_kernels.cuh"

namespace whd::baseband::gpu {

template void launch_decode_form<transport::link_format::f32>(fft::exchange, const batch_view&, cudaStream_t);

} // namespace whd::baseband::gpu
