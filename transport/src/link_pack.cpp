#include <whd/transport/link_pack.hpp>

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
      std::memcpy(dst, src, out_bpw);
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
      std::memcpy(dst, iq.data(), out_bpw);
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
      auto* h = reinterpret_cast<uint16_t*>(dst);
      for (std::size_t i = 0; i < iq.size(); ++i) {
        h[i] = float_to_half(iq[i] * inv);
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
}

} // namespace whd::transport
