#include <whd/baseband/frame_dump.hpp>

#include <whd/baseband/demap.hpp>
#include <whd/baseband/demap.hpp>

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
#include <cmath>

namespace whd::baseband {

namespace {

namespace p = profile;

/// One liquid plan over fixed buffers (the CPU backend's transform).
class dump_fft {
public:
  dump_fft() : plan_(fft_create_plan(p::N, in_.data(), out_.data(), LIQUID_FFT_FORWARD, 0)) {}
  ~dump_fft() { fft_destroy_plan(plan_); }
  dump_fft(const dump_fft&) = delete;
  dump_fft& operator=(const dump_fft&) = delete;

  /// FFT of symbol m's window, CFO-derotated as both backends do; false when the source ends first.
  bool symbol(const transport::sample_source& src, const frame_sync& s, uint64_t m, std::array<cf32, p::N>& y)
  {
    std::array<cf32, p::N> r{};
    if (src.read(fft_window(s, m), r) != r.size()) {
      return false;
    }
    const cf32 base = derotation(s.cfo_cps * double(fft_window(s, m) - s.start));
    for (int i = 0; i < p::N; ++i) {
      in_[std::size_t(i)] = r[std::size_t(i)] * (derotation(s.cfo_cps * i) * base);
    }
    fft_execute(plan_);
    y = out_;
    return true;
  }

private:
  std::array<cf32, p::N> in_{};
  std::array<cf32, p::N> out_{};
  fftplan plan_;
};

frame_dump dump_one(const transport::sample_source& src, const located_frame& lf, uint64_t index, uint32_t max_symbols, dump_fft& fft)
{
  frame_dump d;
  d.index = index;
  d.info = lf.info;
  d.h = lf.channel->h;
  std::array<cf32, p::N> y0{}, y1{}, y{};
  if (fft.symbol(src, lf.sync, 0, y0) && fft.symbol(src, lf.sync, 1, y1)) {
    double sum = 0.0;
    for (int u = 0; u < p::NOF_USED; ++u) {
      const auto b = std::size_t(p::USED_BIN[std::size_t(u)]);
      d.h_ls[std::size_t(u)] = (y0[b] + y1[b]) * (0.5f * p::preamble_value(u));
      d.noise_tone[std::size_t(u)] = 0.5f * std::norm(y0[b] - y1[b]);
      sum += d.noise_tone[std::size_t(u)];
    }
    d.noise = sum / p::NOF_USED;
  }
  const uint32_t n = std::min(max_symbols, lf.info.symbols);
  d.points.reserve(std::size_t(n) * p::NOF_DATA);
  std::array<double, p::NOF_DATA> err{};
  for (uint32_t k = 0; k < n; ++k) {
    const uint64_t m = p::FIRST_DATA_SYMBOL + k;
    if (!fft.symbol(src, lf.sync, m, y)) {
      break;
    }
    const cf32 rot = pilot_derotation(y.data(), *lf.channel, (long long)m);
    for (int dt = 0; dt < p::NOF_DATA; ++dt) {
      const auto ds = std::size_t(dt);
      const cf32 z = y[std::size_t(p::DATA_BIN[ds])] * lf.channel->inv[std::size_t(p::DATA_USED[ds])] * rot;
      d.points.push_back(z);
      const unsigned i = lf.info.mod == p::modulation::qpsk ? demap_qpsk(z.real(), z.imag()) : demap_qam16(z.real(), z.imag());
      err[ds] += std::norm(z - constellation_point(lf.info.mod, i));
    }
    ++d.nof_symbols;
  }
  for (std::size_t dt = 0; dt < err.size(); ++dt) {
    d.error_power[dt] = d.nof_symbols ? float(err[dt] / d.nof_symbols) : 0.0f;
  }
  return d;
}

double db(double x) { return x > 0.0 ? 10.0 * std::log10(x) : -300.0; }

} // namespace

std::vector<frame_dump> dump_frames(const transport::sample_source& src, const rx_config& cfg, const frame_dump_config& dcfg)
{
  std::vector<frame_dump> out;
  if (dcfg.frames.empty()) {
    return out;
  }
  const uint64_t last = *std::max_element(dcfg.frames.begin(), dcfg.frames.end());
  frame_locator locator(cfg);
  dump_fft fft;
  uint64_t pos = 0, index = 0;
  while (auto ev = locator.next(src, pos)) {
    pos = ev->resume;
    if (!ev->frame) {
      continue;
    }
    if (std::find(dcfg.frames.begin(), dcfg.frames.end(), index) != dcfg.frames.end()) {
      out.push_back(dump_one(src, *ev->frame, index, dcfg.max_symbols, fft));
    }
    if (++index > last) {
      break;
    }
  }
  return out;
}

nlohmann::json frame_dumps_json(const std::vector<frame_dump>& dumps)
{
  nlohmann::json frames = nlohmann::json::array();
  for (const auto& d : dumps) {
    nlohmann::json f{{"index", d.index},
                     {"start", d.info.start},
                     {"mod", p::to_string(d.info.mod)},
                     {"nd", d.info.nd},
                     {"seq", d.info.seq},
                     {"symbols", d.info.symbols},
                     {"cfo_hz", d.info.cfo_Hz},
                     {"snr_db", d.info.snr_dB},
                     {"noise_per_bin", d.noise},
                     {"dumped_symbols", d.nof_symbols}};
    nlohmann::json tones = nlohmann::json::array();
    for (int u = 0; u < p::NOF_USED; ++u) {
      const auto us = std::size_t(u);
      const int k = p::USED_K[us];
      tones.push_back({{"u", u},
                       {"k", k},
                       {"kind", p::is_pilot(k) ? "pilot" : "data"},
                       {"h_mag", std::abs(d.h[us])},
                       {"h_phase_rad", std::arg(d.h[us])},
                       {"h_ls_mag", std::abs(d.h_ls[us])},
                       {"h_ls_phase_rad", std::arg(d.h_ls[us])},
                       {"noise", d.noise_tone[us]},
                       {"snr_db", db(std::norm(d.h[us]) / d.noise)},
                       {"snr_raw_db", db(std::norm(d.h_ls[us]) / double(d.noise_tone[us]))}});
    }
    f["tones"] = tones;
    nlohmann::json data = nlohmann::json::array();
    for (int dt = 0; dt < p::NOF_DATA; ++dt) {
      const auto ds = std::size_t(dt);
      data.push_back({{"d", dt}, {"k", p::DATA_K[ds]}, {"decision_snr_db", db(1.0 / double(d.error_power[ds]))}});
    }
    f["data_tones"] = data;
    nlohmann::json pts = nlohmann::json::array();
    for (uint32_t s = 0; s < d.nof_symbols; ++s) {
      nlohmann::json sym = nlohmann::json::array();
      for (int dt = 0; dt < p::NOF_DATA; ++dt) {
        const cf32 z = d.points[std::size_t(s) * p::NOF_DATA + std::size_t(dt)];
        sym.push_back({z.real(), z.imag()});
      }
      pts.push_back(sym);
    }
    f["points"] = pts;
    frames.push_back(f);
  }
  return {{"profile", p::VERSION},
          {"what", "equalised points after the pilot phase; channel estimate per used tone (smoothed, and plain LS); per-tone "
                   "SNR = |H|^2 / noise per bin from the two preamble symbols (noise = |Y0 - Y1|^2 / 2, averaged over the band; "
                   "'raw' uses the tone's own draw); decision-directed SNR per data tone over the dumped symbols"},
          {"frames", frames}};
}

} // namespace whd::baseband
