// The FFT module's device function as the fused receiver kernel uses it: 64
// threads per symbol, thread t loads x[input_index(t, j)] into v[j] and after
// forward() holds Y[output_bin(t, j)].
#pragma once

#include <whd/fft/fft512_device.cuh>

namespace whd::fft::device {

/// Stockham with the second exchange by warp shuffles: one shared-memory barrier
/// per transform (measured within 0.5 % of the fastest batched variant).
using algo = fft512_algo<ordering::stockham, exchange::shfl, twiddle::table>;
inline constexpr int THREADS = THREADS_PER_TRANSFORM;
inline constexpr int VALUES = VALUES_PER_THREAD;
inline constexpr int SMEM_FLOAT2 = algo::SCRATCH_FLOAT2;

__host__ __device__ constexpr int input_index(int t, int j) { return algo::input_index(t, j); }
__host__ __device__ constexpr int output_bin(int t, int j) { return algo::output_bin(t, j); }

/// Forward transform; the 64 threads of the group synchronise with `sync`.
template <class Sync>
__device__ __forceinline__ void forward(float2 (&v)[VALUES], float2* smem, int t, Sync sync)
{
  fft512_forward<algo>(v, t, smem, sync);
}

} // namespace whd::fft::device
