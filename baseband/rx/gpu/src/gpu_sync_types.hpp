/// @file gpu_sync_types.hpp
/// What the GPU frame search hands to the GPU locator (profile §4): one coarse
/// detection per candidate window. Its own header so that both stages include it
/// without including each other. Private to the receive chain.
#pragma once

#include <cstdint>
#include <type_traits>

namespace whd::baseband::gpu {

/// One candidate of the search: a window start and what its symbol of positions says
/// (the fields of the CPU's `detection`, sync.hpp, plus the window).
struct sync_candidate {
  uint64_t window;  ///< the window start c [capture sample index]: an edge or grid candidate
  uint64_t coarse;  ///< first argmax of M over [c, min(c + L, npos)) [capture sample index]
  double cfo_cps;   ///< coarse CFO from arg P(coarse) [cycles/sample], in [-1/(2L), 1/(2L)]
  float metric;     ///< M(coarse), unit-free in [0, 1]
};
static_assert(std::is_trivially_copyable_v<sync_candidate>);

} // namespace whd::baseband::gpu
