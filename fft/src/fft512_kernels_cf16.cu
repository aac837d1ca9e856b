/// @file fft512_kernels_cf16.cu
/// The batched kernels for cf16 input, every variant.
#include "fft512_kernels.cuh"

namespace whd::fft::detail {

const launch_fn* launch_table_cf16() { return LAUNCH_TABLE<input_type::cf16>.data(); }

} // namespace whd::fft::detail
