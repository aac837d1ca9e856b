/// @file fft512.hpp
/// The 512-point transform of the receiver: its size and the batched host API.
/// Host-only header (no CUDA headers), so plain C++ code can use the size.
#pragma once

namespace whd::fft {

/// Transform size. The profile (baseband/profile.hpp) asserts it equals its N.
inline constexpr int N = 512;
/// log2(N): the number of radix-2 stages.
inline constexpr int LOG2_N = 9;
static_assert((1 << LOG2_N) == N);

} // namespace whd::fft
