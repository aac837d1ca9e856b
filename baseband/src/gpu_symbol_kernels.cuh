// The fused data-symbol kernel: link unpack -> CFO derotation -> 512-point FFT ->
// pilot common phase -> equalisation -> demapping -> payload bytes. One group of
// 64 threads per symbol; every intermediate stays in registers or shared memory.
// Instantiated per link form in gpu_symbol_kernels_<form>.cu, so the forms
// compile in parallel.
#pragma once

#include "fft_device_shim.cuh"
#include "gpu_symbol_device.cuh"

namespace whd::baseband::gpu {

namespace p = profile;
namespace fd = whd::fft::device;

namespace {

constexpr int SYMBOLS_PER_BLOCK = 4;
constexpr int BLOCK = GROUP * SYMBOLS_PER_BLOCK;
static_assert(GROUP == fd::THREADS && fd::VALUES == 8);

template <transport::link_format FMT, class ALGO>
__global__ void __launch_bounds__(BLOCK) decode_kernel(batch_view b)
{
  __shared__ float2 smem[SYMBOLS_PER_BLOCK][fd::smem_float2<ALGO>()];
  __shared__ float2 rot_s[SYMBOLS_PER_BLOCK];
  const int g = int(threadIdx.x) / GROUP;
  const int t = int(threadIdx.x) % GROUP;
  const std::size_t sym = std::size_t(blockIdx.x) * SYMBOLS_PER_BLOCK + std::size_t(g);
  const bool active = sym < b.count;
  const std::size_t s = active ? sym : b.count - 1; // an idle group still runs, on the last symbol, and writes nothing

  const symbol_desc desc = b.symbols[s];
  const frame_params& fp = b.frames[desc.frame];
  const float scale = b.scales[s];
  const float base = window_phase(fp, desc.m);
  const float cfo = float(fp.cfo_cps);

  // Each group synchronises on its own hardware barrier (ids 1..4; 0 is __syncthreads).
  const whd::fft::transform_sync sync{1 + g};
  float2 v[fd::VALUES];
#pragma unroll
  for (int j = 0; j < fd::VALUES; ++j) {
    v[j] = load_sample<FMT>(b.samples, s * p::N + std::size_t(fd::input_index(t, j)), scale);
  }
  static_assert(fd::input_index(0, 1) - fd::input_index(0, 0) == 64 && fd::input_index(1, 0) == 1, "derotate8 assumes x[t + 64 j]");
  derotate8(v, base, cfo, t, fd::THREADS);
  fd::forward<ALGO>(v, smem[g], t, sync);
  sync(); // the transform's last scratch reads are done before Y overwrites it
  float2* y = smem[g];
#pragma unroll
  for (int j = 0; j < fd::VALUES; ++j) {
    y[ALGO::output_bin(t, j)] = v[j];
  }
  sync();
  pilot_rotation(y, fp, desc.m, t, &rot_s[g]);
  sync();
  if (active) {
    demap_bytes(y, fp, rot_s[g], b.out + s * OUT_STRIDE, t);
  }
}

} // namespace

/// Launch the fused kernel for link form FMT with the FFT exchange `exch`.
template <transport::link_format FMT>
void launch_decode_form(fft::exchange exch, const batch_view& b, cudaStream_t stream)
{
  const dim3 grid(unsigned((b.count + SYMBOLS_PER_BLOCK - 1) / SYMBOLS_PER_BLOCK));
  if (exch == fft::exchange::shfl) {
    decode_kernel<FMT, fd::algo_of<fft::exchange::shfl>><<<grid, BLOCK, 0, stream>>>(b);
  } else {
    decode_kernel<FMT, fd::algo_of<fft::exchange::smem>><<<grid, BLOCK, 0, stream>>>(b);
  }
  WHD_CUDA_CHECK_LAUNCH();
}

} // namespace whd::baseband::gpu
