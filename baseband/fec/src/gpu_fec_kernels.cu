// The FEC of coded frames on the device (gpu_coded_decoder.hpp).
//
// Viterbi: a thread decodes a pair of tiles, tile k of encoders p and p + 4 of one frame
// (the same steps, the same starts and ends), with the pair's path metrics packed as
// 16-bit halves of one 32-bit word per state (low half encoder p, high half p + 4): one
// add or max serves both tiles. The metrics are kept unsigned and biased so that no half
// ever carries or borrows into the other: a branch metric enters as 384 + bm (0 .. 768,
// the same bias on every transition, a common offset viterbi.hpp allows), and every 8
// steps each half is taken relative to its state 0, plus NORM_BIAS (the definition bounds
// a tile's spread under 12 x 381 + 4096 < NORM_BIAS, so halves stay within
// [NORM_BIAS - spread, NORM_BIAS + spread + 8 x 768] < 2^15). A decision is
// (max - a) > 0, read off bit 15 of each half of max - a + 0x7FFF. Ties keep decision 0
// as the definition says. Decisions of the steps from a tile's first output bit on go to
// the thread's slot of global memory ([warp][step][lane], 16 bytes a step: both tiles'
// 64 bits), and the traceback reads them back 8 steps at a time. The "relu" forms
// (gpu_viterbi_relu.cuh) keep this work split with fewer instructions per butterfly and
// per traceback step.
//
// RS: a thread per codeword, its bytes staged through shared memory by the whole block
// (read and written by consecutive threads), libfec's decode_rs_char step for step (as
// baseband/rx's gpu_fec, whose steps an emulation on the host matched on 200 000
// codewords), with reed_solomon.hpp's rules on top: more than 4 corrections, or a
// corrected word that is not a codeword, fail and leave the codeword as received.
#include "gpu_fec_kernels.hpp"

#include <whd/transport/cuda.hpp>

#include <utility>

// Loops the device unrolls; host compilations of the host-device functions ignore it.
#if defined(__CUDA_ARCH__)
#define WHD_FEC_UNROLL _Pragma("unroll")
#else
#define WHD_FEC_UNROLL
#endif

#include "gpu_viterbi_relu.cuh"

namespace whd::fec::gpu {

namespace {

// ---------------------------------------------------------------------------- Viterbi

/// Bias of each half after a normalisation (see above).
constexpr uint32_t NORM_BIAS = 12288u;
constexpr uint32_t pair_of(uint32_t v) { return v | (v << 16); }
static_assert(12 * 384 + 4096 < int(NORM_BIAS) && NORM_BIAS + 12 * 384 + 4096 + 8 * 768 < 32768u,
              "16-bit halves hold a tile's metrics without crossing");

/// Per-halfword unsigned max.
__host__ __device__ __forceinline__ uint32_t vmax_u16x2(uint32_t a, uint32_t b)
{
#if defined(__CUDA_ARCH__)
  return __vmaxu2(a, b);
#else
  const uint32_t lo = (a & 0xFFFFu) > (b & 0xFFFFu) ? (a & 0xFFFFu) : (b & 0xFFFFu);
  const uint32_t hi = (a >> 16) > (b >> 16) ? (a >> 16) : (b >> 16);
  return lo | (hi << 16);
#endif
}

/// The 8 biased branch metrics of one step for both tiles: mp[c] = 384 + bm_c per
/// half, where bm_c is the metric of output code c (viterbi.hpp); kk[c] =
/// 0x7FFF7FFF - mp[c] (the decision's constant of the DPX form).
struct step_metrics {
  uint32_t mp[8];
  uint32_t kk[8];
};

/// Step n's soft values of both streams, depunctured on the fly (coded_rx's
/// depuncture_tile), as step_metrics.
__host__ __device__ __forceinline__ void load_step(const int8_t* ca, const int8_t* cb, uint64_t n, uint64_t pattern,
                                                   unsigned pin_log2, unsigned pout, step_metrics& s)
{
  const uint64_t base = (n >> pin_log2) * pout;
  const unsigned r = unsigned(n) & ((1u << pin_log2) - 1u);
  uint32_t u[3], v[3];
WHD_FEC_UNROLL
  for (int w = 0; w < 3; ++w) {
    const unsigned idx = unsigned(pattern >> (4 * (3 * r + unsigned(w)))) & 0xFu;
    uint32_t a = 0, b = 0;
    if (idx != PUNCTURED) {
      a = uint8_t(ca[base + idx]);
      b = uint8_t(cb[base + idx]);
    }
    // 128 + L per half (the byte's sign bit flipped), and 128 - L = 256 - (128 + L).
    u[w] = (a | (b << 16)) ^ 0x00800080u;
    v[w] = 0x01000100u - u[w];
  }
WHD_FEC_UNROLL
  for (unsigned c = 0; c < 8; ++c) {
    s.mp[c] = ((c & 4u) ? v[0] : u[0]) + ((c & 2u) ? v[1] : u[1]) + ((c & 1u) ? v[2] : u[2]);
    s.kk[c] = 0x7FFF7FFFu - s.mp[c];
  }
}

/// Butterfly J of a step: old states 2J, 2J + 1 to new J (input 0) and J + 32 (input 1),
/// decisions into the step's words (w[s / 16], bit s % 16, + 16 for the high tile).
template <int J, bool DPX>
__host__ __device__ __forceinline__ void butterfly(const uint32_t (&m)[NOF_STATES], uint32_t (&nm)[NOF_STATES],
                                                   const step_metrics& s, uint32_t (&w)[4])
{
  constexpr unsigned c = output_code(2u * J);
  const uint32_t m0 = m[2 * J], m1 = m[2 * J + 1];
  uint32_t x, y, dx, dy;
  if constexpr (DPX) {
    x = __viaddmax_u16x2(m0, s.mp[c], m1 + s.mp[7 - c]); // max(m0 + mm, m1 - mm)
    y = __viaddmax_u16x2(m0, s.mp[7 - c], m1 + s.mp[c]); // max(m0 - mm, m1 + mm)
    dx = x - m0 + s.kk[c];                               // x - (m0 + mp) + 0x7FFF7FFF
    dy = y - m0 + s.kk[7 - c];
  } else {
    const uint32_t a = m0 + s.mp[c], b = m1 + s.mp[7 - c];
    const uint32_t e = m0 + s.mp[7 - c], f = m1 + s.mp[c];
    x = vmax_u16x2(a, b);
    y = vmax_u16x2(e, f);
    dx = x - a + 0x7FFF7FFFu;
    dy = y - e + 0x7FFF7FFFu;
  }
  nm[J] = x;
  nm[J + 32] = y;
  constexpr int SHIFT = 15 - (J & 15);
  constexpr uint32_t MASK = 0x00010001u << (J & 15);
  w[J >> 4] |= (dx >> SHIFT) & MASK;
  w[2 + (J >> 4)] |= (dy >> SHIFT) & MASK;
}

template <bool DPX, int... J>
__host__ __device__ __forceinline__ uint4 trellis_step(std::integer_sequence<int, J...>, const uint32_t (&m)[NOF_STATES],
                                                       uint32_t (&nm)[NOF_STATES], const step_metrics& s)
{
  uint32_t w[4] = {0, 0, 0, 0};
  (butterfly<J, DPX>(m, nm, s, w), ...);
  return make_uint4(w[0], w[1], w[2], w[3]);
}

template <bool DPX>
__host__ __device__ __forceinline__ uint4 step(const uint32_t (&m)[NOF_STATES], uint32_t (&nm)[NOF_STATES], const step_metrics& s)
{
  return trellis_step<DPX>(std::make_integer_sequence<int, NOF_STATES / 2>{}, m, nm, s);
}

/// Decision of state s at a step (the tile in the low half, or with `high` the other).
__host__ __device__ __forceinline__ unsigned decision(const uint4& d, unsigned s, unsigned high)
{
  const uint32_t v = (s & 32u) ? ((s & 16u) ? d.w : d.z) : ((s & 16u) ? d.y : d.x);
  return (v >> ((s & 15u) + high)) & 1u;
}

/// Decodes item `r` of frame `f` (r = p nof_tiles + k: tile k of encoders p and p + 4):
/// its decisions to slot[step * stride], its bits to f.decoded. A host and device
/// function, so that the packed arithmetic can be checked on a machine without a GPU.
template <bool DPX>
__host__ __device__ __forceinline__ void decode_pair(const frame_desc& f, uint64_t r, uint4* slot, unsigned stride)
{
  const uint64_t per_stream = nof_tiles(f.nin);
  const auto p = unsigned(r / per_stream);
  const tile_span t = tile_of(f.nin, r - p * per_stream);
  const int8_t* ca = f.streams + uint64_t(p) * f.ce;
  const int8_t* cb = f.streams + uint64_t(p + 4) * f.ce;
  const uint64_t pattern = f.pattern;
  const unsigned pin_log2 = f.pin_log2, pout = f.pout;

  uint32_t m[NOF_STATES], nm[NOF_STATES];
  const uint32_t other = t.run_first == 0 ? pair_of(uint32_t(int(NORM_BIAS) + START_OTHER)) : pair_of(NORM_BIAS);
WHD_FEC_UNROLL
  for (int s = 0; s < NOF_STATES; ++s) {
    m[s] = s == 0 ? pair_of(NORM_BIAS) : other;
  }
  step_metrics sm;
  uint64_t n = t.run_first;
  for (; n + 2 <= t.run_end; n += 2) {
    load_step(ca, cb, n, pattern, pin_log2, pout, sm);
    uint4 d = step<DPX>(m, nm, sm);
    if (n >= t.out_first) {
      slot[(n - t.out_first) * stride] = d;
    }
    load_step(ca, cb, n + 1, pattern, pin_log2, pout, sm);
    d = step<DPX>(nm, m, sm);
    if (n + 1 >= t.out_first) {
      slot[(n + 1 - t.out_first) * stride] = d;
    }
    if (((n + 2) & 7u) == 0) {
      // Each half relative to its state 0, plus NORM_BIAS (32-bit arithmetic: every
      // half's result lies in 0 .. 2^16, so nothing crosses).
      const uint32_t delta = pair_of(NORM_BIAS) - m[0];
WHD_FEC_UNROLL
      for (int s = 0; s < NOF_STATES; ++s) {
        m[s] += delta;
      }
    }
  }
  if (n < t.run_end) {
    load_step(ca, cb, n, pattern, pin_log2, pout, sm);
    slot[(n - t.out_first) * stride] = step<DPX>(m, nm, sm);
WHD_FEC_UNROLL
    for (int s = 0; s < NOF_STATES; ++s) {
      m[s] = nm[s];
    }
  }

  uint32_t sa = 0, sb = 0;
  if (t.run_end != f.nin) {
    best_states(m, sa, sb);
  }
  const uint64_t want = 8 * f.q;
  const uint64_t end = t.out_end < want ? t.out_end : want;
  uint8_t* outa = f.decoded + uint64_t(p) * f.q;
  uint8_t* outb = f.decoded + uint64_t(p + 4) * f.q;
  unsigned acca = 0, accb = 0;
  constexpr unsigned BATCH = 8; // decisions loaded ahead: their addresses do not depend on the states
  for (n = t.run_end; n > t.out_first;) {
    const auto count = unsigned(n - t.out_first < BATCH ? n - t.out_first : BATCH);
    uint4 d[BATCH];
WHD_FEC_UNROLL
    for (unsigned i = 0; i < BATCH; ++i) {
      if (i < count) {
        d[i] = slot[(n - 1 - i - t.out_first) * stride];
      }
    }
WHD_FEC_UNROLL
    for (unsigned i = 0; i < BATCH; ++i) {
      if (i < count) {
        const uint64_t at = n - 1 - i;
        if (at < end) {
          const unsigned bit = 7u - unsigned(at & 7u);
          acca |= (sa >> 5) << bit;
          accb |= (sb >> 5) << bit;
          if ((at & 7u) == 0) {
            outa[at >> 3] = uint8_t(acca);
            outb[at >> 3] = uint8_t(accb);
            acca = 0;
            accb = 0;
          }
        }
        sa = ((sa & 31u) << 1) | decision(d[i], sa, 0);
        sb = ((sb & 31u) << 1) | decision(d[i], sb, 16);
      }
    }
    n -= count;
  }
}

/// The frame of a flat index: the last f < nof_frames with first(f) <= i.
template <typename FIRST>
__device__ __forceinline__ int frame_of(const frame_desc* descs, int nof_frames, uint64_t i, FIRST first)
{
  int lo = 0, hi = nof_frames; // first(lo) <= i < first(hi)
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (first(descs[mid]) <= i ? lo : hi) = mid;
  }
  return lo;
}

/// The older forms' per-item decode (16-bit halves, DPX or plain add-compare-select).
template <bool DPX>
struct pair_items {
  __device__ __forceinline__ static void decode(const frame_desc& f, uint64_t r, uint4* slot, unsigned stride)
  {
    decode_pair<DPX>(f, r, slot, stride);
  }
};

/// The relu form's per-item decode (decisions packed by a chain, or a tree with TREE;
/// soft values read a word at a time with WORDS).
template <bool TREE, bool WORDS = false>
struct relu_items {
  __device__ __forceinline__ static void decode(const frame_desc& f, uint64_t r, uint4* slot, unsigned stride)
  {
    relu::decode_item<TREE, WORDS>(f, r, slot, stride);
  }
};

/// Every form's grid: each thread takes items (pairs of tiles) a grid apart, reusing
/// its slot of decisions, and ITEMS decodes each.
template <typename ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(VITERBI_THREADS, MIN_BLOCKS)
    viterbi_kernel(const frame_desc* descs, int nof_frames, uint64_t items, uint4* dec)
{
  const uint64_t thread = uint64_t(blockIdx.x) * VITERBI_THREADS + threadIdx.x;
  uint4* slot = dec + (thread >> 5) * DEC_STEPS * 32 + (threadIdx.x & 31u);
  const uint64_t stride = uint64_t(gridDim.x) * VITERBI_THREADS;
  for (uint64_t item = thread; item < items; item += stride) {
    const int fi = frame_of(descs, nof_frames, item, [](const frame_desc& d) { return d.item_first; });
    ITEMS::decode(descs[fi], item - descs[fi].item_first, slot, 32);
  }
}

// ---------------------------------------------------------------------------- RS

constexpr int GF_NN = 255; ///< GF(256)'s nonzero elements; A0 = NN stands for log(0)
constexpr int A0 = GF_NN;
constexpr int NROOTS = RS_PARITY;

/// GF(256) with x^8 + x^4 + x^3 + x^2 + 1 (0x11D): alpha^i and log, libfec's tables
/// (alpha_to[255] = 0, index_of[0] = 255).
struct gf_tables {
  uint8_t alpha_to[256];
  uint8_t index_of[256];
};

constexpr gf_tables make_gf()
{
  gf_tables t{};
  unsigned sr = 1;
  for (int i = 0; i < GF_NN; ++i) {
    t.index_of[sr] = uint8_t(i);
    t.alpha_to[i] = uint8_t(sr);
    sr <<= 1;
    if (sr & 0x100u) {
      sr ^= RS_FIELD_POLY;
    }
  }
  t.index_of[0] = uint8_t(GF_NN);
  t.alpha_to[GF_NN] = 0;
  return t;
}

__constant__ gf_tables D_GF = make_gf();

__device__ __forceinline__ int modnn(int x)
{
  while (x >= GF_NN) {
    x -= GF_NN;
    x = (x >> 8) + (x & GF_NN);
  }
  return x;
}

/// The GF tables a block of the RS kernels keeps in shared memory (constant memory
/// would serialise a warp's different indices): libfec's alpha_to and index_of, and
/// mul[i][x] = x alpha^(i + 1), the product libfec's syndrome step takes in the log domain.
struct gf_shared {
  uint8_t alpha_to[256];
  uint8_t index_of[256];
  uint8_t mul[NROOTS][256];
};

/// Fills `t` (every thread of the block takes part, then waits for the others).
__device__ void load_gf(gf_shared& t)
{
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) {
    t.alpha_to[i] = D_GF.alpha_to[i];
    t.index_of[i] = D_GF.index_of[i];
  }
  for (unsigned i = threadIdx.x; i < NROOTS * 256; i += blockDim.x) {
    const unsigned r = i / 256, x = i % 256;
    t.mul[r][x] = x == 0 ? uint8_t(0) : D_GF.alpha_to[modnn(D_GF.index_of[x] + int(r) + 1)];
  }
  __syncthreads();
}

/// libfec's syndromes of bytes byte(0 .. n) (byte(0) the highest degree), as field
/// elements: s_i = s_i alpha^(i + 1) + byte(j), the same field arithmetic as libfec's
/// (s_i == 0 ? d : d ^ alpha_to[index_of[s_i] + i + 1]).
/// @return whether any syndrome is not zero (the bytes are not a codeword)
template <typename BYTE>
__device__ __forceinline__ bool syndromes(BYTE byte, int n, const gf_shared& t, int (&s)[NROOTS])
{
  const int d0 = byte(0);
  WHD_FEC_UNROLL
  for (int i = 0; i < NROOTS; ++i) {
    s[i] = d0;
  }
  for (int j = 1; j < n; ++j) {
    const int dj = byte(j);
    WHD_FEC_UNROLL
    for (int i = 0; i < NROOTS; ++i) {
      s[i] = t.mul[i][s[i]] ^ dj;
    }
  }
  int any = 0;
  WHD_FEC_UNROLL
  for (int i = 0; i < NROOTS; ++i) {
    any |= s[i];
  }
  return any != 0;
}

/// reed_solomon.hpp's rs_decode of a codeword of n = k + 8 bytes whose syndromes `s`
/// (syndromes()) are not all zero, in place: libfec's decode_rs_char (fcr 1, prim 1,
/// 8 roots, pad 255 - n) from its Berlekamp-Massey on, step for step, a correction
/// standing only when it has at most 4 bytes and leaves a codeword.
/// @return the bytes corrected, or -1 (data then as received)
__device__ int rs_correct(uint8_t* data, int n, int (&s)[NROOTS], const gf_shared& gf)
{
  const uint8_t* alpha_to = gf.alpha_to;
  const uint8_t* index_of = gf.index_of;
  const int pad = GF_NN - n;
  for (int i = 0; i < NROOTS; ++i) {
    s[i] = index_of[s[i]];
  }
  // Berlekamp-Massey (no erasures).
  int lambda[NROOTS + 1], b[NROOTS + 1], t[NROOTS + 1];
  lambda[0] = 1;
  for (int i = 1; i <= NROOTS; ++i) {
    lambda[i] = 0;
  }
  for (int i = 0; i <= NROOTS; ++i) {
    b[i] = index_of[lambda[i]];
  }
  int el = 0;
  for (int r = 1; r <= NROOTS; ++r) {
    int discr = 0;
    for (int i = 0; i < r; ++i) {
      if (lambda[i] != 0 && s[r - i - 1] != A0) {
        discr ^= alpha_to[modnn(index_of[lambda[i]] + s[r - i - 1])];
      }
    }
    discr = index_of[discr];
    if (discr == A0) {
      for (int i = NROOTS; i > 0; --i) {
        b[i] = b[i - 1];
      }
      b[0] = A0;
    } else {
      t[0] = lambda[0];
      for (int i = 0; i < NROOTS; ++i) {
        t[i + 1] = b[i] != A0 ? lambda[i + 1] ^ alpha_to[modnn(discr + b[i])] : lambda[i + 1];
      }
      if (2 * el <= r - 1) {
        el = r - el;
        for (int i = 0; i <= NROOTS; ++i) {
          b[i] = lambda[i] == 0 ? A0 : modnn(index_of[lambda[i]] - discr + GF_NN);
        }
      } else {
        for (int i = NROOTS; i > 0; --i) {
          b[i] = b[i - 1];
        }
        b[0] = A0;
      }
      for (int i = 0; i <= NROOTS; ++i) {
        lambda[i] = t[i];
      }
    }
  }
  int deg_lambda = 0;
  for (int i = 0; i <= NROOTS; ++i) {
    lambda[i] = index_of[lambda[i]];
    if (lambda[i] != A0) {
      deg_lambda = i;
    }
  }
  // Chien search (prim 1: location k = i - 1).
  int reg[NROOTS + 1], root[NROOTS], loc[NROOTS];
  for (int i = 1; i <= NROOTS; ++i) {
    reg[i] = lambda[i];
  }
  int count = 0;
  for (int i = 1, k = 0; i <= GF_NN; ++i, k = modnn(k + 1)) {
    int q = 1;
    for (int j = deg_lambda; j > 0; --j) {
      if (reg[j] != A0) {
        reg[j] = modnn(reg[j] + j);
        q ^= alpha_to[reg[j]];
      }
    }
    if (q != 0) {
      continue;
    }
    root[count] = i;
    loc[count] = k;
    if (++count == deg_lambda) {
      break;
    }
  }
  bool in_pad = false;
  for (int j = 0; j < count; ++j) {
    in_pad = in_pad || loc[j] < pad;
  }
  if (deg_lambda != count || count > RS_T || in_pad) {
    return -1; // libfec's failures, and more than 4 "corrections" (reed_solomon.hpp)
  }
  // Forney: omega = s lambda mod x^8, error values at the roots (fcr 1: num2 = 1).
  int omega[NROOTS + 1];
  const int deg_omega = deg_lambda - 1;
  for (int i = 0; i <= deg_omega; ++i) {
    int tmp = 0;
    for (int j = i; j >= 0; --j) {
      if (s[i - j] != A0 && lambda[j] != A0) {
        tmp ^= alpha_to[modnn(s[i - j] + lambda[j])];
      }
    }
    omega[i] = index_of[tmp];
  }
  int value[NROOTS];
  for (int j = count - 1; j >= 0; --j) {
    int num1 = 0;
    for (int i = deg_omega; i >= 0; --i) {
      if (omega[i] != A0) {
        num1 ^= alpha_to[modnn(omega[i] + i * root[j])];
      }
    }
    const int num2 = alpha_to[modnn(root[j] * (1 - 1) + GF_NN)];
    int den = 0;
    for (int i = (deg_lambda < NROOTS - 1 ? deg_lambda : NROOTS - 1) & ~1; i >= 0; i -= 2) {
      if (lambda[i + 1] != A0) {
        den ^= alpha_to[modnn(lambda[i + 1] + i * root[j])];
      }
    }
    value[j] = num1 != 0 ? alpha_to[modnn(index_of[num1] + index_of[num2] + GF_NN - index_of[den])] : 0;
    data[loc[j] - pad] ^= uint8_t(value[j]);
  }
  // The corrected word must be a codeword, else the received word is restored (the
  // same values XORed again).
  int s2[NROOTS];
  if (syndromes([data](int j) { return int(data[j]); }, n, gf, s2)) {
    for (int j = 0; j < count; ++j) {
      data[loc[j] - pad] ^= uint8_t(value[j]);
    }
    return -1;
  }
  return count;
}

/// Bytes of a codeword's row in the RS kernel's shared memory: 224 and 4 of padding, so
/// that a warp's lanes, each reading its own row, fall in distinct banks (57 words apart).
constexpr int RS_ROW = RS_N + 4;

/// A block decodes RS_THREADS consecutive codewords of the run (of one frame or of
/// several), a thread each. The block first copies the codewords' bytes from the 8
/// encoders' decoded streams into shared memory, un-parsing them (§2.3: RS stream byte
/// i went to encoder i mod 8, its byte i / 8, so a codeword's bytes lie in 8 runs of 28,
/// one a stream, and a frame's consecutive codewords' runs follow each other); the loads
/// go encoder by encoder, codeword by codeword, consecutive threads to consecutive bytes.
/// A thread then finds its codeword's syndromes and corrects it in place; the block
/// finally writes the information bytes, consecutive threads to consecutive words.
__global__ void __launch_bounds__(RS_THREADS) rs_kernel(const frame_desc* descs, int nof_frames, uint64_t words, rs_stats* rs)
{
  constexpr int PER_WORD = RS_N / NOF_ENCODERS; // a codeword's bytes in one encoder's stream
  __shared__ gf_shared gf;
  __shared__ __align__(16) uint8_t rows[RS_THREADS * RS_ROW];
  __shared__ const uint8_t* from[RS_THREADS]; // the codeword's run in encoder 0's stream
  __shared__ uint8_t* to[RS_THREADS];         // its information bytes
  __shared__ uint64_t q[RS_THREADS];          // its frame's bytes a stream
  __shared__ int length[RS_THREADS];          // n = k + 8, or 0 past the run's codewords
  load_gf(gf);
  const int t = int(threadIdx.x);
  const uint64_t w = uint64_t(blockIdx.x) * RS_THREADS + uint64_t(t);
  int fi = 0;
  if (w < words) {
    fi = frame_of(descs, nof_frames, w, [](const frame_desc& d) { return d.word_first; });
    const frame_desc& f = descs[fi];
    const uint64_t cw = w - f.word_first;
    const int k = int(cw + 1 < f.codewords ? uint64_t(RS_K) : f.last_k);
    from[t] = f.decoded + cw * PER_WORD;
    to[t] = f.info + cw * RS_K;
    q[t] = f.q;
    length[t] = k + RS_PARITY;
  } else {
    length[t] = 0;
  }
  __syncthreads();
  // Byte j of codeword r's run in stream e is its byte 8 j + e (read only below n: the
  // frame's last codeword may end early, and its runs with it). LOADS bytes a thread
  // are loaded before any is stored, so that they are all in flight at once.
  constexpr int ROUNDS = NOF_ENCODERS * PER_WORD, LOADS = 8;
  static_assert(ROUNDS % LOADS == 0);
  for (int first = 0; first < ROUNDS; first += LOADS) {
    uint32_t v[LOADS];
    int at[LOADS];
    WHD_FEC_UNROLL
    for (int u = 0; u < LOADS; ++u) {
      const int i = t + (first + u) * RS_THREADS;
      const int e = i / (RS_THREADS * PER_WORD);
      const int r = i / PER_WORD % RS_THREADS;
      const int j = i % PER_WORD;
      const bool in = NOF_ENCODERS * j + e < length[r];
      at[u] = in ? r * RS_ROW + NOF_ENCODERS * j + e : -1;
      v[u] = in ? __ldg(from[r] + uint64_t(e) * q[r] + uint64_t(j)) : 0u;
    }
    WHD_FEC_UNROLL
    for (int u = 0; u < LOADS; ++u) {
      if (at[u] >= 0) {
        rows[at[u]] = uint8_t(v[u]);
      }
    }
  }
  __syncthreads();
  const int n = length[t];
  if (n > 0) {
    uint8_t* row = rows + t * RS_ROW;
    int s[NROOTS];
    if (syndromes([row](int j) { return int(row[j]); }, n, gf, s)) {
      const int count = rs_correct(row, n, s, gf);
      if (count < 0) {
        atomicAdd(&rs[fi].failed, 1u);
      } else if (count > 0) {
        atomicAdd(&rs[fi].corrected, uint32_t(count));
      }
    }
  }
  __syncthreads();
  // The information bytes, a word of 4 at a time (a whole codeword's k = 216 to a
  // word-aligned destination; otherwise byte by byte below k).
  static_assert(RS_K % 4 == 0 && RS_ROW % 4 == 0, "a codeword's information is whole words of its row");
  for (int i = t; i < RS_THREADS * (RS_K / 4); i += RS_THREADS) {
    const int r = i / (RS_K / 4);
    const int b = 4 * (i % (RS_K / 4));
    const int k = length[r] - RS_PARITY;
    if (k == RS_K && (reinterpret_cast<uintptr_t>(to[r]) & 3u) == 0) {
      *reinterpret_cast<uint32_t*>(to[r] + b) = *reinterpret_cast<const uint32_t*>(rows + r * RS_ROW + b);
    } else {
      for (int c = b; c < b + 4 && c < k; ++c) {
        to[r][c] = rows[r * RS_ROW + c];
      }
    }
  }
}

__global__ void __launch_bounds__(RS_THREADS) rs_words_kernel(uint8_t* words, const int* lengths, int* result, int count)
{
  __shared__ gf_shared gf;
  load_gf(gf);
  const int w = int(blockIdx.x) * RS_THREADS + int(threadIdx.x);
  if (w >= count) {
    return;
  }
  uint8_t data[RS_N];
  const int n = lengths[w];
  uint8_t* word = words + std::size_t(w) * RS_N;
  for (int b = 0; b < n; ++b) {
    data[b] = word[b];
  }
  int s[NROOTS];
  result[w] = syndromes([&data](int j) { return int(data[j]); }, n, gf, s) ? rs_correct(data, n, s, gf) : 0;
  for (int b = 0; b < n; ++b) {
    word[b] = data[b];
  }
}

} // namespace

uint64_t pattern_table(const puncture_pattern& p)
{
  uint64_t table = ~uint64_t(0); // every nibble PUNCTURED
  for (int i = 0; i < p.pout; ++i) {
    const unsigned nib = 3u * p.input[std::size_t(i)] + p.which[std::size_t(i)];
    table &= ~(uint64_t(0xF) << (4 * nib));
    table |= uint64_t(i) << (4 * nib);
  }
  return table;
}

namespace {

/// The kernel of a form (gpu_fec_kernels.hpp).
using viterbi_fn = void (*)(const frame_desc*, int, uint64_t, uint4*);

viterbi_fn kernel_of(viterbi_form form)
{
  switch (form) {
  case viterbi_form::dpx_2: return viterbi_kernel<pair_items<true>, 2>;
  case viterbi_form::dpx_3: return viterbi_kernel<pair_items<true>, 3>;
  case viterbi_form::plain_2: return viterbi_kernel<pair_items<false>, 2>;
  case viterbi_form::plain_3: return viterbi_kernel<pair_items<false>, 3>;
  case viterbi_form::relu_3: return viterbi_kernel<relu_items<false>, 3>;
  case viterbi_form::relu_2: return viterbi_kernel<relu_items<false>, 2>;
  case viterbi_form::relu_tree_3: return viterbi_kernel<relu_items<true>, 3>;
  case viterbi_form::relu_words_2: return viterbi_kernel<relu_items<false, true>, 2>;
  }
  return viterbi_kernel<pair_items<true>, 2>;
}

} // namespace

void launch_viterbi(const frame_desc* d_descs, int nof_frames, uint64_t items, unsigned grid, uint4* dec, viterbi_form form,
                    cudaStream_t stream)
{
  if (items == 0) {
    return;
  }
  kernel_of(form)<<<grid, VITERBI_THREADS, 0, stream>>>(d_descs, nof_frames, items, dec);
  WHD_CUDA_CHECK_LAUNCH();
}

void launch_rs(const frame_desc* d_descs, int nof_frames, uint64_t words, rs_stats* d_rs, cudaStream_t stream)
{
  if (words == 0) {
    return;
  }
  rs_kernel<<<unsigned((words + RS_THREADS - 1) / RS_THREADS), RS_THREADS, 0, stream>>>(d_descs, nof_frames, words, d_rs);
  WHD_CUDA_CHECK_LAUNCH();
}

bool viterbi_form_handles(viterbi_form form, const puncture_pattern& p)
{
  const bool relu = form == viterbi_form::relu_3 || form == viterbi_form::relu_2 || form == viterbi_form::relu_tree_3 ||
                    form == viterbi_form::relu_words_2;
  return !relu || relu::handles(p);
}

int viterbi_blocks_per_sm(viterbi_form form)
{
  int blocks = 0;
  WHD_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel_of(form), VITERBI_THREADS, 0));
  return blocks;
}

void launch_rs_words(uint8_t* d_words, const int* d_lengths, int* d_result, int count, cudaStream_t stream)
{
  if (count == 0) {
    return;
  }
  rs_words_kernel<<<unsigned((count + RS_THREADS - 1) / RS_THREADS), RS_THREADS, 0, stream>>>(d_words, d_lengths, d_result, count);
  WHD_CUDA_CHECK_LAUNCH();
}

} // namespace whd::fec::gpu
