#include <whd/baseband/llr_calibration.hpp>

#include <algorithm>
#include <cmath>

namespace whd::baseband {

llr_calibration calibrate_llrs(std::span<const float> llr, std::span<const uint8_t> truth, double width, double max_abs, uint64_t min_count)
{
  const auto nof_bins = std::size_t(std::ceil(2.0 * max_abs / width));
  std::vector<double> sum(nof_bins, 0.0);
  std::vector<uint64_t> n0(nof_bins, 0), n1(nof_bins, 0);
  llr_calibration c;
  const std::size_t n = std::min(llr.size(), truth.size() * 8);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned bit = (truth[i / 8] >> (7 - i % 8)) & 1u;
    const double l = llr[i];
    c.errors += (l < 0.0 ? 1u : 0u) != bit ? 1u : 0u;
    if (!(std::fabs(l) < max_abs)) {
      continue;
    }
    const auto b = std::min(nof_bins - 1, std::size_t((l + max_abs) / width));
    sum[b] += l;
    (bit != 0 ? n1 : n0)[b] += 1;
  }
  c.bits = n;
  double sxy = 0.0, sxx = 0.0;
  for (std::size_t b = 0; b < nof_bins; ++b) {
    if (n0[b] < min_count || n1[b] < min_count) {
      continue;
    }
    llr_bin x;
    x.n0 = n0[b];
    x.n1 = n1[b];
    x.mean_llr = sum[b] / double(n0[b] + n1[b]);
    x.empirical = std::log(double(n0[b]) / double(n1[b]));
    c.bins.push_back(x);
    const double w = 1.0 / (1.0 / double(n0[b]) + 1.0 / double(n1[b]));
    sxy += w * x.mean_llr * x.empirical;
    sxx += w * x.mean_llr * x.mean_llr;
  }
  c.slope = sxx > 0.0 ? sxy / sxx : 0.0;
  return c;
}

} // namespace whd::baseband
