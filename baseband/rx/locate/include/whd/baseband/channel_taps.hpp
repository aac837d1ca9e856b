/// @file channel_taps.hpp
/// How many taps a frame's channel estimate keeps, chosen per frame from the estimate
/// itself, by both backends alike (host and device; the callers build without fused
/// multiply-add, so the choice is the same given the same coefficients).
#pragma once

#include <whd/baseband/demap.hpp>
#include <whd/baseband/profile.hpp>

namespace whd::baseband {

/// The candidates for the kept taps step down from the window's full count by this many.
inline constexpr int CHANNEL_TAPS_STEP = 8;

/// The taps K a frame's channel keeps, from its coefficients a = Q^H h_ls on the
/// smoother's orthonormal basis (channel_smoother: its first K columns span the
/// window's first K taps, so keeping K coefficients projects on those taps).
/// `norm(l)` gives |a_l|^2 for l < nof_taps; `diff` is sum |Y0 - Y1|^2 over the used
/// tones, so each coefficient carries noise of variance v = diff / (4 NOF_USED) (the
/// two-symbol LS estimate's, s2 / 2 per tone with s2 = diff / (2 NOF_USED)).
/// Keeping K coefficients leaves K v of noise; dropping the others loses their
/// signal, tail(K) - (nof_taps - K) v, tail(K) = sum over l >= K of |a_l|^2. The
/// estimated error, tail(K) + 2 K v up to a constant (Mallows' C_p), is least at the
/// returned K among nof_taps, nof_taps - CHANNEL_TAPS_STEP, ... down to min_taps
/// (ties keep the larger K). min_taps >= nof_taps keeps every tap.
template <class Norm>
WHD_HD int chosen_taps(Norm norm, int nof_taps, int min_taps, double diff)
{
  if (min_taps >= nof_taps) {
    return nof_taps;
  }
  const double v = diff / (4.0 * double(profile::NOF_USED));
  int best = nof_taps;
  double best_cost = 2.0 * double(nof_taps) * v;
  double tail = 0.0;
  for (int k = nof_taps - 1; k >= min_taps; --k) {
    tail += norm(k);
    if ((nof_taps - k) % CHANNEL_TAPS_STEP == 0) {
      const double cost = tail + 2.0 * double(k) * v;
      if (cost < best_cost) {
        best = k;
        best_cost = cost;
      }
    }
  }
  return best;
}

} // namespace whd::baseband
