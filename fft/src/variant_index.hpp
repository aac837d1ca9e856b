/// @file variant_index.hpp
/// The fixed numbering of the variants (internal): all_variants() lists them in this
/// order and the launch tables are indexed by it.
#pragma once

#include <whd/fft/variant.hpp>

namespace whd::fft::detail {

/// Transforms per block the variants use.
inline constexpr int GROUP_CHOICES[] = {1, 2, 4, 8};
inline constexpr int NOF_VARIANTS = 2 * 2 * 2 * 4 * 2;

/// log2 of a group count, -1 if it is not one of GROUP_CHOICES.
constexpr int group_code(int groups)
{
  for (int i = 0; i < 4; ++i) {
    if (GROUP_CHOICES[i] == groups) {
      return i;
    }
  }
  return -1;
}

/// Index of `v` in 0..NOF_VARIANTS-1, -1 when it names no variant.
constexpr int variant_index(const variant& v)
{
  const int g = group_code(v.groups);
  if (g < 0) {
    return -1;
  }
  return (((static_cast<int>(v.order) * 2 + static_cast<int>(v.exch)) * 2 + static_cast<int>(v.tw)) * 4 + g) * 2 +
         (v.pipelined ? 1 : 0);
}

/// The variant with index i.
constexpr variant variant_at(int i)
{
  variant v;
  v.pipelined = (i & 1) != 0;
  v.groups = GROUP_CHOICES[(i >> 1) & 3];
  v.tw = static_cast<twiddle>((i >> 3) & 1);
  v.exch = static_cast<exchange>((i >> 4) & 1);
  v.order = static_cast<ordering>((i >> 5) & 1);
  return v;
}

static_assert(variant_index(variant_at(NOF_VARIANTS - 1)) == NOF_VARIANTS - 1);
static_assert(variant_index(variant_at(37)) == 37);

} // namespace whd::fft::detail
