/// @file link_pack.hpp
/// Link packing (profile §7): the forms in which samples cross from host to
/// device. Only the N post-guard samples of each located symbol cross; each
/// window carries one float scale (the "block of symbols" is one symbol), by
/// which the device multiplies the unpacked values.
#pragma once

#include <whd/transport/sample_types.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace whd::transport {

/// Link format of one complex sample.
enum class link_format : uint8_t {
  f32,   ///< IEEE binary32 I and Q, 8 bytes
  half,  ///< IEEE binary16 I and Q ("LittleFloat"), 4 bytes
  int8,  ///< signed 8-bit I and Q with a float scale per window ("TinyFixed"), 2 bytes
};

constexpr std::size_t link_bytes_per_sample(link_format f)
{
  return f == link_format::f32 ? 8 : (f == link_format::half ? 4 : 2);
}

constexpr std::string_view to_string(link_format f)
{
  return f == link_format::f32 ? "f32" : (f == link_format::half ? "half" : "int8");
}

/// "f32", "half" or "int8"; nullopt otherwise.
std::optional<link_format> parse_link_format(std::string_view s);

/// The cheapest form that loses nothing that matters for a capture's datatype:
/// ci8 crosses as it is (int8, scale 1), ci16 as half (exact to 2048, 11
/// significant bits beyond), cf32 as half.
link_format auto_link_format(datatype capture_type);

/// Pack windows of `window_len` samples into the link form.
/// @param type       datatype of the raw capture bytes in `raw`
/// @param raw        raw capture bytes; window w starts at sample `starts[w]` of it
/// @param starts     first sample of each window, relative to `raw`
/// @param window_len samples per window
/// @param fmt        link form of `out`
/// @param[out] out    starts.size() * window_len * link_bytes_per_sample(fmt) bytes
/// @param[out] scales one float per window: the device multiplies by it
/// @param[out] bad    optional, one count per window: non-finite samples (NaN or Inf
///                    in I or Q of a cf32 capture), which are packed as 0, as the CPU
///                    backend takes them
void pack_windows(datatype type, std::span<const std::byte> raw, std::span<const uint64_t> starts, std::size_t window_len,
                  link_format fmt, std::span<std::byte> out, std::span<float> scales, std::span<uint32_t> bad = {});

/// Convert one IEEE binary16 to float (host reference for tests).
float half_to_float(uint16_t h);
/// Round a float to the nearest IEEE binary16 (ties to even, saturating to +-inf as IEEE does).
uint16_t float_to_half(float f);

} // namespace whd::transport
