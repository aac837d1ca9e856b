#include "plain_liquid_chain.hpp"

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <thread>

namespace whd::rx_bench {

namespace p = profile;
namespace bb = baseband;

plain_liquid_chain::plain_liquid_chain(const std::vector<bb::located_frame>& frames)
{
  for (const auto& f : frames) {
    if (f.info.symbols == 0) {
      continue;
    }
    runs_.push_back({bb::fft_window(f.sync, p::FIRST_DATA_SYMBOL), f.info.symbols, f.info.mod, nof_symbols_, payload_bytes_});
    nof_symbols_ += f.info.symbols;
    payload_bytes_ += uint64_t(f.info.symbols) * uint64_t(p::bytes_per_symbol(f.info.mod));
  }
}

int plain_liquid_chain::bits_per_symbol() const noexcept
{
  return nof_symbols_ ? int(payload_bytes_ * 8 / nof_symbols_) : 0;
}

namespace {

/// One thread's liquid objects (liquid plans and modems are not shared between threads).
class plain_worker {
public:
  plain_worker()
      : fft_(fft_create_plan(p::N, in_.data(), out_.data(), LIQUID_FFT_FORWARD, 0)),
        qpsk_(modemcf_create(LIQUID_MODEM_QPSK)), qam16_(modemcf_create(LIQUID_MODEM_QAM16))
  {
  }
  ~plain_worker()
  {
    fft_destroy_plan(fft_);
    modemcf_destroy(qpsk_);
    modemcf_destroy(qam16_);
  }
  plain_worker(const plain_worker&) = delete;
  plain_worker& operator=(const plain_worker&) = delete;

  /// Symbols [lo, hi) of a frame whose first window is at `first_window`.
  void decode(const transport::sample_source& src, uint64_t first_window, uint64_t lo, uint64_t hi, p::modulation mod,
              uint8_t* out)
  {
    constexpr uint64_t RUN = 256; // symbols read with one call
    const int bps = p::bits_per_tone(mod);
    modemcf q = mod == p::modulation::qpsk ? qpsk_ : qam16_;
    const std::size_t bytes = std::size_t(p::bytes_per_symbol(mod));
    for (uint64_t k = lo; k < hi; k += RUN) {
      const uint64_t n = std::min(RUN, hi - k);
      buf_.resize(std::size_t((n - 1) * p::SYMBOL_LEN + p::N));
      src.read(first_window + k * p::SYMBOL_LEN, buf_);
      for (uint64_t i = 0; i < n; ++i) {
        std::copy_n(buf_.data() + i * p::SYMBOL_LEN, p::N, in_.data()); // guard skipped: the window is the body
        fft_execute(fft_);
        uint8_t* o = out + (k + i) * bytes;
        unsigned acc = 0;
        int nbits = 0;
        for (int d = 0; d < p::NOF_DATA; ++d) {
          unsigned s = 0;
          modemcf_demodulate(q, out_[std::size_t(p::DATA_BIN[std::size_t(d)])], &s);
          acc = (acc << bps) | s;
          nbits += bps;
          if (nbits == 8) {
            *o++ = uint8_t(acc);
            acc = 0;
            nbits = 0;
          }
        }
      }
    }
  }

private:
  std::array<std::complex<float>, p::N> in_{};
  std::array<std::complex<float>, p::N> out_{};
  std::vector<cf32> buf_;
  fftplan fft_;
  modemcf qpsk_, qam16_;
};

} // namespace

void plain_liquid_chain::run(const transport::sample_source& src, unsigned nof_threads, std::span<uint8_t> out) const
{
  if (out.size() < payload_bytes_) {
    throw std::invalid_argument("plain_liquid_chain::run: output smaller than payload_bytes()");
  }
  const std::size_t nt = std::max<std::size_t>(1, std::min<uint64_t>(nof_threads, std::max<uint64_t>(nof_symbols_, 1)));
  auto work = [&](std::size_t t) {
    plain_worker w;
    const uint64_t lo = nof_symbols_ * t / nt, hi = nof_symbols_ * (t + 1) / nt;
    for (const auto& r : runs_) {
      const uint64_t a = std::max(lo, r.first_symbol), b = std::min(hi, r.first_symbol + r.count);
      if (a < b) {
        w.decode(src, r.first_window, a - r.first_symbol, b - r.first_symbol, r.mod, out.data() + r.out_offset);
      }
    }
  };
  if (nt == 1) {
    work(0);
    return;
  }
  std::vector<std::jthread> threads;
  for (std::size_t t = 1; t < nt; ++t) {
    threads.emplace_back(work, t);
  }
  work(0);
}

} // namespace whd::rx_bench
