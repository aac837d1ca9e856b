// The fused data-symbol kernel: link unpack -> CFO derotation -> 512-point FFT ->
// equalisation -> demapping -> payload bytes, in two passes over a batch: the first
// makes every symbol's own derotation (the pilots' common phase, refined by the data on
// QPSK symbols) into batch_view::rots, the second averages each symbol's with its
// neighbours' (demap.hpp's PHASE_NEIGHBOURS) and decides. One group of 64 threads takes
// two symbols; the transforms' outputs stay in registers, and only the pilots and the
// decided bit groups go through shared memory. (The second pass transforms the windows
// again rather than keep 4 kB a symbol of equalised tones between the passes.)
// Instantiated per link form in gpu_symbol_kernels_<form>.cu, so the forms
// compile in parallel.
#pragma once

#include "fft_device_shim.cuh"
#include "gpu_symbol_device.cuh"

namespace whd::baseband::gpu {

namespace p = profile;
namespace fd = whd::fft::device;

namespace {

/// Symbols a group of 64 threads decodes. Each thread holds both transforms'
/// values, so the twiddle reads, the lane's tone table, 1/H and the derotation's
/// start and step (symbols of one frame), the barriers and the index arithmetic
/// serve two symbols. The kernel was bound by the L1 data pipe, mostly per-symbol
/// reads of the same twiddles and 1/H; two symbols a group beat one and four (four
/// take too many registers for the warps a SM needs).
constexpr int K = 2;
/// 16 blocks of one group a SM caps the registers at 64 (32 warps a SM): without the
/// minimum nvcc takes 90 registers and the kernel runs slower.
constexpr int MIN_BLOCKS = 16;
static_assert(GROUP == fd::THREADS && fd::VALUES == 8);
static_assert(2 * p::NOF_PILOTS == 32, "each half-warp reduces one symbol's pilots");

/// The kernel's two passes over a batch.
enum class pass { rotations, decode };

template <transport::link_format FMT, class ALGO, bool LLR, pass PASS>
__global__ void __launch_bounds__(GROUP, MIN_BLOCKS) decode_kernel(batch_view b)
{
  static_assert(PASS == pass::decode || !LLR);
  static_assert(ALGO::output_offset(1) == GROUP && ALGO::output_offset(SLOTS - 1) == GROUP * (SLOTS - 1),
                "the *_held pieces assume bins out_lane + 64 j");
  // The shuffle exchange leaves bins held_lane(t) + 64 j in thread t: 1/H is read in
  // that order (frame_params::inv_held), so that a warp's reads are consecutive.
  constexpr bool HELD_ORDER = ALGO::EXCHANGE == whd::fft::exchange::shfl;
  static_assert(!HELD_ORDER || (ALGO::out_lane(9) == held_lane(9) && ALGO::out_lane(14) == held_lane(14)));
  static_assert(HELD_ORDER || ALGO::out_lane(9) == 9);
  constexpr int SCRATCH = fd::smem_float2<ALGO>();
  __shared__ float2 smem[K * SCRATCH];
  __shared__ float2 pilots_s[K * p::NOF_PILOTS];
  __shared__ __align__(16) uint8_t bits_s[K][BITS_BYTES];
  __shared__ float2 red_s[QPSK_PHASE_STEPS][K][2];
  const int t = int(threadIdx.x);
  const std::size_t sym0 = std::size_t(blockIdx.x) * K;
  std::size_t s[K];
  bool active[K]; // writes what its pass makes (a halo symbol: its derotation alone)
  symbol_desc desc[K];
  const frame_params* fp[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const bool in = sym0 + std::size_t(k) < b.count;
    s[k] = in ? sym0 + std::size_t(k) : b.count - 1; // an idle symbol runs on the last one and writes nothing
    desc[k] = b.symbols[s[k]];
    active[k] = in && (PASS == pass::rotations || !desc[k].halo());
    fp[k] = b.frames + desc[k].frame;
  }
  const int lane = ALGO::output_base(t); // after the transform, this thread holds bins lane + 64 j
  const held_tones held = load_held_tones(lane);
  // Block-wide barriers: the block is the group.
  const whd::fft::block_sync sync{};

  // Symbols of the first one's frame share its 1/H and the derotation's start and
  // step: the reads for the others are skipped.
  bool same[K];
  float2 rot_t[K], step[K];
  same[0] = true;
  rot_t[0] = make_float2(fp[0]->rot_re[t], fp[0]->rot_im[t]);
  step[0] = make_float2(fp[0]->step_re, fp[0]->step_im);
#pragma unroll
  for (int k = 1; k < K; ++k) {
    same[k] = desc[k].frame == desc[0].frame;
    rot_t[k] = same[k] ? rot_t[0] : make_float2(fp[k]->rot_re[t], fp[k]->rot_im[t]);
    step[k] = same[k] ? step[0] : make_float2(fp[k]->step_re, fp[k]->step_im);
  }

  // Samples unscaled; each window's scale multiplies its pilots' rotation instead.
  float2 v[K][fd::VALUES];
  float scale[K];
  bool all_same = true;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    scale[k] = b.scales[s[k]];
    all_same = all_same && same[k];
    // One base index and constant offsets, so that the loads share one address.
    const std::size_t first = s[k] * p::N + std::size_t(fd::input_index(t, 0));
#pragma unroll
    for (int j = 0; j < fd::VALUES; ++j) {
      v[k][j] = load_sample<FMT>(b.samples, first + std::size_t(fd::input_index(0, j)));
    }
  }
  static_assert(fd::input_index(0, 1) - fd::input_index(0, 0) == 64 && fd::input_index(1, 0) == 1, "the derotation assumes x[t + 64 j]");
  // The CFO derotation inside the window, e^{-j 2 pi cfo n}. The window's own phase,
  // e^{-j 2 pi cfo (offset + m L)}, is common to all its bins, and the pilots'
  // common-phase rotation takes any common phase c out: rot(c Y) = conj(c)/|c| rot(Y),
  // so c Y rot(c Y) = |c| Y rot(Y). The kernel leaves it out of the samples (8 products
  // a symbol) and out of the derotation it stores (window_rotation: one sincospif a
  // symbol), and puts it back into the averaged one; the decisions differ from the
  // CPU's by rounding only, as the transforms' already do. (A window whose weighted
  // pilots sum to exactly 0 gets rotation 1 on both sides and keeps c on the CPU's.)
  if (all_same) {
    float2 r = rot_t[0];
#pragma unroll
    for (int j = 0; j < fd::VALUES; ++j) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        v[k][j] = cmulf(v[k][j], r);
      }
      r = cmulf(r, step[0]);
    }
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      derotate8(v[k], rot_t[k], step[k]);
    }
  }
  fd::forward_many<ALGO, K>(v, smem, t, sync);

  // Equalisation on the bins this thread holds (the first pass stores its pilots first).
  if constexpr (PASS == pass::rotations) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      store_held_pilot(v[k], held, pilots_s + k * p::NOF_PILOTS);
    }
  }
#pragma unroll
  for (int j = 0; j < SLOTS; ++j) {
    if (((DATA_SLOTS >> j) & 1u) != 0) {
      const int at = (HELD_ORDER ? t : lane) + GROUP * j;
      const float2 inv0 = HELD_ORDER ? fp[0]->inv_held[at] : fp[0]->inv[at];
      v[0][j] = cmulf(v[0][j], inv0);
#pragma unroll
      for (int k = 1; k < K; ++k) {
        const float2 inv = same[k] ? inv0 : HELD_ORDER ? fp[k]->inv_held[at] : fp[k]->inv[at];
        v[k][j] = cmulf(v[k][j], inv);
      }
    }
  }
  const float2* inv_of[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    inv_of[k] = HELD_ORDER ? fp[k]->inv_held + t : fp[k]->inv + lane;
  }
  if constexpr (PASS == pass::rotations) {
    // Lanes 0..15 of each warp reduce symbol 0's pilots, lanes 16..31 symbol 1's.
    const bool second = ((t >> 4) & 1) != 0;
    const pilot_weight weight = load_pilot_weight(second ? *fp[1] : *fp[0], second ? desc[1].number() : desc[0].number(), t);
    sync(); // the pilots are stored
    float mag_mine;
    const float2 rot_mine = pilot_rotation(pilots_s[(second ? p::NOF_PILOTS : 0) + t % p::NOF_PILOTS], weight, mag_mine);
    float2 rots[K];
    float pilot_mag[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const float2 r = make_float2(__shfl_sync(0xffffffffu, rot_mine.x, 16 * k), __shfl_sync(0xffffffffu, rot_mine.y, 16 * k));
      rots[k] = make_float2(r.x * scale[k], r.y * scale[k]);
      pilot_mag[k] = __shfl_sync(0xffffffffu, mag_mine, 16 * k) * scale[k];
    }
    // QPSK symbols: the phase refined by the data tones.
    refine_qpsk<K>(v, rots, pilot_mag, fp, inv_of, red_s, t, sync);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (active[k] && t == 0) {
        // As the CPU's: without the window's scale and its common phase (both differ
        // between neighbours), unit but for rounding.
        const float inv_scale = scale[k] > 0.0f ? 1.0f / scale[k] : 1.0f;
        const float2 c = window_rotation(*fp[k], desc[k].number());
        b.rots[s[k]] = cmulf(make_float2(rots[k].x * inv_scale, rots[k].y * inv_scale), make_float2(c.x, -c.y));
      }
    }
  } else {
    // Each symbol's derotation the unit average of its own and its neighbours', with
    // its window's common phase and scale put back.
    float2 rots[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const float2 r = cmulf(neighbour_rotation(b, s[k], desc[k]), window_rotation(*fp[k], desc[k].number()));
      rots[k] = make_float2(r.x * scale[k], r.y * scale[k]);
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const float2 rot = rots[k];
      bool soft = false;
      if constexpr (LLR) {
        coded_target ct = b.coded != nullptr ? b.coded[desc[k].frame] : coded_target{};
        ct.m = desc[k].number() - uint32_t(p::FIRST_DATA_SYMBOL);
        soft = active[k] && (b.llr != nullptr || ct.streams != nullptr); // an idle symbol writes no soft values
        if (soft) {
          uint8_t* user = b.llr == nullptr ? nullptr
                                           : static_cast<uint8_t*>(b.llr) + (b.llr_offsets != nullptr ? std::size_t(b.llr_offsets[s[k]])
                                                                                                        : s[k] * LLR_STRIDE * llr_value_bytes(b.llr_form));
          const soft_target o{inv_of[k], fp[k]->llr_inv_noise, user, b.llr_form, b.llr_scale,
                              ct};
          if (fp[k]->mod == int(p::modulation::qpsk)) {
            demap_held<false, true>(v[k], rot, held, bits_s[k], o);
          } else {
            demap_held<true, true>(v[k], rot, held, bits_s[k], o);
          }
        }
      }
      if (!soft) {
        if (fp[k]->mod == int(p::modulation::qpsk)) {
          demap_held<false>(v[k], rot, held, bits_s[k]);
        } else {
          demap_held<true>(v[k], rot, held, bits_s[k]);
        }
      }
    }
    sync(); // the bit groups are stored
#pragma unroll
    for (int k = 0; k < K; ++k) {
      // A coded symbol's payload is its frame's FEC output: its hard bits are not written.
      if (active[k] && (b.coded == nullptr || b.coded[desc[k].frame].streams == nullptr)) {
        uint8_t* out = b.out + (b.out_offsets != nullptr ? std::size_t(b.out_offsets[s[k]]) : s[k] * OUT_STRIDE);
        if (fp[k]->mod == int(p::modulation::qpsk)) {
          pack_payload<false>(bits_s[k], out, t);
        } else {
          pack_payload<true>(bits_s[k], out, t);
        }
      }
    }
  }
}

} // namespace

/// Launch one pass of the fused kernel for link form FMT with the FFT algorithm ALGO.
template <transport::link_format FMT, class ALGO, bool LLR, pass PASS>
void launch_decode_pass(const batch_view& b, cudaStream_t stream)
{
  // The largest shared-memory carve-out, so that shared memory (11 KB a block)
  // does not limit the blocks per SM before registers do (once per process).
  static const bool carved = [] {
    WHD_CUDA_CHECK(cudaFuncSetAttribute(decode_kernel<FMT, ALGO, LLR, PASS>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        int(cudaSharedmemCarveoutMaxShared)));
    return true;
  }();
  (void)carved;
  const dim3 grid(unsigned((b.count + K - 1) / K));
  decode_kernel<FMT, ALGO, LLR, PASS><<<grid, GROUP, 0, stream>>>(b);
  WHD_CUDA_CHECK_LAUNCH();
}

/// Both passes: the derotations, then the decode that averages them.
template <transport::link_format FMT, class ALGO, bool LLR>
void launch_decode_kernel(const batch_view& b, cudaStream_t stream)
{
  launch_decode_pass<FMT, ALGO, false, pass::rotations>(b, stream);
  launch_decode_pass<FMT, ALGO, LLR, pass::decode>(b, stream);
}

/// The hard decisions only, or with soft values (f32 windows: the receiver's form).
template <transport::link_format FMT, class ALGO>
void launch_decode_algo(const batch_view& b, cudaStream_t stream)
{
  if constexpr (FMT == transport::link_format::f32) {
    if (b.llr != nullptr || b.coded != nullptr) {
      launch_decode_kernel<FMT, ALGO, true>(b, stream);
      return;
    }
  }
  launch_decode_kernel<FMT, ALGO, false>(b, stream);
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
