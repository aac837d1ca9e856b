// The channel smoother against its definition: a projection (idempotent) that
// keeps channels whose impulse response lies in its tap window and keeps only
// taps/NOF_USED of white estimation noise; per frame, it keeps as many of its taps
// as the channel needs, so that the estimate's error is less than with all of them.
#include <whd/baseband/channel_taps.hpp>
#include <whd/baseband/tone_math.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;

std::array<cf32, p::NOF_USED> channel_of(const std::vector<std::pair<int, cf32>>& taps)
{
  std::array<cf32, p::NOF_USED> h{};
  for (int u = 0; u < p::NOF_USED; ++u) {
    std::complex<double> acc{};
    for (auto [delay, g] : taps) {
      const double ph = -2.0 * std::numbers::pi * p::USED_K[std::size_t(u)] * delay / p::N;
      acc += std::complex<double>(g) * std::complex<double>(std::cos(ph), std::sin(ph));
    }
    h[std::size_t(u)] = cf32(acc);
  }
  return h;
}

TEST(channel_smoother, keeps_channels_inside_its_window)
{
  const bb::channel_smoother s(-8, 48);
  const auto h = channel_of({{-8, {0.2f, 0.1f}}, {0, {1.0f, -0.5f}}, {7, {0.3f, 0.3f}}, {39, {-0.1f, 0.05f}}});
  auto g = h;
  s.apply(g);
  double err = 0.0, ref = 0.0;
  for (std::size_t u = 0; u < h.size(); ++u) {
    err += std::norm(g[u] - h[u]);
    ref += std::norm(h[u]);
  }
  EXPECT_LT(std::sqrt(err / ref), 1e-6);
}

TEST(channel_smoother, is_a_projection_that_removes_most_noise)
{
  constexpr unsigned SEED = 5;
  std::mt19937 rng(SEED);
  std::normal_distribution<float> n(0.0f, 1.0f);
  const bb::channel_smoother s(-16, 48);
  double kept = 0.0, total = 0.0;
  constexpr int TRIALS = 400;
  for (int t = 0; t < TRIALS; ++t) {
    std::array<cf32, p::NOF_USED> w{};
    for (auto& v : w) {
      v = {n(rng), n(rng)};
      total += std::norm(v);
    }
    auto once = w;
    s.apply(once);
    auto twice = once;
    s.apply(twice);
    for (std::size_t u = 0; u < w.size(); ++u) {
      kept += std::norm(once[u]);
      EXPECT_NEAR(std::abs(twice[u] - once[u]), 0.0f, 1e-5f) << "not idempotent at tone " << u;
    }
  }
  // Expected fraction taps / NOF_USED = 48/352; 400 trials make the estimate good to ~1 %.
  EXPECT_NEAR(kept / total, 48.0 / p::NOF_USED, 0.01) << "seed " << SEED;
}

// apply() runs its two products as loops over split real and imaginary parts
// (vectorised, AVX-512 and AVX2 clones): every output bit must be that of the
// plain product over complex<double>, Q^H h then Q a, each sum in order, as the
// receiver first computed it and the GPU locator still does.
TEST(channel_smoother, equals_the_plain_complex_projection_bit_for_bit)
{
  constexpr unsigned SEED = 11;
  std::mt19937 rng(SEED);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::uniform_real_distribution<float> scale(-20.0f, 20.0f);
  for (const auto& [first, taps] : {std::pair{-8, 48}, std::pair{-16, 48}, std::pair{0, 1}, std::pair{-3, 13}, std::pair{-100, 176}}) {
    const bb::channel_smoother s(first, taps);
    const auto& q = s.basis();
    const auto T = std::size_t(taps);
    for (int t = 0; t < 200; ++t) {
      const float g = std::exp2(scale(rng));
      std::array<cf32, p::NOF_USED> h{};
      for (auto& v : h) {
        v = {n(rng) * g, n(rng) * g};
      }
      std::array<cf32, p::NOF_USED> want{};
      std::vector<std::complex<double>> a(T);
      for (std::size_t u = 0; u < h.size(); ++u) {
        for (std::size_t l = 0; l < T; ++l) {
          a[l] += std::conj(q[u * T + l]) * std::complex<double>(h[u]);
        }
      }
      for (std::size_t u = 0; u < h.size(); ++u) {
        std::complex<double> acc{};
        for (std::size_t l = 0; l < T; ++l) {
          acc += q[u * T + l] * a[l];
        }
        want[u] = cf32(acc);
      }
      s.apply(h);
      for (std::size_t u = 0; u < h.size(); ++u) {
        ASSERT_EQ(std::bit_cast<uint64_t>(h[u]), std::bit_cast<uint64_t>(want[u]))
            << "taps " << first << "+" << taps << ", trial " << t << ", tone " << u << ", seed " << SEED;
      }
    }
  }
}

// The channel with unit power per tone (paths at window index `at`, window -16..31),
// its two-symbol LS estimate with complex noise of variance `v` per tone, and what
// apply(h, diff) makes of it: the mean squared error per tone over `trials` frames,
// with the keep-all projection's beside it and how often each K was chosen.
struct adaptive_trial {
  double mse_adaptive = 0.0, mse_all = 0.0;
  std::array<int, 64> chosen{};
};

adaptive_trial run_adaptive(const std::vector<std::pair<int, cf32>>& paths, double v, int trials, unsigned seed)
{
  const bb::channel_smoother s(-16, 48, 24);
  const auto h = channel_of(paths);
  double power = 0.0;
  for (const auto& x : h) {
    power += std::norm(x);
  }
  const double g = std::sqrt(p::NOF_USED / power);
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, std::sqrt(v / 2.0));
  adaptive_trial r;
  for (int t = 0; t < trials; ++t) {
    std::array<cf32, p::NOF_USED> est{};
    for (std::size_t u = 0; u < est.size(); ++u) {
      est[u] = cf32(std::complex<double>(h[u]) * g + std::complex<double>(n(rng), n(rng)));
    }
    auto all = est;
    s.apply(all);
    // diff = sum |Y0 - Y1|^2: E = 2 s2 per tone, the LS estimate's noise is s2 / 2 = v.
    const int k = s.apply(est, 4.0 * v * p::NOF_USED);
    ++r.chosen[std::size_t(k)];
    for (std::size_t u = 0; u < est.size(); ++u) {
      const std::complex<double> want = std::complex<double>(h[u]) * g;
      r.mse_adaptive += std::norm(std::complex<double>(est[u]) - want) / (double(trials) * p::NOF_USED);
      r.mse_all += std::norm(std::complex<double>(all[u]) - want) / (double(trials) * p::NOF_USED);
    }
  }
  return r;
}

TEST(channel_smoother, a_flat_channel_keeps_the_fewest_taps_and_halves_the_error)
{
  constexpr unsigned SEED = 21;
  constexpr int TRIALS = 400;
  // Es/N0 near 3 dB per tone: where MCS 1 decodes.
  const auto r = run_adaptive({{0, {0.8f, -0.6f}}}, 0.5, TRIALS, SEED);
  // Expected error: K v / NOF_USED per tone; all taps: 48 v / NOF_USED.
  EXPECT_NEAR(r.mse_all, 48.0 * 0.5 / p::NOF_USED, 0.05 * 48.0 * 0.5 / p::NOF_USED) << "seed " << SEED;
  EXPECT_GE(r.chosen[24], TRIALS * 9 / 10) << "seed " << SEED;
  EXPECT_LT(r.mse_adaptive, 0.6 * r.mse_all) << "seed " << SEED;
}

TEST(channel_smoother, a_late_path_keeps_every_tap_and_the_error_of_all)
{
  constexpr unsigned SEED = 22;
  constexpr int TRIALS = 200;
  // A path 28 taps after the first (window index 44), 6 dB down, at Es/N0 near 10 dB.
  const auto r = run_adaptive({{0, {1.0f, 0.0f}}, {28, {0.0f, 0.5f}}}, 0.1, TRIALS, SEED);
  EXPECT_EQ(r.chosen[48], TRIALS) << "seed " << SEED;
  EXPECT_EQ(r.mse_adaptive, r.mse_all) << "seed " << SEED;
}

TEST(channel_smoother, a_path_past_the_shortest_window_keeps_the_taps_that_reach_it)
{
  constexpr unsigned SEED = 23;
  constexpr int TRIALS = 200;
  // A path 12 taps after the first (window index 28): in the first 32 taps, not the first 24.
  const auto r = run_adaptive({{0, {1.0f, 0.0f}}, {12, {0.3f, 0.3f}}}, 0.1, TRIALS, SEED);
  EXPECT_EQ(r.chosen[24], 0) << "seed " << SEED;
  EXPECT_GE(r.chosen[32], TRIALS * 9 / 10) << "seed " << SEED;
  EXPECT_LT(r.mse_adaptive, 0.8 * r.mse_all) << "seed " << SEED;
}

TEST(chosen_taps, takes_the_least_estimated_error_and_ties_keep_more)
{
  // Coefficient noise v = 1 (diff = 4 NOF_USED); candidates 48, 40, 32, 24.
  const double diff = 4.0 * p::NOF_USED;
  std::array<double, 48> a{};
  // All-noise tail of exactly v per coefficient: costs 96 (48), 80 + 8, 64 + 16, 48 + 24.
  a.fill(1.0);
  EXPECT_EQ(bb::chosen_taps([&](int l) { return a[std::size_t(l)]; }, 48, 24, diff), 24);
  // 17 units in taps 24..31: cost(24) = 48 + 17 + 16 = 81 > cost(32) = 64 + 16 = 80.
  for (int l = 24; l < 32; ++l) {
    a[std::size_t(l)] = l == 24 ? 10.0 : 1.0;
  }
  EXPECT_EQ(bb::chosen_taps([&](int l) { return a[std::size_t(l)]; }, 48, 24, diff), 32);
  // 16 units: cost(24) = 80 = cost(32): the tie keeps 32.
  a[24] = 9.0;
  EXPECT_EQ(bb::chosen_taps([&](int l) { return a[std::size_t(l)]; }, 48, 24, diff), 32);
  a[24] = 8.0;
  EXPECT_EQ(bb::chosen_taps([&](int l) { return a[std::size_t(l)]; }, 48, 24, diff), 24);
  // min_taps at or past the window keeps every tap.
  EXPECT_EQ(bb::chosen_taps([&](int l) { return a[std::size_t(l)]; }, 48, 48, diff), 48);
  EXPECT_EQ(bb::chosen_taps([&](int l) { return a[std::size_t(l)]; }, 48, 60, diff), 48);
}


/// Mean square phase error (rad^2) of the pilots' derotation and of a data symbol's
/// (data_derotation) over `trials` QPSK or 16-QAM symbols at Es/N0 `esn0_dB` a tone,
/// through a flat channel of random gain that the receiver knows, turned by a random
/// phase in +-0.3 rad.
std::pair<double, double> phase_errors(p::modulation mod, double esn0_dB, int trials)
{
  std::mt19937_64 rng(99);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::uniform_real_distribution<double> phase(-0.3, 0.3);
  std::uniform_int_distribution<unsigned> index(0, mod == p::modulation::qpsk ? 3u : 15u);
  const double n0 = std::pow(10.0, -esn0_dB / 10.0);
  const auto sd = float(std::sqrt(n0 / 2.0));
  double pilot = 0.0, data = 0.0;
  for (int i = 0; i < trials; ++i) {
    const long long m = 3 + i % 100;
    const cf32 g = std::polar(float(0.5 + 0.1 * (i % 7)), float(i));
    bb::channel_estimate ch;
    ch.h.fill(g);
    ch.inv.fill(1.0f / g);
    ch.llr_inv_noise = float(std::norm(g) > 0 ? 1.0 / n0 : 0.0); // |H|^2 goes in through inv
    const double theta = phase(rng);
    const cf32 turn = g * std::polar(1.0f, float(theta));
    std::array<cf32, p::N> y{};
    for (int d = 0; d < p::NOF_DATA; ++d) {
      const auto pt = mod == p::modulation::qpsk ? p::qpsk_point(index(rng)) : p::qam16_point(index(rng));
      y[std::size_t(p::DATA_BIN[std::size_t(d)])] = cf32(pt[0], pt[1]) * turn + std::abs(g) * cf32(sd * gauss(rng), sd * gauss(rng));
    }
    for (int k = 0; k < p::NOF_PILOTS; ++k) {
      y[std::size_t(p::PILOT_BIN[std::size_t(k)])] =
          p::pilot_value(m) * turn + std::abs(g) * cf32(sd * gauss(rng), sd * gauss(rng));
    }
    const cf32 e = std::polar(1.0f, float(theta));
    pilot += std::pow(std::arg(bb::pilot_derotation(y.data(), ch, m) * e), 2);
    data += std::pow(std::arg(bb::data_derotation(y.data(), ch, m, mod) * e), 2);
  }
  return {pilot / trials, data / trials};
}

TEST(data_derotation, refines_a_qpsk_symbols_phase_by_its_data)
{
  // The pilots alone: variance 1 / (2 x 16 x Es/N0). Two Newton steps of the symbol's
  // likelihood with the data unknown take it down about 3.5x at 1.5 dB (MCS 0's
  // operating point, a numerical model of the same estimator) and far further at
  // higher SNR, where the data are nearly known (the bound with known data is
  // 1 / (2 x 352 x Es/N0)).
  for (const double esn0 : {1.5, 6.0, 20.0}) {
    const auto [pilot, data] = phase_errors(p::modulation::qpsk, esn0, 4000);
    const double pilots_law = 1.0 / (2.0 * 16.0 * std::pow(10.0, esn0 / 10.0));
    const double known_data = 1.0 / (2.0 * 352.0 * std::pow(10.0, esn0 / 10.0));
    EXPECT_NEAR(pilot, pilots_law, 0.1 * pilots_law) << esn0 << " dB";
    EXPECT_LT(data, pilot / (esn0 < 3.0 ? 2.5 : 8.0)) << esn0 << " dB";
    EXPECT_GT(data, 0.9 * known_data) << esn0 << " dB";
  }
}

TEST(data_derotation, leaves_16qam_to_the_pilots)
{
  const auto [pilot, data] = phase_errors(p::modulation::qam16, 10.0, 200);
  EXPECT_EQ(pilot, data);
}


/// Mean square error of the channel estimate over the used tones, with and without the
/// header as a third training symbol (no projection: plain least squares), the header
/// window turned by `phase` against the preamble's, at per-tone SNR `snr_dB`.
std::pair<double, double> header_channel_errors(double snr_dB, float phase, int trials)
{
  std::mt19937_64 rng(5);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  const auto sd = float(std::sqrt(std::pow(10.0, -snr_dB / 10.0) / 2.0));
  const auto H = channel_of({{0, {0.8f, 0.3f}}, {3, {-0.2f, 0.25f}}});
  const p::header_fields f{4, 777u, 9};
  const auto x = bb::header_tone_values(f);
  double two = 0.0, three = 0.0;
  for (int i = 0; i < trials; ++i) {
    std::array<cf32, p::N> y0{}, y1{}, y2{};
    for (int u = 0; u < p::NOF_USED; ++u) {
      const auto b = std::size_t(p::USED_BIN[std::size_t(u)]);
      const cf32 h = H[std::size_t(u)];
      const auto noise = [&] { return cf32(sd * gauss(rng), sd * gauss(rng)); };
      y0[b] = h * p::preamble_value(u) + noise();
      y1[b] = h * p::preamble_value(u) + noise();
      y2[b] = h * x[std::size_t(u)] * std::polar(1.0f, phase) + noise();
    }
    auto ch = bb::estimate_channel(y0.data(), y1.data());
    for (int u = 0; u < p::NOF_USED; ++u) {
      two += std::norm(ch.h[std::size_t(u)] - H[std::size_t(u)]);
    }
    bb::add_header_to_channel(ch, y0.data(), y1.data(), y2.data(), f);
    EXPECT_EQ(ch.training, 3);
    for (int u = 0; u < p::NOF_USED; ++u) {
      three += std::norm(ch.h[std::size_t(u)] - H[std::size_t(u)]);
    }
  }
  return {two / (trials * p::NOF_USED), three / (trials * p::NOF_USED)};
}

TEST(header_channel, a_third_training_symbol_takes_a_third_of_the_error_away)
{
  // Two symbols leave s2 / 2 a tone, three s2 / 3; the header window's own phase is taken
  // out first, so a turned window does not bias the estimate.
  for (const float phase : {0.0f, 0.7f, -2.5f}) {
    const auto [two, three] = header_channel_errors(10.0, phase, 200);
    const double s2 = std::pow(10.0, -10.0 / 10.0);
    EXPECT_NEAR(two, s2 / 2.0, 0.05 * s2 / 2.0) << phase;
    EXPECT_NEAR(three, s2 / 3.0, 0.05 * s2 / 3.0) << phase;
  }
}

TEST(header_channel, a_noiseless_header_gives_the_channel)
{
  const auto [two, three] = header_channel_errors(200.0, 1.1f, 2);
  EXPECT_LT(two, 1e-12);
  EXPECT_LT(three, 1e-12);
}

} // namespace
