/// @file locate_outcome.hpp
/// What locating one candidate concluded (profile §4): one enum for both backends,
/// from the host's steps (frame_locator.hpp) to the GPU locator's results
/// (gpu_locate.hpp), so that the walk reads the same values whichever located it.
#pragma once

#include <cstdint>

namespace whd::baseband {

/// What locating one candidate concluded.
enum class locate_outcome : uint8_t {
  /// No preamble: the cross-correlation shows none (a tone, a DC offset), the first
  /// path lies before the capture's first guard, or the capture ends inside the
  /// fine-timing or fine-CFO windows.
  no_sync,
  /// The capture ends before the header window is whole: nothing decodable follows.
  cut_off,
  /// A preamble whose header failed (the header status says why).
  rejected,
  /// A frame: its header was accepted.
  accepted,
  /// The GPU locator only, never in the host's results: a window it must read lies
  /// outside the chunk it was given but inside the capture, so it must run again on a
  /// chunk that holds the candidate's windows.
  needs_more,
};

} // namespace whd::baseband
