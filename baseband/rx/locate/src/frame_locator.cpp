#include <whd/baseband/frame_locator.hpp>
#include <whd/fec/coded_frame.hpp>

#include "cycles.hpp"

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <numbers>

namespace whd::baseband {

namespace p = profile;

cf32 derotation(double cycles)
{
  const double ph = -2.0 * std::numbers::pi * remainder_one(cycles);
  return {float(std::cos(ph)), float(std::sin(ph))};
}

/// liquid-dsp plan for the three preamble/header windows, and their samples.
struct candidate_locator::plan {
  plan() : fft(fft_create_plan(p::N, in.data(), out.data(), LIQUID_FFT_FORWARD, 0)) {}
  ~plan() { fft_destroy_plan(fft); }
  plan(const plan&) = delete;
  plan& operator=(const plan&) = delete;
  std::array<cf32, p::N> in{};
  std::array<cf32, p::N> out{};
  fftplan fft;
  std::array<cf32, 2 * p::SYMBOL_LEN + p::N> head{}; ///< the preamble and header windows
  derotation_table rot{};                            ///< of the last candidate examined
};

std::unique_ptr<channel_smoother> make_channel_smoother(const rx_config& cfg)
{
  if (cfg.channel_taps <= 0) {
    return nullptr;
  }
  // The first path sits timing_backoff samples into the FFT window.
  return std::make_unique<channel_smoother>(cfg.timing_backoff - cfg.channel_taps_early, cfg.channel_taps,
                                            std::max(1, cfg.channel_taps_min));
}

candidate_locator::candidate_locator(const rx_config& cfg, const channel_smoother* smoother)
    : cfg_(cfg), smoother_(smoother), plan_(std::make_unique<plan>())
{
}
candidate_locator::~candidate_locator() = default;

const derotation_table& candidate_locator::last_derotation() const noexcept { return plan_->rot; }

located_detection candidate_locator::examine(const transport::sample_source& src, const detection& d)
{
  constexpr uint64_t L = p::SYMBOL_LEN;
  located_detection x;
  const auto s = synchronize(src, d, cfg_);
  if (!s) {
    x.what = locate_outcome::no_sync; // not a preamble (a tone, a DC offset) or the source ends
    return x;
  }
  x.sync = *s;
  // Preamble and header windows.
  auto& head = plan_->head;
  if (src.read(s->fft0, head) != head.size()) {
    x.what = locate_outcome::cut_off;
    return x;
  }
  // Non-finite samples in the three FFT windows are taken as 0 and counted.
  for (uint64_t m = 0; m < 3; ++m) {
    x.bad_samples += zero_non_finite(std::span<cf32>(head.data() + m * L, p::N));
  }
  // The windows' samples are derotated alike, but for each window's base phase.
  auto& rot = plan_->rot;
  for (int i = 0; i < p::N; ++i) {
    rot[std::size_t(i)] = derotation(s->cfo_cps * i);
  }
  std::array<std::array<cf32, p::N>, 3> y{};
  for (uint64_t m = 0; m < 3; ++m) {
    const cf32 base = derotation(s->cfo_cps * double(fft_window(*s, m) - s->start));
    for (std::size_t i = 0; i < p::N; ++i) {
      plan_->in[i] = head[m * L + i] * (rot[i] * base);
    }
    fft_execute(plan_->fft);
    y[m] = plan_->out;
  }
  x.channel = estimate_channel(y[0].data(), y[1].data(), smoother_);
  x.header = p::decide_header(header_soft(y[2].data(), x.channel).data(), x.fields).status;
  x.what = x.header == p::header_status::ok ? locate_outcome::accepted : locate_outcome::rejected;
  if (x.what == locate_outcome::accepted) {
    add_header_to_channel(x.channel, y[0].data(), y[1].data(), y[2].data(), x.fields, smoother_);
    set_frame_modulation(x.channel, p::modulation_of_mode(x.fields.mod_field));
  }
  return x;
}

located_candidate candidate_locator::conclude(const located_detection& x, const detection& d, uint64_t total) const
{
  const located_summary s{x.what, x.sync, x.channel.snr_dB, x.header, x.fields, x.bad_samples};
  return conclude(s, x.what == locate_outcome::accepted ? std::make_shared<const channel_estimate>(x.channel) : nullptr,
                  d, total);
}

located_candidate candidate_locator::conclude(const located_summary& x, std::shared_ptr<const channel_estimate> channel,
                                              const detection& d, uint64_t total) const
{
  constexpr uint64_t L = p::SYMBOL_LEN;
  located_candidate out;
  switch (x.what) {
  case locate_outcome::no_sync:
  case locate_outcome::needs_more: // never a summary's (the GPU backend keeps those candidates)
    out.what = locate_outcome::no_sync;
    out.resume = d.coarse + L; // look past it
    return out;
  case locate_outcome::cut_off:
    out.what = locate_outcome::cut_off;
    out.resume = total;
    return out;
  case locate_outcome::rejected:
    out.what = locate_outcome::rejected;
    out.failure = header_failure{x.sync.start, x.header, x.bad_samples};
    out.resume = x.sync.start + p::NOF_PREAMBLE_SYMBOLS * L;
    return out;
  case locate_outcome::accepted: break;
  }
  located_frame f;
  f.sync = x.sync;
  f.channel = std::move(channel);
  f.info.start = x.sync.start;
  f.info.mod = p::modulation_of_mode(x.fields.mod_field);
  f.info.mcs = p::mcs_of_mode(x.fields.mod_field);
  f.info.nd = x.fields.nd;
  f.info.seq = x.fields.seq;
  f.info.cfo_Hz = x.sync.cfo_cps * cfg_.sample_rate_sps;
  f.info.snr_dB = x.snr_dB;
  f.info.bad_samples = x.bad_samples;
  // Data symbols present: those whose FFT window lies inside the capture. The
  // window ends timing_backoff samples before the symbol as located, so a symbol
  // whose first path was located a sample or two late, or whose last few samples
  // (which the window does not use) are missing, is still decoded whole.
  const uint64_t first_end = fft_window(x.sync, p::FIRST_DATA_SYMBOL) + p::N;
  const uint64_t avail = total >= first_end ? (total - first_end) / L + 1 : 0;
  f.info.symbols = uint32_t(std::min<uint64_t>(x.fields.nd, avail));
  f.info.truncated = f.info.symbols < x.fields.nd;
  // Go on half a guard before the frame's end: the coarse point of a preamble that
  // follows back to back lies on its plateau, after its first sample.
  out.what = locate_outcome::accepted;
  out.resume = f.info.truncated ? total : x.sync.start + (p::FIRST_DATA_SYMBOL + uint64_t(x.fields.nd)) * L - p::G / 2;
  out.frame = std::move(f);
  return out;
}

located_candidate candidate_locator::locate(const transport::sample_source& src, const detection& d)
{
  return conclude(examine(src, d), d, src.size());
}

bool frame_walk::take(const detection&, const located_candidate& c)
{
  switch (c.what) {
  case locate_outcome::no_sync:
  case locate_outcome::needs_more: pos_ = c.resume; return false; // never a located_candidate's
  case locate_outcome::cut_off: ended_ = true; return false;
  case locate_outcome::rejected:
  case locate_outcome::accepted: pos_ = c.resume; return true;
  }
  return false;
}

uint64_t payload_bytes_of(const frame_result& f)
{
  if (f.mcs == p::NO_MCS) {
    return uint64_t(f.symbols) * uint64_t(p::bytes_per_symbol(f.mod));
  }
  return f.truncated ? 0 : fec::geometry(f.mcs, f.nd).info_bytes;
}

uint64_t frames_to_reserve(uint64_t seen, uint64_t searched, uint64_t total)
{
  if (seen == 0 || searched == 0 || searched >= total) {
    return 0;
  }
  // A frame and the next are at least its preamble and header apart (the walk
  // resumes G/2 before its end).
  constexpr uint64_t least = uint64_t(p::FIRST_DATA_SYMBOL) * p::SYMBOL_LEN - p::G / 2;
  const uint64_t most = total / least + 1;
  const double want = double(seen) * (double(total) / double(searched)) * 1.25 + 1;
  return want >= double(most) ? most : uint64_t(want); // compared first: no conversion overflows
}

void reserve_frames(std::vector<frame_result>& frames, uint64_t searched, uint64_t total)
{
  const uint64_t want = frames_to_reserve(frames.size(), searched, total);
  if (want <= frames.capacity()) {
    return;
  }
  try {
    frames.reserve(std::size_t(want));
  } catch (const std::bad_alloc&) {
    // Address space refused (a strict overcommit policy): the list grows as it goes.
  }
}

frame_locator::frame_locator(const rx_config& cfg)
    : cfg_(cfg), search_(cfg), smoother_(make_channel_smoother(cfg)), locator_(cfg, smoother_.get())
{
}
frame_locator::~frame_locator() = default;

std::optional<locator_event> frame_locator::next(const transport::sample_source& src, uint64_t pos, const progress_fn& progress)
{
  constexpr uint64_t L = p::SYMBOL_LEN;
  constexpr uint64_t BLOCK = candidate_search::BLOCK;
  const uint64_t npos = candidate_search::nof_positions(src.size());
  stopped_ = false;
  frame_walk walk;
  walk.advance_to(pos);
  // A candidate whose coarse point is at pos opened its window at most L - 1 before.
  uint64_t lo = pos >= L ? pos - (L - 1) : 0;
  // Searched a block at a time right after a frame (the next is often near), then
  // twice as many while nothing is found.
  uint64_t span = BLOCK;
  while (lo < npos) {
    if (cfg_.stop != nullptr && cfg_.stop->load(std::memory_order_relaxed)) {
      stopped_ = true;
      return std::nullopt;
    }
    if (progress) {
      progress(lo, src.size());
    }
    uint64_t hi = 0;
    if (lo >= cached_lo_ && lo < cached_hi_) {
      hi = cached_hi_;
    } else {
      hi = std::min(npos, (lo / BLOCK + span / BLOCK) * BLOCK);
      cached_ = search_.find(src, lo, hi);
      cached_lo_ = lo;
      cached_hi_ = hi;
      span = std::min<uint64_t>(span * 2, 64 * BLOCK);
    }
    for (const detection& d : cached_) {
      if (d.window < lo || !walk.takes(d)) {
        continue;
      }
      const located_candidate c = locator_.locate(src, d);
      if (walk.take(d, c)) {
        locator_event ev;
        ev.frame = c.frame;
        ev.failure = c.failure;
        ev.resume = walk.position();
        return ev;
      }
      if (walk.ended()) {
        return std::nullopt;
      }
    }
    lo = hi;
  }
  if (progress) {
    progress(src.size(), src.size());
  }
  return std::nullopt;
}

} // namespace whd::baseband
