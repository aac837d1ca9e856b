#include "cufft_chain.hpp"

#include "gpu_symbol_device.cuh"

#include <stdexcept>
#include <string>

namespace whd::rx_bench {

namespace p = profile;
namespace gpu = baseband::gpu;

namespace {

void check_cufft(cufftResult r, const char* what)
{
  if (r != CUFFT_SUCCESS) {
    throw std::runtime_error(std::string("cuFFT: ") + what + " failed with code " + std::to_string(int(r)));
  }
}

template <transport::link_format FMT>
__global__ void __launch_bounds__(256) unpack_kernel(gpu::batch_view b, float2* work)
{
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= b.count * p::N) {
    return;
  }
  const std::size_t s = i / p::N;
  const int n = int(i % p::N);
  const gpu::symbol_desc desc = b.symbols[s];
  const gpu::frame_params& fp = b.frames[desc.frame];
  const float base = gpu::window_phase(fp, desc.number());
  work[i] = gpu::cmulf(gpu::load_sample<FMT>(b.samples, i, b.scales[s]), gpu::derotation(base, float(fp.cfo_cps), n));
}

constexpr int SYMBOLS_PER_BLOCK = 4;

/// Two passes, as the fused kernel's: every symbol's own derotation into b.rots, then
/// the decode with each symbol's averaged over its neighbours (gpu::neighbour_rotation).
template <bool DECODE>
__global__ void __launch_bounds__(gpu::GROUP* SYMBOLS_PER_BLOCK) demap_kernel(gpu::batch_view b, const float2* work)
{
  __shared__ float2 y_s[SYMBOLS_PER_BLOCK][p::N];
  __shared__ float2 rot_s[SYMBOLS_PER_BLOCK];
  __shared__ float mag_s[SYMBOLS_PER_BLOCK];
  __shared__ float2 red_s[SYMBOLS_PER_BLOCK][2];
  const int g = int(threadIdx.x) / gpu::GROUP;
  const int t = int(threadIdx.x) % gpu::GROUP;
  const std::size_t sym = std::size_t(blockIdx.x) * SYMBOLS_PER_BLOCK + std::size_t(g);
  const std::size_t s = sym < b.count ? sym : b.count - 1;
  const gpu::symbol_desc desc = b.symbols[s];
  const gpu::frame_params& fp = b.frames[desc.frame];
  const bool active = sym < b.count && (!DECODE || !desc.halo());
  for (int k = t; k < p::N; k += gpu::GROUP) {
    y_s[g][k] = work[s * p::N + std::size_t(k)];
  }
  __syncthreads();
  if constexpr (DECODE) {
    if (active) {
      gpu::demap_bytes(y_s[g], fp, gpu::neighbour_rotation(b, s, desc), b.out + s * gpu::OUT_STRIDE, t);
    }
  } else {
    if (t < 32) { // the first warp of the group finds the pilots' common phase
      float mag;
      const float2 rot = gpu::pilot_rotation(y_s[g][gpu::D_TONES.pilot_bin[t % p::NOF_PILOTS]], gpu::load_pilot_weight(fp, desc.number(), t), mag);
      if (t == 0) {
        rot_s[g] = rot;
        mag_s[g] = mag;
      }
    }
    __syncthreads();
    // A QPSK symbol's phase refined by its data, as the fused kernel does (demap.hpp's
    // Newton steps; every group meets each barrier).
    const bool qpsk = fp.mod == int(p::modulation::qpsk);
    float delta = 0.0f;
    for (int step = 0; step < baseband::QPSK_PHASE_STEPS; ++step) {
      float c, sn;
      baseband::small_rotation(delta, c, sn);
      const float2 r = gpu::cmulf(rot_s[g], make_float2(c, -sn));
      float d1 = 0.0f, d2 = 0.0f;
      if (qpsk) {
        for (int d = t; d < p::NOF_DATA; d += gpu::GROUP) {
          const int bin = gpu::D_TONES.data_bin[d];
          const float2 h = fp.inv[bin];
          const float2 z = gpu::cmulf(gpu::cmulf(y_s[g][bin], h), r);
          baseband::add_qpsk_phase_terms(z.x, z.y, baseband::llr_weight(h.x, h.y, fp.llr_inv_noise), d1, d2);
        }
      }
      for (int off = 16; off > 0; off >>= 1) {
        d1 += __shfl_xor_sync(0xffffffffu, d1, off);
        d2 += __shfl_xor_sync(0xffffffffu, d2, off);
      }
      if (t == 32) {
        red_s[g][1] = make_float2(d1, d2);
      }
      __syncthreads();
      if (t == 0) {
        red_s[g][0] = make_float2(d1 + red_s[g][1].x, d2 + red_s[g][1].y);
      }
      __syncthreads();
      if (qpsk) {
        delta = baseband::qpsk_phase_step(red_s[g][0].x, red_s[g][0].y, 2.0f * fp.llr_inv_noise * mag_s[g], delta);
      }
      __syncthreads();
    }
    if (active && t == 0) {
      float c, sn;
      baseband::small_rotation(delta, c, sn);
      b.rots[s] = gpu::cmulf(rot_s[g], make_float2(c, -sn)); // delta stays 0 on 16-QAM
    }
  }
}

} // namespace

cufft_chain::cufft_chain(std::size_t max_symbols) : max_symbols_(max_symbols), work_(max_symbols * p::N) {}

cufft_chain::~cufft_chain()
{
  for (auto& [count, plan] : plans_) {
    cufftDestroy(plan);
  }
}

cufftHandle cufft_chain::plan_for(std::size_t count)
{
  if (auto it = plans_.find(count); it != plans_.end()) {
    return it->second;
  }
  cufftHandle plan{};
  int n = p::N;
  check_cufft(cufftPlanMany(&plan, 1, &n, nullptr, 1, p::N, nullptr, 1, p::N, CUFFT_C2C, int(count)), "cufftPlanMany");
  plans_.emplace(count, plan);
  return plan;
}

void cufft_chain::run(transport::link_format fmt, const gpu::batch_view& b, cudaStream_t stream)
{
  if (b.count == 0) {
    return;
  }
  if (b.count > max_symbols_) {
    throw std::invalid_argument("cufft_chain: batch larger than its work space");
  }
  if (b.rots == nullptr) {
    throw std::invalid_argument("cufft_chain: the batch needs its derotations' scratch (batch_view::rots)");
  }
  const std::size_t samples = b.count * p::N;
  const unsigned grid = unsigned((samples + 255) / 256);
  switch (fmt) {
  case transport::link_format::f32: unpack_kernel<transport::link_format::f32><<<grid, 256, 0, stream>>>(b, work_.data()); break;
  case transport::link_format::half: unpack_kernel<transport::link_format::half><<<grid, 256, 0, stream>>>(b, work_.data()); break;
  case transport::link_format::int8: unpack_kernel<transport::link_format::int8><<<grid, 256, 0, stream>>>(b, work_.data()); break;
  }
  WHD_CUDA_CHECK_LAUNCH();
  const cufftHandle plan = plan_for(b.count);
  check_cufft(cufftSetStream(plan, stream), "cufftSetStream");
  auto* w = reinterpret_cast<cufftComplex*>(work_.data());
  check_cufft(cufftExecC2C(plan, w, w, CUFFT_FORWARD), "cufftExecC2C");
  const unsigned blocks = unsigned((b.count + SYMBOLS_PER_BLOCK - 1) / SYMBOLS_PER_BLOCK);
  demap_kernel<false><<<blocks, gpu::GROUP * SYMBOLS_PER_BLOCK, 0, stream>>>(b, work_.data());
  WHD_CUDA_CHECK_LAUNCH();
  demap_kernel<true><<<blocks, gpu::GROUP * SYMBOLS_PER_BLOCK, 0, stream>>>(b, work_.data());
  WHD_CUDA_CHECK_LAUNCH();
}

} // namespace whd::rx_bench
