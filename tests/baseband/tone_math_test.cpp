// The channel smoother against its definition: a projection (idempotent) that
// keeps channels whose impulse response lies in its tap window and keeps only
// taps/NOF_USED of white estimation noise.
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

} // namespace
