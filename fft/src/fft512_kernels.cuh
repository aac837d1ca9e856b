/// @file fft512_kernels.cuh
/// Instantiates the batched kernel for every variant of one input type and builds its
/// launch table (internal; included by the fft512_kernels_*.cu files).
#pragma once

#include "launch.hpp"
#include "variant_index.hpp"

#include <whd/fft/fft512_batch.cuh>
#include <whd/transport/cuda.hpp>

#include <array>
#include <cuda_runtime.h>
#include <utility>

namespace whd::fft::detail {

/// Blocks of `kernel` resident on the current device at once (SMs times occupancy),
/// queried once per kernel and device.
int resident_blocks(const void* kernel, int block_threads);

/// The grid of a batched launch: one block per GROUPS transforms, or, pipelined, no
/// more blocks than are resident at once (and no more than `max_blocks` if set).
inline unsigned batch_grid(const variant& v, std::uint32_t count, int max_blocks, const void* kernel)
{
  const std::uint32_t groups = static_cast<std::uint32_t>(v.groups);
  std::uint32_t blocks = (count + groups - 1) / groups;
  if (v.pipelined) {
    const int resident = resident_blocks(kernel, THREADS_PER_TRANSFORM * v.groups);
    blocks = std::min<std::uint32_t>(blocks, static_cast<std::uint32_t>(resident));
    if (max_blocks > 0) {
      blocks = std::min<std::uint32_t>(blocks, static_cast<std::uint32_t>(max_blocks));
    }
  }
  return blocks;
}

template <input_type IT>
auto make_loader(const launch_args& a)
{
  if constexpr (IT == input_type::cf32) {
    return cf32_loader{static_cast<const float2*>(a.d_in)};
  } else if constexpr (IT == input_type::cf16) {
    return cf16_loader{static_cast<const __half2*>(a.d_in)};
  } else {
    return ci8_loader{static_cast<const char2*>(a.d_in), a.d_scale, a.per_scale};
  }
}

template <input_type IT, int I>
void launch(const launch_args& a)
{
  constexpr variant V = variant_at(I);
  using A = fft512_algo<V.order, V.exch, V.tw>;
  using L = decltype(make_loader<IT>(a));
  constexpr auto kernel = fft512_batch_kernel<A, V.groups, V.pipelined, L, cf32_storer>;
  const unsigned grid = batch_grid(V, a.count, a.max_blocks, reinterpret_cast<const void*>(kernel));
  const dim3 block(THREADS_PER_TRANSFORM, V.groups);
  kernel<<<grid, block, 0, a.stream>>>(make_loader<IT>(a), cf32_storer{reinterpret_cast<float2*>(a.d_out)}, a.count);
  WHD_CUDA_CHECK_LAUNCH();
}

template <input_type IT, std::size_t... I>
constexpr std::array<launch_fn, sizeof...(I)> make_launch_table(std::index_sequence<I...>)
{
  return {&launch<IT, static_cast<int>(I)>...};
}

template <input_type IT>
inline constexpr std::array<launch_fn, NOF_VARIANTS> LAUNCH_TABLE =
    make_launch_table<IT>(std::make_index_sequence<NOF_VARIANTS>{});

} // namespace whd::fft::detail
