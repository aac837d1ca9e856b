/// @file fft512_kernels_ci8.cu
/// The batched kernels for ci8 input, every variant.
#include "fft512_kernels.cuh"

namespace whd::fft::detail {

const launch_fn* launch_table_ci8() { return LAUNCH_TABLE<input_type::ci8>.data(); }

} // namespace whd::fft::detail
