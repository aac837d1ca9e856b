#include "gpu_window_gather.hpp"

#include <whd/baseband/profile.hpp>
#include <whd/transport/cuda.hpp>

#include <algorithm>

namespace whd::baseband::gpu {

namespace {

constexpr int THREADS = 128;

__device__ __forceinline__ bool non_finite(float v) { return (__float_as_uint(v) & 0x7F800000u) == 0x7F800000u; }

/// One block per window: THREADS threads copy its N samples (float2 loads: the
/// windows start at any sample, 8-byte aligned).
__global__ void __launch_bounds__(THREADS) gather_windows(const float2* __restrict__ x, const uint32_t* __restrict__ offsets,
                                                           float2* __restrict__ win, uint32_t* __restrict__ bad)
{
  const std::size_t s = blockIdx.x;
  const float2* src = x + offsets[s];
  float2* dst = win + s * std::size_t(profile::N);
  uint32_t nof_bad = 0;
  for (int i = threadIdx.x; i < profile::N; i += THREADS) {
    float2 v = src[i];
    if (bad != nullptr && (non_finite(v.x) || non_finite(v.y))) {
      v = make_float2(0.0f, 0.0f);
      ++nof_bad;
    }
    dst[i] = v;
  }
  if (bad != nullptr) {
    __shared__ uint32_t total;
    if (threadIdx.x == 0) {
      total = 0;
    }
    __syncthreads();
    if (nof_bad != 0) {
      atomicAdd(&total, nof_bad);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      bad[s] = total;
    }
  }
}

__global__ void fill(float* __restrict__ x, std::size_t n, float value)
{
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    x[i] = value;
  }
}

} // namespace

void launch_fill(float* x, std::size_t n, float value, cudaStream_t stream)
{
  if (n == 0) {
    return;
  }
  fill<<<unsigned(std::min<std::size_t>((n + 255) / 256, 1024)), 256, 0, stream>>>(x, n, value);
  WHD_CUDA_CHECK_LAUNCH();
}

void launch_gather_windows(const float2* x, const uint32_t* offsets, std::size_t count, float2* win, uint32_t* bad,
                           cudaStream_t stream)
{
  if (count == 0) {
    return;
  }
  gather_windows<<<unsigned(count), THREADS, 0, stream>>>(x, offsets, win, bad);
  WHD_CUDA_CHECK_LAUNCH();
}

} // namespace whd::baseband::gpu
