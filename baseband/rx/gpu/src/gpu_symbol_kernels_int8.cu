// The fused kernel for the int8 link (see gpu_symbol_kernels.cuh).
#include "gpu_symbol_kernels.cuh"

namespace whd::baseband::gpu {

template void launch_decode_form<transport::link_format::int8>(fft::exchange, const batch_view&, cudaStream_t);

} // namespace whd::baseband::gpu
