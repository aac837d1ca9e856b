// demap_symbol (tone_math.hpp) against its per-tone form: the loop it replaced, kept
// here verbatim (equalise one tone, decide it, weight and soft-decide it with
// demap.hpp's functions), compiled as tone_math.cpp was (-ffp-contract=off,
// -fcx-limited-range; tests/baseband/CMakeLists.txt). The bytes and every soft
// value's bit pattern must be equal, for both modulations, NaN payloads included,
// but where a tone's inputs hold NaNs or infinities: there two NaNs can meet in one
// product, and which comes out is the compiler's operand order (either form's; the
// GPU gives its canonical NaN), so both must be NaN (such values are counted):
// - a dense sweep: every 256th float bit pattern (and every pattern within 2^16 ulps
//   of 0, +-c, +-2c, +-3c, +-a) as the tones' I and Q through a unit channel, so
//   that the closed forms see the whole float line, infinities and NaNs included;
// - random symbols whose bins, inverse channel and derotation are drawn from raw
//   bit patterns, special values and normal values near the constellation, and
//   whose noise weight is any finite value (llr_inv_noise's are in [0, 1e30]), over
//   4 x 10^7 tone values in all.
#include <whd/baseband/tone_math.hpp>

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;

/// The per-tone demapper as tone_math.cpp held it before demap_symbol was batched.
template <bool QAM16>
void reference_demap_of(const cf32* y, const bb::channel_estimate& ch, cf32 derotation, uint8_t* out, float* llr)
{
  constexpr int B = QAM16 ? 4 : 2;
  constexpr int PER_BYTE = 8 / B;
  for (int d = 0; d < p::NOF_DATA; d += PER_BYTE) {
    unsigned byte = 0;
    for (int j = 0; j < PER_BYTE; ++j) {
      const cf32 inv = ch.inv[std::size_t(p::DATA_USED[std::size_t(d + j)])];
      const cf32 z = y[p::DATA_BIN[std::size_t(d + j)]] * inv * derotation;
      byte = (byte << B) | (QAM16 ? bb::demap_qam16(z.real(), z.imag()) : bb::demap_qpsk(z.real(), z.imag()));
      if (llr != nullptr) {
        const float w = bb::llr_weight(inv.real(), inv.imag(), ch.llr_inv_noise);
        QAM16 ? bb::llr_qam16(z.real(), z.imag(), w, llr + (d + j) * B) : bb::llr_qpsk(z.real(), z.imag(), w, llr + (d + j) * B);
      }
    }
    out[d / PER_BYTE] = uint8_t(byte);
  }
}

constexpr std::array MODS = {p::modulation::qpsk, p::modulation::qam16};

/// Tone values compared so far (I and Q of each data tone, per modulation).
uint64_t g_compared = 0;
/// Soft values NaN in both forms, with other NaN payloads (non-finite inputs only).
uint64_t g_nan_payloads = 0;

/// Both forms on one symbol, both modulations, with and without soft values, and
/// with the hard bytes left out (out = nullptr); equal bytes and bit patterns, but
/// for NaNs of other payloads from a tone whose inputs are not all finite (counted).
void expect_same(const std::vector<cf32>& y, const bb::channel_estimate& ch, cf32 rot, const std::string& what)
{
  for (const p::modulation mod : MODS) {
    const bool q16 = mod == p::modulation::qam16;
    const auto nbytes = std::size_t(p::bytes_per_symbol(mod));
    const auto nbits = std::size_t(p::bits_per_symbol(mod));
    std::array<uint8_t, p::MAX_BYTES_PER_SYMBOL> want{}, got{}, got_hard{};
    std::array<float, p::MAX_BITS_PER_SYMBOL> want_llr{}, got_llr{}, soft_only{};
    want_llr.fill(1.0f);
    got_llr.fill(2.0f);
    soft_only.fill(3.0f);
    q16 ? reference_demap_of<true>(y.data(), ch, rot, want.data(), want_llr.data())
        : reference_demap_of<false>(y.data(), ch, rot, want.data(), want_llr.data());
    bb::demap_symbol(y.data(), ch, rot, mod, got.data(), got_llr.data());
    bb::demap_symbol(y.data(), ch, rot, mod, got_hard.data());
    bb::demap_symbol(y.data(), ch, rot, mod, nullptr, soft_only.data());
    ASSERT_EQ(std::memcmp(want.data(), got.data(), nbytes), 0) << what << ", " << (q16 ? "16-QAM" : "QPSK") << " bytes";
    ASSERT_EQ(std::memcmp(want.data(), got_hard.data(), nbytes), 0) << what << ", " << (q16 ? "16-QAM" : "QPSK") << " bytes, no LLRs";
    for (std::size_t k = 0; k < nbits; ++k) {
      const auto w = std::bit_cast<uint32_t>(want_llr[k]), g = std::bit_cast<uint32_t>(got_llr[k]),
                 s = std::bit_cast<uint32_t>(soft_only[k]);
      const std::size_t d = k / std::size_t(p::bits_per_tone(mod));
      const cf32 yd = y[std::size_t(p::DATA_BIN[d])], inv = ch.inv[std::size_t(p::DATA_USED[d])];
      if (w != g || w != s) {
        // Both NaN from a tone with a NaN or infinite input: which of two NaNs meeting
        // in a product comes out (and its sign) is the compiler's operand order.
        const bool finite = std::isfinite(yd.real()) && std::isfinite(yd.imag()) && std::isfinite(inv.real()) &&
                            std::isfinite(inv.imag()) && std::isfinite(rot.real()) && std::isfinite(rot.imag());
        if (!finite && std::isnan(want_llr[k]) && std::isnan(got_llr[k]) && g == s) {
          ++g_nan_payloads;
          continue;
        }
      }
      ASSERT_TRUE(w == g && w == s) << what << ", " << (q16 ? "16-QAM" : "QPSK") << " soft value " << k << " (tone " << d
                                    << "): per tone " << std::hex << w << ", batched " << g << ", without bytes " << s
                                    << "; bits of y " << std::bit_cast<uint32_t>(yd.real()) << " "
                                    << std::bit_cast<uint32_t>(yd.imag()) << ", 1/H " << std::bit_cast<uint32_t>(inv.real())
                                    << " " << std::bit_cast<uint32_t>(inv.imag()) << ", derotation "
                                    << std::bit_cast<uint32_t>(rot.real()) << " " << std::bit_cast<uint32_t>(rot.imag())
                                    << ", weight " << std::bit_cast<uint32_t>(ch.llr_inv_noise);
    }
    g_compared += 2 * p::NOF_DATA;
  }
}

/// A unit channel (inv = 1) with weight `inv_noise`, derotation 1: z is the bin itself
/// up to the products' rounding of 1 and 0.
bb::channel_estimate unit_channel(float inv_noise)
{
  bb::channel_estimate ch;
  ch.inv.fill(cf32(1.0f, 0.0f));
  ch.h.fill(cf32(1.0f, 0.0f));
  ch.llr_inv_noise = inv_noise;
  return ch;
}

/// Runs `next()` (a float per call) through the data bins' I and Q, a symbol at a
/// time, until `count` values have gone.
template <typename NEXT>
void sweep(uint64_t count, NEXT next, const bb::channel_estimate& ch, const std::string& what)
{
  std::vector<cf32> y(p::N, cf32(0.0f, 0.0f));
  for (uint64_t done = 0, sym = 0; done < count; ++sym) {
    for (int d = 0; d < p::NOF_DATA; ++d, done += 2) {
      const float re = next(), im = next();
      y[std::size_t(p::DATA_BIN[std::size_t(d)])] = cf32(re, im);
    }
    expect_same(y, ch, cf32(1.0f, 0.0f), what + ", symbol " + std::to_string(sym));
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
}

TEST(demap_symbol, equals_the_per_tone_form_on_a_sweep_of_the_float_line)
{
  g_compared = 0;
  g_nan_payloads = 0;
  for (const float inv_noise : {1.0f, 0.3712f}) {
    const bb::channel_estimate ch = unit_channel(inv_noise);
    uint64_t bits = 0;
    constexpr uint64_t STEP = 256;
    sweep((uint64_t(1) << 32) / STEP, [&] { return std::bit_cast<float>(uint32_t((bits += STEP) + 17)); }, ch,
          "every 256th pattern, weight " + std::to_string(inv_noise));
    ASSERT_FALSE(HasFatalFailure());
    for (const float centre : {0.0f, p::QAM16_C, 2.0f * p::QAM16_C, 3.0f * p::QAM16_C, p::QPSK_A}) {
      for (const float sign : {1.0f, -1.0f}) {
        constexpr int32_t HALF = 1 << 16;
        int32_t k = -HALF;
        const auto at = std::bit_cast<int32_t>(centre);
        sweep(2 * HALF, [&] {
          const int32_t b = at + k++;
          // Through 0 the patterns go on into the negative side: -0, then -denormals.
          const float v = b >= 0 ? std::bit_cast<float>(b) : -std::bit_cast<float>(-b);
          return sign * v;
        }, ch, "around " + std::to_string(sign * centre));
        ASSERT_FALSE(HasFatalFailure());
      }
    }
  }
  EXPECT_GE(g_compared, uint64_t(6e7)) << "tone values compared";
  EXPECT_EQ(g_nan_payloads, 0u) << "a unit channel: every NaN payload the same";
  std::cout << g_compared << " tone values compared, " << g_nan_payloads
            << " soft values NaN in both forms with other payloads\n";
}

TEST(demap_symbol, equals_the_per_tone_form_on_random_and_special_values)
{
  constexpr uint64_t SEED = 20261128;
  std::mt19937_64 rng(SEED);
  constexpr float INF = std::numeric_limits<float>::infinity();
  const std::array<float, 16> special = {0.0f, -0.0f, INF, -INF, std::numeric_limits<float>::quiet_NaN(),
                                         -std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::signaling_NaN(),
                                         std::bit_cast<float>(0xffa00001u), std::numeric_limits<float>::denorm_min(),
                                         -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                                         -std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                                         2.0f * p::QAM16_C, -2.0f * p::QAM16_C, p::QAM16_C};
  std::normal_distribution<float> near(0.0f, 1.5f);
  std::uniform_int_distribution<int> kind(0, 9);
  // A value: raw bits (3 in 10), special (2 in 10), or normal near the constellation.
  const auto draw = [&] {
    const int k = kind(rng);
    if (k < 3) {
      return std::bit_cast<float>(uint32_t(rng()));
    }
    if (k < 5) {
      return special[rng() % special.size()];
    }
    return near(rng);
  };
  g_compared = 0;
  g_nan_payloads = 0;
  std::vector<cf32> y(p::N);
  constexpr int SYMBOLS = 30000;
  for (int s = 0; s < SYMBOLS; ++s) {
    // Every few symbols a clean one (finite channel and weight), else anything.
    const bool clean = s % 4 == 0;
    bb::channel_estimate ch;
    for (auto& v : ch.inv) {
      v = clean ? cf32(near(rng), near(rng)) : cf32(draw(), draw());
    }
    // The weight as llr_inv_noise gives it (finite, in [0, 1e30]) or any finite value:
    // with a NaN weight and a NaN point, which of the two NaNs a product returns would
    // rest on the compiler's operand order (the forms may differ there, and the GPU
    // returns its canonical NaN either way); llr_inv_noise never returns one.
    float inv_noise = clean ? std::abs(near(rng)) * 100.0f : draw();
    inv_noise = std::isfinite(inv_noise) ? inv_noise : s % 3 == 0 ? 0.0f : 1e30f;
    ch.llr_inv_noise = inv_noise;
    for (auto& v : y) {
      v = cf32(draw(), draw());
    }
    const float ph = near(rng);
    const cf32 rot = clean || s % 4 == 1 ? cf32(std::cos(ph), std::sin(ph)) : cf32(draw(), draw());
    expect_same(y, ch, rot, "random symbol " + std::to_string(s) + ", seed " + std::to_string(SEED));
    ASSERT_FALSE(HasFatalFailure());
  }
  EXPECT_GE(g_compared, uint64_t(4e7)) << "tone values compared";
  std::cout << g_compared << " tone values compared, " << g_nan_payloads
            << " soft values NaN in both forms with other payloads (non-finite inputs)\n";
}

} // namespace
