#include <whd/baseband/impairments.hpp>

#include <whd/baseband/profile.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace whd::baseband {

namespace p = whd::profile;

namespace {

uint64_t splitmix64(uint64_t& state)
{
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform in [0, 1) from the top 53 bits: the same on every standard library
/// (std::uniform_real_distribution is not).
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

/// A pair of independent standard normal draws (Marsaglia's polar method), written
/// out so that a seed gives the same capture with any standard library. One 64-bit
/// draw gives both uniforms (32 bits each; the largest normal it can produce is
/// about 9.3 sigma, far past anything a capture of 10^9 samples would show).
/// `rng` is any generator of 64-bit words (called with no argument).
template <class Rng>
std::complex<double> normal_pair(Rng& rng)
{
  for (;;) {
    const uint64_t bits = rng();
    const double u = static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(bits))) * 0x1.0p-31;
    const double v = static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(bits >> 32))) * 0x1.0p-31;
    const double s = u * u + v * v;
    if (s > 0.0 && s < 1.0) {
      const double f = std::sqrt(-2.0 * std::log(s) / s);
      return {u * f, v * f};
    }
  }
}

} // namespace

impairment_seeds derive_seeds(uint64_t seed)
{
  uint64_t state = seed;
  impairment_seeds s;
  s.payload = splitmix64(state);
  s.channel = splitmix64(state);
  s.phase = splitmix64(state);
  s.noise = splitmix64(state);
  return s;
}

uint64_t derive_stream_seed(uint64_t seed, uint64_t index)
{
  uint64_t state = seed + index * 0x9E3779B97F4A7C15ull;
  return splitmix64(state);
}

// ---------------------------------------------------------------- multipath

std::vector<cf32> multipath_taps(int nof_taps, double decay_dB_per_tap, uint64_t seed)
{
  if (nof_taps < 1 || nof_taps > p::G) {
    throw std::invalid_argument("multipath_taps: the number of taps must be 1.." + std::to_string(p::G) +
                                " (the delay spread must stay inside the guard), got " + std::to_string(nof_taps));
  }
  if (!(decay_dB_per_tap >= 0.0) || !std::isfinite(decay_dB_per_tap)) {
    throw std::invalid_argument("multipath_taps: the decay must be a finite number of dB >= 0");
  }
  if (nof_taps == 1) {
    return {cf32(1.0f, 0.0f)};
  }
  std::mt19937_64 rng(seed);
  std::vector<std::complex<double>> h(static_cast<std::size_t>(nof_taps));
  double energy = 0.0;
  for (int l = 0; l < nof_taps; ++l) {
    const double power = std::pow(10.0, -decay_dB_per_tap * l / 10.0);
    // CN(0, power): each of I and Q has variance power / 2.
    h[static_cast<std::size_t>(l)] = normal_pair(rng) * std::sqrt(power / 2.0);
    energy += std::norm(h[static_cast<std::size_t>(l)]);
  }
  std::vector<cf32> taps(h.size());
  const double norm = 1.0 / std::sqrt(energy);
  for (std::size_t l = 0; l < h.size(); ++l) {
    taps[l] = cf32(static_cast<float>(h[l].real() * norm), static_cast<float>(h[l].imag() * norm));
  }
  return taps;
}

double used_tone_power_gain(std::span<const cf32> taps)
{
  double sum = 0.0;
  for (auto b : p::USED_BIN) {
    std::complex<double> H;
    for (std::size_t l = 0; l < taps.size(); ++l) {
      const auto bl = static_cast<long long>(b) * static_cast<long long>(l) % p::N;
      const double angle = -2.0 * std::numbers::pi * static_cast<double>(bl) / p::N;
      H += std::complex<double>(taps[l]) * std::polar(1.0, angle);
    }
    sum += std::norm(H);
  }
  return sum / p::NOF_USED;
}

multipath_channel::multipath_channel(std::vector<cf32> taps) : taps_(std::move(taps))
{
  if (taps_.empty()) {
    throw std::invalid_argument("multipath_channel: at least one tap is needed");
  }
  history_.assign(taps_.size() - 1, cf32{});
}

void multipath_channel::run(std::span<cf32> inout)
{
  if (taps_.size() == 1) {
    const cf32 h = taps_[0];
    if (h != cf32(1.0f, 0.0f)) {
      for (auto& x : inout) {
        x *= h;
      }
    }
    return;
  }
  const std::size_t mem = taps_.size() - 1;
  history_.resize(mem);
  history_.insert(history_.end(), inout.begin(), inout.end());
  filter(history_, inout);
  // Keep the last `mem` inputs for the next block.
  std::copy(history_.end() - static_cast<std::ptrdiff_t>(mem), history_.end(), history_.begin());
  history_.resize(mem);
}

void multipath_channel::filter(std::span<const cf32> in, std::span<cf32> out_block) const
{
  const std::size_t mem = taps_.size() - 1;
  if (in.size() != out_block.size() + mem) {
    throw std::invalid_argument("multipath_channel::filter: the input must hold the block and the " +
                                std::to_string(mem) + " samples before it");
  }
  if (taps_.size() == 1) {
    const cf32 h = taps_[0];
    for (std::size_t n = 0; n < out_block.size(); ++n) {
      out_block[n] = h == cf32(1.0f, 0.0f) ? in[n] : in[n] * h;
    }
    return;
  }
  // Written out over plain pointers: std::complex's operator* checks for
  // infinities (a library call per product), which dominates long captures.
  const cf32* h = taps_.data();
  const cf32* x = in.data() + mem; // x[n] is the block's sample n; x[-mem .. -1] the history
  const std::size_t nof_taps = taps_.size();
  cf32* out = out_block.data();
  for (std::size_t n = 0; n < out_block.size(); ++n) {
    double re = 0.0;
    double im = 0.0;
    for (std::size_t l = 0; l < nof_taps; ++l) {
      const double hr = h[l].real();
      const double hi = h[l].imag();
      const cf32 xs = x[static_cast<std::ptrdiff_t>(n) - static_cast<std::ptrdiff_t>(l)];
      const double xr = xs.real();
      const double xi = xs.imag();
      re += hr * xr - hi * xi;
      im += hr * xi + hi * xr;
    }
    out[n] = cf32(static_cast<float>(re), static_cast<float>(im));
  }
}

// ---------------------------------------------------------------- carrier

carrier_offset::carrier_offset(double cfo_Hz, double rate_sps)
{
  if (!std::isfinite(cfo_Hz) || !(rate_sps > 0.0) || !std::isfinite(rate_sps)) {
    throw std::invalid_argument("carrier_offset: the CFO must be finite and the sample rate positive");
  }
  cycles_per_sample_ = cfo_Hz / rate_sps;
}

void carrier_offset::run(uint64_t first_sample, std::span<cf32> inout, std::complex<double> gain) const
{
  if (cycles_per_sample_ == 0.0 && gain == std::complex<double>(1.0, 0.0)) {
    return;
  }
  // Phase of the block's first sample from its index: the fractional cycles only,
  // so that the angle stays exact for indices far into the capture.
  const double cycles = cycles_per_sample_ * static_cast<double>(first_sample);
  const double frac = cycles - std::floor(cycles);
  const std::complex<double> start = gain * std::polar(1.0, 2.0 * std::numbers::pi * frac);
  const std::complex<double> step = std::polar(1.0, 2.0 * std::numbers::pi * cycles_per_sample_);
  // The products written out (std::complex's operator* is a library call per product).
  double rr = start.real();
  double ri = start.imag();
  const double sr = step.real();
  const double si = step.imag();
  for (auto& x : inout) {
    const double xr = x.real();
    const double xi = x.imag();
    x = cf32(static_cast<float>(xr * rr - xi * ri), static_cast<float>(xr * ri + xi * rr));
    const double nr = rr * sr - ri * si;
    ri = rr * si + ri * sr;
    rr = nr;
  }
}

// ---------------------------------------------------------------- noise

double noise_power_for_snr(double signal_power, double snr_dB)
{
  return signal_power * std::pow(10.0, -snr_dB / 10.0);
}

awgn::awgn(double noise_power, uint64_t seed) : power_(noise_power), seed_(seed)
{
  if (!(noise_power >= 0.0) || !std::isfinite(noise_power)) {
    throw std::invalid_argument("awgn: the noise power must be finite and >= 0");
  }
}

void awgn::add(std::span<cf32> inout)
{
  add_at(next_sample_, inout);
  next_sample_ += inout.size();
}

void awgn::add_at(uint64_t first_sample, std::span<cf32> inout) const
{
  const double sigma = std::sqrt(power_ / 2.0);
  for (std::size_t k = 0; k < inout.size(); ++k) {
    // Sample n's own short stream: splitmix64 from its derived seed.
    uint64_t state = derive_stream_seed(seed_, first_sample + k);
    auto next = [&state] { return splitmix64(state); };
    const std::complex<double> w = normal_pair(next);
    inout[k] += cf32(static_cast<float>(w.real() * sigma), static_cast<float>(w.imag() * sigma));
  }
}

// ---------------------------------------------------------------- the chain

namespace {

std::complex<double> draw_gain(const impairment_config& cfg, const impairment_seeds& seeds)
{
  if (!(cfg.gain > 0.0) || !std::isfinite(cfg.gain)) {
    throw std::invalid_argument("impairment_chain: the gain must be a finite number > 0");
  }
  double phase = cfg.phase_rad;
  if (cfg.random_phase) {
    std::mt19937_64 rng(seeds.phase);
    phase = 2.0 * std::numbers::pi * uniform01(rng);
  } else if (!std::isfinite(phase)) {
    throw std::invalid_argument("impairment_chain: the phase must be finite");
  }
  return std::polar(cfg.gain, phase);
}

} // namespace

impairment_chain::impairment_chain(const impairment_config& cfg, const impairment_seeds& seeds,
                                   double clean_signal_power)
    : channel_(multipath_taps(cfg.nof_taps, cfg.tap_decay_dB, seeds.channel)),
      cfo_(cfg.cfo_Hz, cfg.sample_rate_sps),
      gain_(draw_gain(cfg, seeds))
{
  signal_power_ = std::norm(gain_) * used_tone_power_gain(channel_.taps()) * clean_signal_power;
  if (cfg.snr_dB) {
    if (!std::isfinite(*cfg.snr_dB)) {
      throw std::invalid_argument("impairment_chain: the SNR must be a finite number of dB");
    }
    noise_.emplace(noise_power_for_snr(signal_power_, *cfg.snr_dB), seeds.noise);
  }
}

void impairment_chain::run(uint64_t first_sample, std::span<cf32> inout)
{
  if (first_sample != next_sample_) {
    throw std::logic_error("impairment_chain::run: blocks must follow each other (expected sample " +
                           std::to_string(next_sample_) + ", got " + std::to_string(first_sample) + ")");
  }
  next_sample_ += inout.size();
  channel_.run(inout);
  cfo_.run(first_sample, inout, gain_);
  if (noise_) {
    noise_->add_at(first_sample, inout);
  }
}

void impairment_chain::apply(uint64_t first_sample, std::span<const cf32> clean, std::span<cf32> out) const
{
  channel_.filter(clean, out);
  cfo_.run(first_sample, out, gain_);
  if (noise_) {
    noise_->add_at(first_sample, out);
  }
}

} // namespace whd::baseband
