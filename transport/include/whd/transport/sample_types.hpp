/// @file sample_types.hpp
/// Sample types of captures and of the link (profile §6, §7).
#pragma once

#include <whd/transport/enum_names.hpp>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace whd {

/// Complex float sample, the receiver's working type.
using cf32 = std::complex<float>;

/// Interleaved 16-bit integer sample (full scale 2^15).
struct ci16 {
  int16_t i;
  int16_t q;
};

/// Interleaved 8-bit integer sample (full scale 2^7).
struct ci8 {
  int8_t i;
  int8_t q;
};

static_assert(sizeof(cf32) == 8 && sizeof(ci16) == 4 && sizeof(ci8) == 2);

/// On-disk sample formats the receiver reads (profile §6), little-endian.
enum class datatype : uint8_t { cf32_le, ci16_le, ci8 };

/// Bytes of one complex sample of `t`.
constexpr std::size_t bytes_per_sample(datatype t)
{
  switch (t) {
  case datatype::cf32_le: return 8;
  case datatype::ci16_le: return 4;
  case datatype::ci8: return 2;
  }
  return 0;
}

/// Whether samples of type `t` are integers (ci16, ci8): their products and sums
/// are exact in double.
constexpr bool is_integer(datatype t) { return t == datatype::ci16_le || t == datatype::ci8; }

/// SigMF `core:datatype` names, then the short forms parse_datatype also accepts.
inline constexpr enum_names<datatype, 6> DATATYPE_NAMES{{{datatype::cf32_le, "cf32_le"},
                                                         {datatype::ci16_le, "ci16_le"},
                                                         {datatype::ci8, "ci8"},
                                                         {datatype::cf32_le, "cf32"},
                                                         {datatype::ci16_le, "ci16"},
                                                         {datatype::ci8, "ci8_le"}}};

/// SigMF `core:datatype` name of `t`.
constexpr std::string_view to_string(datatype t) { return name_of(DATATYPE_NAMES, t); }

/// Parse a SigMF datatype name (also accepts the short forms cf32, ci16); nullopt if unsupported.
constexpr std::optional<datatype> parse_datatype(std::string_view s) { return parse_name(DATATYPE_NAMES, s); }

} // namespace whd
