/// @file fft512_kernels_cf32.cu
/// The batched kernels for cf32 input, every variant.
#include "fft512_kernels.cuh"

namespace whd::fft::detail {

const launch_fn* launch_table_cf32() { return LAUNCH_TABLE<input_type::cf32>.data(); }

} // namespace whd::fft::detail
