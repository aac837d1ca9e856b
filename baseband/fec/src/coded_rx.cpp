#include <whd/fec/coded_rx.hpp>
#include <whd/fec/coded_tx.hpp>
#include <whd/fec/reed_solomon.hpp>

#include <whd/baseband/demap.hpp>

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace whd::fec {

namespace {

template <typename T>
void demultiplex(const frame_geometry& g, uint64_t first, std::span<const T> soft, std::span<T> streams)
{
  const auto n = uint64_t(g.ncbps);
  const uint64_t count = soft.size() / n;
  if (soft.size() != count * n || first + count > g.nd || streams.size() != NOF_ENCODERS * g.ce) {
    throw std::invalid_argument("demultiplex_symbols: sizes do not match the frame");
  }
  const auto per = uint64_t(g.per_symbol_per_encoder());
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t m = first + i;
    const T* s = soft.data() + i * n;
    uint64_t pn = (m * n) % profile::PN_PERIOD;
    for (int t = 0; t < g.ncbps; ++t) {
      const int k = deinterleaved_index(t, g.ncbps);
      // A whitened 1 flips the bit: its LLR changes sign (-127 .. 127 stays in range).
      const T v = profile::PN[pn] ? T(-s[t]) : s[t];
      streams[uint64_t(k % NOF_ENCODERS) * g.ce + m * per + uint64_t(k / NOF_ENCODERS)] = v;
      pn = pn + 1 == profile::PN_PERIOD ? 0 : pn + 1;
    }
  }
}

/// The de-interleaving of a symbol of Ncbps soft values as a gather: entry e per + j
/// is the order t of encoder e's j-th value of the symbol (deinterleaved_index's k =
/// 8 j + e). Each encoder's values of a symbol are then written in one run.
template <int NCBPS>
constexpr std::array<uint16_t, NCBPS> GATHER = [] {
  std::array<uint16_t, NCBPS> a{};
  for (int t = 0; t < NCBPS; ++t) {
    const int k = deinterleaved_index(t, NCBPS);
    a[std::size_t((k % NOF_ENCODERS) * (NCBPS / NOF_ENCODERS) + k / NOF_ENCODERS)] = uint16_t(t);
  }
  return a;
}();

/// The gather's structure: within an encoder's values of a symbol, the value 21 further
/// on (8 x 21 = 168 bits further in the de-interleaved order k: 8 rows of the 21-column
/// interleaver) is the value 8 further on in order t. So entry e PER + j + 21 i of
/// GATHER is GATHER[e PER + j] + 8 i (j < 21, i < PER / 21: 8 for 16-QAM, 4 for QPSK),
/// checked here; dewhiten_and_gather then reads one index per run.
template <int NCBPS>
constexpr bool gather_runs_step_eight()
{
  constexpr int PER = NCBPS / NOF_ENCODERS;
  if (PER % INTERLEAVER_COLUMNS != 0) {
    return false;
  }
  for (int e = 0; e < NOF_ENCODERS; ++e) {
    for (int j = 0; j < INTERLEAVER_COLUMNS; ++j) {
      for (int i = 0; i < PER / INTERLEAVER_COLUMNS; ++i) {
        const std::size_t at = std::size_t(e * PER + j + INTERLEAVER_COLUMNS * i);
        if (GATHER<NCBPS>[at] != GATHER<NCBPS>[std::size_t(e * PER + j)] + 8 * i) {
          return false;
        }
      }
    }
  }
  return true;
}

/// The whitening sequence as negation masks (-1 where PN is 1), long enough that a
/// symbol's Ncbps values starting at any phase read it without wrapping.
constexpr std::array<int8_t, profile::PN_PERIOD + profile::MAX_BITS_PER_SYMBOL> PN_MASK = [] {
  std::array<int8_t, profile::PN_PERIOD + profile::MAX_BITS_PER_SYMBOL> a{};
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = profile::PN[i % profile::PN_PERIOD] ? int8_t(-1) : int8_t(0);
  }
  return a;
}();

/// Symbol m's int8 soft values (`w`, order t, de-whitened) gathered into the encoders'
/// streams: the same values where demultiplex puts them. The whole symbol is gathered
/// in `runs` (L1) first, then each encoder's run written to its stream in one copy: the
/// byte-by-byte stores stay in the cache, the streams (far larger than it) take whole
/// vectors, and the copies read bytes stored long enough before not to wait on them.
template <int NCBPS>
void gather_symbol(const frame_geometry& g, uint64_t m, const int8_t* w, int8_t* streams)
{
  constexpr int PER = NCBPS / NOF_ENCODERS;
  alignas(64) std::array<int8_t, NCBPS> runs;
  for (int e = 0; e < NOF_ENCODERS; ++e) {
    const uint16_t* src = GATHER<NCBPS>.data() + e * PER;
    int8_t* run = runs.data() + e * PER;
    if constexpr (gather_runs_step_eight<NCBPS>()) {
      constexpr int C = INTERLEAVER_COLUMNS;
      for (int j = 0; j < C; ++j) {
        const int8_t* from = w + src[j];
        for (int i = 0; i < PER / C; ++i) {
          run[j + C * i] = from[8 * i];
        }
      }
    } else {
      for (int j = 0; j < PER; ++j) {
        run[j] = w[src[j]];
      }
    }
  }
  for (int e = 0; e < NOF_ENCODERS; ++e) {
    std::copy_n(runs.data() + e * PER, PER, streams + uint64_t(e) * g.ce + m * PER);
  }
}

static_assert(gather_runs_step_eight<profile::bits_per_symbol(profile::modulation::qam16)>() &&
              gather_runs_step_eight<profile::bits_per_symbol(profile::modulation::qpsk)>());

/// Symbol m's Ncbps int8 soft values negated where the whitening sequence is 1 (into
/// out): (s ^ -1) - (-1) = -s, as an int8 (-128 stays -128, as int8_t(-s) gives).
void flip_by_pn(const frame_geometry& g, uint64_t m, const int8_t* in, int8_t* out)
{
  const int8_t* mask = PN_MASK.data() + (m * uint64_t(g.ncbps)) % profile::PN_PERIOD;
  for (int t = 0; t < g.ncbps; ++t) {
    out[t] = int8_t((in[t] ^ mask[t]) - mask[t]);
  }
}

/// Symbol m's int8 soft values (order t, de-whitened) into the streams, by the gather
/// where Ncbps has one.
void put_symbol(const frame_geometry& g, uint64_t m, const int8_t* w, std::span<int8_t> streams)
{
  constexpr int QPSK = profile::bits_per_symbol(profile::modulation::qpsk);
  constexpr int QAM16 = profile::bits_per_symbol(profile::modulation::qam16);
  if (g.ncbps == QAM16) {
    gather_symbol<QAM16>(g, m, w, streams.data());
  } else if (g.ncbps == QPSK) {
    gather_symbol<QPSK>(g, m, w, streams.data());
  } else {
    // demultiplex de-whitens: whiten again first (the negation is its own inverse).
    std::array<int8_t, profile::MAX_BITS_PER_SYMBOL> v{};
    flip_by_pn(g, m, w, v.data());
    demultiplex(g, m, std::span<const int8_t>(v.data(), std::size_t(g.ncbps)), streams);
  }
}

/// The whitening sequence as float sign masks (the sign bit where PN is 1), as PN_MASK.
constexpr std::array<uint32_t, profile::PN_PERIOD + profile::MAX_BITS_PER_SYMBOL> PN_SIGN = [] {
  std::array<uint32_t, profile::PN_PERIOD + profile::MAX_BITS_PER_SYMBOL> a{};
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = profile::PN[i % profile::PN_PERIOD] ? 0x80000000u : 0u;
  }
  return a;
}();

/// convert_llrs' values 16 at a time in AVX-512 registers, as many whole sixteens as n
/// holds; returns how many were converted. The same steps as the SSE2 loop: the
/// product, NaN to 0, saturation to +-127, conversion under the default rounding.
__attribute__((target("avx512f"))) std::size_t convert_llrs_avx512(const float* llr, std::size_t n, float scale,
                                                                     const uint32_t* sign, int8_t* out)
{
  const __m512 sc = _mm512_set1_ps(scale), hi = _mm512_set1_ps(127.0f), lo = _mm512_set1_ps(-127.0f);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_loadu_ps(llr + i);
    if (sign != nullptr) {
      x = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_loadu_si512(sign + i)));
    }
    const __m512 v = _mm512_mul_ps(x, sc);
    const __mmask16 number = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    // The zero-masked forms (NaN lanes to 0): GCC 12's unmasked ones pass an undefined
    // merge source that -Wmaybe-uninitialized reports.
    const __m512 c = _mm512_maskz_max_ps(number, _mm512_maskz_min_ps(number, v, hi), lo);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_maskz_cvtepi32_epi8(0xFFFF, _mm512_maskz_cvtps_epi32(number, c)));
  }
  return i;
}

/// llrs_to_int8 with each LLR's sign first flipped where `sign` (n words, PN_SIGN) has
/// its sign bit: llr_to_int8(-x) = -llr_to_int8(x) (the product, the saturation and
/// the rounding are symmetric, NaN gives 0 either way), so these are the de-whitened
/// int8 values. sign == nullptr: no flips.
void convert_llrs(const float* llr, std::size_t n, float scale, const uint32_t* sign, int8_t* out, llr_isa isa)
{
  if (!llr_isa_available(isa)) {
    throw std::invalid_argument("llrs_to_int8: this processor lacks the instruction set asked for");
  }
  std::size_t i = isa == llr_isa::avx512 ? convert_llrs_avx512(llr, n, scale, sign, out) : 0;
  // SSE2 (every x86-64): the product as llr_to_int8 takes it, NaN to 0, saturated to
  // +-127, then converted under the default rounding (to nearest, ties to even), as
  // llr_to_int8's 1.5 x 2^23 rounds.
  const __m128 sc = _mm_set1_ps(scale), hi = _mm_set1_ps(127.0f), lo = _mm_set1_ps(-127.0f);
  const auto four = [&](std::size_t at) {
    __m128 x = _mm_loadu_ps(llr + at);
    if (sign != nullptr) {
      x = _mm_xor_ps(x, _mm_castsi128_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sign + at))));
    }
    const __m128 v = _mm_mul_ps(x, sc);
    // minps gives its second operand where either is NaN: 127, masked to 0 after.
    const __m128 c = _mm_and_ps(_mm_max_ps(_mm_min_ps(v, hi), lo), _mm_cmpord_ps(v, v));
    return _mm_cvtps_epi32(c);
  };
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_packs_epi32(four(i), four(i + 4)), b = _mm_packs_epi32(four(i + 8), four(i + 12));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_packs_epi16(a, b));
  }
  for (; i < n; ++i) {
    const int8_t v = baseband::llr_to_int8(llr[i], scale);
    out[i] = sign != nullptr && sign[i] != 0 ? int8_t(-v) : v;
  }
}

void check_sizes(const frame_geometry& g, uint64_t first, std::size_t nof_soft, std::size_t nof_streams, const char* what)
{
  const auto n = uint64_t(g.ncbps);
  const uint64_t count = nof_soft / n;
  if (g.ncbps <= 0 || g.ncbps > profile::MAX_BITS_PER_SYMBOL || nof_soft != count * n || first + count > g.nd ||
      nof_streams != NOF_ENCODERS * g.ce) {
    throw std::invalid_argument(std::string(what) + ": sizes do not match the frame");
  }
}

} // namespace

void demultiplex_symbols(const frame_geometry& g, uint64_t first, std::span<const int8_t> soft, std::span<int8_t> streams)
{
  check_sizes(g, first, soft.size(), streams.size(), "demultiplex_symbols");
  const auto n = std::size_t(g.ncbps);
  std::array<int8_t, profile::MAX_BITS_PER_SYMBOL> w{};
  for (std::size_t i = 0; i < soft.size() / n; ++i) {
    flip_by_pn(g, first + i, soft.data() + i * n, w.data()); // de-whitened
    put_symbol(g, first + i, w.data(), streams);
  }
}

void demultiplex_symbols(const frame_geometry& g, uint64_t first, std::span<const float> soft, std::span<float> streams)
{
  demultiplex(g, first, soft, streams);
}

bool llr_isa_available(llr_isa isa) noexcept
{
  static const bool avx512 = __builtin_cpu_supports("avx512f") != 0;
  return isa == llr_isa::sse2 || avx512;
}

llr_isa best_llr_isa() noexcept { return llr_isa_available(llr_isa::avx512) ? llr_isa::avx512 : llr_isa::sse2; }

void llrs_to_int8(std::span<const float> llr, float scale, std::span<int8_t> out, llr_isa isa)
{
  if (out.size() != llr.size()) {
    throw std::invalid_argument("llrs_to_int8: as many int8 values as LLRs");
  }
  convert_llrs(llr.data(), llr.size(), scale, nullptr, out.data(), isa);
}

void llrs_to_int8(std::span<const float> llr, float scale, std::span<int8_t> out)
{
  llrs_to_int8(llr, scale, out, best_llr_isa());
}

void demultiplex_llrs(const frame_geometry& g, uint64_t m, std::span<const float> llr, float scale, std::span<int8_t> streams,
                      llr_isa isa)
{
  check_sizes(g, m, llr.size(), streams.size(), "demultiplex_llrs");
  if (llr.size() != std::size_t(g.ncbps)) {
    throw std::invalid_argument("demultiplex_llrs: one data symbol's Ncbps LLRs");
  }
  // Converted and de-whitened in one pass, then gathered.
  std::array<int8_t, profile::MAX_BITS_PER_SYMBOL> w;
  convert_llrs(llr.data(), llr.size(), scale, PN_SIGN.data() + (m * llr.size()) % profile::PN_PERIOD, w.data(), isa);
  put_symbol(g, m, w.data(), streams);
}

void demultiplex_llrs(const frame_geometry& g, uint64_t m, std::span<const float> llr, float scale, std::span<int8_t> streams)
{
  demultiplex_llrs(g, m, llr, scale, streams, best_llr_isa());
}

std::vector<float> depuncture_stream(const frame_geometry& g, std::span<const float> c)
{
  std::vector<float> out(3 * g.nin, 0.0f);
  const puncture_pattern& p = g.punct;
  for (uint64_t per = 0; per < g.periods; ++per) {
    for (int i = 0; i < p.pout; ++i) {
      out[3 * (per * uint64_t(p.pin) + p.input[std::size_t(i)]) + p.which[std::size_t(i)]] = c[per * uint64_t(p.pout) + uint64_t(i)];
    }
  }
  return out;
}

namespace {

/// Codeword `word`'s k + 8 RS stream bytes gathered from the encoders' decoded bytes
/// (un-parsing, §2.3) into w.
void gather_codeword(const frame_geometry& g, const uint8_t* decoded, uint64_t word, uint8_t* w)
{
  const uint64_t n = g.message_bytes(word) + RS_PARITY;
  const uint64_t at = word * (RS_K + RS_PARITY); // first RS stream byte of the codeword
  for (uint64_t b = 0; b < n; ++b) {
    const uint64_t i = at + b;
    w[b] = decoded[(i % NOF_ENCODERS) * g.q + i / NOF_ENCODERS];
  }
}

} // namespace

rs_stats correct_codeword(const frame_geometry& g, const uint8_t* decoded, uint64_t word, std::span<uint8_t> info)
{
  const uint64_t k = g.message_bytes(word);
  std::array<uint8_t, RS_N> w{};
  gather_codeword(g, decoded, word, w.data());
  const int fixed = rs_decode(std::span<uint8_t>(w.data(), k + RS_PARITY));
  std::copy_n(w.begin(), k, info.begin() + std::ptrdiff_t(word * RS_K));
  return fixed < 0 ? rs_stats{0, 1} : rs_stats{uint32_t(fixed), 0};
}

rs_stats correct_codewords(const frame_geometry& g, const uint8_t* decoded, uint64_t first, uint64_t count,
                           std::span<uint8_t> info)
{
  if (count > RS_WORDS_AT_ONCE || first + count > g.codewords) {
    throw std::invalid_argument("correct_codewords: at most 4 of the frame's codewords");
  }
  std::array<uint8_t, RS_WORDS_AT_ONCE * RS_N> w{};
  std::array<int, RS_WORDS_AT_ONCE> fixed{};
  // The words of 216 message bytes (all but perhaps the frame's last) side by side.
  uint64_t full = 0;
  while (full < count && g.message_bytes(first + full) == RS_K) {
    ++full;
  }
  for (uint64_t i = 0; i < count; ++i) {
    gather_codeword(g, decoded, first + i, w.data() + i * RS_N);
  }
  rs_decode_words(std::span<uint8_t>(w.data(), full * RS_N), RS_N, std::span<int>(fixed.data(), full));
  for (uint64_t i = full; i < count; ++i) {
    fixed[i] = rs_decode(std::span<uint8_t>(w.data() + i * RS_N, g.message_bytes(first + i) + RS_PARITY));
  }
  rs_stats total;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t word = first + i;
    std::copy_n(w.begin() + std::ptrdiff_t(i * RS_N), g.message_bytes(word), info.begin() + std::ptrdiff_t(word * RS_K));
    total.corrected += fixed[i] < 0 ? 0u : uint32_t(fixed[i]);
    total.failed += fixed[i] < 0 ? 1u : 0u;
  }
  return total;
}

namespace {

/// Depuncturing 48 output values (16 / pin whole periods: 48 = lcm(16, 3 pin) for
/// every pattern) as three byte shuffles: output chunk q (16 values) is a shuffle of
/// the 16 input values from at[q] (relative to the block's first), 0 where erased.
struct depuncture_block {
  static constexpr int OUT = 48;
  std::array<uint8_t, 3> at{};
  alignas(16) std::array<std::array<int8_t, 16>, 3> shuffle{}; ///< -1 (pshufb's zero) where erased
  uint64_t periods = 0;   ///< periods of a block
  uint64_t in_values = 0; ///< input values of a block
  bool usable = false;    ///< each chunk's inputs lie within 16 of its at[q]
};

constexpr depuncture_block make_block(const puncture_pattern& p)
{
  depuncture_block b;
  const int per_out = 3 * p.pin;
  if (depuncture_block::OUT % per_out != 0) {
    return b;
  }
  b.periods = uint64_t(depuncture_block::OUT / per_out);
  b.in_values = b.periods * uint64_t(p.pout);
  b.usable = true;
  for (int q = 0; q < 3; ++q) {
    b.at[std::size_t(q)] = uint8_t((16 * q / per_out) * p.pout); // the first input of the chunk's first period
    for (int i = 0; i < 16; ++i) {
      const int v = 16 * q + i, period = v / per_out, r = v % per_out;
      int8_t src = -1;
      for (int k = 0; k < p.pout; ++k) {
        if (p.input[std::size_t(k)] == r / 3 && p.which[std::size_t(k)] == r % 3) {
          src = int8_t(period * p.pout + k - b.at[std::size_t(q)]);
        }
      }
      b.usable = b.usable && src < 16;
      b.shuffle[std::size_t(q)][std::size_t(i)] = src;
    }
  }
  return b;
}

/// The blocks of the code rates, made once; a pattern of none of them has its own made.
depuncture_block block_of(const puncture_pattern& p)
{
  constexpr std::array<code_rate, 5> RATES = {code_rate::r1_3, code_rate::r1_2, code_rate::r4_7, code_rate::r2_3, code_rate::r4_5};
  static constexpr std::array<depuncture_block, 5> BLOCKS = [&] {
    std::array<depuncture_block, 5> a{};
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = make_block(pattern_of(RATES[i]));
    }
    return a;
  }();
  for (std::size_t i = 0; i < RATES.size(); ++i) {
    const puncture_pattern r = pattern_of(RATES[i]);
    if (r.pin == p.pin && r.pout == p.pout && r.input == p.input && r.which == p.which) {
      return BLOCKS[i];
    }
  }
  return make_block(p);
}

/// Whole blocks of depuncture_block from `in` to `o`, as many as `nof` and the input
/// (ending at `in_end`; no 16-byte read passes it) allow; returns the blocks done.
__attribute__((target("ssse3"))) uint64_t depuncture_blocks(const depuncture_block& b, const int8_t* in, const int8_t* in_end,
                                                             int8_t* o, uint64_t nof)
{
  const __m128i s0 = _mm_load_si128(reinterpret_cast<const __m128i*>(b.shuffle[0].data()));
  const __m128i s1 = _mm_load_si128(reinterpret_cast<const __m128i*>(b.shuffle[1].data()));
  const __m128i s2 = _mm_load_si128(reinterpret_cast<const __m128i*>(b.shuffle[2].data()));
  const std::size_t a0 = b.at[0], a1 = b.at[1], a2 = b.at[2];
  const std::ptrdiff_t reach = std::ptrdiff_t(std::max({a0, a1, a2}) + 16);
  const auto step = std::ptrdiff_t(b.in_values);
  uint64_t done = 0;
  for (; done < nof && in_end - in >= reach; ++done, in += step, o += depuncture_block::OUT) {
    const auto at = [&](std::size_t a) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + a)); };
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_shuffle_epi8(at(a0), s0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 16), _mm_shuffle_epi8(at(a1), s1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 32), _mm_shuffle_epi8(at(a2), s2));
  }
  return done;
}

bool have_ssse3() noexcept
{
  static const bool yes = __builtin_cpu_supports("ssse3") != 0;
  return yes;
}

} // namespace

void depuncture_tile(const frame_geometry& g, std::span<const int8_t> c, uint64_t tile, int8_t* out)
{
  const tile_span t = tile_of(g.nin, tile);
  const puncture_pattern& p = g.punct;
  const auto pin = uint64_t(p.pin), pout = uint64_t(p.pout);
  // The periods the run touches; steps of a period outside the run are skipped.
  const auto edge = [&](uint64_t per) {
    for (uint64_t i = 0; i < pout; ++i) {
      const uint64_t n = per * pin + p.input[i];
      if (n >= t.run_first && n < t.run_end) {
        out[3 * (n - t.run_first) + p.which[i]] = c[per * pout + i];
      }
    }
  };
  int8_t* const out_end = out + 3 * (t.run_end - t.run_first);
  const uint64_t lo = t.run_first / pin, inner_lo = (t.run_first + pin - 1) / pin, inner_hi = t.run_end / pin;
  if (inner_lo >= inner_hi) {
    std::fill(out, out_end, int8_t(0));
    for (uint64_t per = lo; per * pin < t.run_end; ++per) {
      edge(per);
    }
    return;
  }
  // Periods wholly inside the run: no bounds to check. First blocks of periods as byte
  // shuffles (every value of a block written, erasures 0) while the input lasts; every
  // value outside them is 0 but for the outputs written one at a time after.
  int8_t* o = out + 3 * (inner_lo * pin - t.run_first);
  const int8_t* in = c.data() + inner_lo * pout;
  uint64_t per = inner_lo;
  std::fill(out, o, int8_t(0));
  if (const depuncture_block b = block_of(p); b.usable && have_ssse3()) {
    const uint64_t blocks = depuncture_blocks(b, in, c.data() + c.size(), o, (inner_hi - inner_lo) / b.periods);
    per += blocks * b.periods;
    o += blocks * depuncture_block::OUT;
    in += blocks * b.in_values;
  }
  std::fill(o, out_end, int8_t(0));
  if (lo < inner_lo) {
    edge(lo);
  }
  std::array<uint8_t, 7> at{};
  for (uint64_t i = 0; i < pout; ++i) {
    at[i] = uint8_t(3 * p.input[i] + p.which[i]);
  }
  for (; per < inner_hi; ++per, o += 3 * pin, in += pout) {
    for (uint64_t i = 0; i < pout; ++i) {
      o[at[i]] = in[i];
    }
  }
  if (inner_hi * pin < t.run_end) {
    edge(inner_hi);
  }
}

namespace {

/// Where tile-group work lands: every job's 8 streams' tiles in one list.
struct tile_ref {
  std::size_t job;
  int encoder;
  uint64_t tile;
};

constexpr std::size_t GROUP = 32; // tiles one work item decodes (AVX-512 lanes; two AVX2 batches)

} // namespace

void coded_decoder::decode(std::span<coded_job> jobs, const parallel_for& pf)
{
  const auto run = [&](std::size_t n, const std::function<void(std::size_t)>& body) {
    if (pf) {
      pf(n, body);
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        body(i);
      }
    }
  };
  decoded_at_.assign(jobs.size() + 1, 0);
  tiles_at_.assign(jobs.size() + 1, 0);
  groups_at_.assign(jobs.size() + 1, 0);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const frame_geometry& g = jobs[j].g;
    if (jobs[j].streams.size() != NOF_ENCODERS * g.ce || jobs[j].info.size() != g.info_bytes) {
      throw std::invalid_argument("coded_decoder: a job's buffers do not match its frame");
    }
    decoded_at_[j + 1] = decoded_at_[j] + NOF_ENCODERS * g.q;
    tiles_at_[j + 1] = tiles_at_[j] + NOF_ENCODERS * nof_tiles(g.nin);
    groups_at_[j + 1] = groups_at_[j] + (g.codewords + RS_WORDS_AT_ONCE - 1) / RS_WORDS_AT_ONCE;
  }
  decoded_.resize(decoded_at_.back());
  const uint64_t nof_tiles_all = tiles_at_.back();
  const auto tile_at = [&](uint64_t i) {
    const std::size_t j = std::size_t(std::upper_bound(tiles_at_.begin(), tiles_at_.end(), i) - tiles_at_.begin()) - 1;
    const uint64_t per = nof_tiles(jobs[j].g.nin);
    const uint64_t r = i - tiles_at_[j];
    return tile_ref{j, int(r / per), r % per};
  };
  run(std::size_t((nof_tiles_all + GROUP - 1) / GROUP), [&](std::size_t item) {
    thread_local std::vector<int8_t> soft;
    soft.resize(GROUP * 3 * MAX_TILE_STEPS);
    std::array<tile_job, GROUP> batch{};
    const uint64_t first = item * GROUP;
    const auto count = std::size_t(std::min<uint64_t>(GROUP, nof_tiles_all - first));
    for (std::size_t b = 0; b < count; ++b) {
      const tile_ref r = tile_at(first + b);
      const coded_job& job = jobs[r.job];
      int8_t* s = soft.data() + b * 3 * MAX_TILE_STEPS;
      depuncture_tile(job.g, job.streams.subspan(uint64_t(r.encoder) * job.g.ce, job.g.ce), r.tile, s);
      // decode_tiles reads soft + 3 n for the stream's step n: point at the run's first.
      const tile_span t = tile_of(job.g.nin, r.tile);
      batch[b] = {s - 3 * std::ptrdiff_t(t.run_first), job.g.nin, r.tile, 8 * job.g.q,
                  decoded_.data() + decoded_at_[r.job] + uint64_t(r.encoder) * job.g.q};
    }
    decode_tiles(std::span<const tile_job>(batch.data(), count));
  });
  // Un-parsing (§2.3) and RS (§2.2), four codewords of a frame at a time.
  std::vector<rs_stats> per_group(groups_at_.back());
  run(std::size_t(groups_at_.back()), [&](std::size_t item) {
    const std::size_t j = std::size_t(std::upper_bound(groups_at_.begin(), groups_at_.end(), item) - groups_at_.begin()) - 1;
    const uint64_t first = (item - groups_at_[j]) * RS_WORDS_AT_ONCE;
    const uint64_t count = std::min<uint64_t>(RS_WORDS_AT_ONCE, jobs[j].g.codewords - first);
    per_group[item] = correct_codewords(jobs[j].g, decoded_.data() + decoded_at_[j], first, count, jobs[j].info);
  });
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    jobs[j].rs = {};
    for (uint64_t i = groups_at_[j]; i < groups_at_[j + 1]; ++i) {
      jobs[j].rs.corrected += per_group[i].corrected;
      jobs[j].rs.failed += per_group[i].failed;
    }
  }
}

rs_stats decode_frame(const frame_geometry& g, std::span<const int8_t> soft, std::span<uint8_t> info)
{
  if (soft.size() != g.coded_bits()) {
    throw std::invalid_argument("decode_frame: a frame's soft values are Nd Ncbps");
  }
  std::vector<int8_t> streams(NOF_ENCODERS * g.ce, 0);
  demultiplex_symbols(g, 0, soft, streams);
  coded_decoder d;
  coded_job job{g, streams, info, {}};
  d.decode(std::span<coded_job>(&job, 1));
  return job.rs;
}

} // namespace whd::fec

namespace whd::fec {

rs_stats decode_frame_float(const frame_geometry& g, std::span<const float> soft, std::span<uint8_t> info)
{
  if (soft.size() != g.coded_bits() || info.size() != g.info_bytes) {
    throw std::invalid_argument("decode_frame_float: sizes do not match the frame");
  }
  std::vector<float> streams(NOF_ENCODERS * g.ce, 0.0f);
  demultiplex_symbols(g, 0, soft, streams);
  std::vector<uint8_t> decoded(NOF_ENCODERS * g.q, 0);
  std::vector<uint64_t> dec(g.nin);
  for (int e = 0; e < NOF_ENCODERS; ++e) {
    const std::vector<float> l = depuncture_stream(g, std::span<const float>(streams).subspan(uint64_t(e) * g.ce, g.ce));
    std::array<float, NOF_STATES> m{}, nm{};
    m.fill(-1e30f);
    m[0] = 0.0f;
    for (uint64_t n = 0; n < g.nin; ++n) {
      uint64_t d = 0;
      for (unsigned j = 0; j < NOF_STATES / 2; ++j) {
        const unsigned c = output_code(2 * j);
        const float mm = ((c & 4u) ? -l[3 * n] : l[3 * n]) + ((c & 2u) ? -l[3 * n + 1] : l[3 * n + 1]) +
                         ((c & 1u) ? -l[3 * n + 2] : l[3 * n + 2]);
        const float a = m[2 * j] + mm, b = m[2 * j + 1] - mm, c0 = m[2 * j] - mm, c1 = m[2 * j + 1] + mm;
        nm[j] = b > a ? b : a;
        nm[j + 32] = c1 > c0 ? c1 : c0;
        d |= (uint64_t(b > a) << j) | (uint64_t(c1 > c0) << (j + 32));
      }
      dec[n] = d;
      const float top = *std::max_element(nm.begin(), nm.end());
      for (unsigned s = 0; s < NOF_STATES; ++s) {
        m[s] = nm[s] - top; // keeps the floats near 0 over a long stream
      }
    }
    unsigned state = 0; // the tail ends every stream in state 0
    uint8_t* out = decoded.data() + uint64_t(e) * g.q;
    for (uint64_t n = g.nin; n-- > 0;) {
      if (n < 8 * g.q) {
        const auto mask = uint8_t(0x80u >> (n & 7));
        out[n >> 3] = (state >> 5) ? uint8_t(out[n >> 3] | mask) : uint8_t(out[n >> 3] & ~mask);
      }
      state = ((state & 31u) << 1) | unsigned((dec[n] >> state) & 1u);
    }
  }
  rs_stats total;
  for (uint64_t w = 0; w < g.codewords; ++w) {
    const rs_stats r = correct_codeword(g, decoded.data(), w, info);
    total.corrected += r.corrected;
    total.failed += r.failed;
  }
  return total;
}

} // namespace whd::fec
