// Impairments judged against their definitions: unit-energy taps with the stated
// power profile, a streaming channel equal to a one-shot convolution, a CFO whose
// phase follows 2 pi f n / fs to the sample far into a capture, noise of the stated
// power, and SNR measured as shared/vectors/README.md defines it.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/impairments.hpp>

#include "tx_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <iostream>
#include <numbers>
#include <numeric>
#include <random>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;

TEST(impairments, taps_have_unit_energy_and_follow_the_power_profile)
{
  for (int n : {1, 2, 4, 16, p::G}) {
    for (uint64_t seed : {1ull, 2ull, 99ull}) {
      const auto h = bb::multipath_taps(n, 3.0, seed);
      ASSERT_EQ(h.size(), static_cast<std::size_t>(n));
      double e = 0.0;
      for (auto t : h) {
        e += std::norm(std::complex<double>(t));
      }
      EXPECT_NEAR(e, 1.0, 1e-6) << n << " taps, seed " << seed;
      EXPECT_EQ(h, bb::multipath_taps(n, 3.0, seed)) << "reproducible from the seed";
    }
  }
  EXPECT_EQ(bb::multipath_taps(1, 3.0, 5), std::vector<cf32>{cf32(1.0f, 0.0f)});
  EXPECT_NE(bb::multipath_taps(4, 3.0, 1), bb::multipath_taps(4, 3.0, 2));

  // The power profile: |h_l|^2 / |h_0|^2 is free of the common normalisation and is
  // (P_l / P_0) times a ratio of two independent unit exponentials, whose median is
  // 1. So over many draws its median is 10^(-3 l / 10); 4001 draws leave about 3 %
  // of sampling error.
  constexpr int DRAWS = 4001;
  std::vector<std::vector<double>> ratio(4);
  for (int s = 0; s < DRAWS; ++s) {
    const auto h = bb::multipath_taps(4, 3.0, 1000 + static_cast<uint64_t>(s));
    for (std::size_t l = 1; l < 4; ++l) {
      ratio[l].push_back(std::norm(std::complex<double>(h[l])) / std::norm(std::complex<double>(h[0])));
    }
  }
  for (std::size_t l = 1; l < 4; ++l) {
    auto& r = ratio[l];
    std::nth_element(r.begin(), r.begin() + DRAWS / 2, r.end());
    const double expected = std::pow(10.0, -0.3 * static_cast<double>(l));
    EXPECT_NEAR(r[DRAWS / 2], expected, 0.12 * expected) << "tap " << l;
  }
  EXPECT_THROW(bb::multipath_taps(0, 3.0, 1), std::invalid_argument);
  EXPECT_THROW(bb::multipath_taps(p::G + 1, 3.0, 1), std::invalid_argument);
}

TEST(impairments, streaming_channel_equals_one_shot_convolution)
{
  const auto h = bb::multipath_taps(7, 2.0, 3);
  std::mt19937_64 rng(4);
  std::normal_distribution<float> g;
  std::vector<cf32> x(5000);
  for (auto& v : x) {
    v = {g(rng), g(rng)};
  }
  std::vector<std::complex<double>> ref(x.size());
  for (std::size_t n = 0; n < x.size(); ++n) {
    for (std::size_t l = 0; l < h.size() && l <= n; ++l) {
      ref[n] += std::complex<double>(h[l]) * std::complex<double>(x[n - l]);
    }
  }
  bb::multipath_channel ch(h);
  std::vector<cf32> y = x;
  // Blocks of awkward sizes, some shorter than the channel.
  std::size_t pos = 0;
  for (std::size_t len : {1u, 3u, 6u, 1000u, 2u, 3988u}) {
    ch.run(std::span<cf32>(y).subspan(pos, len));
    pos += len;
  }
  ASSERT_EQ(pos, x.size());
  double worst = 0.0;
  for (std::size_t n = 0; n < x.size(); ++n) {
    worst = std::max(worst, std::abs(std::complex<double>(y[n]) - ref[n]));
  }
  EXPECT_LT(worst, 1e-5);
}

TEST(impairments, used_tone_power_gain_of_two_equal_taps)
{
  EXPECT_NEAR(bb::used_tone_power_gain(std::vector<cf32>{cf32(1.0f, 0.0f)}), 1.0, 1e-12);
  // h = (1, 1)/sqrt(2): |H(k)|^2 = 1 + cos(2 pi k / 512); averaged over |k| in 2..177.
  const float a = static_cast<float>(1.0 / std::sqrt(2.0));
  double expected = 0.0;
  for (int k = 2; k <= 177; ++k) {
    expected += 2.0 * (1.0 + std::cos(2.0 * std::numbers::pi * k / 512.0));
  }
  expected /= 352.0;
  EXPECT_NEAR(bb::used_tone_power_gain(std::vector<cf32>{cf32(a, 0.0f), cf32(a, 0.0f)}), expected, 1e-6);
}

TEST(impairments, cfo_phase_follows_the_sample_index_far_into_a_capture)
{
  const double cfo = 700312.5, fs = p::SAMPLE_RATE_SPS;
  const bb::carrier_offset rot(cfo, fs);
  // Three billion samples in: the phase must still be exact, and continuous
  // across a block boundary.
  const uint64_t first = 3'000'000'000ull;
  std::vector<cf32> a(40000, cf32(1.0f, 0.0f));
  rot.run(first, std::span<cf32>(a).subspan(0, 12345));
  rot.run(first + 12345, std::span<cf32>(a).subspan(12345));
  double worst = 0.0;
  for (std::size_t n = 0; n < a.size(); ++n) {
    // Exact: cfo/fs is 700312.5 / 2.538e9; reduce cycles with integer arithmetic.
    const long double cycles = static_cast<long double>(cfo) * static_cast<long double>(first + n) / fs;
    const long double frac = cycles - std::floor(cycles);
    const double expected = static_cast<double>(2 * std::numbers::pi_v<long double> * frac);
    double d = std::arg(std::complex<double>(a[n])) - expected;
    d = std::remainder(d, 2.0 * std::numbers::pi);
    worst = std::max(worst, std::abs(d));
  }
  EXPECT_LT(worst, 1e-6) << "phase error [rad]";
}

TEST(impairments, awgn_has_the_stated_power_and_independent_components)
{
  bb::awgn w(0.25, 12345);
  std::vector<cf32> x(1'000'000);
  w.add(x);
  double pi = 0.0, pq = 0.0, cross = 0.0, mi = 0.0;
  for (auto v : x) {
    pi += double(v.real()) * v.real();
    pq += double(v.imag()) * v.imag();
    cross += double(v.real()) * v.imag();
    mi += v.real();
  }
  const double n = static_cast<double>(x.size());
  EXPECT_NEAR((pi + pq) / n, 0.25, 0.25 * 0.005);
  EXPECT_NEAR(pi / n, 0.125, 0.125 * 0.01);
  EXPECT_NEAR(cross / n, 0.0, 0.125 * 0.01);
  EXPECT_NEAR(mi / n, 0.0, 0.002);
  // Reproducible from the seed.
  bb::awgn w2(0.25, 12345);
  std::vector<cf32> y(10);
  w2.add(y);
  EXPECT_TRUE(std::equal(y.begin(), y.end(), x.begin()));
}

/// A capture generated twice, without and with noise (the noise has its own
/// seed, so the signal is the same): signal power over the frames against noise
/// power over the whole capture is the SNR of the vectors' definition.
double measured_snr_dB(bb::capture_config cfg, double snr_dB)
{
  bb::memory_capture clean, noisy;
  cfg.impairments.snr_dB.reset();
  bb::generate_capture(cfg, clean);
  cfg.impairments.snr_dB = snr_dB;
  bb::generate_capture(cfg, noisy);
  const auto& s = clean.samples();
  const auto& y = noisy.samples();
  EXPECT_EQ(s.size(), y.size());
  double ps = 0.0, pw = 0.0;
  uint64_t frame_samples = 0;
  for (const auto& f : clean.frames()) {
    for (uint64_t n = f.start; n < f.start + f.samples_present; ++n) {
      ps += std::norm(std::complex<double>(s[n]));
    }
    frame_samples += f.samples_present;
  }
  for (std::size_t n = 0; n < s.size(); ++n) {
    pw += std::norm(std::complex<double>(y[n]) - std::complex<double>(s[n]));
  }
  return 10.0 * std::log10((ps / static_cast<double>(frame_samples)) / (pw / static_cast<double>(s.size())));
}

TEST(impairments, measured_snr_matches_the_request)
{
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.nds = {20};
  cfg.nof_frames = 40;
  cfg.seed = 8;
  cfg.impairments.nof_taps = 4;
  cfg.impairments.gain = 0.3;
  cfg.impairments.random_phase = true;
  cfg.impairments.cfo_Hz = 700e3;
  std::cout << "seed 8\n";
  for (double snr : {5.0, 18.0, 28.0}) {
    const double got = measured_snr_dB(cfg, snr);
    std::cout << "requested " << snr << " dB, measured " << got << " dB\n";
    EXPECT_NEAR(got, snr, 0.2);
  }
  // Without multipath too, and long frames.
  cfg.impairments.nof_taps = 1;
  cfg.nds = {300};
  cfg.nof_frames = 4;
  EXPECT_NEAR(measured_snr_dB(cfg, 12.0), 12.0, 0.2);
}

TEST(impairments, generated_cfo_is_a_phase_slope_over_the_capture)
{
  bb::capture_config cfg;
  cfg.nof_frames = 3;
  cfg.nds = {4};
  cfg.impairments.nof_taps = 3;
  bb::memory_capture a, b;
  bb::generate_capture(cfg, a);
  const double cfo = -1.25e6;
  cfg.impairments.cfo_Hz = cfo;
  bb::generate_capture(cfg, b);
  // Least-squares slope of the unwrapped phase of conj(a) b over frame samples.
  double sn = 0, sp = 0, snn = 0, snp = 0, count = 0, prev = 0, unwrap = 0;
  bool first = true;
  for (const auto& f : a.frames()) {
    for (uint64_t n = f.start; n < f.start + f.samples_present; ++n) {
      const auto z = std::conj(std::complex<double>(a.samples()[n])) * std::complex<double>(b.samples()[n]);
      if (std::abs(z) < 1e-6) {
        continue;
      }
      const double ph = std::arg(z);
      if (!first) {
        unwrap += std::remainder(ph - prev, 2 * std::numbers::pi);
      } else {
        unwrap = ph;
        first = false;
      }
      prev = ph;
      const double x = static_cast<double>(n);
      sn += x;
      sp += unwrap;
      snn += x * x;
      snp += x * unwrap;
      count += 1;
    }
  }
  const double slope = (count * snp - sn * sp) / (count * snn - sn * sn);
  const double intercept = (sp - slope * sn) / count;
  const double expected = 2 * std::numbers::pi * cfo / p::SAMPLE_RATE_SPS;
  EXPECT_NEAR(slope, expected, std::abs(expected) * 1e-6) << "rad/sample";
  // Sample 0 of the capture has phase 0 (continuous from the capture's start).
  EXPECT_NEAR(std::remainder(intercept, 2 * std::numbers::pi), 0.0, 1e-4);
}

TEST(impairments, gain_and_phase_scale_the_clean_signal)
{
  bb::capture_config cfg;
  cfg.nof_frames = 1;
  cfg.nds = {2};
  bb::memory_capture a, b, c;
  bb::generate_capture(cfg, a);
  cfg.impairments.gain = 0.3;
  cfg.impairments.phase_rad = 1.0;
  bb::generate_capture(cfg, b);
  const std::complex<double> g = std::polar(0.3, 1.0);
  double worst = 0.0;
  for (std::size_t n = 0; n < a.samples().size(); ++n) {
    worst = std::max(worst, std::abs(std::complex<double>(b.samples()[n]) - g * std::complex<double>(a.samples()[n])));
  }
  EXPECT_LT(worst, 1e-6);
  // A random phase is drawn from the seed: the same seed, the same phase.
  cfg.impairments.random_phase = true;
  cfg.seed = 5;
  const auto p1 = bb::plan_capture(cfg).complex_gain;
  EXPECT_EQ(p1, bb::plan_capture(cfg).complex_gain);
  cfg.seed = 6;
  EXPECT_NE(p1, bb::plan_capture(cfg).complex_gain);
  EXPECT_NEAR(std::abs(p1), 0.3, 1e-12);
}

} // namespace
