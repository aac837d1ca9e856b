/// @file llr_calibration.hpp
/// How well soft values are calibrated against the bits that were sent: the LLRs
/// are binned, and in each bin the empirical ln(#0 / #1) of the true bits is set
/// against the bin's mean LLR. A calibrated LLR follows the identity; the slope of
/// a weighted least-squares line through the origin says by how much it does not
/// (above 1: the LLRs are too small, below 1: overconfident).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace whd::baseband {

struct llr_bin {
  double mean_llr = 0.0;  ///< mean LLR of the bits in the bin
  double empirical = 0.0; ///< ln(n0 / n1)
  uint64_t n0 = 0, n1 = 0;
};

struct llr_calibration {
  std::vector<llr_bin> bins; ///< bins with at least min_count zeros and ones, in LLR order
  /// sum w x y / sum w x^2 over the bins (x = mean LLR, y = empirical), w = 1 /
  /// (1/n0 + 1/n1), the inverse variance of y; 0 without bins.
  double slope = 0.0;
  uint64_t bits = 0;   ///< values compared
  uint64_t errors = 0; ///< bits whose LLR sign (0 taken as 0) disagrees with the truth
};

/// Counts soft values against true bits over any number of pieces: bins of `width`
/// over [-max_abs, max_abs]; a bin enters the fit with at least `min_count` zeros
/// and as many ones.
class llr_calibrator {
public:
  explicit llr_calibrator(double width = 0.5, double max_abs = 12.0, uint64_t min_count = 20);
  /// `llr` (one per bit, in payload order) against `truth` (MSB first per byte); the
  /// shorter of the two is compared.
  void add(std::span<const float> llr, std::span<const uint8_t> truth);
  llr_calibration result() const;

private:
  double width_, max_abs_;
  uint64_t min_count_;
  std::vector<double> sum_;
  std::vector<uint64_t> n0_, n1_;
  uint64_t bits_ = 0, errors_ = 0;
};

/// One piece's calibration (llr_calibrator's defaults).
llr_calibration calibrate_llrs(std::span<const float> llr, std::span<const uint8_t> truth, double width = 0.5, double max_abs = 12.0,
                               uint64_t min_count = 20);

} // namespace whd::baseband
