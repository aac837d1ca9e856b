#include <whd/transport/link_pack.hpp>

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace whd::transport {

std::optional<link_format> parse_link_format(std::string_view s)
{
  if (s == "f32") {
    return link_format::f32;
  }
  if (s == "half") {
    return link_format::half;
  }
  if (s == "int8") {
    return link_format::int8;
  }
  return std::nullopt;
}

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
// keep the page cache's lines in the host's caches. On the H100 machine this moves
// a ci8 capture's windows at 58 GB/s where memcpy reaches 34 (16 threads,
// scripts/experiments/host_copy_probe.cpp). Each routine falls back to plain code without
// AVX2 or when the destination is not 32-byte aligned.

bool have_avx2()
{
  static const bool yes = __builtin_cpu_supports("avx2") != 0;
  return yes;
}

bool aligned32(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 31u) == 0; }

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

} // namespace

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
