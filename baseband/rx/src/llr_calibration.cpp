#include <whd/baseband/llr_calibration.hpp>

#include <algorithm>
#include <cmath>

namespace whd::baseband {

llr_calibrator::llr_calibrator(double width, double max_abs, uint64_t min_count)
    : width_(width), max_abs_(max_abs), min_count_(min_count), sum_(std::size_t(std::ceil(2.0 * max_abs / width)), 0.0),
      n0_(sum_.size(), 0), n1_(sum_.size(), 0)
{
}

void llr_calibrator::add(std::span<const float> llr, std::span<const uint8_t> truth)
{
  const std::size_t n = std::min(llr.size(), truth.size() * 8);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned bit = (truth[i / 8] >> (7 - i % 8)) & 1u;
    const double l = llr[i];
    errors_ += (l < 0.0 ? 1u : 0u) != bit ? 1u : 0u;
    if (!(std::fabs(l) < max_abs_)) {
      continue;
    }
    const auto b = std::min(sum_.size() - 1, std::size_t((l + max_abs_) / width_));
    sum_[b] += l;
    (bit != 0 ? n1_ : n0_)[b] += 1;
  }
  bits_ += n;
}

llr_calibration llr_calibrator::result() const
{
  llr_calibration c;
  c.bits = bits_;
  c.errors = errors_;
  double sxy = 0.0, sxx = 0.0;
  for (std::size_t b = 0; b < sum_.size(); ++b) {
    if (n0_[b] < min_count_ || n1_[b] < min_count_) {
      continue;
    }
    llr_bin x;
    x.n0 = n0_[b];
    x.n1 = n1_[b];
    x.mean_llr = sum_[b] / double(n0_[b] + n1_[b]);
    x.empirical = std::log(double(n0_[b]) / double(n1_[b]));
    c.bins.push_back(x);
    const double w = 1.0 / (1.0 / double(n0_[b]) + 1.0 / double(n1_[b]));
    sxy += w * x.mean_llr * x.empirical;
    sxx += w * x.mean_llr * x.mean_llr;
  }
  c.slope = sxx > 0.0 ? sxy / sxx : 0.0;
  return c;
}

llr_calibration calibrate_llrs(std::span<const float> llr, std::span<const uint8_t> truth, double width, double max_abs, uint64_t min_count)
{
  llr_calibrator c(width, max_abs, min_count);
  c.add(llr, truth);
  return c.result();
}

} // namespace whd::baseband
