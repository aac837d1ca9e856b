// The FFT module's device function as the fused receiver kernel uses it: 64
// threads per symbol, thread t loads x[input_index(t, j)] into v[j] and after
// forward() holds Y[output_bin(t, j)].
#pragma once

#include <whd/fft/fft512_device.cuh>

namespace whd::fft::device {

/// The fused kernel runs the self-sorting ordering with table twiddles; the
/// exchange (shared memory or warp shuffles) follows the tune cache.
template <exchange E>
using algo_of = fft512_algo<ordering::stockham, E, twiddle::table>;
inline constexpr int THREADS = THREADS_PER_TRANSFORM;
inline constexpr int VALUES = VALUES_PER_THREAD;

/// The shuffle exchange's 8x8 transposes go through each warp's rows of the scratch:
/// the fused kernel is issue-bound, and the rows take about a fifth of the shuffles'
/// instructions.
inline constexpr lane_transpose TRANSPOSE = lane_transpose::warp_rows;

template <class A>
__host__ __device__ constexpr int smem_float2() { return scratch_float2<A, TRANSPOSE>(); }

/// Loads are x[t + 64 j] for every algorithm (fft512_device.cuh's contract).
__host__ __device__ constexpr int input_index(int t, int j) { return algo_of<exchange::smem>::input_index(t, j); }
static_assert(algo_of<exchange::shfl>::input_index(5, 3) == algo_of<exchange::smem>::input_index(5, 3));

/// Forward transform; the 64 threads of the group synchronise with `sync`.
template <class A, class Sync>
__device__ __forceinline__ void forward(float2 (&v)[VALUES], float2* smem, int t, Sync sync)
{
  fft512_forward<A, Sync, TRANSPOSE>(v, t, smem, sync);
}

/// K forward transforms at once; transform k uses smem + k * smem_float2<A>().
template <class A, int K, class Sync>
__device__ __forceinline__ void forward_many(float2 (&v)[K][VALUES], float2* smem, int t, Sync sync)
{
  fft512_forward_many<A, K, Sync, TRANSPOSE>(v, t, smem, smem_float2<A>(), sync);
}

} // namespace whd::fft::device
