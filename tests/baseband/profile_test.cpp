#include <whd/baseband/profile.hpp>

#include <gtest/gtest.h>

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <bitset>
#include <set>
#include <string>

namespace p = whd::profile;

TEST(profile, pn_check_value_and_period)
{
  // An independent LFSR written from §3's words, not from the table.
  std::string first32;
  unsigned s = 0x7F;
  std::string all;
  for (int i = 0; i < 254; ++i) {
    const unsigned b = ((s >> 6) ^ (s >> 3)) & 1u;
    s = ((s << 1) | b) & 0x7Fu;
    all += static_cast<char>('0' + b);
  }
  EXPECT_EQ(all.substr(0, 32), "00001110111100101100100100000010");
  for (int i = 0; i < 127; ++i) {
    EXPECT_EQ(p::pn(i), all[static_cast<std::size_t>(i)] - '0') << "p[" << i << "]";
    EXPECT_EQ(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(i + 127)]) << "period 127 at " << i;
  }
}

TEST(profile, tone_classes_partition_the_fft)
{
  std::set<int> bins;
  for (auto b : p::DATA_BIN) {
    bins.insert(b);
  }
  for (auto b : p::PILOT_BIN) {
    bins.insert(b);
  }
  EXPECT_EQ(bins.size(), 352u);
  int dc = 0, null = 0;
  for (int k = -256; k < 256; ++k) {
    dc += p::is_dc(k);
    null += p::is_null(k);
  }
  EXPECT_EQ(dc, 3);
  EXPECT_EQ(null, 157);
  EXPECT_EQ(p::DATA_K.front(), -177);
  EXPECT_EQ(p::DATA_K.back(), 177);
  EXPECT_TRUE(std::is_sorted(p::DATA_K.begin(), p::DATA_K.end()));
  EXPECT_TRUE(std::is_sorted(p::USED_K.begin(), p::USED_K.end()));
  for (std::size_t i = 0; i < p::PILOT_K.size(); ++i) {
    EXPECT_EQ(p::USED_K[static_cast<std::size_t>(p::PILOT_USED[i])], p::PILOT_K[i]);
    EXPECT_EQ(std::abs(p::PILOT_K[i]) % 22, 5) << "pilots sit at +-(5 + 22 j)";
  }
  for (std::size_t d = 0; d < p::DATA_K.size(); ++d) {
    EXPECT_EQ(p::USED_K[static_cast<std::size_t>(p::DATA_USED[d])], p::DATA_K[d]);
    EXPECT_EQ(p::DATA_BIN[d], (p::DATA_K[d] + 512) % 512);
  }
}

TEST(profile, crc_check_value)
{
  const uint8_t s[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(p::crc16_ccitt_false(s, sizeof s), 0x29B1);
}

TEST(profile, header_round_trip_and_rejections)
{
  const p::header_fields f{1, 1048575u, 200};
  auto h = p::header_bits(f);
  p::header_fields g;
  ASSERT_EQ(p::parse_header(h, g), p::header_status::ok);
  EXPECT_EQ(g.mod_field, 1);
  EXPECT_EQ(g.nd, 1048575u);
  EXPECT_EQ(g.seq, 200);
  // Field order is MSB first: h[0..3] modulation, h[4..23] Nd.
  EXPECT_EQ(h[3], 1);
  EXPECT_EQ(h[4], 1);
  for (int i = 0; i < 48; ++i) {
    auto bad = h;
    bad[static_cast<std::size_t>(i)] ^= 1u;
    EXPECT_EQ(p::parse_header(bad, g), p::header_status::crc) << "flipped bit " << i;
  }
  // Profile 2 §1: modes 5..8 and 10..15 are reserved; 2, 3, 4 and 9 are the coded MCS.
  for (uint8_t mode = 0; mode < 16; ++mode) {
    const bool defined = mode <= 4 || mode == 9;
    EXPECT_EQ(p::parse_header(p::header_bits({mode, 5, 0}), g), defined ? p::header_status::ok : p::header_status::reserved_mode)
        << "mode " << int(mode);
    if (defined) {
      EXPECT_EQ(g.mod_field, mode);
    }
  }
  EXPECT_STREQ(p::to_string(p::header_status::reserved_mode), "mode");
  EXPECT_EQ(p::parse_header(p::header_bits({0, 0, 0}), g), p::header_status::zero_nd);
}

TEST(profile, header_crc_has_distance_four_over_48_bits)
{
  // The code is linear in the error (the CRC's initial value cancels in a difference),
  // so one header and every error of weight 1, 2 and 3 decide it: none passes the CRC.
  const auto h = p::header_bits({4, 777u, 9});
  p::header_fields g;
  int passed = 0, tried = 0;
  const auto check = [&](std::initializer_list<int> bits) {
    auto e = h;
    for (const int b : bits) {
      e[std::size_t(b)] ^= 1u;
    }
    ++tried;
    passed += p::parse_header(e, g) == p::header_status::crc ? 0 : 1;
  };
  for (int a = 0; a < p::HEADER_BITS; ++a) {
    check({a});
    for (int b = a + 1; b < p::HEADER_BITS; ++b) {
      check({a, b});
      for (int c = b + 1; c < p::HEADER_BITS; ++c) {
        check({a, b, c});
      }
    }
  }
  EXPECT_EQ(tried, 48 + 1128 + 17296);
  EXPECT_EQ(passed, 0);
}

namespace {
/// Noise-free soft values of header `f` (bit 0: +1, bit 1: -1).
std::array<float, p::HEADER_BITS> clean_soft(const p::header_fields& f)
{
  const auto h = p::header_bits(f);
  std::array<float, p::HEADER_BITS> s{};
  for (std::size_t j = 0; j < s.size(); ++j) {
    s[j] = h[j] != 0 ? -1.0f : 1.0f;
  }
  return s;
}
} // namespace

TEST(profile, soft_header_decision_flips_only_the_weakest_bits)
{
  const p::header_fields f{3, 4096u, 17};
  p::header_fields g;
  auto s = clean_soft(f);
  auto d = p::decide_header(s.data(), g);
  EXPECT_EQ(d.status, p::header_status::ok);
  EXPECT_EQ(d.flips, 0);
  EXPECT_EQ(g.nd, 4096u);

  // One weak wrong sign: corrected, the fields those sent.
  for (int j = 0; j < p::HEADER_BITS; ++j) {
    auto e = s;
    e[std::size_t(j)] = -0.1f * s[std::size_t(j)];
    g = {};
    d = p::decide_header(e.data(), g);
    ASSERT_EQ(d.status, p::header_status::ok) << "bit " << j;
    EXPECT_EQ(d.flips, 1);
    EXPECT_EQ(g.mod_field, f.mod_field);
    EXPECT_EQ(g.nd, f.nd);
    EXPECT_EQ(g.seq, f.seq);
  }
  // Two weak wrong signs, the two weakest bits: corrected together.
  {
    auto e = s;
    e[5] = -0.2f * s[5];
    e[40] = -0.05f * s[40];
    d = p::decide_header(e.data(), g);
    EXPECT_EQ(d.status, p::header_status::ok);
    EXPECT_EQ(d.flips, 2);
    EXPECT_EQ(g.nd, f.nd);
  }
  // A wrong sign as strong as the rest (every repetition inverted): rejected.
  {
    auto e = s;
    e[7] = -s[7];
    EXPECT_EQ(p::decide_header(e.data(), g).status, p::header_status::crc);
  }
  // A wrong sign above the limit (HEADER_FLIP_LIMIT of the mean magnitude): rejected.
  {
    auto e = s;
    e[7] = -0.6f * s[7];
    EXPECT_EQ(p::decide_header(e.data(), g).status, p::header_status::crc);
  }
  // A weak wrong sign with two weaker right ones: not among the bits tried, rejected.
  {
    auto e = s;
    e[7] = -0.2f * s[7];
    e[8] = 0.1f * s[8];
    e[9] = 0.05f * s[9];
    EXPECT_EQ(p::decide_header(e.data(), g).status, p::header_status::crc);
  }
  // A flip that passes the CRC into a reserved mode is not taken: the only header
  // within one weak flip is reserved, so the decision is the signs' CRC failure.
  {
    auto r = clean_soft({5, 4096u, 17}); // mode 5 is reserved
    r[30] = -0.1f * r[30];
    d = p::decide_header(r.data(), g);
    EXPECT_EQ(d.status, p::header_status::crc);
    EXPECT_EQ(d.flips, 0);
  }
}

TEST(profile, soft_header_decision_against_the_binomial_law)
{
  // BPSK soft values at a per-bit error probability q: the signs alone fail when any of
  // the 48 bits is wrong, 1 - (1 - q)^48; the Chase search fails essentially only with two
  // or more errors, about C(48, 2) q^2. Every header it accepts is the one sent.
  const double q = 2e-3;
  const double sigma = 1.0 / 2.878161739; // Q(2.878) = 2e-3
  std::mt19937_64 rng(12345);
  std::normal_distribution<float> noise(0.0f, float(sigma));
  std::uniform_int_distribution<uint32_t> nd(1, 1048575u);
  const int n = 40000;
  int sign_failures = 0, chase_failures = 0, wrong = 0;
  for (int i = 0; i < n; ++i) {
    const p::header_fields f{uint8_t(i % 5), nd(rng), uint8_t(i)};
    auto s = clean_soft(f);
    std::array<uint8_t, p::HEADER_BITS> h{};
    for (std::size_t j = 0; j < s.size(); ++j) {
      s[j] += noise(rng);
      h[j] = s[j] < 0.0f ? 1 : 0;
    }
    p::header_fields g;
    sign_failures += p::parse_header(h, g) == p::header_status::ok ? 0 : 1;
    const auto d = p::decide_header(s.data(), g);
    if (d.status != p::header_status::ok) {
      ++chase_failures;
    } else if (g.mod_field != f.mod_field || g.nd != f.nd || g.seq != f.seq) {
      ++wrong;
    }
  }
  const double sign_law = 1.0 - std::pow(1.0 - q, 48);
  const double two_or_more = 1.0 - std::pow(1.0 - q, 48) - 48 * q * std::pow(1.0 - q, 47);
  EXPECT_NEAR(sign_failures / double(n), sign_law, 5 * std::sqrt(sign_law / n));
  EXPECT_LE(chase_failures / double(n), 1.5 * two_or_more + 5 * std::sqrt(two_or_more / n));
  EXPECT_EQ(wrong, 0);
}

TEST(profile, constellations_equal_liquid_and_unit_energy)
{
  for (auto [scheme, order] : {std::pair{LIQUID_MODEM_QPSK, 4u}, std::pair{LIQUID_MODEM_QAM16, 16u}}) {
    modemcf m = modemcf_create(scheme);
    double energy = 0.0;
    for (unsigned i = 0; i < order; ++i) {
      std::complex<float> y;
      modemcf_modulate(m, i, &y);
      const auto pt = order == 4 ? p::qpsk_point(i) : p::qam16_point(i);
      EXPECT_NEAR(pt[0], y.real(), 1e-6f) << "index " << i;
      EXPECT_NEAR(pt[1], y.imag(), 1e-6f) << "index " << i;
      energy += double(pt[0]) * pt[0] + double(pt[1]) * pt[1];
    }
    EXPECT_NEAR(energy / order, 1.0, 1e-6);
    modemcf_destroy(m);
  }
}

TEST(profile, qam16_is_gray)
{
  // Nearest neighbours (distance 2c) differ in exactly one bit.
  for (unsigned i = 0; i < 16; ++i) {
    for (unsigned j = 0; j < 16; ++j) {
      const auto a = p::qam16_point(i), b = p::qam16_point(j);
      const float d = std::hypot(a[0] - b[0], a[1] - b[1]);
      if (std::abs(d - 2 * p::QAM16_C) < 1e-4f) {
        EXPECT_EQ(std::bitset<4>(i ^ j).count(), 1u) << i << " vs " << j;
      }
    }
  }
}
