// Link packing (profile §7) against its definition: ci8 crosses unchanged; half
// is IEEE binary16 (checked against a bit-level decoder written here); int8
// reconstructs within half a quantisation step of the window's scale.
#include <whd/transport/link_pack.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
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
