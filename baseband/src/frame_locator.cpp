#include <whd/baseband/frame_locator.hpp>

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace whd::baseband {

namespace p = profile;

cf32 derotation(double cycles)
{
  const double ph = -2.0 * std::numbers::pi * std::remainder(cycles, 1.0);
  return {float(std::cos(ph)), float(std::sin(ph))};
}

/// liquid-dsp plan for the three preamble/header windows.
struct frame_locator::plan {
  plan() : fft(fft_create_plan(p::N, in.data(), out.data(), LIQUID_FFT_FORWARD, 0)) {}
  ~plan() { fft_destroy_plan(fft); }
  plan(const plan&) = delete;
  plan& operator=(const plan&) = delete;
  std::array<cf32, p::N> in{};
  std::array<cf32, p::N> out{};
  fftplan fft;
};

frame_locator::frame_locator(const rx_config& cfg) : cfg_(cfg), det_(cfg), plan_(std::make_unique<plan>())
{
  if (cfg.channel_taps > 0) {
    // The first path sits timing_backoff samples into the FFT window.
    smoother_ = std::make_unique<channel_smoother>(cfg.timing_backoff - cfg.channel_taps_early, cfg.channel_taps);
  }
}
frame_locator::~frame_locator() = default;

located_detection frame_locator::locate(const transport::sample_source& src, const detection& d)
{
  constexpr uint64_t L = p::SYMBOL_LEN;
  located_detection out;
  const auto s = synchronize(src, d, cfg_);
  if (!s) {
    return out; // not a preamble (a tone, a DC offset) or the source ends
  }
  out.sync = *s;
  // Preamble and header windows.
  std::vector<cf32> head(2 * L + p::N);
  if (src.read(s->fft0, head) != head.size()) {
    out.what = located_detection::outcome::cut_off;
    return out;
  }
  // Non-finite samples in the three FFT windows are taken as 0 and counted.
  for (uint64_t m = 0; m < 3; ++m) {
    out.bad_samples += zero_non_finite(std::span<cf32>(head.data() + m * L, p::N));
  }
  std::array<std::array<cf32, p::N>, 3> y{};
  for (uint64_t m = 0; m < 3; ++m) {
    const cf32 base = derotation(s->cfo_cps * double(fft_window(*s, m) - s->start));
    for (int i = 0; i < p::N; ++i) {
      plan_->in[std::size_t(i)] = head[m * L + std::size_t(i)] * (derotation(s->cfo_cps * i) * base);
    }
    fft_execute(plan_->fft);
    y[m] = plan_->out;
  }
  out.channel = estimate_channel(y[0].data(), y[1].data(), smoother_.get());
  out.header = p::parse_header(decide_header(y[2].data(), out.channel), out.fields);
  out.what = out.header == p::header_status::ok ? located_detection::outcome::accepted : located_detection::outcome::rejected;
  return out;
}

std::optional<locator_event> frame_locator::next(const transport::sample_source& src, uint64_t pos, const progress_fn& progress)
{
  constexpr uint64_t L = p::SYMBOL_LEN;
  const uint64_t total = src.size();
  while (auto d = det_.next(src, pos, progress)) {
    const located_detection l = locate(src, *d);
    if (l.what == located_detection::outcome::no_sync) {
      pos = d->coarse + L; // not a preamble (a tone, a DC offset) or the source ends: look past it
      continue;
    }
    if (l.what == located_detection::outcome::cut_off) {
      return std::nullopt; // the capture ends before the header is whole: nothing decodable
    }
    const frame_sync* s = &l.sync;
    locator_event ev;
    if (l.what == located_detection::outcome::rejected) {
      ev.failure = header_failure{s->start, l.header, l.bad_samples};
      ev.resume = s->start + p::NOF_PREAMBLE_SYMBOLS * L;
      return ev;
    }
    const p::header_fields& hdr = l.fields;
    located_frame f;
    f.sync = *s;
    f.channel = l.channel;
    f.info.start = s->start;
    f.info.mod = p::modulation(hdr.mod_field);
    f.info.nd = hdr.nd;
    f.info.seq = hdr.seq;
    f.info.cfo_Hz = s->cfo_cps * cfg_.sample_rate_sps;
    f.info.snr_dB = l.channel.snr_dB;
    f.info.bad_samples = l.bad_samples;
    // Data symbols present: those whose FFT window lies inside the capture. The
    // window ends timing_backoff samples before the symbol as located, so a symbol
    // whose first path was located a sample or two late, or whose last few samples
    // (which the window does not use) are missing, is still decoded whole.
    const uint64_t first_end = fft_window(*s, p::FIRST_DATA_SYMBOL) + p::N;
    const uint64_t avail = total >= first_end ? (total - first_end) / L + 1 : 0;
    f.info.symbols = uint32_t(std::min<uint64_t>(hdr.nd, avail));
    f.info.truncated = f.info.symbols < hdr.nd;
    // Resume a little before the frame's end so a back-to-back preamble is whole.
    ev.resume = f.info.truncated ? total : s->start + (p::FIRST_DATA_SYMBOL + uint64_t(hdr.nd)) * L - p::G / 4;
    ev.frame = std::move(f);
    return ev;
  }
  return std::nullopt;
}

} // namespace whd::baseband
