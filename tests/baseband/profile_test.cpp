#include <whd/baseband/profile.hpp>

#include <gtest/gtest.h>

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
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
