// The "relu" form of the device Viterbi (gpu_fec_kernels.cu includes it): the same
// thread-per-pair-of-tiles work and 16-bit halves as the older forms, with fewer
// instructions per butterfly and per traceback step. Host and device functions, so that
// the packed arithmetic can be checked on a machine without a GPU (fec_gpu_tests).
//
// Forward pass, per butterfly J (old states 2J, 2J + 1 -> new J, J + 32), both tiles:
// - the new metrics by two DPX add-max, max(m0 + A, m1 + B) and max(m0 + B, m1 + A),
//   with A = 384 + bm_c, B = 768 - A per half (the older forms' bias);
// - both decisions from one difference d = m1 - m0 + DBIAS (per half, no borrow: a
//   tile's spread is under 2^13): decision x is m1 + B > m0 + A, i.e. d - DBIAS >
//   A - B, read off as relu(min(d + E, 1)) per half by one DPX add-min-relu, E =
//   -(DBIAS + A - B) mod 2^16; decision y the same with -(A - B). Strict, so ties keep
//   decision 0 as viterbi.hpp says. Each gives a clean 0/1 per half;
// - packed by one shift-add each into 16-bit accumulators, re-laid per tile by PRMT
//   once per step: word {ax, ay, bx, by} holds tile a's decisions of states 0..31 in ax
//   and 32..63 in ay (bx, by tile b), state s at bit 31 - (s mod 32).
// The soft values are depunctured by a compile-time pattern per code rate (one byte
// load per kept output, loaded one loop iteration ahead), and the metrics normalised
// every 16 steps (halves stay under 2^16: NORM_BIAS + spread + 17 x 768 < 2^16).
//
// Traceback: a shift register S whose low 6 bits are the state: the decision of state s
// at bit 31 - (s mod 32) is rotated to bit 31 by S and shifted in, 4 instructions a tile
// and step; S's low 8 bits are then the decoded bits, whole bytes written every 8 steps.
#pragma once

#include "gpu_fec_kernels.hpp"

#if !defined(WHD_FEC_UNROLL)
#if defined(__CUDA_ARCH__)
#define WHD_FEC_UNROLL _Pragma("unroll")
#else
#define WHD_FEC_UNROLL
#endif
#endif

#include <utility>

namespace whd::fec::gpu {

/// A tile pair's traceback start states where no tail ends it: each half's largest
/// metric, the lowest state among equals (viterbi.hpp's rule). `m` holds the two
/// tiles' metrics in its halves.
WHD_FEC_HD void best_states(const uint32_t (&m)[NOF_STATES], uint32_t& sa, uint32_t& sb)
{
  uint32_t ba = m[0] & 0xFFFFu, bb = m[0] >> 16;
  sa = sb = 0;
WHD_FEC_UNROLL
  for (unsigned s = 1; s < NOF_STATES; ++s) {
    const uint32_t va = m[s] & 0xFFFFu, vb = m[s] >> 16;
    sa = va > ba ? s : sa;
    ba = va > ba ? va : ba;
    sb = vb > bb ? s : sb;
    bb = vb > bb ? vb : bb;
  }
}

} // namespace whd::fec::gpu

namespace whd::fec::gpu::relu {

/// Bias of the difference of two metrics of a tile (per half).
constexpr uint32_t DBIAS = 0x4000u;
/// Bias of the metric halves after a normalisation.
constexpr uint32_t NORM_BIAS = 12288u;
/// Steps between normalisations.
constexpr unsigned NORM_EVERY = 16;
constexpr uint32_t pair_of(uint32_t v) { return v | (v << 16); }
/// A tile's spread (viaddmax bound) is under 12 x 381 + 4096 (viterbi.hpp).
constexpr uint32_t SPREAD = 12u * 381u + 4096u;
static_assert(NORM_BIAS > SPREAD && NORM_BIAS + SPREAD + (NORM_EVERY + 1) * 768u < 65536u,
              "halves stay positive and under 2^16 between normalisations");
static_assert(DBIAS > SPREAD && DBIAS + SPREAD < 32768u, "d stays positive and a signed half");
static_assert(SPREAD + 762u < 32768u, "d - (A - B) is a signed half");

WHD_FEC_HD uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s)
{
#if defined(__CUDA_ARCH__)
  return __byte_perm(x, y, s);
#else
  const uint64_t v = uint64_t(x) | (uint64_t(y) << 32);
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    r |= uint32_t((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xFFu) << (8 * i);
  }
  return r;
#endif
}

/// Upper word of (hi:lo) << (s mod 32).
WHD_FEC_HD uint32_t funnel_l(uint32_t lo, uint32_t hi, uint32_t s)
{
#if defined(__CUDA_ARCH__)
  return __funnelshift_l(lo, hi, s);
#else
  const uint64_t v = (uint64_t(hi) << 32) | lo;
  return uint32_t((v << (s & 31u)) >> 32);
#endif
}

/// Lower word of (hi:lo) >> (s mod 32).
WHD_FEC_HD uint32_t funnel_r(uint32_t lo, uint32_t hi, uint32_t s)
{
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, s);
#else
  const uint64_t v = (uint64_t(hi) << 32) | lo;
  return uint32_t(v >> (s & 31u));
#endif
}

/// Four soft values at a 4-byte aligned address, the first in the low byte.
WHD_FEC_HD uint32_t load_u32(const int8_t* p)
{
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const unsigned int*>(p));
#else
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= uint32_t(uint8_t(p[i])) << (8 * i);
  }
  return v;
#endif
}

WHD_FEC_HD uint32_t load_u8(const int8_t* p)
{
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const unsigned char*>(p));
#else
  return uint8_t(*p);
#endif
}

/// Where output w (0 X, 1 Y, 2 Z) of step r of a period sits among the period's kept
/// soft values, or -1 when punctured.
constexpr int kept_index(const puncture_pattern& p, int r, int w)
{
  for (int i = 0; i < p.pout; ++i) {
    if (p.input[std::size_t(i)] == r && p.which[std::size_t(i)] == w) {
      return i;
    }
  }
  return -1;
}

/// One step's constants for both tiles: mp[c] = 384 + bm_c per half, ee[c] the
/// decisions' E of code c.
struct step_consts {
  uint32_t mp[8];
  uint32_t ee[8];
};

/// u = 128 + L per half (the byte's sign bit flipped) of kept value K of the iteration,
/// or 128 (L = 0) where punctured (K < 0).
template <int K, int BYTES>
WHD_FEC_HD uint32_t biased(const uint32_t (&a)[BYTES], const uint32_t (&b)[BYTES])
{
  if constexpr (K < 0) {
    return 0x00800080u;
  } else {
    return (a[K] | (b[K] << 16)) ^ 0x00800080u;
  }
}

/// Step STEP of the iteration (compile-time) from the iteration's soft bytes (a[i], b[i]:
/// kept value i of the iteration, zero-extended).
template <code_rate R, int STEP, int BYTES>
WHD_FEC_HD void consts_of(const uint32_t (&a)[BYTES], const uint32_t (&b)[BYTES], step_consts& s)
{
  constexpr puncture_pattern P = pattern_of(R);
  constexpr int BASE = STEP / P.pin * P.pout, IN = STEP % P.pin;
  constexpr int KX = kept_index(P, IN, 0), KY = kept_index(P, IN, 1), KZ = kept_index(P, IN, 2);
  const uint32_t u[3] = {biased<KX < 0 ? -1 : BASE + KX>(a, b), biased<KY < 0 ? -1 : BASE + KY>(a, b),
                         biased<KZ < 0 ? -1 : BASE + KZ>(a, b)};
  uint32_t v[3];
WHD_FEC_UNROLL
  for (int w = 0; w < 3; ++w) {
    v[w] = 0x01000100u - u[w]; // 128 - L = 256 - (128 + L)
  }
WHD_FEC_UNROLL
  for (unsigned c = 0; c < 4; ++c) {
    s.mp[c] = u[0] + ((c & 2u) ? v[1] : u[1]) + ((c & 1u) ? v[2] : u[2]);
    s.mp[7 - c] = 0x03000300u - s.mp[c];
  }
WHD_FEC_UNROLL
  for (unsigned c = 0; c < 8; ++c) {
    // -(DBIAS + A - B) = -(DBIAS + 2 mp - 768) mod 2^16, per half without borrow.
    s.ee[c] = pair_of(0x10000u - DBIAS + 768u) - 2u * s.mp[c];
  }
}

/// Butterfly J: new metrics to nm, decisions added into w (x: w[J / 16], y: w[2 + J / 16],
/// bit 15 - J mod 16 of each half).
template <int J>
WHD_FEC_HD void butterfly(const uint32_t (&m)[NOF_STATES], uint32_t (&nm)[NOF_STATES], const step_consts& s, uint32_t (&w)[4])
{
  constexpr unsigned c = output_code(2u * J);
  const uint32_t m0 = m[2 * J], m1 = m[2 * J + 1];
  nm[J] = __viaddmax_u16x2(m0, s.mp[c], m1 + s.mp[7 - c]);
  nm[J + 32] = __viaddmax_u16x2(m0, s.mp[7 - c], m1 + s.mp[c]);
  const uint32_t d = m1 + pair_of(DBIAS) - m0;
  const uint32_t dx = __viaddmin_s16x2_relu(d, s.ee[c], 0x00010001u);
  const uint32_t dy = __viaddmin_s16x2_relu(d, s.ee[7 - c], 0x00010001u);
  constexpr int SHIFT = 15 - (J & 15);
  w[J >> 4] += dx << SHIFT;
  w[2 + (J >> 4)] += dy << SHIFT;
}

/// Butterfly J of the tree-packed variant: the same, its decisions to dec[J] (x) and
/// dec[32 + J] (y), packed after the step by a tree of shift-adds (depth 4, not 16).
template <int J>
WHD_FEC_HD void butterfly_tree(const uint32_t (&m)[NOF_STATES], uint32_t (&nm)[NOF_STATES], const step_consts& s,
                               uint32_t (&dec)[NOF_STATES])
{
  constexpr unsigned c = output_code(2u * J);
  const uint32_t m0 = m[2 * J], m1 = m[2 * J + 1];
  nm[J] = __viaddmax_u16x2(m0, s.mp[c], m1 + s.mp[7 - c]);
  nm[J + 32] = __viaddmax_u16x2(m0, s.mp[7 - c], m1 + s.mp[c]);
  const uint32_t d = m1 + pair_of(DBIAS) - m0;
  dec[J] = __viaddmin_s16x2_relu(d, s.ee[c], 0x00010001u);
  dec[32 + J] = __viaddmin_s16x2_relu(d, s.ee[7 - c], 0x00010001u);
}

/// Sum of dec[16 k + j] << (15 - j), j = 0 .. 15, as a tree.
WHD_FEC_HD uint32_t pack16(const uint32_t (&dec)[NOF_STATES], int k)
{
  uint32_t l1[8], l2[4];
WHD_FEC_UNROLL
  for (int i = 0; i < 8; ++i) {
    l1[i] = dec[16 * k + 2 * i] * 2u + dec[16 * k + 2 * i + 1];
  }
WHD_FEC_UNROLL
  for (int i = 0; i < 4; ++i) {
    l2[i] = l1[2 * i] * 4u + l1[2 * i + 1];
  }
  return (l2[0] * 16u + l2[1]) * 256u + (l2[2] * 16u + l2[3]);
}

template <bool TREE, int... J>
WHD_FEC_HD uint4 trellis_step(std::integer_sequence<int, J...>, const uint32_t (&m)[NOF_STATES], uint32_t (&nm)[NOF_STATES],
                              const step_consts& s)
{
  uint32_t w[4] = {0, 0, 0, 0};
  if constexpr (TREE) {
    uint32_t dec[NOF_STATES];
    (butterfly_tree<J>(m, nm, s, dec), ...);
WHD_FEC_UNROLL
    for (int k = 0; k < 4; ++k) {
      w[k] = pack16(dec, k);
    }
  } else {
    (butterfly<J>(m, nm, s, w), ...);
  }
  // Per tile: x-states J < 16 (w[0]) to bits 16..31, J >= 16 (w[1]) to bits 0..15.
  return make_uint4(byte_perm(w[1], w[0], 0x5410), byte_perm(w[3], w[2], 0x5410), byte_perm(w[1], w[0], 0x7632),
                    byte_perm(w[3], w[2], 0x7632));
}

template <bool TREE>
WHD_FEC_HD uint4 step(const uint32_t (&m)[NOF_STATES], uint32_t (&nm)[NOF_STATES], const step_consts& s)
{
  return trellis_step<TREE>(std::make_integer_sequence<int, NOF_STATES / 2>{}, m, nm, s);
}

/// One traceback step of a tile: S' = S << 1 | decision of state S mod 64.
WHD_FEC_HD uint32_t back(uint32_t sreg, uint32_t wx, uint32_t wy)
{
  const uint32_t w = (sreg & 32u) ? wy : wx;
  return funnel_l(funnel_l(w, w, sreg), sreg, 1);
}

/// The iteration's soft bytes (BYTES kept values of each stream from pa, pb).
template <int BYTES>
WHD_FEC_HD void load_bytes(const int8_t* pa, const int8_t* pb, uint32_t (&a)[BYTES], uint32_t (&b)[BYTES])
{
WHD_FEC_UNROLL
  for (int i = 0; i < BYTES; ++i) {
    a[i] = load_u8(pa + i);
    b[i] = load_u8(pb + i);
  }
}

/// The soft values of a stream a group of iterations at a time: NW words loaded whole
/// (4-byte aligned loads, a quarter of the byte loads' requests), the window's front
/// BYTES values taken each iteration and the window moved on by as many.
template <int BYTES, int NW>
struct word_window {
  uint32_t w[NW];

  WHD_FEC_HD void load(const int8_t* p)
  {
WHD_FEC_UNROLL
    for (int k = 0; k < NW; ++k) {
      w[k] = load_u32(p + 4 * k);
    }
  }
  /// The front BYTES values (zero-extended) to v; the window then starts after them.
  WHD_FEC_HD void take(uint32_t (&v)[BYTES])
  {
WHD_FEC_UNROLL
    for (int k = 0; k < BYTES; ++k) {
      v[k] = (w[k / 4] >> (8 * (k % 4))) & 0xFFu;
    }
    constexpr int WS = BYTES / 4, BS = BYTES % 4;
WHD_FEC_UNROLL
    for (int m = 0; m < NW; ++m) {
      const uint32_t lo = m + WS < NW ? w[m + WS] : 0u;
      const uint32_t hi = m + WS + 1 < NW ? w[m + WS + 1] : 0u;
      w[m] = BS != 0 ? funnel_r(lo, hi, 8u * unsigned(BS)) : lo;
    }
  }
};

constexpr int gcd_of(int a, int b) { return b == 0 ? a : gcd_of(b, a % b); }

template <code_rate R, bool TREE, int STEP, int BYTES>
WHD_FEC_HD uint4 step_at(const uint32_t (&a)[BYTES], const uint32_t (&b)[BYTES], const uint32_t (&m)[NOF_STATES],
                         uint32_t (&nm)[NOF_STATES])
{
  step_consts s;
  consts_of<R, STEP, BYTES>(a, b, s);
  return step<TREE>(m, nm, s);
}

/// One iteration (U steps, from position i of the tile) from its soft values: decisions
/// kept from first_out on, metrics normalised every NORM_EVERY steps; i and out move on.
template <code_rate R, bool TREE, int U, int BYTES>
WHD_FEC_HD void iterate(const uint32_t (&a)[BYTES], const uint32_t (&b)[BYTES], uint32_t (&m)[NOF_STATES], uint32_t (&nm)[NOF_STATES],
                        uint4*& out, unsigned stride, unsigned& i, unsigned first_out)
{
  const bool keep = i >= first_out;
  uint4 d0 = step_at<R, TREE, 0, BYTES>(a, b, m, nm);
  uint4 d1 = step_at<R, TREE, 1, BYTES>(a, b, nm, m);
  if (keep) {
    out[0] = d0;
    out[stride] = d1;
  }
  if constexpr (U == 4) {
    d0 = step_at<R, TREE, 2, BYTES>(a, b, m, nm);
    d1 = step_at<R, TREE, 3, BYTES>(a, b, nm, m);
    if (keep) {
      out[2 * stride] = d0;
      out[3 * stride] = d1;
    }
  }
  out += keep ? U * stride : 0u;
  if ((i + U) % NORM_EVERY == 0) {
    // Each half relative to its state 0, plus NORM_BIAS (32-bit arithmetic: every
    // half's result lies in 0 .. 2^16, so nothing crosses).
    const uint32_t delta = pair_of(NORM_BIAS) - m[0];
WHD_FEC_UNROLL
    for (int s = 0; s < NOF_STATES; ++s) {
      m[s] += delta;
    }
  }
  i += U;
}

/// Decodes item `r` of frame `f` (tile k of encoders p and p + 4), code rate R: its
/// decisions to slot[step * stride], its bits to f.decoded.
template <code_rate R, bool TREE, bool WORDS = false>
WHD_FEC_HD void decode_pair(const frame_desc& f, uint64_t r, uint4* slot, unsigned stride)
{
  constexpr puncture_pattern P = pattern_of(R);
  constexpr int U = P.pin >= 2 ? P.pin : 2; // steps an iteration (even: m -> nm -> m)
  constexpr int BYTES = U / P.pin * P.pout;  // kept soft values of a stream an iteration
  static_assert(NORM_EVERY % U == 0 && ACQUIRE % U == 0, "iterations align with normalisation and output");

  const uint64_t per_stream = nof_tiles(f.nin);
  const auto p = unsigned(r / per_stream);
  const tile_span t = tile_of(f.nin, r - p * per_stream);
  const int8_t* pa = f.streams + uint64_t(p) * f.ce + t.run_first / unsigned(P.pin) * unsigned(P.pout);
  const int8_t* pb = pa + 4 * f.ce;
  const auto len = unsigned(t.run_end - t.run_first);       // a multiple of pin, at most 704
  const auto first_out = unsigned(t.out_first - t.run_first); // 0 or ACQUIRE

  uint32_t m[NOF_STATES], nm[NOF_STATES];
  const uint32_t other = t.run_first == 0 ? pair_of(uint32_t(int(NORM_BIAS) + START_OTHER)) : pair_of(NORM_BIAS);
WHD_FEC_UNROLL
  for (int s = 0; s < NOF_STATES; ++s) {
    m[s] = s == 0 ? pair_of(NORM_BIAS) : other;
  }
  unsigned i = 0;
  uint4* out = slot;
  if constexpr (WORDS) {
    // Groups of G iterations, whose G x BYTES soft values are NW whole words. Every
    // tile starts on a word (ACQUIRE and TILE are multiples of 16 steps, so its first
    // value's index is a multiple of 4) when the streams do (Ce is a multiple of 4).
    constexpr int G = 4 / gcd_of(BYTES, 4);
    constexpr int NW = G * BYTES / 4;
    static_assert(TILE % 16 == 0 && TILE_LONG % 16 == 0 && ACQUIRE % 16 == 0, "tiles start on a word of soft values");
    static_assert(NORM_EVERY % U == 0, "normalisation falls between iterations");
    if (((reinterpret_cast<uintptr_t>(pa) | reinterpret_cast<uintptr_t>(pb)) & 3u) == 0 && len >= unsigned(G * U)) {
      word_window<BYTES, NW> wa, wb;
      wa.load(pa);
      wb.load(pb);
      for (; i + G * U <= len;) {
        // The next group's words, loaded ahead (the same again where none follows).
        const unsigned ahead = i + 2 * G * U <= len ? unsigned(4 * NW) : 0u;
        pa += ahead;
        pb += ahead;
        word_window<BYTES, NW> na, nb;
        na.load(pa);
        nb.load(pb);
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
        for (int j = 0; j < G; ++j) {
          uint32_t a[BYTES], b[BYTES];
          wa.take(a);
          wb.take(b);
          iterate<R, TREE, U, BYTES>(a, b, m, nm, out, stride, i, first_out);
        }
        wa = na;
        wb = nb;
      }
      pa = f.streams + uint64_t(p) * f.ce + (t.run_first + i) / unsigned(P.pin) * unsigned(P.pout);
      pb = pa + 4 * f.ce;
    }
  }
  uint32_t a[BYTES], b[BYTES];
  if (i + U <= len) {
    load_bytes(pa, pb, a, b);
  }
  for (; i + U <= len;) {
    // The next iteration's bytes, loaded ahead (the same again where none follows).
    const unsigned ahead = i + 2 * U <= len ? unsigned(BYTES) : 0u;
    pa += ahead;
    pb += ahead;
    uint32_t na[BYTES], nb[BYTES];
    load_bytes(pa, pb, na, nb);
    iterate<R, TREE, U, BYTES>(a, b, m, nm, out, stride, i, first_out);
WHD_FEC_UNROLL
    for (int k = 0; k < BYTES; ++k) {
      a[k] = na[k];
      b[k] = nb[k];
    }
  }
  if constexpr (P.pin == 1) {
    if (i < len) { // one step left
      pa = f.streams + uint64_t(p) * f.ce + (t.run_first + i) * unsigned(P.pout);
      pb = pa + 4 * f.ce;
      load_bytes(pa, pb, a, b);
      const uint4 d = step_at<R, TREE, 0, BYTES>(a, b, m, nm);
      if (i >= first_out) {
        out[0] = d;
      }
WHD_FEC_UNROLL
      for (int s = 0; s < NOF_STATES; ++s) {
        m[s] = nm[s];
      }
    }
  }

  // Start states: the tail's 0, or the largest metric (lowest state among equals).
  uint32_t sa = 0, sb = 0;
  if (t.run_end != f.nin) {
    best_states(m, sa, sb);
  }
  // Steps k = len - 1 - first_out down to 6 (relative to the first output bit): step k's
  // decision is decoded bit k - 6, whose byte is whole after k = 6 mod 8 (out_first is a
  // multiple of 8). Bits [0, nbits) are wanted; they all come from decisions, as
  // nbits <= run_end - out_first - 6 (q = (nin - 6) / 8 bytes).
  const uint64_t want = 8 * f.q;
  const auto nbits = unsigned((t.out_end < want ? t.out_end : want) - t.out_first);
  uint8_t* outa = f.decoded + uint64_t(p) * f.q + t.out_first / 8;
  uint8_t* outb = outa + 4 * f.q;
  const int hi = int(len) - 1 - int(first_out);
  if (hi < 6) {
    return;
  }
  constexpr int BATCH = 8; // decisions loaded ahead: their addresses do not depend on the states
  int k = hi;
  unsigned count = unsigned((hi - 6) & 7) + 1; // the first batch ends at k = 6 mod 8
  while (k >= 6) {
    uint4 d[BATCH];
WHD_FEC_UNROLL
    for (unsigned j = 0; j < unsigned(BATCH); ++j) {
      if (j < count) {
        d[j] = slot[unsigned(k - int(j)) * stride];
      }
#if !defined(__CUDA_ARCH__)
      else {
        d[j] = make_uint4(0, 0, 0, 0); // never read; quiets the host compiler
      }
#endif
    }
WHD_FEC_UNROLL
    for (unsigned j = 0; j < unsigned(BATCH); ++j) {
      if (j < count) {
        sa = back(sa, d[j].x, d[j].y);
        sb = back(sb, d[j].z, d[j].w);
      }
    }
    k -= int(count);
    const unsigned bit = unsigned(k + 1 - 6); // the batch's last step decoded this bit
    if (bit < nbits) {
#if defined(__CUDA_ARCH__)
      outa[bit / 8] = uint8_t(__brev(sa) >> 24);
      outb[bit / 8] = uint8_t(__brev(sb) >> 24);
#else
      uint8_t ra = 0, rb = 0;
      for (int x = 0; x < 8; ++x) {
        ra = uint8_t(ra | (((sa >> x) & 1u) << (7 - x)));
        rb = uint8_t(rb | (((sb >> x) & 1u) << (7 - x)));
      }
      outa[bit / 8] = ra;
      outb[bit / 8] = rb;
#endif
    }
    count = BATCH;
  }
}

/// Decodes item `r` of frame `f` (decisions packed by a chain of shift-adds, or a tree
/// with TREE; soft values read a word at a time with WORDS) by its code rate's pattern
/// (the rates the MCS use; the host runs other patterns on an older form).
template <bool TREE = false, bool WORDS = false>
WHD_FEC_HD void decode_item(const frame_desc& f, uint64_t r, uint4* slot, unsigned stride)
{
  switch (f.pin_log2 * 8 + f.pout) {
  case 0 * 8 + 3: decode_pair<code_rate::r1_3, TREE, WORDS>(f, r, slot, stride); break;
  case 1 * 8 + 3: decode_pair<code_rate::r2_3, TREE, WORDS>(f, r, slot, stride); break;
  case 2 * 8 + 5: decode_pair<code_rate::r4_5, TREE, WORDS>(f, r, slot, stride); break;
  default: break;
  }
}

/// Whether decode_item handles frames of pattern `p`.
constexpr bool handles(const puncture_pattern& p)
{
  for (const code_rate r : {code_rate::r1_3, code_rate::r2_3, code_rate::r4_5}) {
    const puncture_pattern q = pattern_of(r);
    bool same = q.pin == p.pin && q.pout == p.pout;
    for (int i = 0; same && i < p.pout; ++i) {
      same = q.input[std::size_t(i)] == p.input[std::size_t(i)] && q.which[std::size_t(i)] == p.which[std::size_t(i)];
    }
    if (same) {
      return true;
    }
  }
  return false;
}

} // namespace whd::fec::gpu::relu
