#include <whd/baseband/receiver.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/baseband/tone_math.hpp>

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <thread>
#include <vector>

namespace whd::baseband {

namespace {

namespace p = profile;
constexpr uint64_t L = p::SYMBOL_LEN;

/// One worker's FFT plan and buffers (liquid plans are not shareable across threads).
class fft_worker {
public:
  fft_worker() : plan_(fft_create_plan(p::N, in_.data(), out_.data(), LIQUID_FFT_FORWARD, 0)) {}
  ~fft_worker() { fft_destroy_plan(plan_); }
  fft_worker(const fft_worker&) = delete;
  fft_worker& operator=(const fft_worker&) = delete;

  /// FFT of `n` samples starting at `r`, derotated by base * rot[i].
  const cf32* transform(const cf32* r, cf32 base, const std::vector<cf32>& rot)
  {
    for (int i = 0; i < p::N; ++i) {
      in_[std::size_t(i)] = r[i] * (rot[std::size_t(i)] * base);
    }
    fft_execute(plan_);
    return out_.data();
  }

private:
  std::array<cf32, p::N> in_{};
  std::array<cf32, p::N> out_{};
  fftplan plan_;
};

/// e^{-j 2 pi phi} for a phase in cycles, reduced in double first.
cf32 derotation(double cycles)
{
  const double ph = -2.0 * std::numbers::pi * std::remainder(cycles, 1.0);
  return {float(std::cos(ph)), float(std::sin(ph))};
}

class cpu_receiver final : public receiver {
public:
  explicit cpu_receiver(const rx_config& cfg)
      : cfg_(cfg), nof_threads_(cfg.nof_threads ? cfg.nof_threads : std::max(1u, std::thread::hardware_concurrency())),
        workers_(nof_threads_), rot_(p::N)
  {
    for (auto& w : workers_) {
      w = std::make_unique<fft_worker>();
    }
  }

  std::string_view backend() const noexcept override { return "cpu"; }

  receive_result run(const transport::sample_source& src, payload_sink& sink, const progress_fn& progress) override
  {
    receive_result res;
    res.nof_samples = src.size();
    detector det(cfg_);
    uint64_t pos = 0;
    while (auto d = det.next(src, pos, progress)) {
      const auto s = synchronize(src, *d, cfg_);
      if (!s) {
        pos = d->coarse + L; // not a preamble (or the source ends): look past it
        continue;
      }
      pos = decode_frame(src, *s, sink, res);
    }
    return res;
  }

private:
  /// Decode one synchronised frame; returns where the search resumes.
  uint64_t decode_frame(const transport::sample_source& src, const frame_sync& s, payload_sink& sink, receive_result& res)
  {
    const uint64_t total = src.size();
    for (int i = 0; i < p::N; ++i) {
      rot_[std::size_t(i)] = derotation(s.cfo_cps * i);
    }
    // Preamble and header windows.
    std::vector<cf32> head(2 * L + p::N);
    if (src.read(s.fft0, head) != head.size()) {
      return total; // the capture ends before the header is whole: nothing decodable
    }
    fft_worker& w = *workers_[0];
    std::array<std::array<cf32, p::N>, 3> y{};
    for (uint64_t m = 0; m < 3; ++m) {
      const cf32* out = w.transform(head.data() + m * L, derotation(s.cfo_cps * double(fft_window(s, m) - s.start)), rot_);
      std::copy(out, out + p::N, y[m].begin());
    }
    const channel_estimate ch = estimate_channel(y[0].data(), y[1].data());
    p::header_fields hdr;
    const auto status = p::parse_header(decide_header(y[2].data(), ch), hdr);
    if (status != p::header_status::ok) {
      res.header_failures.push_back({s.start, status});
      return s.start + p::NOF_PREAMBLE_SYMBOLS * L;
    }
    frame_result f;
    f.start = s.start;
    f.mod = p::modulation(hdr.mod_field);
    f.nd = hdr.nd;
    f.seq = hdr.seq;
    f.cfo_Hz = s.cfo_cps * cfg_.sample_rate_sps;
    f.snr_dB = ch.snr_dB;
    // Whole data symbols present: symbol m occupies [start + m L, start + (m + 1) L).
    const uint64_t whole = (total - s.start) / L;
    const uint64_t avail = whole > uint64_t(p::FIRST_DATA_SYMBOL) ? whole - p::FIRST_DATA_SYMBOL : 0;
    f.symbols = uint32_t(std::min<uint64_t>(hdr.nd, avail));
    f.truncated = f.symbols < hdr.nd;
    f.payload_offset = res.payload_bytes;
    decode_data(src, s, ch, f, sink);
    f.payload_bytes = uint64_t(f.symbols) * p::bytes_per_symbol(f.mod);
    res.payload_bytes += f.payload_bytes;
    res.data_symbols += f.symbols;
    res.frames.push_back(f);
    if (f.truncated) {
      return total;
    }
    // Resume a little before the frame's end so a back-to-back preamble is whole.
    return s.start + (p::FIRST_DATA_SYMBOL + uint64_t(hdr.nd)) * L - p::G / 4;
  }

  /// Data symbols in batches; each batch split over the workers by symbol ranges.
  void decode_data(const transport::sample_source& src, const frame_sync& s, const channel_estimate& ch, const frame_result& f,
                   payload_sink& sink)
  {
    const std::size_t bps = std::size_t(p::bytes_per_symbol(f.mod));
    const std::size_t batch = std::max<std::size_t>(cfg_.symbols_per_batch, 1);
    std::vector<uint8_t> bytes(batch * bps);
    for (uint64_t b0 = 0; b0 < f.symbols; b0 += batch) {
      const std::size_t nb = std::size_t(std::min<uint64_t>(batch, f.symbols - b0));
      const std::size_t nt = std::min<std::size_t>(nof_threads_, (nb + 63) / 64);
      auto work = [&](std::size_t t) {
        const std::size_t lo = nb * t / nt, hi = nb * (t + 1) / nt;
        if (lo == hi) {
          return;
        }
        const uint64_t m0 = p::FIRST_DATA_SYMBOL + b0 + lo;
        std::vector<cf32> r((hi - lo - 1) * L + p::N);
        src.read(fft_window(s, m0), r); // whole by construction (symbols counts only whole ones)
        for (std::size_t i = lo; i < hi; ++i) {
          const uint64_t m = m0 + (i - lo);
          const cf32* y = workers_[t]->transform(r.data() + (i - lo) * L, derotation(s.cfo_cps * double(fft_window(s, m) - s.start)), rot_);
          demap_symbol(y, ch, pilot_derotation(y, ch, (long long)m), f.mod, bytes.data() + i * bps);
        }
      };
      if (nt <= 1) {
        work(0);
      } else {
        std::vector<std::jthread> threads;
        for (std::size_t t = 1; t < nt; ++t) {
          threads.emplace_back(work, t);
        }
        work(0);
      }
      sink.write(std::span<const uint8_t>(bytes.data(), nb * bps));
    }
  }

  rx_config cfg_;
  unsigned nof_threads_;
  std::vector<std::unique_ptr<fft_worker>> workers_;
  std::vector<cf32> rot_;
};

} // namespace

std::unique_ptr<receiver> make_cpu_receiver(const rx_config& cfg) { return std::make_unique<cpu_receiver>(cfg); }

} // namespace whd::baseband
