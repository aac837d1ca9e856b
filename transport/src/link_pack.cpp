#include <whd/transport/link_pack.hpp>

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <stdexcept>
#include <vector>

namespace whd::transport {

link_format auto_link_format(datatype capture_type)
{
  return capture_type == datatype::ci8 ? link_format::int8 : link_format::half;
}

float half_to_float(uint16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }

uint16_t float_to_half(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }

namespace {

/// Window samples as float pairs (I, Q), whatever the capture type.
void load_window(datatype type, const std::byte* w, std::size_t n, float* iq)
{
  switch (type) {
  case datatype::cf32_le: std::memcpy(iq, w, n * 8); break;
  case datatype::ci16_le: {
    const auto* s = reinterpret_cast<const int16_t*>(w);
    for (std::size_t i = 0; i < 2 * n; ++i) {
      iq[i] = float(s[i]);
    }
    break;
  }
  case datatype::ci8: {
    const auto* s = reinterpret_cast<const int8_t*>(w);
    for (std::size_t i = 0; i < 2 * n; ++i) {
      iq[i] = float(s[i]);
    }
    break;
  }
  }
}

// Packed windows are read by the copy engine, not by the host: streaming
// (non-temporal) stores skip the read-for-ownership of each destination line and
// keep the page cache's lines in the host's caches: faster than memcpy on the GPU
// machine's host. Each routine falls back to plain code without
// AVX2 or when the destination is not 32-byte aligned.

bool have_avx2()
{
  static const bool yes = __builtin_cpu_supports("avx2") != 0;
  return yes;
}

bool aligned32(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 31u) == 0; }

bool have_f16c()
{
  static const bool yes = __builtin_cpu_supports("f16c") != 0;
  return yes;
}

/// Whether float_to_half_avx2 applies to `values` floats into `dst`.
bool f16c_ok(const std::byte* dst, std::size_t values) { return have_f16c() && aligned32(dst) && values % 16 == 0; }

__attribute__((target("avx2"))) void stream_copy_avx2(std::byte* dst, const std::byte* src, std::size_t bytes)
{
  for (std::size_t i = 0; i < bytes; i += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
  }
}

/// 16 int8 values at `s` to two vectors of 8 floats.
__attribute__((target("avx2"))) inline void ci8_to_float16(const int8_t* s, __m256& lo, __m256& hi)
{
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
  hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)));
}

__attribute__((target("avx2,f16c"))) void ci8_to_half_avx2(std::byte* dst, const int8_t* s, std::size_t values)
{
  for (std::size_t i = 0; i < values; i += 16) {
    __m256 lo, hi;
    ci8_to_float16(s + i, lo, hi);
    const __m256i h = _mm256_set_m128i(_mm256_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT), _mm256_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + 2 * i), h);
  }
}

__attribute__((target("avx2"))) void ci8_to_f32_avx2(std::byte* dst, const int8_t* s, std::size_t values)
{
  for (std::size_t i = 0; i < values; i += 16) {
    __m256 lo, hi;
    ci8_to_float16(s + i, lo, hi);
    _mm256_stream_ps(reinterpret_cast<float*>(dst + 4 * i), lo);
    _mm256_stream_ps(reinterpret_cast<float*>(dst + 4 * i + 32), hi);
  }
}

__attribute__((target("avx2,f16c"))) void float_to_half_avx2(std::byte* dst, const float* x, float inv, std::size_t values)
{
  const __m256 k = _mm256_set1_ps(inv);
  for (std::size_t i = 0; i < values; i += 16) {
    const __m128i lo = _mm256_cvtps_ph(_mm256_mul_ps(_mm256_loadu_ps(x + i), k), _MM_FROUND_TO_NEAREST_INT);
    const __m128i hi = _mm256_cvtps_ph(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8), k), _MM_FROUND_TO_NEAREST_INT);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + 2 * i), _mm256_set_m128i(hi, lo));
  }
}

/// Whether the vector routines apply: AVX2, an aligned destination, and a count
/// that is a whole number of the routine's steps (16 values; 32 bytes for a copy).
bool vector_ok(const std::byte* dst, std::size_t count, std::size_t step = 16)
{
  return have_avx2() && aligned32(dst) && count % step == 0;
}

void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes)
{
  if (vector_ok(dst, bytes, 32)) {
    stream_copy_avx2(dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

float max_abs(const float* iq, std::size_t count)
{
  float m = 0.0f;
  for (std::size_t i = 0; i < count; ++i) {
    m = std::max(m, std::abs(iq[i]));
  }
  return m;
}

/// The largest finite |I| or |Q| of n samples, and how many samples are not finite.
std::pair<float, std::size_t> finite_peak(const float* iq, std::size_t n)
{
  float peak = 0.0f;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float a = std::abs(iq[2 * i]), b = std::abs(iq[2 * i + 1]);
    // Written so that NaN fails both tests: no branch on the sample, and the loop vectorises.
    const bool ok = a <= std::numeric_limits<float>::max() && b <= std::numeric_limits<float>::max();
    peak = std::max(peak, ok ? std::max(a, b) : 0.0f);
    bad += ok ? 0 : 1;
  }
  return {peak, bad};
}

/// AVX2 form of int8 rounding: x * inv clamped to +-127 and converted under the
/// default rounding (to nearest, ties to even: as std::lrint), 32 values a step.
__attribute__((target("avx2"))) void float_to_int8_avx2(std::byte* dst, const float* x, float inv, std::size_t values)
{
  const __m256 k = _mm256_set1_ps(inv), hi = _mm256_set1_ps(127.0f), lo = _mm256_set1_ps(-127.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (std::size_t i = 0; i < values; i += 32) {
    __m256i q[4];
    for (int j = 0; j < 4; ++j) {
      const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * j), k), lo), hi);
      q[j] = _mm256_cvtps_epi32(v);
    }
    // packs work within 128-bit lanes: 0..3 8..11 4..7 12..15 | ... ; the permute puts them back in order.
    const __m256i w01 = _mm256_packs_epi32(q[0], q[1]);
    const __m256i w23 = _mm256_packs_epi32(q[2], q[3]);
    const __m256i b = _mm256_packs_epi16(w01, w23);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_permutevar8x32_epi32(b, order));
  }
}

} // namespace

void pack_cf32_run(std::span<const cf32> in, link_format fmt, std::span<std::byte> out, std::span<float> scales)
{
  const std::size_t n = in.size();
  if (fmt == link_format::f32) {
    throw std::invalid_argument("pack_cf32_run: f32 is not a packing");
  }
  if (out.size() < n * link_bytes_per_sample(fmt) || scales.size() < run_scales(n)) {
    throw std::invalid_argument("pack_cf32_run: output smaller than the run");
  }
  const bool vec = have_avx2();
  for (std::size_t b = 0; b * RUN_SCALE_BLOCK < n; ++b) {
    const std::size_t first = b * RUN_SCALE_BLOCK;
    const std::size_t len = std::min(RUN_SCALE_BLOCK, n - first);
    const auto* iq = reinterpret_cast<const float*>(in.data() + first);
    const auto [peak, bad] = finite_peak(iq, len);
    if (fmt == link_format::half) {
      // ceil(log2(peak)) - 14 puts the peak in (2^13, 2^14]; within float's exponents.
      const int e = peak > 0.0f ? std::clamp(int(std::ceil(std::log2(peak))) - 14, -126, 113) : 0;
      const float scale = std::ldexp(1.0f, e), inv = std::ldexp(1.0f, -e);
      std::byte* dst = out.data() + 4 * first;
      if (bad == 0 && vec && f16c_ok(dst, 2 * len)) {
        float_to_half_avx2(dst, iq, inv, 2 * len);
      } else {
        auto* h = reinterpret_cast<uint16_t*>(dst);
        for (std::size_t i = 0; i < 2 * len; i += 2) {
          const bool ok = std::isfinite(iq[i]) && std::isfinite(iq[i + 1]);
          h[i] = ok ? float_to_half(iq[i] * inv) : uint16_t(0x7E00);
          h[i + 1] = ok ? float_to_half(iq[i + 1] * inv) : uint16_t(0x7E00);
        }
      }
      scales[b] = scale;
    } else {
      // A peak too small for its inverse to be a float: every value rounds to 0.
      const float scale = peak / 127.0f >= std::numeric_limits<float>::min() ? peak / 127.0f : 1.0f;
      const float inv = 1.0f / scale;
      std::byte* dst = out.data() + 2 * first;
      if (bad == 0 && vec && (2 * len) % 32 == 0) {
        float_to_int8_avx2(dst, iq, inv, 2 * len);
      } else {
        auto* q = reinterpret_cast<int8_t*>(dst);
        for (std::size_t i = 0; i < 2 * len; i += 2) {
          if (std::isfinite(iq[i]) && std::isfinite(iq[i + 1])) {
            q[i] = int8_t(std::lrint(std::clamp(iq[i] * inv, -127.0f, 127.0f)));
            q[i + 1] = int8_t(std::lrint(std::clamp(iq[i + 1] * inv, -127.0f, 127.0f)));
          } else {
            q[i] = int8_t(-128);
            q[i + 1] = 0;
          }
        }
      }
      scales[b] = scale;
    }
  }
  if (vec) {
    _mm_sfence(); // the half routine's streaming stores
  }
}

cf32 unpack_run_sample(link_format fmt, std::span<const std::byte> packed, std::size_t i, float scale)
{
  switch (fmt) {
  case link_format::f32: {
    cf32 v;
    std::memcpy(&v, packed.data() + 8 * i, 8);
    return v * scale;
  }
  case link_format::half: {
    uint16_t h[2];
    std::memcpy(h, packed.data() + 4 * i, 4);
    return {half_to_float(h[0]) * scale, half_to_float(h[1]) * scale};
  }
  case link_format::int8: {
    const auto* q = reinterpret_cast<const int8_t*>(packed.data() + 2 * i);
    if (q[0] == -128) {
      return {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::quiet_NaN()};
    }
    return {float(q[0]) * scale, float(q[1]) * scale};
  }
  }
  return {};
}

void pack_windows(datatype type, std::span<const std::byte> raw, std::span<const uint64_t> starts, std::size_t window_len,
                  link_format fmt, std::span<std::byte> out, std::span<float> scales, std::span<uint32_t> bad)
{
  const std::size_t in_bps = bytes_per_sample(type);
  const std::size_t out_bpw = window_len * link_bytes_per_sample(fmt);
  if (out.size() < starts.size() * out_bpw || scales.size() < starts.size() || (!bad.empty() && bad.size() < starts.size())) {
    throw std::invalid_argument("pack_windows: output smaller than the windows");
  }
  thread_local std::vector<float> iq;
  iq.resize(2 * window_len);
  for (std::size_t w = 0; w < starts.size(); ++w) {
    if ((starts[w] + window_len) * in_bps > raw.size()) {
      throw std::invalid_argument("pack_windows: window outside the raw bytes");
    }
    const std::byte* src = raw.data() + starts[w] * in_bps;
    std::byte* dst = out.data() + w * out_bpw;
    if (!bad.empty()) {
      bad[w] = 0;
    }
    // ci8 over the int8 link: the capture's bytes cross as they are.
    if (fmt == link_format::int8 && type == datatype::ci8) {
      stream_copy(dst, src, out_bpw);
      scales[w] = 1.0f;
      continue;
    }
    // ci8 as half or f32: integers of at most 128 are exact in both (scale 1).
    if (type == datatype::ci8 && fmt != link_format::int8 && vector_ok(dst, 2 * window_len)) {
      const auto* s8 = reinterpret_cast<const int8_t*>(src);
      if (fmt == link_format::half) {
        ci8_to_half_avx2(dst, s8, 2 * window_len);
      } else {
        ci8_to_f32_avx2(dst, s8, 2 * window_len);
      }
      scales[w] = 1.0f;
      continue;
    }
    load_window(type, src, window_len, iq.data());
    if (type == datatype::cf32_le) {
      // Non-finite samples are taken as 0 (a sample is bad if I or Q is).
      uint32_t n = 0;
      for (std::size_t i = 0; i < window_len; ++i) {
        if (!std::isfinite(iq[2 * i]) || !std::isfinite(iq[2 * i + 1])) {
          iq[2 * i] = iq[2 * i + 1] = 0.0f;
          ++n;
        }
      }
      if (!bad.empty()) {
        bad[w] = n;
      }
    }
    if (fmt == link_format::f32) {
      stream_copy(dst, reinterpret_cast<const std::byte*>(iq.data()), out_bpw);
      scales[w] = 1.0f;
      continue;
    }
    const float peak = max_abs(iq.data(), iq.size());
    if (fmt == link_format::half) {
      // Integers up to 2048 are exact in half; larger peaks (and any cf32 level)
      // are brought near 2^14 by a power-of-two scale, which costs no precision.
      const bool exact_ints = type != datatype::cf32_le && peak <= 2048.0f;
      const float scale = (exact_ints || !(peak > 0.0f)) ? 1.0f : std::exp2(std::ceil(std::log2(peak)) - 14.0f);
      const float inv = 1.0f / scale;
      if (vector_ok(dst, iq.size())) {
        float_to_half_avx2(dst, iq.data(), inv, iq.size());
      } else {
        auto* h = reinterpret_cast<uint16_t*>(dst);
        for (std::size_t i = 0; i < iq.size(); ++i) {
          h[i] = float_to_half(iq[i] * inv);
        }
      }
      scales[w] = scale;
    } else {
      const float scale = peak > 0.0f ? peak / 127.0f : 1.0f;
      const float inv = 1.0f / scale;
      auto* q = reinterpret_cast<int8_t*>(dst);
      for (std::size_t i = 0; i < iq.size(); ++i) {
        q[i] = int8_t(std::lrint(std::clamp(iq[i] * inv, -127.0f, 127.0f)));
      }
      scales[w] = scale;
    }
  }
  // Streaming stores are weakly ordered: make them visible before the copy is queued.
  if (have_avx2()) {
    _mm_sfence();
  }
}

} // namespace whd::transport
