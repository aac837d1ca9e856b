// Link packing (profile §7) against its definition: ci8 crosses unchanged; half
// is IEEE binary16 (checked against a bit-level decoder written here); int8
// reconstructs within half a quantisation step of the window's scale.
#include <whd/transport/link_pack.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace {

namespace tr = whd::transport;

/// IEEE binary16 decoded bit by bit (1 sign, 5 exponent, 10 mantissa bits).
double decode_half(uint16_t h)
{
  const int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
  const double s = sign ? -1.0 : 1.0;
  if (exp == 0) {
    return s * std::ldexp(man, -24);
  }
  if (exp == 31) {
    return man ? NAN : s * INFINITY;
  }
  return s * std::ldexp(1024 + man, exp - 25);
}

TEST(link_pack, half_matches_ieee_binary16)
{
  for (uint32_t h = 0; h < 65536; ++h) {
    const double ref = decode_half(uint16_t(h));
    const float got = tr::half_to_float(uint16_t(h));
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(double(got), ref) << h;
      EXPECT_EQ(tr::float_to_half(got), uint16_t(h)) << "round trip of " << h;
    }
  }
}

TEST(link_pack, ci8_crosses_unchanged_and_windows_skip_guards)
{
  constexpr std::size_t N = 512, STRIDE = 576, W = 5;
  std::mt19937 rng(7);
  std::vector<std::byte> raw(STRIDE * W * 2);
  for (auto& b : raw) {
    b = std::byte(rng() & 0xFF);
  }
  std::vector<uint64_t> starts;
  for (std::size_t w = 0; w < W; ++w) {
    starts.push_back(w * STRIDE + 64);
  }
  std::vector<std::byte> out(W * N * 2);
  std::vector<float> scales(W, -1.0f);
  tr::pack_windows(whd::datatype::ci8, raw, starts, N, tr::link_format::int8, out, scales);
  for (std::size_t w = 0; w < W; ++w) {
    EXPECT_EQ(std::memcmp(out.data() + w * N * 2, raw.data() + starts[w] * 2, N * 2), 0) << "window " << w;
    EXPECT_EQ(scales[w], 1.0f);
  }
}

TEST(link_pack, every_form_reconstructs_within_its_precision)
{
  constexpr std::size_t N = 512;
  constexpr unsigned SEED = 11;
  std::mt19937 rng(SEED);
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (float level : {1e-4f, 0.3f, 5000.0f}) {
    std::vector<whd::cf32> x(2 * N);
    for (auto& v : x) {
      v = {level * g(rng), level * g(rng)};
    }
    const std::vector<uint64_t> starts{0, N};
    const std::span<const std::byte> raw(reinterpret_cast<const std::byte*>(x.data()), x.size() * sizeof(whd::cf32));
    for (auto fmt : {tr::link_format::f32, tr::link_format::half, tr::link_format::int8}) {
      std::vector<std::byte> out(2 * N * tr::link_bytes_per_sample(fmt));
      std::vector<float> scales(2);
      tr::pack_windows(whd::datatype::cf32_le, raw, starts, N, fmt, out, scales);
      for (std::size_t w = 0; w < 2; ++w) {
        double peak = 0.0, worst = 0.0;
        for (std::size_t i = 0; i < N; ++i) {
          const whd::cf32 ref = x[w * N + i];
          peak = std::max({peak, double(std::abs(ref.real())), double(std::abs(ref.imag()))});
          float re = 0, im = 0;
          const std::size_t k = w * N + i;
          if (fmt == tr::link_format::f32) {
            std::memcpy(&re, out.data() + k * 8, 4);
            std::memcpy(&im, out.data() + k * 8 + 4, 4);
          } else if (fmt == tr::link_format::half) {
            uint16_t h[2];
            std::memcpy(h, out.data() + k * 4, 4);
            re = tr::half_to_float(h[0]);
            im = tr::half_to_float(h[1]);
          } else {
            re = float(int8_t(out[k * 2]));
            im = float(int8_t(out[k * 2 + 1]));
          }
          worst = std::max({worst, std::abs(double(re) * scales[w] - ref.real()), std::abs(double(im) * scales[w] - ref.imag())});
        }
        // f32 exact; half: 11 significant bits at the window's peak; int8: half a step of peak/127.
        const double bound = fmt == tr::link_format::f32 ? 0.0 : (fmt == tr::link_format::half ? peak * std::ldexp(1.0, -11) : peak / 127.0 * 0.5001);
        EXPECT_LE(worst, bound) << tr::to_string(fmt) << " level " << level << " window " << w << " seed " << SEED;
      }
    }
  }
}

/// A byte buffer whose data() is 32-byte aligned plus `offset`.
struct offset_buffer {
  std::vector<std::byte> bytes;
  std::byte* data;
  offset_buffer(std::size_t n, std::size_t offset) : bytes(n + 64)
  {
    const auto base = reinterpret_cast<uintptr_t>(bytes.data());
    data = bytes.data() + ((32 - base % 32) % 32) + offset;
  }
};

// The packer streams into aligned destinations with vector code and falls back to
// scalar code elsewhere: both give the same bytes, and a ci8 capture crosses every
// form exactly (its integers are exact in half and f32).
TEST(link_pack, aligned_and_unaligned_destinations_give_the_same_bytes)
{
  constexpr std::size_t N = 512, STRIDE = 576, W = 6;
  std::mt19937 rng(5);
  std::vector<int8_t> ci8(STRIDE * (W + 1) * 2);
  for (auto& v : ci8) {
    v = int8_t(int(rng() % 256) - 128);
  }
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<whd::cf32> cf32(STRIDE * (W + 1));
  for (auto& v : cf32) {
    v = {300.0f * g(rng), 300.0f * g(rng)};
  }
  std::vector<uint64_t> starts;
  for (std::size_t w = 0; w < W; ++w) {
    starts.push_back(w * STRIDE + 64 + w); // windows at odd sample offsets too
  }
  for (auto type : {whd::datatype::ci8, whd::datatype::cf32_le}) {
    const std::span<const std::byte> raw = type == whd::datatype::ci8 ? std::as_bytes(std::span<const int8_t>(ci8))
                                                                      : std::as_bytes(std::span<const whd::cf32>(cf32));
    for (auto fmt : {tr::link_format::f32, tr::link_format::half, tr::link_format::int8}) {
      const std::size_t out_bytes = W * N * tr::link_bytes_per_sample(fmt);
      offset_buffer aligned(out_bytes, 0), unaligned(out_bytes, 4);
      std::vector<float> sa(W), su(W);
      tr::pack_windows(type, raw, starts, N, fmt, std::span<std::byte>(aligned.data, out_bytes), sa);
      tr::pack_windows(type, raw, starts, N, fmt, std::span<std::byte>(unaligned.data, out_bytes), su);
      EXPECT_EQ(std::memcmp(aligned.data, unaligned.data, out_bytes), 0) << tr::to_string(fmt);
      EXPECT_EQ(sa, su);
      if (type != whd::datatype::ci8) {
        continue;
      }
      for (std::size_t w = 0; w < W; ++w) {
        ASSERT_EQ(sa[w], 1.0f);
        for (std::size_t i = 0; i < 2 * N; ++i) {
          const double want = ci8[starts[w] * 2 + i];
          const std::byte* o = aligned.data + (w * 2 * N + i) * (tr::link_bytes_per_sample(fmt) / 2);
          double got = 0;
          if (fmt == tr::link_format::int8) {
            got = double(int8_t(*o));
          } else if (fmt == tr::link_format::half) {
            uint16_t h;
            std::memcpy(&h, o, 2);
            got = decode_half(h);
          } else {
            float f;
            std::memcpy(&f, o, 4);
            got = f;
          }
          ASSERT_EQ(got, want) << tr::to_string(fmt) << " window " << w << " value " << i;
        }
      }
    }
  }
}

// Windows whose packed size is not a whole number of vectors (here 16 bytes, half
// a 32-byte vector) are copied exactly: nothing is written past them.
TEST(link_pack, short_windows_write_nothing_past_their_end)
{
  constexpr std::size_t N = 8;
  std::vector<std::byte> raw(4 * N * 2);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    raw[i] = std::byte(i + 1);
  }
  const std::vector<uint64_t> starts{N};
  offset_buffer out(64, 0);
  std::memset(out.data, 0x5A, 64);
  std::vector<float> scales(1);
  tr::pack_windows(whd::datatype::ci8, raw, starts, N, tr::link_format::int8, std::span<std::byte>(out.data, N * 2), scales);
  EXPECT_EQ(std::memcmp(out.data, raw.data() + N * 2, N * 2), 0);
  for (std::size_t i = N * 2; i < 64; ++i) {
    EXPECT_EQ(out.data[i], std::byte(0x5A)) << "byte " << i << " past the window";
  }
}

TEST(link_pack, auto_choice_and_names)
{
  EXPECT_EQ(tr::auto_link_format(whd::datatype::ci8), tr::link_format::int8);
  for (auto f : {tr::link_format::f32, tr::link_format::half, tr::link_format::int8}) {
    EXPECT_EQ(tr::parse_link_format(tr::to_string(f)), f);
  }
  EXPECT_FALSE(tr::parse_link_format("fp8"));
}

} // namespace

namespace {

TEST(link_pack, non_finite_samples_are_packed_as_zero_and_counted)
{
  constexpr std::size_t N = 512;
  std::vector<whd::cf32> x(2 * N, whd::cf32(0.5f, -0.25f));
  x[3] = {NAN, 0.0f};
  x[10] = {0.0f, INFINITY};
  x[N + 7] = {-INFINITY, NAN};
  const std::vector<uint64_t> starts{0, N};
  const std::span<const std::byte> raw(reinterpret_cast<const std::byte*>(x.data()), x.size() * sizeof(whd::cf32));
  for (auto fmt : {tr::link_format::f32, tr::link_format::half, tr::link_format::int8}) {
    std::vector<std::byte> out(2 * N * tr::link_bytes_per_sample(fmt));
    std::vector<float> scales(2);
    std::vector<uint32_t> bad(2, 99);
    tr::pack_windows(whd::datatype::cf32_le, raw, starts, N, fmt, out, scales, bad);
    EXPECT_EQ(bad[0], 2u) << tr::to_string(fmt);
    EXPECT_EQ(bad[1], 1u) << tr::to_string(fmt);
    const std::size_t bps = tr::link_bytes_per_sample(fmt);
    for (std::size_t k : {std::size_t(3), std::size_t(10), N + 7}) {
      for (std::size_t b = 0; b < bps; ++b) {
        EXPECT_EQ(out[k * bps + b], std::byte{0}) << tr::to_string(fmt) << " sample " << k;
      }
    }
    for (float s : scales) {
      EXPECT_TRUE(std::isfinite(s) && s > 0.0f) << tr::to_string(fmt);
    }
  }
}

} // namespace

namespace {

/// A run of cf32 samples whose blocks (of RUN_SCALE_BLOCK) span float's range: each
/// block its own level, from near the smallest normal float to near the largest.
std::vector<whd::cf32> run_of_levels(std::size_t n, uint32_t seed)
{
  std::mt19937 g(seed);
  std::normal_distribution<float> u(0.0f, 1.0f);
  const float levels[] = {1.0f, 1e-30f, 3e4f, 1e5f, 1e30f, 0.5f, 2048.0f, 1e-3f};
  std::vector<whd::cf32> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float level = levels[(i / tr::RUN_SCALE_BLOCK) % std::size(levels)];
    x[i] = {level * u(g), level * u(g)};
  }
  return x;
}

/// Each sample of a packed run against the run's own samples: NaN for a non-finite
/// one; otherwise within the form's precision of the block's peak.
void expect_run_within_precision(tr::link_format fmt, const std::vector<whd::cf32>& x, const std::vector<std::byte>& out,
                                 const std::vector<float>& scales)
{
  for (std::size_t b = 0; b < scales.size(); ++b) {
    const std::size_t first = b * tr::RUN_SCALE_BLOCK, end = std::min(x.size(), first + tr::RUN_SCALE_BLOCK);
    double peak = 0.0;
    for (std::size_t i = first; i < end; ++i) {
      if (std::isfinite(x[i].real()) && std::isfinite(x[i].imag())) {
        peak = std::max({peak, std::abs(double(x[i].real())), std::abs(double(x[i].imag()))});
      }
    }
    for (std::size_t i = first; i < end; ++i) {
      const whd::cf32 u = tr::unpack_run_sample(fmt, out, i, scales[b]);
      if (!std::isfinite(x[i].real()) || !std::isfinite(x[i].imag())) {
        EXPECT_TRUE(std::isnan(u.real()) && std::isnan(u.imag())) << i;
        continue;
      }
      for (const auto& [v, w] : {std::pair{double(x[i].real()), double(u.real())}, std::pair{double(x[i].imag()), double(u.imag())}}) {
        // half: 11 significant bits at the peak's binade and below it, down to the
        // subnormals of the scaled block (2^-24 of a peak scaled into (2^13, 2^14]);
        // int8: half a step of peak / 127 (and float's rounding of the product).
        const double tol = fmt == tr::link_format::half ? std::abs(v) * 0x1p-11 + peak * 0x1p-36 : peak / 127.0 * (0.5 + 1e-6);
        ASSERT_LE(std::abs(w - v), tol) << tr::to_string(fmt) << " sample " << i << " of block " << b;
      }
    }
  }
}

} // namespace

TEST(link_pack_run, every_block_reconstructs_within_its_precision_at_any_level)
{
  for (const auto fmt : {tr::link_format::half, tr::link_format::int8}) {
    for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), 8 * tr::RUN_SCALE_BLOCK + 77}) {
      const auto x = run_of_levels(n, uint32_t(n) + 3);
      std::vector<std::byte> out(n * tr::link_bytes_per_sample(fmt));
      std::vector<float> scales(tr::run_scales(n));
      tr::pack_cf32_run(x, fmt, out, scales);
      expect_run_within_precision(fmt, x, out, scales);
      for (const float s : scales) {
        EXPECT_TRUE(std::isfinite(s) && s > 0.0f);
        if (fmt == tr::link_format::half) {
          EXPECT_EQ(std::exp2(std::round(std::log2(s))), s) << "half's scales are powers of two";
        }
      }
    }
  }
}

TEST(link_pack_run, values_half_holds_cross_exactly_and_int8_reaches_its_full_scale)
{
  // Integers and binary fractions (a ci16 capture stored as floats, say) are exact in half.
  std::vector<whd::cf32> x(2 * tr::RUN_SCALE_BLOCK);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = {float(int(i % 4096) - 2048), float(i % 7) * 0.25f - 1.0f};
  }
  std::vector<std::byte> out(x.size() * 4);
  std::vector<float> scales(2);
  tr::pack_cf32_run(x, tr::link_format::half, out, scales);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(tr::unpack_run_sample(tr::link_format::half, out, i, scales[i / tr::RUN_SCALE_BLOCK]), x[i]) << i;
  }
  std::vector<std::byte> q(x.size() * 2);
  tr::pack_cf32_run(x, tr::link_format::int8, q, scales);
  int top = 0;
  for (std::size_t i = 0; i < 2 * x.size(); ++i) {
    top = std::max(top, std::abs(int(reinterpret_cast<const int8_t*>(q.data())[i])));
  }
  EXPECT_EQ(top, 127);
}

TEST(link_pack_run, a_non_finite_sample_is_marked_and_the_others_pack_as_without_it)
{
  // The mark is the sample's alone: the other samples of its block (whose peak it
  // does not change) pack to the very bytes they pack to without it, whichever
  // routine (vector or plain) each block went through.
  auto x = run_of_levels(4 * tr::RUN_SCALE_BLOCK, 11);
  for (const auto fmt : {tr::link_format::half, tr::link_format::int8}) {
    const std::size_t bps = tr::link_bytes_per_sample(fmt);
    std::vector<std::byte> clean(x.size() * bps), marked(x.size() * bps);
    std::vector<float> s_clean(4), s_marked(4);
    tr::pack_cf32_run(x, fmt, clean, s_clean);
    auto y = x;
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    y[5] = {nan, 0.0f};
    y[tr::RUN_SCALE_BLOCK + 9] = {1.0f, -inf};
    y[3 * tr::RUN_SCALE_BLOCK + 100] = {inf, nan};
    for (const std::size_t i : {std::size_t(5), tr::RUN_SCALE_BLOCK + 9, 3 * tr::RUN_SCALE_BLOCK + 100}) {
      // Keep the block's peak: the replaced sample must not have been it.
      ASSERT_LT(std::max(std::abs(x[i].real()), std::abs(x[i].imag())), s_clean[i / tr::RUN_SCALE_BLOCK] * (fmt == tr::link_format::int8 ? 127.0f : 8192.0f));
    }
    tr::pack_cf32_run(y, fmt, marked, s_marked);
    EXPECT_EQ(s_clean, s_marked);
    expect_run_within_precision(fmt, y, marked, s_marked);
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::isfinite(y[i].real()) && std::isfinite(y[i].imag())) {
        ASSERT_EQ(std::memcmp(clean.data() + i * bps, marked.data() + i * bps, bps), 0) << tr::to_string(fmt) << " sample " << i;
      }
    }
  }
  std::vector<std::byte> out(8);
  std::vector<float> sc(1);
  EXPECT_THROW(tr::pack_cf32_run(x, tr::link_format::f32, out, sc), std::invalid_argument);
  EXPECT_THROW(tr::pack_cf32_run(x, tr::link_format::half, out, sc), std::invalid_argument);
}
