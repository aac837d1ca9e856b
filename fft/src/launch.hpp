/// @file launch.hpp
/// What the host code hands the kernel translation units (internal): one launch
/// function per variant and input type.
#pragma once

#include <whd/fft/fft512.hpp>

#include <cstdint>

namespace whd::fft::detail {

/// Arguments of one batched launch, already validated.
struct launch_args {
  const void* d_in = nullptr;
  const float* d_scale = nullptr; ///< ci8 only
  std::uint32_t per_scale = 1;    ///< ci8 only
  cf32* d_out = nullptr;
  std::uint32_t count = 0;
  int max_blocks = 0;
  stream_handle stream = nullptr;
};

using launch_fn = void (*)(const launch_args&);

/// NOF_VARIANTS launch functions, indexed by variant_index (one table per input type,
/// each in its own translation unit so they compile in parallel).
const launch_fn* launch_table_cf32();
const launch_fn* launch_table_cf16();
const launch_fn* launch_table_ci8();

} // namespace whd::fft::detail
