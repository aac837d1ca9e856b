// The fused data-symbol kernel: link unpack -> CFO derotation -> 512-point FFT ->
// pilot common phase -> equalisation -> demapping -> payload bytes. One group of
// 64 threads per symbol; the transform's output stays in registers, and only the
// pilots and the decided bit groups go through shared memory.
// Instantiated per link form in gpu_symbol_kernels_<form>.cu, so the forms
// compile in parallel.
#pragma once

#include "fft_device_shim.cuh"
#include "gpu_symbol_device.cuh"

namespace whd::baseband::gpu {

namespace p = profile;
namespace fd = whd::fft::device;

namespace {

/// Two symbols a block: a barrier then waits for 4 warps rather than 8, at the
/// same warps per SM (registers limit both). H100 int8: 2.11 ns/symbol with 4
/// symbols a block, 1.94 with 2 (2026-11-23).
constexpr int SYMBOLS_PER_BLOCK = 2;
constexpr int BLOCK = GROUP * SYMBOLS_PER_BLOCK;
static_assert(GROUP == fd::THREADS && fd::VALUES == 8);

template <transport::link_format FMT, class ALGO>
__global__ void __launch_bounds__(BLOCK) decode_kernel(batch_view b)
{
  static_assert(ALGO::output_offset(1) == GROUP && ALGO::output_offset(SLOTS - 1) == GROUP * (SLOTS - 1),
                "the *_held pieces assume bins out_lane + 64 j");
  __shared__ float2 smem[SYMBOLS_PER_BLOCK][fd::smem_float2<ALGO>()];
  __shared__ float2 pilots_s[SYMBOLS_PER_BLOCK][p::NOF_PILOTS];
  __shared__ __align__(16) uint8_t bits_s[SYMBOLS_PER_BLOCK][BITS_BYTES];
  const int g = int(threadIdx.x) / GROUP;
  const int t = int(threadIdx.x) % GROUP;
  const std::size_t sym = std::size_t(blockIdx.x) * SYMBOLS_PER_BLOCK + std::size_t(g);
  const bool active = sym < b.count;
  const std::size_t s = active ? sym : b.count - 1; // an idle group still runs, on the last symbol, and writes nothing

  const symbol_desc desc = b.symbols[s];
  const frame_params& fp = b.frames[desc.frame];
  const float scale = b.scales[s];
  const float base = window_phase(fp, desc.m);
  const int lane = ALGO::output_base(t); // after the transform, this thread holds bins lane + 64 j
  const held_tones held = load_held_tones(lane);

  // Block-wide barriers: the groups run the same code in step, and named barriers
  // per group (5 ids a block) limited the SM to 4 blocks (ncu, 2026-11-22).
  const whd::fft::block_sync sync{};
  float2 v[fd::VALUES];
  // One base index and constant offsets, so that the loads share one address.
  const std::size_t first = s * p::N + std::size_t(fd::input_index(t, 0));
#pragma unroll
  for (int j = 0; j < fd::VALUES; ++j) {
    v[j] = load_sample<FMT>(b.samples, first + std::size_t(fd::input_index(0, j)), scale);
  }
  static_assert(fd::input_index(0, 1) - fd::input_index(0, 0) == 64 && fd::input_index(1, 0) == 1, "derotate8 assumes x[t + 64 j]");
  derotate8(v, base, fp, t);
  fd::forward<ALGO>(v, smem[g], t, sync);
  // Pilots, equalisation and decisions on the bins this thread holds; only the
  // pilots and the decided bit groups go through shared memory.
  store_held_pilot(v, held, pilots_s[g]);
  equalise_held(v, fp, lane);
  const pilot_weight weight = load_pilot_weight(fp, desc.m, t);
  const bool qpsk = fp.mod == int(p::modulation::qpsk);
  sync(); // the group's pilots are stored
  const float2 rot = pilot_rotation(pilots_s[g][t % p::NOF_PILOTS], weight);
  if (qpsk) {
    demap_held<false>(v, rot, held, bits_s[g]);
  } else {
    demap_held<true>(v, rot, held, bits_s[g]);
  }
  sync(); // the group's bit groups are stored
  if (active) {
    uint8_t* out = b.out + s * OUT_STRIDE;
    if (qpsk) {
      pack_payload<false>(bits_s[g], out, t);
    } else {
      pack_payload<true>(bits_s[g], out, t);
    }
  }
}

} // namespace

/// Launch the fused kernel for link form FMT with the FFT exchange `exch`.
template <transport::link_format FMT, class ALGO>
void launch_decode_algo(const batch_view& b, cudaStream_t stream)
{
  // The largest shared-memory carve-out, so that shared memory (10 KB a block)
  // does not limit the blocks per SM before registers do (once per process).
  static const bool carved = [] {
    WHD_CUDA_CHECK(cudaFuncSetAttribute(decode_kernel<FMT, ALGO>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        int(cudaSharedmemCarveoutMaxShared)));
    return true;
  }();
  (void)carved;
  const dim3 grid(unsigned((b.count + SYMBOLS_PER_BLOCK - 1) / SYMBOLS_PER_BLOCK));
  decode_kernel<FMT, ALGO><<<grid, BLOCK, 0, stream>>>(b);
  WHD_CUDA_CHECK_LAUNCH();
}

template <transport::link_format FMT>
void launch_decode_form(fft::exchange exch, const batch_view& b, cudaStream_t stream)
{
  if (exch == fft::exchange::shfl) {
    launch_decode_algo<FMT, fd::algo_of<fft::exchange::shfl>>(b, stream);
  } else {
    launch_decode_algo<FMT, fd::algo_of<fft::exchange::smem>>(b, stream);
  }
}

} // namespace whd::baseband::gpu
