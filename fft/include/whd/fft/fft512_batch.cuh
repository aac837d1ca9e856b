/// @file fft512_batch.cuh
/// The batched kernel: load -> registers -> fft512_forward -> store, for any loader
/// and storer. The library instantiates it for its three input types and cf32 output
/// (fft512.hpp); a fused kernel may instantiate it with its own storer that consumes
/// the bins in registers.
///
/// Block shape: dim3(64, GROUPS), one transform per 64-thread group (two warps).
/// Plain: block b does transforms GROUPS*b .. GROUPS*b + GROUPS-1.
/// Pipelined: a persistent grid; each block walks chunks b, b + gridDim.x, ... and
/// loads the next chunk's samples before it computes the current one.
#pragma once

#include <whd/fft/fft512_device.cuh>

#include <cuda_fp16.h>

#include <cstdint>

namespace whd::fft {

/// Loader of floating-point pairs (I, Q), transform f at d_in + 512 f: float2
/// (complex float) as it is, __half2 (IEEE binary16) converted exactly to float.
template <class T>
struct float_pair_loader {
  const T* d_in;
  template <class A>
  __device__ void load(std::uint32_t f, int t, float2 (&v)[8]) const
  {
    const T* p = d_in + std::size_t{f} * FFT_POINTS + A::input_base(t);
    WHD_UNROLL
    for (int j = 0; j < 8; ++j) {
      v[j] = to_float2(__ldcs(p + A::input_offset(j)));
    }
  }
  static __device__ __forceinline__ float2 to_float2(float2 x) { return x; }
  static __device__ __forceinline__ float2 to_float2(__half2 x) { return __half22float2(x); }
};
using cf32_loader = float_pair_loader<float2>;
using cf16_loader = float_pair_loader<__half2>;

/// Loader: int8 pairs (I, Q) times d_scale[f / per_scale]: one float scale for each
/// group of `per_scale` consecutive transforms (a block of symbols).
struct ci8_loader {
  const char2* d_in;
  const float* d_scale;
  std::uint32_t per_scale;
  template <class A>
  __device__ void load(std::uint32_t f, int t, float2 (&v)[8]) const
  {
    const char2* p = d_in + std::size_t{f} * FFT_POINTS + A::input_base(t);
    char2 c[8];
    WHD_UNROLL
    for (int j = 0; j < 8; ++j) {
      c[j] = __ldcs(p + A::input_offset(j));
    }
    const float s = __ldg(d_scale + f / per_scale);
    WHD_UNROLL
    for (int j = 0; j < 8; ++j) {
      v[j] = detail::make_cf(static_cast<float>(c[j].x) * s, static_cast<float>(c[j].y) * s);
    }
  }
};

/// Storer: complex float bins in natural order, transform f at d_out + 512 f.
struct cf32_storer {
  float2* d_out;
  template <class A>
  __device__ void store(std::uint32_t f, int t, const float2 (&v)[8]) const
  {
    float2* p = d_out + std::size_t{f} * FFT_POINTS + A::output_base(t);
    WHD_UNROLL
    for (int j = 0; j < 8; ++j) {
      __stcs(p + A::output_offset(j), v[j]);
    }
  }
};

/// Blocks per SM the kernel asks registers for: 1024 threads per SM (<= 64 registers
/// a thread) when plain, 768 (<= 80) when pipelined, which holds a second set of 8.
template <int GROUPS, bool PIPELINED>
inline constexpr int BATCH_MIN_BLOCKS = ((PIPELINED ? 768 : 1024) / (THREADS_PER_TRANSFORM * GROUPS)) > 0
                                            ? (PIPELINED ? 768 : 1024) / (THREADS_PER_TRANSFORM * GROUPS)
                                            : 1;

/// The batched forward transform of `count` transforms (see the file comment).
template <class A, int GROUPS, bool PIPELINED, class Load, class Store>
__global__ void __launch_bounds__(THREADS_PER_TRANSFORM* GROUPS, (BATCH_MIN_BLOCKS<GROUPS, PIPELINED>))
    fft512_batch_kernel(Load load, Store store, std::uint32_t count)
{
  __shared__ float2 scratch[GROUPS][A::SCRATCH_FLOAT2];
  const int t = static_cast<int>(threadIdx.x);
  const std::uint32_t g = threadIdx.y;
  if constexpr (!PIPELINED) {
    const std::uint32_t f = blockIdx.x * GROUPS + g;
    float2 v[8] = {};
    if (f < count) {
      load.template load<A>(f, t, v);
    }
    fft512_forward<A>(v, t, scratch[g]); // every thread takes the barriers
    if (f < count) {
      store.template store<A>(f, t, v);
    }
  } else {
    const std::uint32_t nof_chunks = (count + GROUPS - 1) / GROUPS;
    std::uint32_t chunk = blockIdx.x;
    std::uint32_t f = chunk * GROUPS + g;
    float2 next[8] = {};
    if (f < count) {
      load.template load<A>(f, t, next);
    }
    for (; chunk < nof_chunks; chunk += gridDim.x) {
      float2 v[8];
      WHD_UNROLL
      for (int j = 0; j < 8; ++j) {
        v[j] = next[j];
      }
      const std::uint32_t f_next = (chunk + gridDim.x) * GROUPS + g;
      if (f_next < count) {
        load.template load<A>(f_next, t, next);
      }
      __syncthreads(); // the previous chunk's last reads of the scratch are done
      fft512_forward<A>(v, t, scratch[g]);
      if (f < count) {
        store.template store<A>(f, t, v);
      }
      f = f_next;
    }
  }
}

} // namespace whd::fft
