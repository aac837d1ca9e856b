/// @file cycles.hpp
/// Phase reduction shared by the frame search's host steps (sync.cpp, frame_locator.cpp).
#pragma once

#include <cmath>

namespace whd::baseband {

/// std::remainder(x, 1.0), bit for bit, without the library call (its share of
/// locating a candidate was as large as the cosines'): x less the integer nearest
/// it, ties to even, which std::rint gives in the default rounding mode, and the
/// difference is exact; a zero result takes the sign of x, as remainder's does.
inline double remainder_one(double x)
{
  const double r = x - std::rint(x);
  return r == 0.0 ? std::copysign(0.0, x) : r;
}

} // namespace whd::baseband
