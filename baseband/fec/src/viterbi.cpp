#include <whd/fec/viterbi.hpp>

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
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

constexpr int LANES = 16;

/// Scratch of one AVX2 batch: the soft values as 16-bit lanes (step, output, lane),
/// and the decisions (step, butterfly) as movemask words.
struct avx2_scratch {
  std::vector<int16_t> soft;
  std::vector<uint32_t> dec;
};

/// Bit of lane l's decision for state j (< 32: first of the pair, else second) in a
/// butterfly's movemask word of _mm256_packs_epi16(first, second).
inline unsigned dec_bit(int lane, unsigned state)
{
  const unsigned second = state >= 32 ? 8u : 0u;
  return (lane < 8 ? unsigned(lane) : unsigned(lane) + 8u) + second;
}

__attribute__((target("avx2"))) void decode_batch_avx2(const tile_job* jobs, int count, avx2_scratch& x)
{
  std::array<tile_span, LANES> t{};
  uint64_t steps = 0;
  for (int l = 0; l < count; ++l) {
    t[std::size_t(l)] = tile_of(jobs[l].nin, jobs[l].tile);
    steps = std::max(steps, t[std::size_t(l)].run_end - t[std::size_t(l)].run_first);
  }
  // Lanes end together: lane l starts at step offset[l] of the batch, after zeros.
  std::array<uint64_t, LANES> offset{};
  x.soft.assign(steps * 3 * LANES, 0);
  for (int l = 0; l < count; ++l) {
    const tile_span& s = t[std::size_t(l)];
    offset[std::size_t(l)] = steps - (s.run_end - s.run_first);
    const int8_t* src = jobs[l].soft + 3 * s.run_first;
    int16_t* dst = x.soft.data() + offset[std::size_t(l)] * 3 * LANES + l;
    for (uint64_t n = 0; n < s.run_end - s.run_first; ++n) {
      dst[(3 * n + 0) * LANES] = src[3 * n + 0];
      dst[(3 * n + 1) * LANES] = src[3 * n + 1];
      dst[(3 * n + 2) * LANES] = src[3 * n + 2];
    }
  }
  x.dec.resize(steps * (NOF_STATES / 2));

  // Two metric buffers, the step's old and new, swapped each step.
  alignas(32) __m256i buf[2][NOF_STATES];
  __m256i* m = buf[0];
  __m256i* nm = buf[1];
  for (int st = 0; st < NOF_STATES; ++st) {
    m[st] = _mm256_setzero_si256();
  }
  std::size_t next_start = 0; // lanes sorted by their start, for the resets
  std::array<int, LANES> order{};
  for (int l = 0; l < LANES; ++l) {
    order[std::size_t(l)] = l;
  }
  std::sort(order.begin(), order.begin() + count, [&](int a, int b) { return offset[std::size_t(a)] < offset[std::size_t(b)]; });

  for (uint64_t s = 0; s < steps; ++s) {
    // Lanes whose tile starts at this step take the tile's starting metrics.
    if (next_start < std::size_t(count) && offset[std::size_t(order[next_start])] == s) {
      alignas(32) int16_t keep[LANES], first[LANES];
      for (int l = 0; l < LANES; ++l) {
        keep[l] = -1;
        first[l] = 0;
      }
      while (next_start < std::size_t(count) && offset[std::size_t(order[next_start])] == s) {
        const int l = order[next_start++];
        keep[l] = 0;
        first[l] = t[std::size_t(l)].run_first == 0 ? int16_t(START_OTHER) : int16_t(0);
      }
      const __m256i kv = _mm256_load_si256(reinterpret_cast<const __m256i*>(keep));
      const __m256i fv = _mm256_load_si256(reinterpret_cast<const __m256i*>(first));
      m[0] = _mm256_and_si256(m[0], kv);
      for (int st = 1; st < NOF_STATES; ++st) {
        m[st] = _mm256_or_si256(_mm256_and_si256(m[st], kv), _mm256_andnot_si256(kv, fv));
      }
    }
    const int16_t* l = x.soft.data() + s * 3 * LANES;
    const __m256i lx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(l));
    const __m256i ly = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(l + LANES));
    const __m256i lz = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(l + 2 * LANES));
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
  alignas(32) int16_t last[NOF_STATES][LANES];
  for (int st = 0; st < NOF_STATES; ++st) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(last[st]), m[st]);
  }
  // The lanes traced back side by side: sixteen independent chains of loads.
  std::array<unsigned, LANES> state{}, acc{};
  std::array<uint64_t, LANES> stop{}, end{};
  uint64_t lowest = steps;
  for (int l = 0; l < count; ++l) {
    const tile_span& ts = t[std::size_t(l)];
    unsigned st0 = 0;
    if (ts.run_end != jobs[l].nin) {
      for (unsigned st = 1; st < NOF_STATES; ++st) {
        st0 = last[st][l] > last[st0][l] ? st : st0;
      }
    }
    state[std::size_t(l)] = st0;
    // Batch step of output bit n: offset + n - run_first.
    stop[std::size_t(l)] = offset[std::size_t(l)] + (ts.out_first - ts.run_first);
    end[std::size_t(l)] = offset[std::size_t(l)] + (std::min(ts.out_end, jobs[l].nof_bits) - ts.run_first);
    lowest = std::min(lowest, stop[std::size_t(l)]);
  }
  const uint32_t* dec = x.dec.data();
  std::array<unsigned, LANES> lane_bit{};
  for (int l = 0; l < LANES; ++l) {
    lane_bit[std::size_t(l)] = dec_bit(l, 0);
  }
  // One step back for lane l: its state's decision (bit lane_bit + 8 for states >= 32).
  const auto back = [&](const uint32_t* row, std::size_t l) {
    const unsigned st = state[l];
    state[l] = ((st & 31u) << 1) | ((row[st & 31u] >> (lane_bit[l] + ((st >> 2) & 8u))) & 1u);
  };
  bool aligned = true; // every lane outputs the same steps (tiles inside their streams)
  for (int l = 1; l < count; ++l) {
    aligned = aligned && stop[std::size_t(l)] == stop[0] && end[std::size_t(l)] == end[0];
  }
  if (aligned && (end[0] - stop[0]) % 8 == 0) {
    for (uint64_t s = steps; s-- > end[0];) {
      const uint32_t* row = dec + s * (NOF_STATES / 2);
      for (std::size_t l = 0; l < std::size_t(count); ++l) {
        back(row, l);
      }
    }
    // A byte of every lane at a time: bits n .. n - 7 from batch steps s .. s - 7.
    for (uint64_t s = end[0]; s > stop[0]; s -= 8) {
      const uint64_t n0 = s - 8 - stop[0] + t[0].out_first; // the byte's first bit
      for (int k = 7; k >= 0; --k) {
        const uint32_t* row = dec + (s - 8 + uint64_t(k)) * (NOF_STATES / 2);
        for (std::size_t l = 0; l < std::size_t(count); ++l) {
          acc[l] |= (state[l] >> 5) << (7 - k);
          back(row, l);
        }
      }
      for (std::size_t l = 0; l < std::size_t(count); ++l) {
        jobs[l].bits[(n0 + t[l].out_first - t[0].out_first) >> 3] = uint8_t(acc[l]);
        acc[l] = 0;
      }
    }
    return;
  }
  for (uint64_t s = steps; s-- > lowest;) {
    const uint32_t* row = dec + s * (NOF_STATES / 2);
    for (int l = 0; l < count; ++l) {
      const auto li = std::size_t(l);
      if (s < stop[li]) {
        continue;
      }
      if (s < end[li]) {
        // Output bits end and start on byte boundaries (TILE and 8 Q are multiples of 8).
        const uint64_t n = s - stop[li] + t[li].out_first;
        acc[li] |= (state[li] >> 5) << (7 - (n & 7));
        if ((n & 7) == 0) {
          jobs[l].bits[n >> 3] = uint8_t(acc[li]);
          acc[li] = 0;
        }
      }
      back(row, li);
    }
  }
}

bool have_avx2() noexcept
{
  static const bool yes = __builtin_cpu_supports("avx2") != 0;
  return yes;
}

} // namespace

bool viterbi_vectorised() noexcept { return have_avx2(); }

void decode_tiles(std::span<const tile_job> jobs)
{
  if (!have_avx2()) {
    for (const tile_job& j : jobs) {
      decode_tile_reference(j);
    }
    return;
  }
  thread_local avx2_scratch x;
  for (std::size_t i = 0; i < jobs.size(); i += LANES) {
    decode_batch_avx2(jobs.data() + i, int(std::min<std::size_t>(LANES, jobs.size() - i)), x);
  }
}

} // namespace whd::fec
