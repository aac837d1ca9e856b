/// @file link_pack.hpp
/// Link packing (profile §7): the forms in which samples cross from host to
/// device. Only the N post-guard samples of each located symbol cross; each
/// window carries one float scale (the "block of symbols" is one symbol), by
/// which the device multiplies the unpacked values.
#pragma once

#include <whd/transport/enum_names.hpp>

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

inline constexpr enum_names<link_format, 3> LINK_FORMAT_NAMES{
    {{link_format::f32, "f32"}, {link_format::half, "half"}, {link_format::int8, "int8"}}};

constexpr std::string_view to_string(link_format f) { return name_of(LINK_FORMAT_NAMES, f); }

/// "f32", "half" or "int8"; nullopt otherwise.
constexpr std::optional<link_format> parse_link_format(std::string_view s) { return parse_name(LINK_FORMAT_NAMES, s); }

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

/// Samples that share one scale when a run of cf32 samples is packed as it lies in
/// the capture (pack_cf32_run).
inline constexpr std::size_t RUN_SCALE_BLOCK = 1024;

/// Scales pack_cf32_run writes for `nof` samples.
constexpr std::size_t run_scales(std::size_t nof) { return (nof + RUN_SCALE_BLOCK - 1) / RUN_SCALE_BLOCK; }

/// A run of cf32 samples packed for the link as it lies in the capture (the GPU
/// backend's chunks): one scale per block of RUN_SCALE_BLOCK samples from in[0]
/// (the last block may be shorter), by which the device multiplies the unpacked
/// values.
///   - half: a power of two that brings the block's largest finite |I| or |Q| near
///     2^14, which costs no precision and lets nothing overflow;
///   - int8: that peak / 127, each value rounded to the nearest integer (ties to
///     even) within +-127.
/// A non-finite sample (NaN or Inf in I or Q) crosses as a mark that unpacks to NaN,
/// so that the device counts and zeroes it as it does a cf32 chunk's: half NaN in I
/// and Q; int8 -128 in I (Q 0). f32 is no packing: its bytes are the capture's.
/// @param[out] out    in.size() * link_bytes_per_sample(fmt) bytes
/// @param[out] scales run_scales(in.size()) floats
void pack_cf32_run(std::span<const cf32> in, link_format fmt, std::span<std::byte> out, std::span<float> scales);

/// Sample i of a packed run, as the device unpacks it (NaN for a mark): the
/// reference for tests.
cf32 unpack_run_sample(link_format fmt, std::span<const std::byte> packed, std::size_t i, float scale);

/// Convert one IEEE binary16 to float (host reference for tests).
float half_to_float(uint16_t h);
/// Round a float to the nearest IEEE binary16 (ties to even, saturating to +-inf as IEEE does).
uint16_t float_to_half(float f);

} // namespace whd::transport
