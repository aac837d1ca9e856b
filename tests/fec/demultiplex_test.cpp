// The receiver's fast path into the streams (coded_rx.hpp): llrs_to_int8 gives
// llr_to_int8's values, and demultiplex_symbols / demultiplex_llrs place them where
// the plain definition of §2.5 undone does (written out here, step by step).
#include <whd/baseband/demap.hpp>
#include <whd/fec/coded_rx.hpp>
#include <whd/fec/coded_tx.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

namespace whd::fec {
namespace {

/// §2.5 undone as the spec reads: de-whiten value t of symbol m with PN[(m Ncbps + t)
/// mod 127], de-interleave it to k, and give it to encoder k mod 8 at k div 8.
std::vector<int8_t> plain_demultiplex(const frame_geometry& g, const std::vector<int8_t>& soft)
{
  std::vector<int8_t> streams(NOF_ENCODERS * g.ce, 0);
  const auto per = uint64_t(g.per_symbol_per_encoder());
  for (uint64_t m = 0; m < g.nd; ++m) {
    for (int t = 0; t < g.ncbps; ++t) {
      const int8_t s = soft[m * uint64_t(g.ncbps) + uint64_t(t)];
      const bool flip = profile::PN[(m * uint64_t(g.ncbps) + uint64_t(t)) % profile::PN_PERIOD] != 0;
      const int k = deinterleaved_index(t, g.ncbps);
      streams[uint64_t(k % NOF_ENCODERS) * g.ce + m * per + uint64_t(k / NOF_ENCODERS)] = flip ? int8_t(-s) : s;
    }
  }
  return streams;
}

/// LLRs around every edge of the conversion: ties at +-0.5 steps, the saturation at
/// +-127 (and its tie 127.5), huge values, infinities, NaN, -0; then random ones.
std::vector<float> edge_llrs(std::size_t n, std::mt19937& rng)
{
  std::vector<float> v;
  for (float x = -130.0f; x <= 130.0f; x += 0.125f) {
    v.push_back(x / LLR_SCALE);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, 1e30f, -1e30f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 127.5f / LLR_SCALE,
                  -127.5f / LLR_SCALE, 126.5f / LLR_SCALE, -126.5f / LLR_SCALE, 0.5f / LLR_SCALE, -0.5f / LLR_SCALE,
                  1.5f / LLR_SCALE, -2.5f / LLR_SCALE, std::nextafter(0.5f, 1.0f) / LLR_SCALE}) {
    v.push_back(x);
  }
  std::normal_distribution<float> d(0.0f, 20.0f);
  while (v.size() < n) {
    v.push_back(d(rng));
  }
  return v;
}

TEST(demultiplex, llrs_to_int8_equals_llr_to_int8_on_every_edge)
{
  std::mt19937 rng(23);
  std::printf("seed 23\n");
  const std::vector<float> llr = edge_llrs(100003, rng); // not a multiple of 16: the tail too
  for (llr_isa isa : {llr_isa::sse2, llr_isa::avx512}) {
    if (!llr_isa_available(isa)) {
      std::printf("this processor has no AVX-512: SSE2 alone\n");
      continue;
    }
    for (float scale : {LLR_SCALE, 1.0f, 0.37f}) {
      std::vector<int8_t> fast(llr.size());
      llrs_to_int8(llr, scale, fast, isa);
      for (std::size_t i = 0; i < llr.size(); ++i) {
        ASSERT_EQ(fast[i], baseband::llr_to_int8(llr[i], scale))
            << "LLR " << llr[i] << " scale " << scale << " index " << i << (isa == llr_isa::sse2 ? " SSE2" : " AVX-512");
      }
    }
  }
}

TEST(demultiplex, streams_are_those_of_the_plain_definition_at_every_mcs)
{
  std::mt19937 rng(29);
  std::printf("seed 29\n");
  for (int mcs : MCS_LIST) {
    for (uint32_t nd : {1u, 2u, 127u, 130u}) {
      const frame_geometry g = geometry(mcs, nd);
      std::vector<int8_t> soft(g.coded_bits());
      for (auto& s : soft) {
        s = int8_t(int(rng() % 256) - 128); // -128 too: it negates to itself, as int8_t(-s)
      }
      const std::vector<int8_t> want = plain_demultiplex(g, soft);
      // Whole frame at once, and symbol by symbol in reverse (any order, any thread).
      std::vector<int8_t> whole(NOF_ENCODERS * g.ce, 0), by_symbol(NOF_ENCODERS * g.ce, 0);
      demultiplex_symbols(g, 0, soft, whole);
      EXPECT_EQ(whole, want) << "MCS " << mcs << " Nd " << nd;
      const auto n = std::size_t(g.ncbps);
      for (uint64_t m = g.nd; m-- > 0;) {
        demultiplex_symbols(g, m, std::span<const int8_t>(soft).subspan(m * n, n), by_symbol);
      }
      EXPECT_EQ(by_symbol, want) << "MCS " << mcs << " Nd " << nd;
    }
  }
}

TEST(demultiplex, llrs_go_where_their_int8_values_go)
{
  std::mt19937 rng(31);
  std::printf("seed 31\n");
  for (int mcs : MCS_LIST) {
    const frame_geometry g = geometry(mcs, 131);
    const std::vector<float> llr = edge_llrs(g.coded_bits(), rng);
    ASSERT_EQ(llr.size(), g.coded_bits());
    std::vector<int8_t> soft(llr.size());
    for (std::size_t i = 0; i < llr.size(); ++i) {
      soft[i] = baseband::llr_to_int8(llr[i], LLR_SCALE);
    }
    const auto n = std::size_t(g.ncbps);
    for (llr_isa isa : {llr_isa::sse2, llr_isa::avx512}) {
      if (!llr_isa_available(isa)) {
        continue;
      }
      std::vector<int8_t> streams(NOF_ENCODERS * g.ce, 0);
      for (uint64_t m = 0; m < g.nd; ++m) {
        demultiplex_llrs(g, m, std::span<const float>(llr).subspan(m * n, n), LLR_SCALE, streams, isa);
      }
      EXPECT_EQ(streams, plain_demultiplex(g, soft)) << "MCS " << mcs << (isa == llr_isa::sse2 ? " SSE2" : " AVX-512");
    }
    std::vector<int8_t> streams(NOF_ENCODERS * g.ce, 0);
    for (uint64_t m = 0; m < g.nd; ++m) {
      demultiplex_llrs(g, m, std::span<const float>(llr).subspan(m * n, n), LLR_SCALE, streams);
    }
    EXPECT_EQ(streams, plain_demultiplex(g, soft)) << "MCS " << mcs << ", the default way";
  }
}

TEST(demultiplex, a_tile_depunctured_is_its_run_of_the_whole_stream_depunctured)
{
  std::mt19937 rng(37);
  std::printf("seed 37\n");
  for (int mcs : MCS_LIST) {
    for (uint32_t nd : {1u, 3u, 40u}) {
      const frame_geometry g = geometry(mcs, nd);
      std::vector<int8_t> c(g.ce);
      std::vector<float> cf(g.ce);
      for (std::size_t i = 0; i < c.size(); ++i) {
        c[i] = int8_t(int(rng() % 255) - 127);
        cf[i] = float(c[i]);
      }
      const std::vector<float> whole = depuncture_stream(g, cf);
      std::vector<int8_t> out(3 * MAX_TILE_STEPS);
      for (uint64_t k = 0; k < nof_tiles(g.nin); ++k) {
        std::fill(out.begin(), out.end(), int8_t(99)); // every value of the run is written
        depuncture_tile(g, c, k, out.data());
        const tile_span t = tile_of(g.nin, k);
        for (uint64_t i = 0; i < 3 * (t.run_end - t.run_first); ++i) {
          ASSERT_EQ(float(out[i]), whole[3 * t.run_first + i]) << "MCS " << mcs << " Nd " << nd << " tile " << k << " value " << i;
        }
      }
    }
  }
}

TEST(demultiplex, sizes_that_do_not_match_the_frame_are_refused)
{
  const frame_geometry g = geometry(2, 4);
  std::vector<int8_t> streams(NOF_ENCODERS * g.ce);
  std::vector<float> llr(std::size_t(g.ncbps));
  EXPECT_THROW(demultiplex_llrs(g, 4, llr, LLR_SCALE, streams), std::invalid_argument);
  EXPECT_THROW(demultiplex_llrs(g, 0, std::span<const float>(llr).first(10), LLR_SCALE, streams), std::invalid_argument);
  EXPECT_THROW(demultiplex_llrs(g, 0, llr, LLR_SCALE, std::span<int8_t>(streams).first(8)), std::invalid_argument);
  std::vector<int8_t> out(3);
  EXPECT_THROW(llrs_to_int8(llr, LLR_SCALE, out), std::invalid_argument);
}

} // namespace
} // namespace whd::fec
