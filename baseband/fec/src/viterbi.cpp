#include <whd/fec/viterbi.hpp>

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace whd::fec {

namespace {

/// Output code of butterfly j's transition from state 2j with input 0 (r = 2j); the
/// other three transitions of the butterfly have this code or its complement.
constexpr std::array<uint8_t, NOF_STATES / 2> BUTTERFLY_CODE = [] {
  std::array<uint8_t, NOF_STATES / 2> c{};
  for (unsigned j = 0; j < c.size(); ++j) {
    c[j] = uint8_t(output_code(2 * j));
  }
  return c;
}();
static_assert(output_code(1) == 7 && output_code(64) == 7, "flipping u[n] or u[n-6] flips every output");

/// Sets the tile's bit n (MSB first) in `bits`.
inline void put_bit(uint8_t* bits, uint64_t n, unsigned b)
{
  const auto mask = uint8_t(0x80u >> (n & 7));
  bits[n >> 3] = b ? uint8_t(bits[n >> 3] | mask) : uint8_t(bits[n >> 3] & ~mask);
}

/// Register blocking of K trellis steps: the 2^K states 2^K g + i (i < 2^K) lead, K
/// steps on, to the 2^K states g + (64 / 2^K) i and from no others, so that a group's
/// metrics stay in registers over the K steps and touch memory once. Row k holds the
/// group's states after k steps in the order the registers hold them: a step takes
/// each pair (2p, 2p + 1) as butterfly j = state / 2 and puts its new states j and
/// j + 32 at p and p + 2^(K - 1).
template <int K>
constexpr std::array<std::array<int, 1 << K>, K + 1> block_states(int g)
{
  constexpr int G = 1 << K;
  std::array<std::array<int, G>, K + 1> st{};
  for (int i = 0; i < G; ++i) {
    st[0][std::size_t(i)] = G * g + i;
  }
  for (std::size_t k = 0; k < std::size_t(K); ++k) {
    for (std::size_t p = 0; p < std::size_t(G / 2); ++p) {
      const int j = st[k][2 * p] / 2;
      st[k + 1][p] = j;
      st[k + 1][p + G / 2] = j + NOF_STATES / 2;
    }
  }
  return st;
}

/// Whether every step of block_states<K> pairs the two states of one butterfly, and
/// the group ends in the states g + (64 / 2^K) i.
template <int K>
constexpr bool blocks_close()
{
  constexpr int G = 1 << K;
  for (int g = 0; g < NOF_STATES / G; ++g) {
    const auto st = block_states<K>(g);
    for (std::size_t k = 0; k < std::size_t(K); ++k) {
      for (std::size_t p = 0; p < std::size_t(G / 2); ++p) {
        if (st[k][2 * p] % 2 != 0 || st[k][2 * p + 1] != st[k][2 * p] + 1) {
          return false;
        }
      }
    }
    for (int i = 0; i < G; ++i) {
      if (st[std::size_t(K)][std::size_t(i)] != g + NOF_STATES / G * i) {
        return false;
      }
    }
  }
  return true;
}
static_assert(blocks_close<1>() && blocks_close<2>() && blocks_close<3>(), "a block's states are closed over its steps");

/// Steps a batch runs at most between two normalisations of its metrics (each taken
/// relative to state 0's): after one they lie within a tile's spread of 0 (under
/// 12 x 381 + |START_OTHER|, viterbi.hpp), and a step moves them by 381 at most, so
/// that 16 bits hold them and the candidates of the next step (under 13 700).
constexpr uint64_t NORMALISE_EVERY = 12;

/// Traces a tile back from `state` after its last step through its decisions
/// (64 bits a step, state j's in bit j; dec(step) returns them), writing its bits.
template <typename DECISION>
void trace_back(const tile_job& job, const tile_span& t, unsigned state, DECISION&& decision)
{
  const uint64_t end = std::min(t.out_end, job.nof_bits);
  for (uint64_t n = t.run_end; n-- > t.out_first;) {
    if (n < end) {
      put_bit(job.bits, n, state >> 5);
    }
    state = ((state & 31u) << 1) | decision(n - t.run_first, state);
  }
}

} // namespace

void decode_tile_reference(const tile_job& job)
{
  const tile_span t = tile_of(job.nin, job.tile);
  std::vector<uint64_t> dec(t.run_end - t.run_first);
  std::array<int32_t, NOF_STATES> m{}, nm{};
  const bool from_start = t.run_first == 0;
  for (int s = 1; s < NOF_STATES; ++s) {
    m[std::size_t(s)] = from_start ? START_OTHER : 0;
  }
  for (uint64_t n = t.run_first; n < t.run_end; ++n) {
    const int8_t* l = job.soft + 3 * n;
    std::array<int32_t, 8> bm{};
    for (unsigned c = 0; c < 8; ++c) {
      bm[c] = ((c & 4u) ? -l[0] : l[0]) + ((c & 2u) ? -l[1] : l[1]) + ((c & 1u) ? -l[2] : l[2]);
    }
    uint64_t d = 0;
    for (unsigned j = 0; j < NOF_STATES / 2; ++j) {
      const int32_t mm = bm[BUTTERFLY_CODE[j]];
      const int32_t a = m[2 * j] + mm, b = m[2 * j + 1] - mm; // into j (input 0)
      const int32_t c = m[2 * j] - mm, e = m[2 * j + 1] + mm; // into j + 32 (input 1)
      nm[j] = b > a ? b : a;
      nm[j + 32] = e > c ? e : c;
      d |= uint64_t(b > a) << j;
      d |= uint64_t(e > c) << (j + 32);
    }
    dec[n - t.run_first] = d;
    m = nm;
  }
  unsigned state = 0;
  if (t.run_end != job.nin) {
    for (unsigned s = 1; s < NOF_STATES; ++s) {
      state = m[s] > m[state] ? s : state;
    }
  }
  trace_back(job, t, state, [&](uint64_t step, unsigned s) { return unsigned(dec[step] >> s) & 1u; });
}

namespace {

/// Scratch of one vectorised batch: the soft values transposed (step, output, lane),
/// widened to the metrics' 16 bits as they are read, and the decisions of every step
/// in the instruction set's own layout.
struct batch_scratch {
  std::vector<int8_t> soft;
  std::vector<uint32_t> dec;
};

/// A batch of tiles laid out for LANES lanes that end together: lane l starts at batch
/// step offset[l], after zeros, and takes its tile's starting metrics there.
template <int LANES>
struct batch_plan {
  std::array<tile_span, LANES> t{};
  std::array<uint64_t, LANES> offset{};
  std::array<int, LANES> order{}; ///< lanes by their start, for the resets
  uint64_t steps = 0;
};

/// A 16 x 16 byte matrix transposed in registers (SSE2): row i in r[i] becomes
/// column i. Four rounds of unpacks, each doubling the width of what moves together.
inline void transpose_16x16(__m128i (&r)[16])
{
  __m128i a[16], b[16];
  for (int k = 0; k < 8; ++k) { // a[k]: rows 2k, 2k+1 of columns 0..7; a[8+k]: of 8..15
    a[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
    a[8 + k] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
  }
  for (int h = 0; h < 16; h += 8) { // b[h + 4q + k]: rows 4k .. 4k+3 of columns h + 4q .. +3
    for (int k = 0; k < 4; ++k) {
      b[h + k] = _mm_unpacklo_epi16(a[h + 2 * k], a[h + 2 * k + 1]);
      b[h + 4 + k] = _mm_unpackhi_epi16(a[h + 2 * k], a[h + 2 * k + 1]);
    }
  }
  for (int g = 0; g < 16; g += 4) { // a[g + 2p + k]: rows 8k .. 8k+7 of columns g + 2p, +1
    for (int k = 0; k < 2; ++k) {
      a[g + k] = _mm_unpacklo_epi32(b[g + 2 * k], b[g + 2 * k + 1]);
      a[g + 2 + k] = _mm_unpackhi_epi32(b[g + 2 * k], b[g + 2 * k + 1]);
    }
  }
  for (int c = 0; c < 16; c += 2) { // columns c and c + 1, rows 0 .. 15
    r[c] = _mm_unpacklo_epi64(a[c], a[c + 1]);
    r[c + 1] = _mm_unpackhi_epi64(a[c], a[c + 1]);
  }
}

/// The soft values of 16 lanes [l0, l0 + 16) of a batch into x.soft (rows of LANES
/// int8), 16 rows (soft values of the batch, 3 a step) at a time: lane l's value r
/// is its run's value r - 3 offset[l], 0 outside the run (and for lanes past count).
template <int LANES>
__attribute__((target("avx2"))) void transpose_lanes(const tile_job* jobs, int count, const batch_plan<LANES>& p, int l0,
                                                     uint64_t nof_rows, int8_t* soft)
{
  std::array<const int8_t*, 16> src{};
  std::array<uint64_t, 16> first{}, end{}; // the lane's run as batch rows [first, end)
  // Rows [inside, 3 steps) lie within every lane's run (when all 16 lanes are tiles).
  uint64_t inside = l0 + 16 <= count ? 0 : nof_rows;
  for (int i = 0; i < 16; ++i) {
    const int l = l0 + i;
    if (l < count) {
      const tile_span& t = p.t[std::size_t(l)];
      first[std::size_t(i)] = 3 * p.offset[std::size_t(l)];
      end[std::size_t(i)] = 3 * p.steps;
      src[std::size_t(i)] = jobs[l].soft + 3 * t.run_first;
      inside = std::max(inside, first[std::size_t(i)]);
    }
  }
  for (uint64_t r0 = 0; r0 < nof_rows; r0 += 16) {
    __m128i m[16];
    if (r0 >= inside && r0 + 16 <= 3 * p.steps) {
#pragma GCC unroll 16
      for (std::size_t i = 0; i < 16; ++i) {
        m[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[i] + (r0 - first[i])));
      }
    } else {
      for (std::size_t i = 0; i < 16; ++i) {
        if (src[i] != nullptr && r0 >= first[i] && r0 + 16 <= end[i]) {
          m[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[i] + (r0 - first[i])));
        } else {
          alignas(16) int8_t part[16] = {};
          for (uint64_t r = r0; r < r0 + 16 && src[i] != nullptr; ++r) {
            if (r >= first[i] && r < end[i]) {
              part[r - r0] = src[i][r - first[i]];
            }
          }
          m[i] = _mm_load_si128(reinterpret_cast<const __m128i*>(part));
        }
      }
    }
    transpose_16x16(m);
#pragma GCC unroll 16
    for (std::size_t c = 0; c < 16; ++c) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(soft + (r0 + c) * LANES + l0), m[c]);
    }
  }
}

/// The plan of jobs[0, count), and their soft values transposed into x.soft.
template <int LANES>
batch_plan<LANES> plan_batch(const tile_job* jobs, int count, batch_scratch& x)
{
  static_assert(LANES % 16 == 0, "lanes are transposed 16 at a time");
  batch_plan<LANES> p;
  for (int l = 0; l < count; ++l) {
    p.t[std::size_t(l)] = tile_of(jobs[l].nin, jobs[l].tile);
    p.steps = std::max(p.steps, p.t[std::size_t(l)].run_end - p.t[std::size_t(l)].run_first);
  }
  for (int l = 0; l < count; ++l) {
    const tile_span& s = p.t[std::size_t(l)];
    p.offset[std::size_t(l)] = p.steps - (s.run_end - s.run_first);
  }
  // Whole blocks of 16 rows; the rows past 3 steps are written and never read.
  const uint64_t nof_rows = (3 * p.steps + 15) / 16 * 16;
  x.soft.resize(nof_rows * LANES);
  for (int l0 = 0; l0 < LANES; l0 += 16) {
    transpose_lanes<LANES>(jobs, count, p, l0, nof_rows, x.soft.data());
  }
  for (int l = 0; l < LANES; ++l) {
    p.order[std::size_t(l)] = l;
  }
  std::sort(p.order.begin(), p.order.begin() + count, [&](int a, int b) { return p.offset[std::size_t(a)] < p.offset[std::size_t(b)]; });
  return p;
}

/// The state lane l of a batch traces back from: 0 where its tile runs to the stream's
/// end (the tail), else `best[l]`, the state of largest metric at the batch's last
/// step, the lowest state number among equals.
template <int LANES>
unsigned trace_start(const tile_job* jobs, const batch_plan<LANES>& p, const int16_t (&best)[LANES], int l)
{
  return p.t[std::size_t(l)].run_end != jobs[l].nin ? unsigned(best[l]) : 0u;
}

/// The lanes of a batch traced back side by side (independent chains of loads), from
/// their last step's best states `best` (trace_start); bit(s, l, st) is lane l's
/// decision for state st at batch step s.
template <int LANES, typename BIT>
void trace_batch(const tile_job* jobs, int count, const batch_plan<LANES>& p, const int16_t (&best)[LANES], BIT&& bit)
{
  std::array<unsigned, LANES> state{}, acc{};
  std::array<uint64_t, LANES> stop{}, end{};
  uint64_t lowest = p.steps;
  for (int l = 0; l < count; ++l) {
    const tile_span& ts = p.t[std::size_t(l)];
    state[std::size_t(l)] = trace_start<LANES>(jobs, p, best, l);
    // Batch step of output bit n: offset + n - run_first.
    stop[std::size_t(l)] = p.offset[std::size_t(l)] + (ts.out_first - ts.run_first);
    end[std::size_t(l)] = p.offset[std::size_t(l)] + (std::min(ts.out_end, jobs[l].nof_bits) - ts.run_first);
    lowest = std::min(lowest, stop[std::size_t(l)]);
  }
  const auto back = [&](uint64_t s, std::size_t l) {
    const unsigned st = state[l];
    state[l] = ((st & 31u) << 1) | bit(s, int(l), st);
  };
  bool aligned = true; // every lane outputs the same steps (tiles inside their streams)
  for (int l = 1; l < count; ++l) {
    aligned = aligned && stop[std::size_t(l)] == stop[0] && end[std::size_t(l)] == end[0];
  }
  if (aligned && (end[0] - stop[0]) % 8 == 0) {
    for (uint64_t s = p.steps; s-- > end[0];) {
      for (std::size_t l = 0; l < std::size_t(count); ++l) {
        back(s, l);
      }
    }
    // A byte of every lane at a time: bits n .. n - 7 from batch steps s .. s - 7.
    for (uint64_t s = end[0]; s > stop[0]; s -= 8) {
      const uint64_t n0 = s - 8 - stop[0] + p.t[0].out_first; // the byte's first bit
      for (int k = 7; k >= 0; --k) {
        for (std::size_t l = 0; l < std::size_t(count); ++l) {
          acc[l] |= (state[l] >> 5) << (7 - k);
          back(s - 8 + uint64_t(k), l);
        }
      }
      for (std::size_t l = 0; l < std::size_t(count); ++l) {
        jobs[l].bits[(n0 + p.t[l].out_first - p.t[0].out_first) >> 3] = uint8_t(acc[l]);
        acc[l] = 0;
      }
    }
    return;
  }
  for (uint64_t s = p.steps; s-- > lowest;) {
    for (int l = 0; l < count; ++l) {
      const auto li = std::size_t(l);
      if (s < stop[li]) {
        continue;
      }
      if (s < end[li]) {
        // Output bits end and start on byte boundaries (TILE and 8 Q are multiples of 8).
        const uint64_t n = s - stop[li] + p.t[li].out_first;
        acc[li] |= (state[li] >> 5) << (7 - (n & 7));
        if ((n & 7) == 0) {
          jobs[l].bits[n >> 3] = uint8_t(acc[li]);
          acc[li] = 0;
        }
      }
      back(s, li);
    }
  }
}

/// Bit of lane l's decision for state j (< 32: first of the pair, else second) in a
/// butterfly's movemask word of _mm256_packs_epi16(first, second).
inline unsigned dec_bit(int lane, unsigned state)
{
  const unsigned second = state >= 32 ? 8u : 0u;
  return (lane < 8 ? unsigned(lane) : unsigned(lane) + 8u) + second;
}

/// 16 tiles in the 16-bit lanes of AVX2 registers; a step's decisions as 32 movemask
/// words, one a butterfly.
__attribute__((target("avx2"))) void decode_batch_avx2(const tile_job* jobs, int count, batch_scratch& x)
{
  constexpr int LANES = 16;
  const batch_plan<LANES> p = plan_batch<LANES>(jobs, count, x);
  x.dec.resize(p.steps * (NOF_STATES / 2));
  // Two metric buffers, the step's old and new, swapped each step.
  alignas(32) __m256i buf[2][NOF_STATES];
  __m256i* m = buf[0];
  __m256i* nm = buf[1];
  for (int st = 0; st < NOF_STATES; ++st) {
    m[st] = _mm256_setzero_si256();
  }
  std::size_t next_start = 0;
  for (uint64_t s = 0; s < p.steps; ++s) {
    // Lanes whose tile starts at this step take the tile's starting metrics.
    if (next_start < std::size_t(count) && p.offset[std::size_t(p.order[next_start])] == s) {
      alignas(32) int16_t keep[LANES], first[LANES];
      for (int l = 0; l < LANES; ++l) {
        keep[l] = -1;
        first[l] = 0;
      }
      while (next_start < std::size_t(count) && p.offset[std::size_t(p.order[next_start])] == s) {
        const int l = p.order[next_start++];
        keep[l] = 0;
        first[l] = p.t[std::size_t(l)].run_first == 0 ? int16_t(START_OTHER) : int16_t(0);
      }
      const __m256i kv = _mm256_load_si256(reinterpret_cast<const __m256i*>(keep));
      const __m256i fv = _mm256_load_si256(reinterpret_cast<const __m256i*>(first));
      m[0] = _mm256_and_si256(m[0], kv);
      for (int st = 1; st < NOF_STATES; ++st) {
        m[st] = _mm256_or_si256(_mm256_and_si256(m[st], kv), _mm256_andnot_si256(kv, fv));
      }
    }
    const int8_t* l = x.soft.data() + s * 3 * LANES;
    const __m256i lx = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(l)));
    const __m256i ly = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(l + LANES)));
    const __m256i lz = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(l + 2 * LANES)));
    __m256i bm[8];
    const __m256i xpy = _mm256_add_epi16(lx, ly), xmy = _mm256_sub_epi16(lx, ly);
    bm[0] = _mm256_add_epi16(xpy, lz);
    bm[1] = _mm256_sub_epi16(xpy, lz);
    bm[2] = _mm256_add_epi16(xmy, lz);
    bm[3] = _mm256_sub_epi16(xmy, lz);
    const __m256i zero = _mm256_setzero_si256();
    bm[4] = _mm256_sub_epi16(zero, bm[3]);
    bm[5] = _mm256_sub_epi16(zero, bm[2]);
    bm[6] = _mm256_sub_epi16(zero, bm[1]);
    bm[7] = _mm256_sub_epi16(zero, bm[0]);
    uint32_t* d = x.dec.data() + s * (NOF_STATES / 2);
#pragma GCC unroll 32
    for (int j = 0; j < NOF_STATES / 2; ++j) {
      const __m256i mm = bm[BUTTERFLY_CODE[std::size_t(j)]];
      const __m256i a = _mm256_add_epi16(m[2 * j], mm), b = _mm256_sub_epi16(m[2 * j + 1], mm);
      const __m256i c = _mm256_sub_epi16(m[2 * j], mm), e = _mm256_add_epi16(m[2 * j + 1], mm);
      nm[j] = _mm256_max_epi16(a, b);
      nm[j + 32] = _mm256_max_epi16(c, e);
      const __m256i d0 = _mm256_cmpgt_epi16(b, a), d1 = _mm256_cmpgt_epi16(e, c);
      d[j] = uint32_t(_mm256_movemask_epi8(_mm256_packs_epi16(d0, d1)));
    }
    // Every 8 steps the metrics are taken relative to state 0's, so that 16 bits hold them.
    if ((s & 7) == 7) {
      const __m256i base = nm[0];
      for (int st = 0; st < NOF_STATES; ++st) {
        nm[st] = _mm256_sub_epi16(nm[st], base);
      }
    }
    std::swap(m, nm);
  }
  // Each lane's state of largest metric, the lowest among equals: a later state only
  // where it is larger.
  __m256i top = m[0], arg = _mm256_setzero_si256();
  for (int st = 1; st < NOF_STATES; ++st) {
    const __m256i larger = _mm256_cmpgt_epi16(m[st], top);
    top = _mm256_max_epi16(top, m[st]);
    arg = _mm256_blendv_epi8(arg, _mm256_set1_epi16(int16_t(st)), larger);
  }
  alignas(32) int16_t best[LANES];
  _mm256_store_si256(reinterpret_cast<__m256i*>(best), arg);
  std::array<unsigned, LANES> lane_bit{};
  for (int l = 0; l < LANES; ++l) {
    lane_bit[std::size_t(l)] = dec_bit(l, 0);
  }
  const uint32_t* dec = x.dec.data();
  trace_batch<LANES>(jobs, count, p, best, [&](uint64_t s, int l, unsigned st) {
    return (dec[s * (NOF_STATES / 2) + (st & 31u)] >> (lane_bit[std::size_t(l)] + ((st >> 2) & 8u))) & 1u;
  });
}

/// One step back of the 32 lanes' states (two registers of 16 lanes) through a batch
/// step's decisions d (64 words, state st's with lane l's decision in bit l): state <-
/// (state mod 32) 2 + the lane's decision for its state, the word looked up among the
/// step's 64 (two two-register permutes and a blend), the bit picked by a shift by l.
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void step_back_avx512(const uint32_t* d, __m512i (&st)[2],
                                                                                       const __m512i (&shift)[2])
{
  const __m512i d0 = _mm512_loadu_si512(d), d1 = _mm512_loadu_si512(d + 16);
  const __m512i d2 = _mm512_loadu_si512(d + 32), d3 = _mm512_loadu_si512(d + 48);
  const __m512i one = _mm512_set1_epi32(1), low5 = _mm512_set1_epi32(31), bit5 = _mm512_set1_epi32(32);
  for (int h = 0; h < 2; ++h) {
    const __m512i lo = _mm512_permutex2var_epi32(d0, st[h], d1), hi = _mm512_permutex2var_epi32(d2, st[h], d3);
    const __m512i word = _mm512_mask_blend_epi32(_mm512_test_epi32_mask(st[h], bit5), lo, hi);
    const __m512i b = _mm512_and_si512(_mm512_srlv_epi32(word, shift[h]), one);
    st[h] = _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(st[h], low5), 1), b);
  }
}

/// trace_batch of the AVX-512 decoder's decisions (dec: 64 words a batch step, state
/// st's with lane l's decision in bit l), every lane in step (step_back_avx512). Where
/// every lane outputs the same batch steps (tiles inside their streams, the common
/// batch), each byte of every lane is shifted in over its 8 steps and stored at once;
/// otherwise a lane's output bits go into its byte under masks of the steps it outputs,
/// stored once the byte is whole.
// GCC 12's AVX-512 shift intrinsics pass _mm512_undefined_epi32() (a self-initialised
// variable) as their unused merge source, which -Wmaybe-uninitialized reports once
// inlined here: a false positive of the header, silenced for this function alone.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f,avx512bw"))) void trace_batch_avx512(const tile_job* jobs, int count,
                                                                      const batch_plan<32>& p,
                                                                      const int16_t (&best)[32],
                                                                      const uint32_t* dec)
{
  constexpr int LANES = 32;
  alignas(64) int32_t state[LANES] = {}, stop[LANES] = {}, end[LANES] = {}, lane[LANES];
  uint64_t lowest = p.steps;
  for (int l = 0; l < LANES; ++l) {
    lane[l] = l;
    if (l < count) {
      const tile_span& ts = p.t[std::size_t(l)];
      state[l] = int32_t(trace_start<LANES>(jobs, p, best, l));
      // Batch step of output bit n: offset + n - run_first (steps < 2^31: a tile's few hundred).
      stop[l] = int32_t(p.offset[std::size_t(l)] + (ts.out_first - ts.run_first));
      end[l] = int32_t(p.offset[std::size_t(l)] + (std::min(ts.out_end, jobs[l].nof_bits) - ts.run_first));
      lowest = std::min(lowest, uint64_t(stop[l]));
    } // lanes past count: stop = end = 0, nothing output
  }
  __m512i st[2], first[2], after[2], acc[2], shift[2];
  for (int h = 0; h < 2; ++h) {
    st[h] = _mm512_load_si512(state + 16 * h);
    first[h] = _mm512_load_si512(stop + 16 * h);
    after[h] = _mm512_load_si512(end + 16 * h);
    shift[h] = _mm512_load_si512(lane + 16 * h);
    acc[h] = _mm512_setzero_si512();
  }
  const __m512i seven = _mm512_set1_epi32(7), bit5 = _mm512_set1_epi32(32);
  bool aligned = count > 0 && (end[0] - stop[0]) % 8 == 0; // every lane outputs the same steps
  for (int l = 1; l < count; ++l) {
    aligned = aligned && stop[l] == stop[0] && end[l] == end[0];
  }
  if (aligned) {
    for (uint64_t s = p.steps; s-- > uint64_t(end[0]);) {
      step_back_avx512(dec + s * NOF_STATES, st, shift);
    }
    // A byte of every lane at a time: its bits n .. n - 7 from batch steps s - 1 .. s - 8,
    // the first to the byte's lowest bit.
    alignas(16) uint8_t out[LANES];
    for (int64_t s = end[0]; s > stop[0]; s -= 8) {
      for (int64_t k = 1; k <= 8; ++k) {
        for (int h = 0; h < 2; ++h) {
          acc[h] = _mm512_or_si512(_mm512_srli_epi32(acc[h], 1), _mm512_slli_epi32(_mm512_and_si512(st[h], bit5), 2));
        }
        step_back_avx512(dec + uint64_t(s - k) * NOF_STATES, st, shift);
      }
      _mm_store_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(acc[0]));
      _mm_store_si128(reinterpret_cast<__m128i*>(out + 16), _mm512_cvtepi32_epi8(acc[1]));
      const auto n0 = uint64_t(s - 8 - stop[0]); // the byte's first bit, from out_first
      for (int l = 0; l < count; ++l) {
        jobs[l].bits[(p.t[std::size_t(l)].out_first + n0) >> 3] = out[l];
      }
    }
    return;
  }
  alignas(64) uint32_t bytes[LANES];
  for (uint64_t s = p.steps; s-- > lowest;) {
    const __m512i sv = _mm512_set1_epi32(int32_t(s));
    __mmask16 whole[2];
    for (int h = 0; h < 2; ++h) {
      // Output bit n = s - stop + out_first of lanes with stop <= s < end, MSB first:
      // bit 7 - (n mod 8) of its byte (out_first is a multiple of 8).
      const __mmask16 out = _mm512_cmple_epi32_mask(first[h], sv) & _mm512_cmpgt_epi32_mask(after[h], sv);
      const __m512i phase = _mm512_and_si512(_mm512_sub_epi32(sv, first[h]), seven);
      const __m512i bit = _mm512_sllv_epi32(_mm512_srli_epi32(st[h], 5), _mm512_sub_epi32(seven, phase));
      acc[h] = _mm512_mask_or_epi32(acc[h], out, acc[h], bit);
      whole[h] = out & _mm512_cmpeq_epi32_mask(phase, _mm512_setzero_si512());
    }
    step_back_avx512(dec + s * NOF_STATES, st, shift);
    uint32_t done = uint32_t(whole[0]) | (uint32_t(whole[1]) << 16);
    if (done != 0) {
      _mm512_store_si512(bytes, acc[0]);
      _mm512_store_si512(bytes + 16, acc[1]);
      for (; done != 0; done &= done - 1) {
        const int l = __builtin_ctz(done);
        const uint64_t n = s - uint64_t(stop[l]) + p.t[std::size_t(l)].out_first;
        jobs[l].bits[n >> 3] = uint8_t(bytes[l]);
      }
      acc[0] = _mm512_mask_mov_epi32(acc[0], whole[0], _mm512_setzero_si512());
      acc[1] = _mm512_mask_mov_epi32(acc[1], whole[1], _mm512_setzero_si512());
    }
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// The branch metrics of a batch step's codes 0 .. 3 (code 7 - c's is code c's negated)
/// from its soft values l (X, Y, Z rows of 32 int8 lanes): (c & 4 ? -X : X) + (c & 2 ? -Y : Y)
/// + (c & 1 ? -Z : Z).
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void branch_metrics_avx512(const int8_t* l,
                                                                                            __m512i (&bm)[4])
{
  constexpr int LANES = 32;
  const __m512i x = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(l)));
  const __m512i y = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(l + LANES)));
  const __m512i z = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(l + 2 * LANES)));
  const __m512i xpy = _mm512_add_epi16(x, y), xmy = _mm512_sub_epi16(x, y);
  bm[0] = _mm512_add_epi16(xpy, z);
  bm[1] = _mm512_sub_epi16(xpy, z);
  bm[2] = _mm512_add_epi16(xmy, z);
  bm[3] = _mm512_sub_epi16(xmy, z);
}

/// Group GR of acs_avx512: its 2^K metrics loaded (less `base` with NORM), K steps,
/// stored.
template <int K, bool NORM, int GR>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void acs_group_avx512(const __m512i* m, __m512i* nm,
                                                                                       const __m512i (*bm)[4],
                                                                                       __m512i base, uint32_t* d)
{
  constexpr int G = 1 << K;
  constexpr auto ST = block_states<K>(GR);
  __m512i v[G];
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i) {
    v[i] = NORM ? _mm512_sub_epi16(m[G * GR + i], base) : m[G * GR + i];
  }
#pragma GCC unroll 3
  for (int k = 0; k < K; ++k) {
    __m512i w[G];
#pragma GCC unroll 4
    for (int q = 0; q < G / 2; ++q) {
      const int j = ST[std::size_t(k)][std::size_t(2 * q)] / 2;
      const unsigned code = BUTTERFLY_CODE[std::size_t(j)];
      // The butterfly's metric is bm[code], or -bm[7 - code]: a and e add it, b and c subtract.
      const __m512i mm = bm[k][code < 4 ? code : 7 - code];
      const __m512i m0 = v[2 * q], m1 = v[2 * q + 1];
      const __m512i a = code < 4 ? _mm512_add_epi16(m0, mm) : _mm512_sub_epi16(m0, mm);
      const __m512i b = code < 4 ? _mm512_sub_epi16(m1, mm) : _mm512_add_epi16(m1, mm);
      const __m512i c = code < 4 ? _mm512_sub_epi16(m0, mm) : _mm512_add_epi16(m0, mm);
      const __m512i e = code < 4 ? _mm512_add_epi16(m1, mm) : _mm512_sub_epi16(m1, mm);
      w[q] = _mm512_max_epi16(a, b);
      w[q + G / 2] = _mm512_max_epi16(c, e);
      d[k * NOF_STATES + j] = uint32_t(_mm512_cmpgt_epi16_mask(b, a));
      d[k * NOF_STATES + j + NOF_STATES / 2] = uint32_t(_mm512_cmpgt_epi16_mask(e, c));
    }
#pragma GCC unroll 8
    for (int i = 0; i < G; ++i) {
      v[i] = w[i];
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i) {
    nm[ST[std::size_t(K)][std::size_t(i)]] = v[i];
  }
}

template <int K, bool NORM, int... GR>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void acs_groups_avx512(
    const __m512i* m, __m512i* nm, const __m512i (*bm)[4], uint32_t* d, std::integer_sequence<int, GR...>)
{
  const __m512i base = m[0];
  (acs_group_avx512<K, NORM, GR>(m, nm, bm, base, d), ...);
}

/// K steps of the 32 lanes' metrics m (state, lane) to nm, group after group
/// (block_states), step k's branch metrics in bm[k] and its decisions (state st's
/// comparison mask) at d[64 k + st]. With NORM the metrics are first taken relative to
/// state 0's, a common value (viterbi.hpp), so that 16 bits hold them.
template <int K, bool NORM>
__attribute__((target("avx512f,avx512bw"))) void acs_avx512(const __m512i* m, __m512i* nm, const __m512i (*bm)[4], uint32_t* d)
{
  acs_groups_avx512<K, NORM>(m, nm, bm, d, std::make_integer_sequence<int, (NOF_STATES >> K)>{});
}

/// 32 tiles in the 16-bit lanes of AVX-512 registers; a step's decisions as 64
/// comparison masks, one a state (bit l for lane l).
__attribute__((target("avx512f,avx512bw"))) void decode_batch_avx512(const tile_job* jobs, int count, batch_scratch& x)
{
  constexpr int LANES = 32;
  const batch_plan<LANES> p = plan_batch<LANES>(jobs, count, x);
  x.dec.resize(p.steps * NOF_STATES);
  alignas(64) __m512i buf[2][NOF_STATES];
  __m512i* m = buf[0];
  __m512i* nm = buf[1];
  for (int st = 0; st < NOF_STATES; ++st) {
    m[st] = _mm512_setzero_si512();
  }
  std::size_t next_start = 0;
  uint64_t since = 0; // steps since the metrics were last normalised
  for (uint64_t s = 0; s < p.steps;) {
    if (next_start < std::size_t(count) && p.offset[std::size_t(p.order[next_start])] == s) {
      __mmask32 starts = 0;
      alignas(64) int16_t first[LANES] = {};
      while (next_start < std::size_t(count) && p.offset[std::size_t(p.order[next_start])] == s) {
        const int l = p.order[next_start++];
        starts |= __mmask32(1u << l);
        first[l] = p.t[std::size_t(l)].run_first == 0 ? int16_t(START_OTHER) : int16_t(0);
      }
      const __m512i fv = _mm512_load_si512(first);
      m[0] = _mm512_mask_mov_epi16(m[0], starts, _mm512_setzero_si512());
      for (int st = 1; st < NOF_STATES; ++st) {
        m[st] = _mm512_mask_mov_epi16(m[st], starts, fv);
      }
    }
    // Up to the next lane's start, three steps at a time where they fit.
    const uint64_t until = next_start < std::size_t(count) ? p.offset[std::size_t(p.order[next_start])] : p.steps;
    const int k = s + 3 <= until ? 3 : 1;
    __m512i bm[3][4];
    for (int i = 0; i < k; ++i) {
      branch_metrics_avx512(x.soft.data() + (s + uint64_t(i)) * 3 * LANES, bm[i]);
    }
    uint32_t* d = x.dec.data() + s * NOF_STATES;
    const bool norm = since + uint64_t(k) > NORMALISE_EVERY;
    if (k == 3) {
      norm ? acs_avx512<3, true>(m, nm, bm, d) : acs_avx512<3, false>(m, nm, bm, d);
    } else {
      norm ? acs_avx512<1, true>(m, nm, bm, d) : acs_avx512<1, false>(m, nm, bm, d);
    }
    since = norm ? uint64_t(k) : since + uint64_t(k);
    s += uint64_t(k);
    std::swap(m, nm);
  }
  // Each lane's state of largest metric, the lowest among equals: a later state only
  // where it is larger.
  __m512i top = m[0], arg = _mm512_setzero_si512();
  for (int st = 1; st < NOF_STATES; ++st) {
    const __mmask32 larger = _mm512_cmpgt_epi16_mask(m[st], top);
    top = _mm512_max_epi16(top, m[st]);
    arg = _mm512_mask_mov_epi16(arg, larger, _mm512_set1_epi16(int16_t(st)));
  }
  alignas(64) int16_t best[LANES];
  _mm512_store_si512(best, arg);
  trace_batch_avx512(jobs, count, p, best, x.dec.data());
}

bool have_avx2() noexcept
{
  static const bool yes = __builtin_cpu_supports("avx2") != 0;
  return yes;
}

bool have_avx512() noexcept
{
  static const bool yes = __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0;
  return yes;
}

} // namespace

bool viterbi_vectorised() noexcept { return have_avx2(); }

viterbi_isa best_viterbi_isa() noexcept
{
  // AVX-512 before AVX2: once the soft values are transposed in registers, the 32-lane
  // decoder decodes more bits a second than the 16-lane one on the development
  // machine's Xeon (whd-bench viterbi: 226 against 199 Mb/s a thread at rate 1/2).
  return have_avx512() ? viterbi_isa::avx512 : have_avx2() ? viterbi_isa::avx2 : viterbi_isa::reference;
}

bool viterbi_isa_available(viterbi_isa isa) noexcept
{
  return isa == viterbi_isa::reference || (isa == viterbi_isa::avx2 && have_avx2()) || (isa == viterbi_isa::avx512 && have_avx512());
}

void decode_tiles(std::span<const tile_job> jobs, viterbi_isa isa)
{
  if (!viterbi_isa_available(isa)) {
    throw std::invalid_argument("decode_tiles: this processor lacks the instruction set asked for");
  }
  thread_local batch_scratch x;
  switch (isa) {
  case viterbi_isa::reference:
    for (const tile_job& j : jobs) {
      decode_tile_reference(j);
    }
    return;
  case viterbi_isa::avx2:
    for (std::size_t i = 0; i < jobs.size(); i += 16) {
      decode_batch_avx2(jobs.data() + i, int(std::min<std::size_t>(16, jobs.size() - i)), x);
    }
    return;
  case viterbi_isa::avx512:
    for (std::size_t i = 0; i < jobs.size(); i += 32) {
      decode_batch_avx512(jobs.data() + i, int(std::min<std::size_t>(32, jobs.size() - i)), x);
    }
    return;
  }
}

void decode_tiles(std::span<const tile_job> jobs) { decode_tiles(jobs, best_viterbi_isa()); }

} // namespace whd::fec
