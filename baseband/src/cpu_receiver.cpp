#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/receiver.hpp>

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
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

  /// FFT of N samples at `r`, each derotated by rot[i] * base.
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

class cpu_receiver final : public receiver {
public:
  explicit cpu_receiver(const rx_config& cfg)
      : cfg_(cfg), nof_threads_(cfg.nof_threads ? cfg.nof_threads : std::max(1u, std::thread::hardware_concurrency())),
        locator_(cfg), workers_(nof_threads_), rot_(p::N)
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
    uint64_t pos = 0;
    while (true) {
      // Frames are whole in the result and the payload: a stop is honoured between them.
      if (cfg_.stop != nullptr && cfg_.stop->load(std::memory_order_relaxed)) {
        res.interrupted = true;
        break;
      }
      const auto ev = locator_.next(src, pos, progress);
      if (!ev) {
        res.interrupted = locator_.stopped();
        break;
      }
      pos = ev->resume;
      if (ev->failure) {
        res.header_failures.push_back(*ev->failure);
        continue;
      }
      frame_result f = ev->frame->info;
      f.payload_offset = res.payload_bytes;
      decode_data(src, *ev->frame, f, sink);
      f.payload_bytes = uint64_t(f.symbols) * uint64_t(p::bytes_per_symbol(f.mod));
      res.payload_bytes += f.payload_bytes;
      res.data_symbols += f.symbols;
      res.frames.push_back(f);
    }
    res.resources.symbols_per_batch = std::max<std::size_t>(cfg_.symbols_per_batch, 1);
    res.resources.peak_rss_bytes = peak_rss_bytes();
    return res;
  }

private:
  /// Data symbols in batches; each batch split over the workers by symbol ranges.
  /// Non-finite samples in a symbol's FFT window are taken as 0; `out` counts them
  /// and lists the symbols that held any.
  void decode_data(const transport::sample_source& src, const located_frame& lf, frame_result& out, payload_sink& sink)
  {
    const frame_sync& s = lf.sync;
    const frame_result& f = lf.info;
    for (int i = 0; i < p::N; ++i) {
      rot_[std::size_t(i)] = derotation(s.cfo_cps * i);
    }
    const std::size_t bps = std::size_t(p::bytes_per_symbol(f.mod));
    const std::size_t batch = std::max<std::size_t>(cfg_.symbols_per_batch, 1);
    std::vector<uint8_t> bytes(batch * bps);
    std::vector<uint32_t> bad(batch); // non-finite samples per symbol of the batch
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
        src.read(fft_window(s, m0), r); // inside: the locator counts only symbols whose window is
        for (std::size_t i = lo; i < hi; ++i) {
          const uint64_t m = m0 + (i - lo);
          bad[i] = uint32_t(zero_non_finite(std::span<cf32>(r.data() + (i - lo) * L, p::N)));
          const cf32* y = workers_[t]->transform(r.data() + (i - lo) * L, derotation(s.cfo_cps * double(fft_window(s, m) - s.start)), rot_);
          demap_symbol(y, lf.channel, pilot_derotation(y, lf.channel, (long long)m), f.mod, bytes.data() + i * bps);
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
      for (std::size_t i = 0; i < nb; ++i) {
        if (bad[i] == 0) {
          continue;
        }
        out.bad_samples += bad[i];
        const auto d = uint32_t(b0 + i);
        if (!out.bad_symbols.empty() && out.bad_symbols.back().first + out.bad_symbols.back().count == d) {
          ++out.bad_symbols.back().count;
        } else {
          out.bad_symbols.push_back({d, 1});
        }
      }
    }
  }

  rx_config cfg_;
  unsigned nof_threads_;
  frame_locator locator_; // made once: its channel smoother's set-up costs more than a short capture
  std::vector<std::unique_ptr<fft_worker>> workers_;
  std::vector<cf32> rot_;
};

} // namespace

std::unique_ptr<receiver> make_cpu_receiver(const rx_config& cfg) { return std::make_unique<cpu_receiver>(cfg); }

} // namespace whd::baseband
