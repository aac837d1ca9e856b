#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/receiver.hpp>

#include "host_pool.hpp"

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
#include <atomic>
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
  const cf32* transform(const cf32* r, cf32 base, const derotation_table& rot)
  {
    for (std::size_t i = 0; i < p::N; ++i) {
      in_[i] = r[i] * (rot[i] * base);
    }
    fft_execute(plan_);
    return out_.data();
  }

private:
  std::array<cf32, p::N> in_{};
  std::array<cf32, p::N> out_{};
  fftplan plan_;
};

/// Positions of the capture searched at a time: candidates of a region are found,
/// then located, in parallel; the walk over them is the only sequential step.
constexpr uint64_t REGION = 64 * candidate_search::BLOCK;
/// Data symbols one task of the pool decodes (a piece of one frame).
constexpr std::size_t PIECE = 64;

/// One thread's tools: an FFT plan for the data symbols and one for locating.
struct cpu_worker {
  cpu_worker(const rx_config& cfg, const channel_smoother* smoother) : locator(cfg, smoother) {}
  fft_worker fft;
  candidate_locator locator;
  std::vector<cf32> samples;
  std::array<float, p::MAX_BITS_PER_SYMBOL> llr{}; ///< one symbol's soft values
};

/// A frame taken for decoding, and the derotation table its locator made.
struct taken_frame {
  const located_frame* frame = nullptr;
  const derotation_table* rot = nullptr;
};

/// Consecutive data symbols [first, first + count) of one frame of a round.
struct piece {
  std::size_t frame = 0;  ///< index into the round's frames
  uint64_t first = 0;     ///< data symbol number (0: the frame's first)
  std::size_t count = 0;
  std::size_t offset = 0; ///< first byte in the round's buffer
  std::size_t llr_offset = 0; ///< first byte in the round's soft-value buffer
  std::size_t slot = 0;   ///< first symbol in the round's per-symbol counts
};

class cpu_receiver final : public receiver {
public:
  explicit cpu_receiver(const rx_config& cfg)
      : cfg_(cfg), nof_threads_(cfg.nof_threads ? cfg.nof_threads : std::max(1u, std::thread::hardware_concurrency())),
        search_(cfg), smoother_(make_channel_smoother(cfg)), pool_(nof_threads_)
  {
    for (unsigned t = 0; t < nof_threads_; ++t) {
      workers_.push_back(std::make_unique<cpu_worker>(cfg, smoother_.get()));
    }
  }

  std::string_view backend() const noexcept override { return "cpu"; }

  receive_result run(const transport::sample_source& src, payload_sink& sink, const progress_fn& progress) override
  {
    receive_result res;
    res.nof_samples = src.size();
    const uint64_t npos = candidate_search::nof_positions(src.size());
    frame_walk walk;
    std::vector<located_candidate> located;
    std::vector<taken_frame> taken;
    std::vector<std::size_t> taken_result;
    for (uint64_t lo = 0; lo < npos && !walk.ended();) {
      // Frames are whole in the result and the payload: a stop is honoured between regions.
      if (stop_raised()) {
        res.interrupted = true;
        break;
      }
      if (progress) {
        progress(lo, src.size());
      }
      const uint64_t hi = std::min(npos, lo + REGION);
      const std::vector<detection> cands = search_.find(src, lo, hi);
      if (stop_raised()) {
        res.interrupted = true;
        break;
      }
      // Every candidate the walk may still take is located, in parallel (those
      // inside a frame of this region are located for nothing, and skipped).
      located.assign(cands.size(), {});
      rots_.resize(std::max(rots_.size(), cands.size()));
      std::atomic<std::size_t> next{0};
      pool_.run(std::min<unsigned>(nof_threads_, unsigned(cands.size())), [&](unsigned part, unsigned) {
        for (std::size_t i; (i = next.fetch_add(1)) < cands.size();) {
          if (walk.takes(cands[i])) {
            located[i] = workers_[part]->locator.locate(src, cands[i]);
            if (located[i].frame) {
              // derotation(cfo * i) of the frame's windows, which its data symbols share
              rots_[i] = workers_[part]->locator.last_derotation();
            }
          }
        }
      });
      taken.clear();
      taken_result.clear();
      for (std::size_t i = 0; i < cands.size() && !walk.ended(); ++i) {
        if (!walk.takes(cands[i]) || !walk.take(cands[i], located[i])) {
          continue;
        }
        if (located[i].failure) {
          res.header_failures.push_back(*located[i].failure);
          continue;
        }
        frame_result f = located[i].frame->info;
        f.payload_offset = res.payload_bytes;
        f.payload_bytes = uint64_t(f.symbols) * uint64_t(p::bytes_per_symbol(f.mod));
        res.payload_bytes += f.payload_bytes;
        res.data_symbols += f.symbols;
        taken.push_back({&*located[i].frame, &rots_[i]});
        taken_result.push_back(res.frames.size());
        res.frames.push_back(std::move(f));
      }
      const std::size_t decoded = decode_frames(src, taken, taken_result, res, sink);
      if (decoded < taken.size()) {
        // Stopped: the frames not started leave the result, with whatever the walk
        // found after the first of them.
        const frame_result& first_dropped = res.frames[taken_result[decoded]];
        std::erase_if(res.header_failures, [&](const header_failure& h) { return h.start > first_dropped.start; });
        res.payload_bytes = first_dropped.payload_offset;
        for (std::size_t i = taken_result[decoded]; i < res.frames.size(); ++i) {
          res.data_symbols -= res.frames[i].symbols;
        }
        res.frames.resize(taken_result[decoded]);
        res.interrupted = true;
        break;
      }
      // On past this region, or past the frames taken: a long frame's data are not searched.
      const uint64_t pos = walk.position();
      lo = std::max(hi, pos >= L ? pos - (L - 1) : 0);
    }
    if (progress && !res.interrupted) {
      progress(src.size(), src.size());
    }
    res.resources.symbols_per_batch = std::max<std::size_t>(cfg_.symbols_per_batch, 1);
    res.resources.peak_rss_bytes = peak_rss_bytes();
    return res;
  }

private:
  /// The data symbols of `frames` (results res.frames[index[k]]), in rounds of at most
  /// rx_config::symbols_per_batch symbols (memory stays bounded for long frames), each
  /// round's pieces spread over the threads, its bytes written in capture order.
  /// Non-finite samples in a symbol's FFT window are taken as 0; the frame's result
  /// counts them and lists the symbols that held any. Once rx_config::stop is raised
  /// no further frame is started (the one being decoded is finished).
  /// @return the number of frames decoded (all of them unless stopped)
  std::size_t decode_frames(const transport::sample_source& src, const std::vector<taken_frame>& frames,
                     const std::vector<std::size_t>& index, receive_result& res, payload_sink& sink)
  {
    const std::size_t round = std::max<std::size_t>(cfg_.symbols_per_batch, 1);
    std::size_t k = 0;
    uint64_t done = 0; // symbols of frames[k] already in a round
    bool stopped = false;
    while (k < frames.size() && !stopped) {
      pieces_.clear();
      std::size_t nof = 0, bytes = 0, llr_bytes = 0;
      while (k < frames.size() && nof < round) {
        const uint64_t total = frames[k].frame->info.symbols;
        if (done == total) {
          ++k;
          done = 0;
          continue;
        }
        if (done == 0 && stop_raised()) {
          stopped = true;
          break;
        }
        const std::size_t bps = std::size_t(p::bytes_per_symbol(frames[k].frame->info.mod));
        const auto n = std::size_t(std::min<uint64_t>({total - done, round - nof, PIECE}));
        pieces_.push_back({k, done, n, bytes, llr_bytes, nof});
        nof += n;
        bytes += n * bps;
        if (cfg_.llr.sink != nullptr) {
          llr_bytes += n * std::size_t(p::bits_per_symbol(frames[k].frame->info.mod)) * llr_value_bytes(cfg_.llr.format);
        }
        done += n;
      }
      if (nof == 0) {
        break;
      }
      bytes_.resize(bytes);
      llr_bytes_.resize(llr_bytes);
      bad_.assign(nof, 0);
      std::atomic<std::size_t> next{0};
      pool_.run(std::min<unsigned>(nof_threads_, unsigned(pieces_.size())), [&](unsigned part, unsigned) {
        for (std::size_t i; (i = next.fetch_add(1)) < pieces_.size();) {
          decode_piece(src, frames[pieces_[i].frame], pieces_[i], *workers_[part]);
        }
      });
      sink.write(std::span<const uint8_t>(bytes_.data(), bytes));
      if (cfg_.llr.sink != nullptr) {
        cfg_.llr.sink->write(std::span<const uint8_t>(llr_bytes_.data(), llr_bytes));
        res.llr_bytes += llr_bytes;
      }
      for (const piece& pc : pieces_) {
        note_bad_symbols(res.frames[index[pc.frame]], pc);
      }
    }
    return stopped ? k : frames.size();
  }

  bool stop_raised() const noexcept { return cfg_.stop != nullptr && cfg_.stop->load(std::memory_order_relaxed); }

  void decode_piece(const transport::sample_source& src, const taken_frame& tf, const piece& pc, cpu_worker& w)
  {
    const located_frame& lf = *tf.frame;
    const frame_sync& s = lf.sync;
    const std::size_t bps = std::size_t(p::bytes_per_symbol(lf.info.mod));
    const auto nbits = std::size_t(p::bits_per_symbol(lf.info.mod));
    const std::size_t llr_bps = nbits * llr_value_bytes(cfg_.llr.format);
    float* llr = cfg_.llr.sink != nullptr ? w.llr.data() : nullptr;
    const uint64_t m0 = p::FIRST_DATA_SYMBOL + pc.first;
    w.samples.resize((pc.count - 1) * L + p::N);
    src.read(fft_window(s, m0), w.samples); // inside: the locator counts only symbols whose window is
    for (std::size_t i = 0; i < pc.count; ++i) {
      const uint64_t m = m0 + i;
      cf32* r = w.samples.data() + i * L;
      bad_[pc.slot + i] = uint32_t(zero_non_finite(std::span<cf32>(r, p::N)));
      const cf32* y = w.fft.transform(r, derotation(s.cfo_cps * double(fft_window(s, m) - s.start)), *tf.rot);
      demap_symbol(y, *lf.channel, pilot_derotation(y, *lf.channel, (long long)m), lf.info.mod, bytes_.data() + pc.offset + i * bps, llr);
      if (llr != nullptr) {
        encode_llrs(llr, nbits, cfg_.llr.format, cfg_.llr.scale, llr_bytes_.data() + pc.llr_offset + i * llr_bps);
      }
    }
  }

  void note_bad_symbols(frame_result& out, const piece& pc) const
  {
    for (std::size_t i = 0; i < pc.count; ++i) {
      const uint32_t n = bad_[pc.slot + i];
      if (n == 0) {
        continue;
      }
      out.bad_samples += n;
      const auto d = uint32_t(pc.first + i);
      if (!out.bad_symbols.empty() && out.bad_symbols.back().first + out.bad_symbols.back().count == d) {
        ++out.bad_symbols.back().count;
      } else {
        out.bad_symbols.push_back({d, 1});
      }
    }
  }

  rx_config cfg_;
  unsigned nof_threads_;
  candidate_search search_;
  std::unique_ptr<channel_smoother> smoother_; // made once: its set-up costs more than a short capture
  host_pool pool_;
  std::vector<std::unique_ptr<cpu_worker>> workers_;
  std::vector<piece> pieces_;
  std::vector<derotation_table> rots_; ///< the region's candidates' (those located as frames)
  std::vector<uint8_t> bytes_;
  std::vector<uint8_t> llr_bytes_;
  std::vector<uint32_t> bad_;
};

} // namespace

std::unique_ptr<receiver> make_cpu_receiver(const rx_config& cfg) { return std::make_unique<cpu_receiver>(cfg); }

} // namespace whd::baseband
