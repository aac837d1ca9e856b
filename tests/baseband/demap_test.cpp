// The demapper decides as liquid-dsp's modem does, on random points around
// every constellation point (both ends of each decision boundary).
#include <whd/baseband/demap.hpp>

#include <gtest/gtest.h>

#include <complex>
#include <liquid/liquid.h>

#include <random>

namespace {

TEST(demap, equals_liquid_modem_decisions)
{
  constexpr uint64_t SEED = 20261122;
  std::mt19937_64 rng(SEED);
  std::normal_distribution<float> noise(0.0f, 0.25f);
  for (auto [scheme, order] : {std::pair{LIQUID_MODEM_QPSK, 4u}, std::pair{LIQUID_MODEM_QAM16, 16u}}) {
    modemcf m = modemcf_create(scheme);
    int mismatches = 0;
    for (int trial = 0; trial < 200000; ++trial) {
      std::complex<float> x;
      modemcf_modulate(m, unsigned(trial) % order, &x);
      x += std::complex<float>(noise(rng), noise(rng));
      unsigned ref = 0;
      modemcf_demodulate(m, x, &ref);
      const unsigned ours = order == 4 ? whd::baseband::demap_qpsk(x.real(), x.imag())
                                       : whd::baseband::demap_qam16(x.real(), x.imag());
      mismatches += ours != ref;
    }
    EXPECT_EQ(mismatches, 0) << "order " << order << ", seed " << SEED;
    modemcf_destroy(m);
  }
}

TEST(demap, noiseless_points_map_back_to_their_index)
{
  for (unsigned i = 0; i < 4; ++i) {
    const auto pt = whd::profile::qpsk_point(i);
    EXPECT_EQ(whd::baseband::demap_qpsk(pt[0], pt[1]), i);
  }
  for (unsigned i = 0; i < 16; ++i) {
    const auto pt = whd::profile::qam16_point(i);
    EXPECT_EQ(whd::baseband::demap_qam16(pt[0], pt[1]), i);
  }
}

} // namespace
