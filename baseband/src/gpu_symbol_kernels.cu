// The fused data-symbol kernel: link unpack -> CFO derotation -> 512-point FFT ->
// pilot common phase -> equalisation -> demapping -> payload bytes. One group of
// 64 threads per symbol; every intermediate stays in registers or shared memory.
#include "gpu_symbol_decoder.hpp"

#include <whd/baseband/demap.hpp>
#include "fft_device_shim.cuh"

#include <cuda_fp16.h>

namespace whd::baseband::gpu {

namespace p = profile;
namespace fd = whd::fft::device;

namespace {

constexpr int GROUP = 64;           // threads per symbol (one transform)
constexpr int SYMBOLS_PER_BLOCK = 4;
constexpr int BLOCK = GROUP * SYMBOLS_PER_BLOCK;
static_assert(GROUP == fd::THREADS && fd::VALUES == 8);

__device__ int16_t d_data_bin[p::NOF_DATA];
__device__ int16_t d_data_used[p::NOF_DATA];
__device__ int16_t d_pilot_bin[p::NOF_PILOTS];
__constant__ uint8_t c_pn[p::PN_PERIOD];

template <transport::link_format FMT>
__device__ __forceinline__ float2 load_sample(const void* samples, std::size_t index)
{
  if constexpr (FMT == transport::link_format::f32) {
    return static_cast<const float2*>(samples)[index];
  } else if constexpr (FMT == transport::link_format::half) {
    return __half22float2(static_cast<const __half2*>(samples)[index]);
  } else {
    const char2 c = static_cast<const char2*>(samples)[index];
    return make_float2(float(c.x), float(c.y));
  }
}

__device__ __forceinline__ float2 cmul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

template <transport::link_format FMT>
__global__ void __launch_bounds__(BLOCK) decode_kernel(batch_view b)
{
  __shared__ float2 smem[SYMBOLS_PER_BLOCK][fd::SMEM_FLOAT2];
  __shared__ float2 rot_s[SYMBOLS_PER_BLOCK];
  const int g = int(threadIdx.x) / GROUP;
  const int t = int(threadIdx.x) % GROUP;
  const std::size_t sym = std::size_t(blockIdx.x) * SYMBOLS_PER_BLOCK + std::size_t(g);
  const bool active = sym < b.count;
  const std::size_t s = active ? sym : b.count - 1; // idle groups still take part in the barriers

  const symbol_desc desc = b.symbols[s];
  const frame_params& fp = b.frames[desc.frame];
  const float scale = b.scales[s];
  // Phase of the window's first sample, reduced in double as the CPU does.
  double cyc = fp.cfo_cps * (fp.window_offset + double(desc.m) * p::SYMBOL_LEN);
  cyc -= rint(cyc);
  const float base = float(cyc);
  const float cfo = float(fp.cfo_cps);

  float2 v[fd::VALUES];
#pragma unroll
  for (int j = 0; j < fd::VALUES; ++j) {
    const int n = fd::input_index(t, j);
    float2 x = load_sample<FMT>(b.samples, s * p::N + std::size_t(n));
    float sn, cs;
    sincospif(-2.0f * (base + cfo * float(n)), &sn, &cs);
    v[j] = cmul(make_float2(x.x * scale, x.y * scale), make_float2(cs, sn));
  }
  fd::forward(v, smem[g], t);
  __syncthreads();
  float2* y = smem[g];
#pragma unroll
  for (int j = 0; j < fd::VALUES; ++j) {
    y[fd::output_bin(t, j)] = v[j];
  }
  __syncthreads();
  // Pilot common phase: sum_p Y[p] conj(H[p]) P[m], in the group's first 16 lanes.
  if (t < 32) {
    float2 acc = make_float2(0.0f, 0.0f);
    if (t < p::NOF_PILOTS) {
      acc = cmul(y[d_pilot_bin[t]], make_float2(fp.hconj_re[t], fp.hconj_im[t]));
    }
#pragma unroll
    for (int off = 8; off > 0; off >>= 1) {
      acc.x += __shfl_down_sync(0xffffffffu, acc.x, off);
      acc.y += __shfl_down_sync(0xffffffffu, acc.y, off);
    }
    if (t == 0) {
      const float sign = c_pn[desc.m % p::PN_PERIOD] ? -1.0f : 1.0f;
      const float mag = sqrtf(acc.x * acc.x + acc.y * acc.y);
      rot_s[g] = mag > 0.0f ? make_float2(sign * acc.x / mag, -sign * acc.y / mag) : make_float2(1.0f, 0.0f);
    }
  }
  __syncthreads();
  if (!active) {
    return;
  }
  const float2 rot = rot_s[g];
  uint8_t* out = b.out + s * OUT_STRIDE;
  auto equalised = [&](int d) {
    const int u = d_data_used[d];
    return cmul(cmul(y[d_data_bin[d]], make_float2(fp.inv_re[u], fp.inv_im[u])), rot);
  };
  if (fp.mod == int(p::modulation::qpsk)) {
    for (int byte = t; byte < p::NOF_DATA / 4; byte += GROUP) {
      unsigned bits = 0;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 z = equalised(4 * byte + j);
        bits = (bits << 2) | demap_qpsk(z.x, z.y);
      }
      out[byte] = uint8_t(bits);
    }
  } else {
    for (int byte = t; byte < p::NOF_DATA / 2; byte += GROUP) {
      unsigned bits = 0;
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const float2 z = equalised(2 * byte + j);
        bits = (bits << 4) | demap_qam16(z.x, z.y);
      }
      out[byte] = uint8_t(bits);
    }
  }
}

} // namespace

void upload_tables()
{
  WHD_CUDA_CHECK(cudaMemcpyToSymbol(d_data_bin, p::DATA_BIN.data(), sizeof(d_data_bin)));
  WHD_CUDA_CHECK(cudaMemcpyToSymbol(d_data_used, p::DATA_USED.data(), sizeof(d_data_used)));
  WHD_CUDA_CHECK(cudaMemcpyToSymbol(d_pilot_bin, p::PILOT_BIN.data(), sizeof(d_pilot_bin)));
  WHD_CUDA_CHECK(cudaMemcpyToSymbol(c_pn, p::PN.data(), sizeof(c_pn)));
}

void launch_decode(transport::link_format fmt, const batch_view& b, cudaStream_t stream)
{
  if (b.count == 0) {
    return;
  }
  const dim3 grid(unsigned((b.count + SYMBOLS_PER_BLOCK - 1) / SYMBOLS_PER_BLOCK));
  switch (fmt) {
  case transport::link_format::f32: decode_kernel<transport::link_format::f32><<<grid, BLOCK, 0, stream>>>(b); break;
  case transport::link_format::half: decode_kernel<transport::link_format::half><<<grid, BLOCK, 0, stream>>>(b); break;
  case transport::link_format::int8: decode_kernel<transport::link_format::int8><<<grid, BLOCK, 0, stream>>>(b); break;
  }
  WHD_CUDA_CHECK_LAUNCH();
}

} // namespace whd::baseband::gpu
