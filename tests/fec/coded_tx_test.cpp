// The transmit chain of profile 2 against the spec's own vectors (§2.1, §5): the
// independent implementation's numbers, exact.
#include <whd/fec/coded_frame.hpp>
#include <whd/fec/coded_tx.hpp>
#include <whd/fec/reed_solomon.hpp>

#include "sha256.hpp"

extern "C" {
#include <fec.h>
}

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <numeric>
#include <string>
#include <vector>

namespace whd::fec {
namespace {

std::string bits_string(const std::vector<uint8_t>& bits, std::size_t n)
{
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    s += char('0' + bits.at(i));
  }
  return s;
}

std::string hex(std::span<const uint8_t> b)
{
  std::string s;
  char buf[4];
  for (uint8_t x : b) {
    std::snprintf(buf, sizeof buf, "%s%02x", s.empty() ? "" : " ", x);
    s += buf;
  }
  return s;
}

TEST(coded_geometry, information_bytes_are_the_spec_table)
{
  // §2.1: L(Nd) for Nd = 1, 2, 10, 100, 1000.
  const std::map<int, std::vector<uint64_t>> table = {{0, {8, 40, 256, 2688, 26992}},
                                                       {1, {40, 96, 528, 5392, 53992}},
                                                       {2, {96, 208, 1072, 10792, 107992}},
                                                       {7, {112, 240, 1288, 12952, 129592}}};
  const uint32_t nds[] = {1, 2, 10, 100, 1000};
  for (const auto& [mcs, ls] : table) {
    for (std::size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(geometry(mcs, nds[i]).info_bytes, ls[i]) << "MCS " << mcs << " Nd " << nds[i];
    }
  }
}

TEST(coded_geometry, information_rate_per_symbol_is_the_spec_table)
{
  // §4: L * 8 / Nd at Nd = 100.
  const std::map<int, double> per_symbol = {{0, 215.0}, {1, 431.4}, {2, 863.4}, {7, 1036.2}};
  for (const auto& [mcs, bits] : per_symbol) {
    EXPECT_NEAR(double(geometry(mcs, 100).info_bytes) * 8.0 / 100.0, bits, 0.05) << "MCS " << mcs;
  }
}

TEST(coded_geometry, rejects_undefined_modes_and_sizes)
{
  EXPECT_THROW(geometry(3, 10), std::invalid_argument);
  EXPECT_THROW(geometry(0, 0), std::invalid_argument);
  EXPECT_THROW(geometry(2, profile::MAX_ND + 1), std::invalid_argument);
  EXPECT_FALSE(parse_mcs("5"));
  EXPECT_FALSE(parse_mcs("2x"));
  EXPECT_EQ(parse_mcs("7"), 7);
}

TEST(reed_solomon, parity_is_the_spec_vectors)
{
  std::vector<uint8_t> up(16), down(16), full(216);
  std::iota(up.begin(), up.end(), uint8_t(0));
  for (int i = 0; i < 16; ++i) {
    down[std::size_t(i)] = uint8_t(0xFF - i);
  }
  std::iota(full.begin(), full.end(), uint8_t(0));
  std::array<uint8_t, 8> p{};
  rs_encode(up, p);
  EXPECT_EQ(hex(p), "83 a7 05 c3 db 5a 8d a2");
  rs_encode(down, p);
  EXPECT_EQ(hex(p), "51 39 f8 32 b9 ff 46 be");
  rs_encode(full, p);
  EXPECT_EQ(hex(p), "d7 ca 4c 15 7e 0b 47 5d");
}

TEST(reed_solomon, corrects_up_to_four_byte_errors_and_leaves_more_as_received)
{
  std::mt19937 rng(7);
  std::printf("seed 7\n");
  for (int trial = 0; trial < 4000; ++trial) {
    const std::size_t k = 1 + rng() % 216;
    std::vector<uint8_t> word(k + 8);
    for (std::size_t i = 0; i < k; ++i) {
      word[i] = uint8_t(rng());
    }
    rs_encode(std::span<const uint8_t>(word.data(), k), std::span<uint8_t>(word.data() + k, 8));
    const auto sent = word;
    const int nerr = trial % 9; // 0 .. 8 byte errors
    std::vector<std::size_t> pos(word.size());
    std::iota(pos.begin(), pos.end(), 0);
    std::shuffle(pos.begin(), pos.end(), rng);
    const int n = std::min<int>(nerr, int(word.size()));
    for (int e = 0; e < n; ++e) {
      word[pos[std::size_t(e)]] ^= uint8_t(1 + rng() % 255);
    }
    const auto received = word;
    const int fixed = rs_decode(word);
    EXPECT_LE(fixed, RS_T) << "never more than 4 bytes corrected";
    if (n <= 4) {
      EXPECT_EQ(fixed, n) << "k " << k;
      EXPECT_EQ(word, sent) << "k " << k;
    } else if (fixed < 0) {
      EXPECT_EQ(word, received) << "an uncorrectable codeword stays as received";
    } else {
      EXPECT_NE(word, sent) << "more than 4 errors cannot be corrected back";
    }
  }
}

/// rs_decode as it was before its codeword check: libfec's decode_rs_char on every
/// word, then the rules of reed_solomon.hpp.
int reference_rs_decode(std::span<uint8_t> word)
{
  const std::size_t k = word.size() - RS_PARITY;
  void* c = init_rs_char(8, int(RS_FIELD_POLY), 1, 1, RS_PARITY, 255 - RS_PARITY - int(k));
  const std::vector<uint8_t> received(word.begin(), word.end());
  const int fixed = decode_rs_char(c, word.data(), nullptr, 0);
  bool ok = fixed >= 0 && fixed <= RS_T;
  if (ok && fixed > 0) {
    std::array<uint8_t, RS_PARITY> parity{};
    encode_rs_char(c, word.data(), parity.data());
    ok = std::equal(parity.begin(), parity.end(), word.begin() + std::ptrdiff_t(k));
  }
  free_rs_char(c);
  if (!ok) {
    std::copy(received.begin(), received.end(), word.begin());
    return -1;
  }
  return fixed;
}

// rs_decode takes a word whose parity is its message's as a codeword without libfec:
// it must answer as libfec's decoder did on every word, codeword or not. Every k, on
// codewords, on words one byte or one bit off (every position), and on words 2 .. 8
// bytes off and wholly random words.
TEST(reed_solomon, decodes_every_word_as_libfecs_decoder_did)
{
  constexpr unsigned SEED = 20261128;
  std::mt19937 rng(SEED);
  int checked = 0, codewords = 0;
  const auto check = [&](std::vector<uint8_t> word, const std::string& what) {
    auto want = word;
    const int r_want = reference_rs_decode(want);
    const int r_got = rs_decode(word);
    ASSERT_EQ(r_got, r_want) << what << ", seed " << SEED;
    ASSERT_EQ(word, want) << what << ", seed " << SEED;
    ++checked;
    codewords += r_want == 0;
  };
  for (std::size_t k = 1; k <= RS_K; ++k) {
    std::vector<uint8_t> word(k + RS_PARITY);
    for (std::size_t i = 0; i < k; ++i) {
      word[i] = uint8_t(rng());
    }
    rs_encode(std::span<const uint8_t>(word.data(), k), std::span<uint8_t>(word.data() + k, RS_PARITY));
    const std::string at = "k " + std::to_string(k);
    check(word, at + ", codeword");
    ASSERT_FALSE(HasFatalFailure());
    for (std::size_t pos = 0; pos < word.size(); ++pos) {
      auto one = word;
      one[pos] ^= uint8_t(1u << (rng() % 8));
      check(one, at + ", one bit off at " + std::to_string(pos));
      one = word;
      one[pos] ^= uint8_t(1 + rng() % 255);
      check(one, at + ", one byte off at " + std::to_string(pos));
      ASSERT_FALSE(HasFatalFailure());
    }
    for (int nerr = 2; nerr <= 8; ++nerr) {
      auto many = word;
      for (int e = 0; e < nerr; ++e) {
        many[rng() % many.size()] ^= uint8_t(1 + rng() % 255);
      }
      check(many, at + ", " + std::to_string(nerr) + " bytes off");
      for (auto& b : many) {
        b = uint8_t(rng());
      }
      check(many, at + ", random");
      ASSERT_FALSE(HasFatalFailure());
    }
  }
  std::printf("%d words, %d of them codewords, seed %u\n", checked, codewords, SEED);
}

// rs_decode_words tests four words side by side: each word's result and bytes must be
// rs_decode's, whatever its neighbours are (codewords, words 1 .. 8 bytes off, random
// words), for every length and for counts that are not a multiple of four.
TEST(reed_solomon, words_side_by_side_decode_as_each_word_alone)
{
  constexpr unsigned SEED = 41;
  std::mt19937 rng(SEED);
  std::printf("seed %u\n", SEED);
  for (std::size_t k = 1; k <= RS_K; k += (k < 8 || k > 208) ? 1 : 13) {
    const std::size_t n = k + RS_PARITY;
    for (std::size_t count : {1u, 3u, 4u, 5u, 8u, 11u}) {
      std::vector<uint8_t> words(count * n);
      for (std::size_t w = 0; w < count; ++w) {
        uint8_t* word = words.data() + w * n;
        for (std::size_t i = 0; i < k; ++i) {
          word[i] = uint8_t(rng());
        }
        rs_encode(std::span<const uint8_t>(word, k), std::span<uint8_t>(word + k, RS_PARITY));
        const auto kind = unsigned(rng() % 4); // a codeword, 1 .. 4 bytes off, 5 .. 8 off, random
        const unsigned nerr = kind == 0 ? 0u : kind == 1 ? 1u + unsigned(rng() % 4) : kind == 2 ? 5u + unsigned(rng() % 4) : 0u;
        for (unsigned e = 0; e < nerr; ++e) {
          word[rng() % n] ^= uint8_t(1 + rng() % 255);
        }
        for (std::size_t i = 0; kind == 3 && i < n; ++i) {
          word[i] = uint8_t(rng());
        }
      }
      auto want = words;
      std::vector<int> want_fixed(count), got_fixed(count, 99);
      for (std::size_t w = 0; w < count; ++w) {
        want_fixed[w] = rs_decode(std::span<uint8_t>(want.data() + w * n, n));
      }
      rs_decode_words(words, n, got_fixed);
      ASSERT_EQ(got_fixed, want_fixed) << "k " << k << ", " << count << " words";
      ASSERT_EQ(words, want) << "k " << k << ", " << count << " words";
    }
  }
  std::vector<uint8_t> w(3 * 20);
  std::vector<int> f(2);
  EXPECT_THROW(rs_decode_words(w, 20, f), std::invalid_argument);
  EXPECT_THROW(rs_decode_words(std::span<uint8_t>(w.data(), 16), 8, std::span<int>(f.data(), 2)), std::invalid_argument);
}

std::vector<uint8_t> ff_down_bits()
{
  std::vector<uint8_t> bits;
  for (int i = 0; i < 16; ++i) {
    const auto byte = uint8_t(0xFF - i);
    for (int b = 7; b >= 0; --b) {
      bits.push_back(uint8_t((byte >> b) & 1u));
    }
  }
  return bits;
}

TEST(convolutional_code, one_encoder_is_the_spec_vectors_at_every_rate)
{
  const std::vector<std::pair<code_rate, std::string>> v = {
      {code_rate::r1_3, "111100011101100000111111111111111111111111111000"},
      {code_rate::r1_2, "111001101000111111111111111111001000001101000010"},
      {code_rate::r4_7, "111011010011111111111111110010000110100010000110"},
      {code_rate::r2_3, "111011100111111111111110100001010001000110001000"},
      {code_rate::r4_5, "111011001111111111101000101001000100010001100101"}};
  for (const auto& [rate, want] : v) {
    EXPECT_EQ(bits_string(convolve_punctured(ff_down_bits(), pattern_of(rate)), 48), want) << to_string(rate);
  }
}

struct frame_vector {
  int mcs;
  uint64_t info, codewords, last_k, nin, q, periods, pad;
  std::string parity, enc0, v, t, sha;
};

class coded_frame_vectors : public ::testing::TestWithParam<frame_vector> {};

TEST_P(coded_frame_vectors, every_step_is_the_spec_vector)
{
  const frame_vector& f = GetParam();
  const frame_geometry g = geometry(f.mcs, 2);
  EXPECT_EQ(g.info_bytes, f.info);
  EXPECT_EQ(g.codewords, f.codewords);
  EXPECT_EQ(g.last_k, f.last_k);
  EXPECT_EQ(g.nin, f.nin);
  EXPECT_EQ(g.q, f.q);
  EXPECT_EQ(g.periods, f.periods);
  EXPECT_EQ(g.pad_bits, f.pad);
  std::vector<uint8_t> info(g.info_bytes);
  for (std::size_t i = 0; i < info.size(); ++i) {
    info[i] = uint8_t(255 - (i % 256));
  }
  const auto rs = rs_stream(g, info);
  EXPECT_EQ(hex(std::span<const uint8_t>(rs).subspan(g.message_bytes(0), 8)), f.parity);
  std::vector<std::vector<uint8_t>> streams(NOF_ENCODERS);
  for (int e = 0; e < NOF_ENCODERS; ++e) {
    streams[std::size_t(e)] = convolve_punctured(encoder_input(g, rs, e), g.punct);
    EXPECT_EQ(streams[std::size_t(e)].size() + g.pad_bits, g.ce);
  }
  EXPECT_EQ(bits_string(streams[0], 48), f.enc0);
  const auto v = multiplex(g, streams);
  EXPECT_EQ(bits_string(v, 48), f.v);
  const auto t = interleave_and_whiten(g, v);
  EXPECT_EQ(bits_string(t, 48), f.t);
  const auto packed = encode_frame(g, info);
  EXPECT_EQ(packed, pack_bits(t));
  EXPECT_EQ(test::sha256_hex(packed), f.sha);
}

INSTANTIATE_TEST_SUITE_P(
    spec, coded_frame_vectors,
    ::testing::Values(
        frame_vector{0, 40, 1, 40, 56, 6, 56, 0, "ba 39 fc 8e 9e 99 3d 97",
                     "111100011101100000111111111111111111000100000001",
                     "111111111111111111111111111111110000000000000000",
                     "110111000010110010000100000001111111010101011010",
                     "2f3ca2b7544100362543e7994b2c23dc823f05b0e16d8233d6abae30d0be5add"},
        frame_vector{1, 96, 1, 96, 112, 13, 56, 0, "c3 d5 c1 03 88 79 83 b9",
                     "111011100111111111001000110000100001010110010110",
                     "111111111111111111111111000000001111111111111111",
                     "111011101100001011000000000010011100010001101010",
                     "cb83ca03a71432031d8f21b4f73f703f8fd6118a2af1d14a36d0873a306e3dd0"},
        frame_vector{2, 208, 1, 208, 224, 27, 112, 0, "6f c9 3d 68 b9 3c 54 82",
                     "111011100111111111001000110000100001010110010110",
                     "111111111111111111111111000000001111111111111111",
                     "111011101100001011000000000010011101000000010101",
                     "98f25ebca7ac8cd950a8ddccedc362b8b5b85591d6d2ba3ccba29da77cc2be2f"},
        frame_vector{7, 240, 2, 24, 268, 32, 67, 1, "6d d1 0b f2 d7 08 14 fd",
                     "111011001111111001001100010001010100101001111000",
                     "111111111111111111111111000000001111111111111111",
                     "111111010100001101000010111110100010111100010110",
                     "1d63faf6e763a83aef7d010af143a29f989b3f777e1b92d3bb3df77ad0335fee"}),
    [](const auto& p) { return "mcs" + std::to_string(p.param.mcs); });

} // namespace
} // namespace whd::fec
