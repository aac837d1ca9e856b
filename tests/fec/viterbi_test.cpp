// The Viterbi decoder's one definition (viterbi.hpp): the vectorised decoder equals
// the plain reference bit for bit, and the whole receive chain undoes the transmit
// chain (coded_tx_test checks that against the spec), correcting what it should.
#include <whd/fec/coded_rx.hpp>
#include <whd/fec/coded_tx.hpp>
#include <whd/fec/reed_solomon.hpp>
#include <whd/fec/viterbi.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <random>
#include <vector>

namespace whd::fec {
namespace {

/// A stream of nin trellis steps of soft values drawn by `kind`: 0 uniform in
/// [-127, 127], 1 only +-127 (the metrics' widest spread), 2 mostly 0 (erasures).
std::vector<int8_t> random_soft(uint64_t nin, int kind, std::mt19937& rng)
{
  std::vector<int8_t> s(3 * nin);
  for (auto& v : s) {
    const int r = int(rng() % 255) - 127;
    v = int8_t(kind == 0 ? r : kind == 1 ? (r < 0 ? -127 : 127) : (rng() % 4 == 0 ? r : 0));
  }
  return s;
}

class viterbi_isas : public ::testing::TestWithParam<viterbi_isa> {};

TEST_P(viterbi_isas, vectorised_tiles_equal_the_reference)
{
  const viterbi_isa isa = GetParam();
  if (!viterbi_isa_available(isa)) {
    GTEST_SKIP() << "this processor has no " << to_string(isa);
  }
  std::mt19937 rng(11);
  std::printf("seed 11, %s\n", to_string(isa));
  // Streams of one tile, of a tile and a step, of many; either side of long tiles'
  // threshold; every kind of soft value.
  const uint64_t lengths[] = {12,   100,   TILE, TILE + 1, TILE + DEPTH, 3 * TILE + 7, 5000, 20000, LONG_STREAM - 1, LONG_STREAM,
                              LONG_STREAM + 3 * TILE_LONG + 7};
  std::vector<std::vector<int8_t>> soft;
  std::vector<uint64_t> nin;
  for (uint64_t n : lengths) {
    for (int kind = 0; kind < 3; ++kind) {
      soft.push_back(random_soft(n, kind, rng));
      nin.push_back(n);
    }
  }
  std::vector<tile_job> jobs;
  std::vector<std::vector<uint8_t>> got(soft.size()), want(soft.size());
  for (std::size_t i = 0; i < soft.size(); ++i) {
    const uint64_t bits = 8 * ((nin[i] - TAIL_BITS) / 8);
    got[i].assign((nin[i] + 7) / 8, 0);
    want[i].assign((nin[i] + 7) / 8, 0);
    for (uint64_t k = 0; k < nof_tiles(nin[i]); ++k) {
      jobs.push_back({soft[i].data(), nin[i], k, bits, got[i].data()});
      decode_tile_reference({soft[i].data(), nin[i], k, bits, want[i].data()});
    }
  }
  // In order, batches of one stream's inner tiles (the decoder's aligned path) ...
  decode_tiles(jobs, isa);
  for (std::size_t i = 0; i < soft.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << "in order: stream " << i << " of " << nin[i] << " steps, kind " << i % 3;
    std::fill(got[i].begin(), got[i].end(), 0);
  }
  // ... and shuffled, batches that mix streams, tile shapes and starting rules.
  std::shuffle(jobs.begin(), jobs.end(), rng);
  decode_tiles(jobs, isa);
  for (std::size_t i = 0; i < soft.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << "shuffled: stream " << i << " of " << nin[i] << " steps, kind " << i % 3;
  }
}

INSTANTIATE_TEST_SUITE_P(every, viterbi_isas, ::testing::Values(viterbi_isa::avx2, viterbi_isa::avx512),
                         [](const auto& p) { return p.param == viterbi_isa::avx2 ? std::string("avx2") : std::string("avx512"); });

TEST(viterbi, tiles_cut_a_stream_into_consecutive_outputs_with_their_margins)
{
  for (uint64_t nin : {uint64_t(1), uint64_t(40), TILE - 1, TILE, TILE + 1, 5000 + TILE, LONG_STREAM - 1, LONG_STREAM,
                       LONG_STREAM + 1, 7 * TILE_LONG + LONG_STREAM + 13}) {
    const uint64_t length = nin >= LONG_STREAM ? TILE_LONG : TILE;
    uint64_t next = 0;
    for (uint64_t k = 0; k < nof_tiles(nin); ++k) {
      const tile_span t = tile_of(nin, k);
      ASSERT_EQ(t.out_first, next) << nin << " steps, tile " << k;
      ASSERT_EQ(t.out_end - t.out_first, std::min(length, nin - t.out_first)) << nin << " steps, tile " << k;
      ASSERT_EQ(t.run_first, t.out_first - std::min(t.out_first, ACQUIRE)) << nin << " steps, tile " << k;
      ASSERT_EQ(t.run_end, std::min(nin, t.out_end + DEPTH)) << nin << " steps, tile " << k;
      ASSERT_LE(t.run_end - t.run_first, MAX_TILE_STEPS);
      next = t.out_end;
    }
    EXPECT_EQ(next, nin) << nin << " steps: the tiles' outputs end at the stream's end";
  }
}

TEST(viterbi, tiles_decode_a_noiseless_stream_exactly)
{
  std::mt19937 rng(3);
  for (uint64_t nin : {uint64_t(40), TILE * 3 + 100, uint64_t(4000), LONG_STREAM + TILE_LONG + 100}) {
    std::vector<uint8_t> u(nin, 0);
    for (uint64_t n = 0; n + TAIL_BITS < nin; ++n) {
      u[n] = uint8_t(rng() & 1u);
    }
    const auto c = convolve_punctured(u, pattern_of(code_rate::r1_3));
    std::vector<int8_t> soft(c.size());
    for (std::size_t i = 0; i < c.size(); ++i) {
      soft[i] = c[i] ? int8_t(-40) : int8_t(40);
    }
    const uint64_t bits = nin - TAIL_BITS;
    std::vector<uint8_t> out((nin + 7) / 8, 0);
    std::vector<tile_job> jobs;
    for (uint64_t k = 0; k < nof_tiles(nin); ++k) {
      jobs.push_back({soft.data(), nin, k, bits, out.data()});
    }
    decode_tiles(jobs);
    for (uint64_t n = 0; n < bits; ++n) {
      ASSERT_EQ((out[n / 8] >> (7 - n % 8)) & 1u, u[n]) << "bit " << n << " of " << nin;
    }
  }
}

/// Soft values of a frame's transmitted bits at +-a, with a fraction `flip` of them
/// turned against the bit at -+b.
std::vector<int8_t> soft_of(const std::vector<uint8_t>& packed, uint64_t nbits, int a, double flip, int b, std::mt19937& rng)
{
  std::vector<int8_t> s(nbits);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (uint64_t i = 0; i < nbits; ++i) {
    const bool one = (packed[i / 8] >> (7 - i % 8)) & 1u;
    const bool wrong = u(rng) < flip;
    const int mag = wrong ? -b : a;
    s[i] = int8_t(one ? -mag : mag);
  }
  return s;
}

std::vector<uint8_t> random_info(const frame_geometry& g, std::mt19937& rng)
{
  std::vector<uint8_t> info(g.info_bytes);
  for (auto& b : info) {
    b = uint8_t(rng());
  }
  return info;
}

TEST(coded_rx, undoes_the_transmit_chain_at_every_mcs_and_size)
{
  std::mt19937 rng(5);
  std::printf("seed 5\n");
  for (int mcs : MCS_LIST) {
    for (uint32_t nd : {1u, 2u, 3u, 7u, 52u, 130u}) {
      const frame_geometry g = geometry(mcs, nd);
      const auto info = random_info(g, rng);
      const auto tx = encode_frame(g, info);
      std::vector<uint8_t> out(g.info_bytes);
      const rs_stats rs = decode_frame(g, soft_of(tx, g.coded_bits(), 30, 0.0, 0, rng), out);
      EXPECT_EQ(out, info) << "MCS " << mcs << " Nd " << nd;
      EXPECT_EQ(rs.corrected, 0u);
      EXPECT_EQ(rs.failed, 0u);
    }
  }
}

TEST(coded_rx, the_code_corrects_scattered_errors)
{
  // 4 % of the coded bits wrong (as confident as the right ones) at rate 1/3, 1 %
  // at 2/3: well inside what the code corrects (dfree 15 and 6).
  std::mt19937 rng(9);
  std::printf("seed 9\n");
  for (const auto& [mcs, flip] : std::vector<std::pair<int, double>>{{0, 0.04}, {1, 0.01}, {2, 0.01}}) {
    const frame_geometry g = geometry(mcs, 60);
    const auto info = random_info(g, rng);
    std::vector<uint8_t> out(g.info_bytes);
    decode_frame(g, soft_of(encode_frame(g, info), g.coded_bits(), 20, flip, 20, rng), out);
    EXPECT_EQ(out, info) << "MCS " << mcs;
  }
}

TEST(coded_rx, reed_solomon_corrects_a_viterbi_burst_and_counts_what_it_cannot)
{
  std::mt19937 rng(13);
  const frame_geometry g = geometry(1, 40);
  const auto info = random_info(g, rng);
  const auto tx = encode_frame(g, info);
  const auto clean = soft_of(tx, g.coded_bits(), 30, 0.0, 0, rng);
  std::vector<int8_t> streams(NOF_ENCODERS * g.ce);
  // A burst of confident errors in encoder 3's stream: a short Viterbi error event,
  // a few bytes of one codeword.
  const auto burst = [&](std::size_t from, std::size_t n, std::vector<int8_t>& s) {
    for (std::size_t i = from; i < from + n; ++i) {
      s[3 * g.ce + i] = int8_t(-s[3 * g.ce + i]);
    }
  };
  demultiplex_symbols(g, 0, clean, streams);
  burst(300, 12, streams);
  std::vector<uint8_t> out(g.info_bytes);
  coded_decoder d;
  coded_job job{g, streams, out, {}};
  d.decode(std::span<coded_job>(&job, 1));
  EXPECT_EQ(out, info);
  EXPECT_GT(job.rs.corrected, 0u);
  EXPECT_EQ(job.rs.failed, 0u);
  // Every encoder wrong over the same stretch: more than 4 bytes of a codeword.
  demultiplex_symbols(g, 0, clean, streams);
  for (int e = 0; e < NOF_ENCODERS; ++e) {
    for (std::size_t i = 600; i < 700; ++i) {
      streams[uint64_t(e) * g.ce + i] = int8_t(-streams[uint64_t(e) * g.ce + i]);
    }
  }
  job = {g, streams, out, {}};
  d.decode(std::span<coded_job>(&job, 1));
  EXPECT_GE(job.rs.failed, 1u);
  EXPECT_NE(out, info);
}

TEST(coded_rx, many_frames_at_once_equal_each_frame_alone)
{
  std::mt19937 rng(17);
  std::vector<frame_geometry> gs;
  std::vector<std::vector<uint8_t>> infos, outs;
  std::vector<std::vector<int8_t>> streams;
  for (int i = 0; i < 12; ++i) {
    gs.push_back(geometry(MCS_LIST[std::size_t(i) % 4], 1 + uint32_t(rng() % 40)));
    infos.push_back(random_info(gs.back(), rng));
    const auto soft = soft_of(encode_frame(gs.back(), infos.back()), gs.back().coded_bits(), 20, 0.03, 10, rng);
    streams.emplace_back(NOF_ENCODERS * gs.back().ce);
    demultiplex_symbols(gs.back(), 0, soft, streams.back());
    outs.emplace_back(gs.back().info_bytes);
  }
  std::vector<coded_job> jobs;
  for (std::size_t i = 0; i < gs.size(); ++i) {
    jobs.push_back({gs[i], streams[i], outs[i], {}});
  }
  coded_decoder d;
  d.decode(jobs);
  for (std::size_t i = 0; i < gs.size(); ++i) {
    std::vector<uint8_t> alone(gs[i].info_bytes);
    coded_job one{gs[i], streams[i], alone, {}};
    coded_decoder().decode(std::span<coded_job>(&one, 1));
    EXPECT_EQ(outs[i], alone) << "frame " << i;
    EXPECT_EQ(jobs[i].rs.corrected, one.rs.corrected);
    EXPECT_EQ(jobs[i].rs.failed, one.rs.failed);
  }
}

// correct_codewords takes up to four codewords at once: the same information bytes
// and RS counts as correct_codeword word by word, on decoded bytes with scattered byte
// errors (none, correctable, not), at every MCS and sizes whose last codeword is short.
TEST(coded_rx, codewords_at_once_equal_each_codeword_alone)
{
  constexpr unsigned SEED = 43;
  std::mt19937 rng(SEED);
  std::printf("seed %u\n", SEED);
  rs_stats all;
  for (int mcs : MCS_LIST) {
    for (uint32_t nd : {1u, 7u, 40u, 131u}) {
      const frame_geometry g = geometry(mcs, nd);
      const std::vector<uint8_t> info = random_info(g, rng);
      // The encoders' bytes of a frame's codewords (parsed as §2.3 does), then errors:
      // a byte in one word of ten, 3 .. 8 bytes in another one of ten.
      std::vector<uint8_t> decoded(NOF_ENCODERS * g.q);
      for (uint64_t w = 0; w < g.codewords; ++w) {
        std::array<uint8_t, RS_N> word{};
        const uint64_t k = g.message_bytes(w);
        std::copy_n(info.begin() + std::ptrdiff_t(w * RS_K), k, word.begin());
        rs_encode(std::span<const uint8_t>(word.data(), k), std::span<uint8_t>(word.data() + k, RS_PARITY));
        const auto r = unsigned(rng() % 10);
        const unsigned nerr = r == 0 ? 1u : r == 1 ? 3u + unsigned(rng() % 6) : 0u;
        for (unsigned e = 0; e < nerr; ++e) {
          word[rng() % (k + RS_PARITY)] ^= uint8_t(1 + rng() % 255);
        }
        for (uint64_t b = 0; b < k + RS_PARITY; ++b) {
          const uint64_t i = w * RS_N + b;
          decoded[(i % NOF_ENCODERS) * g.q + i / NOF_ENCODERS] = word[b];
        }
      }
      std::vector<uint8_t> want(g.info_bytes), got(g.info_bytes);
      rs_stats want_rs, got_rs;
      for (uint64_t w = 0; w < g.codewords; ++w) {
        const rs_stats r = correct_codeword(g, decoded.data(), w, want);
        want_rs.corrected += r.corrected;
        want_rs.failed += r.failed;
      }
      for (uint64_t w = 0; w < g.codewords; w += RS_WORDS_AT_ONCE) {
        const rs_stats r = correct_codewords(g, decoded.data(), w, std::min(RS_WORDS_AT_ONCE, g.codewords - w), got);
        got_rs.corrected += r.corrected;
        got_rs.failed += r.failed;
      }
      EXPECT_EQ(got, want) << "MCS " << mcs << " Nd " << nd;
      EXPECT_EQ(got_rs.corrected, want_rs.corrected) << "MCS " << mcs << " Nd " << nd;
      EXPECT_EQ(got_rs.failed, want_rs.failed) << "MCS " << mcs << " Nd " << nd;
      all.corrected += want_rs.corrected;
      all.failed += want_rs.failed;
    }
  }
  EXPECT_GT(all.corrected, 0u) << "words were corrected";
  EXPECT_GT(all.failed, 0u) << "words could not be";
}

} // namespace
} // namespace whd::fec

namespace whd::fec {
namespace {

TEST(coded_rx, the_float_reference_decodes_what_the_tiles_decode_on_clean_and_noisy_frames)
{
  // A full-length float Viterbi is not the definition, but on the same soft values
  // it must decode a clean frame exactly, and a lightly noisy one to the same bytes.
  std::mt19937 rng(21);
  for (int mcs : MCS_LIST) {
    const frame_geometry g = geometry(mcs, 40);
    const auto info = random_info(g, rng);
    const auto soft8 = soft_of(encode_frame(g, info), g.coded_bits(), 20, 0.01, 5, rng);
    std::vector<float> soft(soft8.begin(), soft8.end());
    std::vector<uint8_t> a(g.info_bytes), b(g.info_bytes);
    decode_frame(g, soft8, a);
    decode_frame_float(g, soft, b);
    EXPECT_EQ(a, info) << "MCS " << mcs;
    EXPECT_EQ(b, info) << "MCS " << mcs;
  }
}

} // namespace
} // namespace whd::fec
