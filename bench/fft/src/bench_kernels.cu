/// @file bench_kernels.cu
#include "bench_kernels.hpp"

#include <whd/transport/cuda.hpp>

#include <cuda_fp16.h>

namespace whd::fft::bench::detail {

namespace {

constexpr int BLOCK = 256;

__device__ std::uint64_t splitmix64(std::uint64_t x)
{
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Two uniform floats in [-1, 1) from one hash.
__device__ float2 uniform2(std::uint64_t seed, std::size_t i)
{
  const std::uint64_t h = splitmix64(seed * 0x2545F4914F6CDD1Dull ^ i);
  const float a = static_cast<float>(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
  const float b = static_cast<float>((h >> 16) & 0xFFFFFFu) * (1.0f / 8388608.0f) - 1.0f;
  return make_float2(a, b);
}

__global__ void fill_cf32_kernel(float2* out, std::size_t n, std::uint64_t seed)
{
  for (std::size_t i = blockIdx.x * std::size_t{BLOCK} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * BLOCK) {
    out[i] = uniform2(seed, i);
  }
}

__global__ void fill_cf16_kernel(__half2* out, std::size_t n, std::uint64_t seed)
{
  for (std::size_t i = blockIdx.x * std::size_t{BLOCK} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * BLOCK) {
    out[i] = __float22half2_rn(uniform2(seed, i));
  }
}

__global__ void fill_ci8_kernel(char2* out, std::size_t n, std::uint64_t seed)
{
  for (std::size_t i = blockIdx.x * std::size_t{BLOCK} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * BLOCK) {
    const float2 u = uniform2(seed, i);
    out[i] = make_char2(static_cast<signed char>(__float2int_rn(u.x * 127.0f)),
                        static_cast<signed char>(__float2int_rn(u.y * 127.0f)));
  }
}

__global__ void fill_scales_kernel(float* out, std::size_t n, std::uint64_t seed)
{
  for (std::size_t i = blockIdx.x * std::size_t{BLOCK} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * BLOCK) {
    out[i] = (1.25f + 0.75f * uniform2(seed, i).x) / 127.0f;
  }
}

__global__ void convert_cf16_kernel(const __half2* in, float4* out, std::size_t pairs)
{
  for (std::size_t i = blockIdx.x * std::size_t{BLOCK} + threadIdx.x; i < pairs; i += std::size_t{gridDim.x} * BLOCK) {
    const float2 a = __half22float2(__ldcs(in + 2 * i));
    const float2 b = __half22float2(__ldcs(in + 2 * i + 1));
    __stcs(out + i, make_float4(a.x, a.y, b.x, b.y));
  }
}

__global__ void convert_ci8_kernel(const char4* in, const float* scale, std::size_t per_scale, float4* out,
                                   std::size_t pairs)
{
  for (std::size_t i = blockIdx.x * std::size_t{BLOCK} + threadIdx.x; i < pairs; i += std::size_t{gridDim.x} * BLOCK) {
    const char4 c = __ldcs(in + i);
    const float s = __ldg(scale + (2 * i) / per_scale);
    __stcs(out + i, make_float4(c.x * s, c.y * s, c.z * s, c.w * s));
  }
}

template <class T, int PER_THREAD>
__global__ void __launch_bounds__(BLOCK) copy_kernel(const T* in, T* out)
{
  const std::size_t base = blockIdx.x * std::size_t{BLOCK * PER_THREAD} + threadIdx.x;
  T v[PER_THREAD];
#pragma unroll
  for (int j = 0; j < PER_THREAD; ++j) {
    v[j] = __ldcs(in + base + j * BLOCK);
  }
#pragma unroll
  for (int j = 0; j < PER_THREAD; ++j) {
    __stcs(out + base + j * BLOCK, v[j]);
  }
}

/// A grid for the grid-stride kernels: enough blocks to fill any current GPU.
unsigned stride_grid(std::size_t n)
{
  const std::size_t blocks = (n + BLOCK - 1) / BLOCK;
  return static_cast<unsigned>(std::min<std::size_t>(blocks, 132 * 32));
}

} // namespace

void fill_cf32(cf32* d_out, std::size_t n, std::uint64_t seed, stream_handle s)
{
  fill_cf32_kernel<<<stride_grid(n), BLOCK, 0, s>>>(reinterpret_cast<float2*>(d_out), n, seed);
  WHD_CUDA_CHECK_LAUNCH();
}

void fill_cf16(cf16* d_out, std::size_t n, std::uint64_t seed, stream_handle s)
{
  fill_cf16_kernel<<<stride_grid(n), BLOCK, 0, s>>>(reinterpret_cast<__half2*>(d_out), n, seed);
  WHD_CUDA_CHECK_LAUNCH();
}

void fill_ci8(ci8* d_out, std::size_t n, std::uint64_t seed, stream_handle s)
{
  fill_ci8_kernel<<<stride_grid(n), BLOCK, 0, s>>>(reinterpret_cast<char2*>(d_out), n, seed);
  WHD_CUDA_CHECK_LAUNCH();
}

void fill_scales(float* d_out, std::size_t n, std::uint64_t seed, stream_handle s)
{
  fill_scales_kernel<<<stride_grid(n), BLOCK, 0, s>>>(d_out, n, seed);
  WHD_CUDA_CHECK_LAUNCH();
}

void convert_cf16(const cf16* d_in, cf32* d_out, std::size_t n, stream_handle s)
{
  convert_cf16_kernel<<<stride_grid(n / 2), BLOCK, 0, s>>>(reinterpret_cast<const __half2*>(d_in),
                                                           reinterpret_cast<float4*>(d_out), n / 2);
  WHD_CUDA_CHECK_LAUNCH();
}

void convert_ci8(const ci8* d_in, const float* d_scale, std::size_t per_scale, cf32* d_out, std::size_t n,
                 stream_handle s)
{
  convert_ci8_kernel<<<stride_grid(n / 2), BLOCK, 0, s>>>(reinterpret_cast<const char4*>(d_in), d_scale, per_scale,
                                                          reinterpret_cast<float4*>(d_out), n / 2);
  WHD_CUDA_CHECK_LAUNCH();
}

void copy8(const cf32* d_in, cf32* d_out, std::size_t n, stream_handle s)
{
  const auto grid = static_cast<unsigned>(n / (BLOCK * 8));
  copy_kernel<float2, 8><<<grid, BLOCK, 0, s>>>(reinterpret_cast<const float2*>(d_in), reinterpret_cast<float2*>(d_out));
  WHD_CUDA_CHECK_LAUNCH();
}

void copy16(const cf32* d_in, cf32* d_out, std::size_t n, stream_handle s)
{
  const auto grid = static_cast<unsigned>(n / (2 * BLOCK * 4));
  copy_kernel<float4, 4><<<grid, BLOCK, 0, s>>>(reinterpret_cast<const float4*>(d_in), reinterpret_cast<float4*>(d_out));
  WHD_CUDA_CHECK_LAUNCH();
}

} // namespace whd::fft::bench::detail
