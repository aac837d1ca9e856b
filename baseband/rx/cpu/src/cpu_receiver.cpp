#include <whd/baseband/demap.hpp>
#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/receiver.hpp>

#include <whd/fec/coded_rx.hpp>

#include "host_pool.hpp"
#include "stage_timer.hpp"

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <utility>
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
/// While one region's frames are decoded, the next one is searched and located.
constexpr uint64_t REGION = 64 * candidate_search::BLOCK;
/// Data symbols one task of the pool decodes (a piece of one frame).
constexpr std::size_t PIECE = 64;

/// One decoding thread's tools: an FFT plan for the data symbols and its buffers.
struct cpu_worker {
  fft_worker fft;
  std::vector<cf32> samples;
  std::vector<cf32> ys;   ///< a piece's FFTs, its halo symbols' included
  std::vector<cf32> rots; ///< their own derotations, before the neighbours' average
  std::array<float, p::MAX_BITS_PER_SYMBOL> llr{}; ///< one symbol's soft values
};

/// A coded frame being decoded (profile 2): its soft values gathered, demultiplexed,
/// as its symbols are decoded (possibly over several rounds), then its information
/// bytes once the last symbol is in.
struct coded_frame {
  fec::frame_geometry g;
  std::span<int8_t> streams; ///< 8 Ce soft values (fec::demultiplex_llrs) in `storage`
  std::vector<uint8_t> info; ///< L bytes

  /// Sets the frame up for `geometry`, keeping the storage when it is large enough.
  /// The streams are left as they are: the frame's symbols write every one of them
  /// (Nd Ncbps values, 8 Ce), and the FEC runs only once its last symbol is in.
  void reset(const fec::frame_geometry& geometry)
  {
    g = geometry;
    const uint64_t n = fec::NOF_ENCODERS * g.ce;
    if (n > capacity_) {
      storage_.reset(); // before the new one: a long frame's streams are large
      storage_ = std::make_unique_for_overwrite<int8_t[]>(n);
      capacity_ = n;
    }
    streams = std::span<int8_t>(storage_.get(), n);
    info.resize(g.info_bytes);
  }

private:
  std::unique_ptr<int8_t[]> storage_;
  uint64_t capacity_ = 0;
};

/// A region of the capture searched and located: what its walk reads, and what the
/// decoding of the frames the walk takes refers to (two regions are in flight: one
/// being decoded while the next is searched and located).
struct region {
  std::vector<detection> cands;
  std::vector<located_candidate> located;
  std::vector<derotation_table> rots; ///< the candidates' (those located as frames)
  /// Every candidate the walk may take was located (false: cut short by a stop).
  bool whole = false;
};

/// One task on a thread of its own beside the caller's: a region searched and
/// located while the caller decodes the one before. Whatever happens to the caller,
/// the task is asked to quit and joined at scope exit.
class look_ahead {
public:
  look_ahead() = default;
  ~look_ahead()
  {
    quit_.store(true, std::memory_order_relaxed);
    if (thread_.joinable()) {
      thread_.join();
    }
  }
  look_ahead(const look_ahead&) = delete;
  look_ahead& operator=(const look_ahead&) = delete;

  /// Runs task(quit) on the thread; `quit` is raised when the caller unwinds, and
  /// the task should then end soon. One task at a time (join() before the next).
  void start(std::function<void(const std::atomic<bool>&)> task)
  {
    thread_ = std::thread([this, task = std::move(task)] {
      transport::name_this_thread("whd-look-ahead");
      try {
        task(quit_);
      } catch (...) {
        error_ = std::current_exception();
      }
    });
  }
  /// Waits for the task (if one was started) and rethrows what it threw.
  void join()
  {
    if (thread_.joinable()) {
      thread_.join();
    }
    if (error_) {
      std::rethrow_exception(std::exchange(error_, nullptr));
    }
  }

private:
  std::atomic<bool> quit_{false};
  std::thread thread_;
  std::exception_ptr error_;
};

/// Seconds spent per stage in one run. The search and locate of a region run on the
/// look-ahead's thread beside the decode of the one before (the first region's before
/// any decode); the rest on the calling thread.
struct cpu_stage_times {
  double search = 0, locate = 0, wait_ahead = 0, walk = 0, decode = 0, fec = 0, write_sink = 0, hand_over = 0;
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
  std::size_t offset = 0; ///< first byte in the round's buffer (uncoded frames)
  std::size_t llr_offset = 0; ///< first byte in the round's soft-value buffer
  std::size_t slot = 0;   ///< first symbol in the round's per-symbol counts
};

class cpu_receiver final : public receiver {
public:
  explicit cpu_receiver(const rx_config& cfg)
      : cfg_(cfg), nof_threads_(cfg.nof_threads ? cfg.nof_threads : std::max(1u, std::thread::hardware_concurrency())),
        search_(cfg), smoother_(make_channel_smoother(cfg)), pool_(nof_threads_, "whd-decode"), locate_pool_(nof_threads_, "whd-locate")
  {
    for (unsigned t = 0; t < nof_threads_; ++t) {
      workers_.push_back(std::make_unique<cpu_worker>());
      locators_.push_back(std::make_unique<candidate_locator>(cfg, smoother_.get()));
    }
  }

  std::string_view backend() const noexcept override { return "cpu"; }

  receive_result run(const transport::sample_source& src, payload_sink& sink, const progress_fn& progress) override
  {
    times_ = {};
    receive_result res;
    res.nof_samples = src.size();
    const uint64_t npos = candidate_search::nof_positions(src.size());
    frame_walk walk;
    std::vector<taken_frame> taken;
    std::vector<std::size_t> taken_result;
    // Region k + 1 is searched and located on its own threads while region k is
    // decoded on pool_: they read the walk as region k's walk left it (decoding does
    // not touch it), and each fills its own of the two regions_. Declared after the
    // walk, so that it is joined before the walk goes.
    look_ahead ahead;
    bool ready = false; // regions_[cur] holds the region at lo, filled by the look-ahead
    std::size_t cur = 0;
    std::size_t handed = 0; // frames handed to rx_config::on_frames
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
      region& r = regions_[cur];
      if (!ready) {
        const std::atomic<bool> never{false};
        prepare(src, lo, hi, walk, r, never);
      }
      if (stop_raised() || !r.whole) {
        res.interrupted = true;
        break;
      }
      taken.clear();
      taken_result.clear();
      std::optional<stage_timer> walking(times_.walk);
      for (std::size_t i = 0; i < r.cands.size() && !walk.ended(); ++i) {
        if (!walk.takes(r.cands[i]) || !walk.take(r.cands[i], r.located[i])) {
          continue;
        }
        if (r.located[i].failure) {
          res.header_failures.push_back(*r.located[i].failure);
          continue;
        }
        frame_result f = r.located[i].frame->info;
        f.payload_offset = res.payload_bytes;
        f.payload_bytes = payload_bytes_of(f);
        res.payload_bytes += f.payload_bytes;
        res.data_symbols += f.symbols;
        taken.push_back({&*r.located[i].frame, &r.rots[i]});
        taken_result.push_back(res.frames.size());
        res.frames.push_back(std::move(f));
      }
      if (lo == 0) {
        reserve_frames(res.frames, hi, npos);
      }
      walking.reset();
      // On past this region, or past the frames taken: a long frame's data are not searched.
      const uint64_t pos = walk.position();
      const uint64_t lo_next = std::max(hi, pos >= L ? pos - (L - 1) : 0);
      const uint64_t hi_next = std::min(npos, lo_next + REGION);
      ready = lo_next < npos && !walk.ended();
      if (ready) {
        ahead.start([this, &src, &walk, &into = regions_[1 - cur], lo_next, hi_next](const std::atomic<bool>& quit) {
          prepare(src, lo_next, hi_next, walk, into, quit);
        });
      }
      const std::size_t decoded = decode_frames(src, taken, taken_result, res, sink);
      {
        stage_timer t(times_.wait_ahead);
        ahead.join(); // a stop ends it too
      }
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
      hand_over(res, handed); // a region's frames are whole once it is decoded
      lo = lo_next;
      cur = 1 - cur;
    }
    hand_over(res, handed);
    if (progress && !res.interrupted) {
      progress(src.size(), src.size());
    }
    res.stage_seconds = {{"search the regions (a pool; each after the first beside the decode of the one before)", times_.search},
                         {"locate their candidates (a pool; likewise)", times_.locate},
                         {"wait for the next region's search and locate", times_.wait_ahead},
                         {"walk the candidates (host)", times_.walk},
                         {"decode the data symbols (a pool)", times_.decode},
                         {"FEC of the coded frames (a pool)", times_.fec},
                         {"payload to the sink", times_.write_sink},
                         {"frames handed over (the report as the run goes)", times_.hand_over}};
    res.resources.symbols_per_batch = std::max<std::size_t>(cfg_.symbols_per_batch, 1);
    res.resources.peak_rss_bytes = peak_rss_bytes();
    return res;
  }

private:
  /// Frames [from, end) of the result to rx_config::on_frames.
  void hand_over(const receive_result& res, std::size_t& from)
  {
    stage_timer t(times_.hand_over);
    if (cfg_.on_frames && from < res.frames.size()) {
      cfg_.on_frames(std::span<const frame_result>(res.frames).subspan(from));
    }
    from = res.frames.size();
  }

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
    coded_.clear();
    coded_.resize(frames.size());
    while (k < frames.size() && !stopped) {
      pieces_.clear();
      std::size_t nof = 0, bytes = 0, llr_bytes = 0;
      bool any_coded = false;
      while (k < frames.size() && nof < round) {
        const frame_result& info = frames[k].frame->info;
        const uint64_t total = info.symbols;
        if (done == total) {
          ++k;
          done = 0;
          continue;
        }
        if (done == 0 && stop_raised()) {
          stopped = true;
          break;
        }
        const bool coded = info.mcs != p::NO_MCS;
        if (done == 0 && coded && !info.truncated) {
          // A finished frame's buffers, when there is one: no allocation, no page
          // faults, and no zeroing of streams on this (the pool's feeding) thread.
          std::unique_ptr<coded_frame> cf;
          if (spare_.empty()) {
            cf = std::make_unique<coded_frame>();
          } else {
            cf = std::move(spare_.back());
            spare_.pop_back();
          }
          cf->reset(fec::geometry(info.mcs, info.nd));
          coded_[k] = std::move(cf);
        }
        any_coded = any_coded || coded;
        const std::size_t bps = std::size_t(p::bytes_per_symbol(info.mod));
        const auto n = std::size_t(std::min<uint64_t>({total - done, round - nof, PIECE}));
        pieces_.push_back({k, done, n, bytes, llr_bytes, nof});
        nof += n;
        bytes += coded ? 0 : n * bps;
        if (cfg_.llr.sink != nullptr) {
          llr_bytes += n * std::size_t(p::bits_per_symbol(info.mod)) * llr_value_bytes(cfg_.llr.format);
        }
        done += n;
      }
      if (nof == 0) {
        break;
      }
      bytes_.resize(bytes);
      llr_bytes_.resize(llr_bytes);
      bad_.assign(nof, 0);
      {
        stage_timer t(times_.decode);
        std::atomic<std::size_t> next{0};
        pool_.run(std::min<unsigned>(nof_threads_, unsigned(pieces_.size())), [&](unsigned part, unsigned) {
          for (std::size_t i; (i = next.fetch_add(1)) < pieces_.size();) {
            decode_piece(src, frames[pieces_[i].frame], pieces_[i], coded_[pieces_[i].frame].get(), *workers_[part]);
          }
        });
      }
      if (any_coded) {
        decode_coded(frames, index, res);
      }
      {
        stage_timer t(times_.write_sink);
        sink.write(any_coded ? std::span<const uint8_t>(round_out(frames)) : std::span<const uint8_t>(bytes_.data(), bytes));
        if (cfg_.llr.sink != nullptr) {
          cfg_.llr.sink->write(std::span<const uint8_t>(llr_bytes_.data(), llr_bytes));
          res.llr_bytes += llr_bytes;
        }
      }
      for (const piece& pc : pieces_) {
        note_bad_symbols(res.frames[index[pc.frame]], pc);
        if (ends_frame(frames, pc) && coded_[pc.frame] != nullptr) {
          if (spare_.size() < MAX_SPARE) {
            spare_.push_back(std::move(coded_[pc.frame]));
          }
          coded_[pc.frame].reset();
        }
      }
    }
    return stopped ? k : frames.size();
  }

  /// Whether piece `pc` holds its frame's last symbol.
  static bool ends_frame(const std::vector<taken_frame>& frames, const piece& pc)
  {
    return pc.first + pc.count == frames[pc.frame].frame->info.symbols;
  }

  /// The FEC of the coded frames whose last symbol this round decoded, their tiles and
  /// codewords spread over the pool; their RS counts into their results.
  void decode_coded(const std::vector<taken_frame>& frames, const std::vector<std::size_t>& index, receive_result& res)
  {
    stage_timer t(times_.fec);
    jobs_.clear();
    jobs_frame_.clear();
    for (const piece& pc : pieces_) {
      coded_frame* cf = coded_[pc.frame].get();
      if (cf != nullptr && ends_frame(frames, pc)) {
        jobs_.push_back({cf->g, cf->streams, cf->info, {}});
        jobs_frame_.push_back(pc.frame);
      }
    }
    const fec::parallel_for pf = [this](std::size_t n, const std::function<void(std::size_t)>& body) {
      std::atomic<std::size_t> next{0};
      pool_.run(unsigned(std::min<std::size_t>(n, nof_threads_)), [&](unsigned, unsigned) {
        for (std::size_t i; (i = next.fetch_add(1)) < n;) {
          body(i);
        }
      });
    };
    fec_.decode(jobs_, pf);
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      frame_result& f = res.frames[index[jobs_frame_[j]]];
      f.rs_corrected = jobs_[j].rs.corrected;
      f.rs_failed = jobs_[j].rs.failed;
    }
  }

  /// A round's payload in capture order: uncoded pieces' bytes, and the information
  /// bytes of each coded frame that ended in it (a truncated one writes none).
  const std::vector<uint8_t>& round_out(const std::vector<taken_frame>& frames)
  {
    out_.clear();
    for (const piece& pc : pieces_) {
      const frame_result& info = frames[pc.frame].frame->info;
      if (info.mcs == p::NO_MCS) {
        const std::size_t n = pc.count * std::size_t(p::bytes_per_symbol(info.mod));
        out_.insert(out_.end(), bytes_.begin() + std::ptrdiff_t(pc.offset), bytes_.begin() + std::ptrdiff_t(pc.offset + n));
      } else if (coded_[pc.frame] != nullptr && ends_frame(frames, pc)) {
        out_.insert(out_.end(), coded_[pc.frame]->info.begin(), coded_[pc.frame]->info.end());
      }
    }
    return out_;
  }

  /// The candidates of positions [lo, hi) into `r`, and every one of them `walk` may
  /// take located, in parallel on locate_pool_ (those inside a frame of this region
  /// are located for nothing, and skipped by the walk). Once rx_config::stop or
  /// `quit` is raised it ends at the next candidate, or after the search, leaving
  /// r.whole false.
  void prepare(const transport::sample_source& src, uint64_t lo, uint64_t hi, const frame_walk& walk, region& r,
               const std::atomic<bool>& quit)
  {
    r.whole = false;
    const auto halted = [&] { return stop_raised() || quit.load(std::memory_order_relaxed); };
    if (halted()) {
      return;
    }
    {
      stage_timer t(times_.search);
      r.cands = search_.find(src, lo, hi);
    }
    if (halted()) {
      return;
    }
    r.located.assign(r.cands.size(), {});
    r.rots.resize(std::max(r.rots.size(), r.cands.size()));
    stage_timer t(times_.locate);
    std::atomic<std::size_t> next{0};
    std::atomic<bool> cut{false};
    locate_pool_.run(std::min<unsigned>(nof_threads_, unsigned(r.cands.size())), [&](unsigned part, unsigned) {
      candidate_locator& locator = *locators_[part];
      for (std::size_t i; (i = next.fetch_add(1)) < r.cands.size();) {
        if (halted()) {
          cut.store(true, std::memory_order_relaxed);
          return;
        }
        if (walk.takes(r.cands[i])) {
          r.located[i] = locator.locate(src, r.cands[i]);
          if (r.located[i].frame) {
            // derotation(cfo * i) of the frame's windows, which its data symbols share
            r.rots[i] = locator.last_derotation();
          }
        }
      }
    });
    r.whole = !cut.load(std::memory_order_relaxed);
  }

  bool stop_raised() const noexcept { return cfg_.stop != nullptr && cfg_.stop->load(std::memory_order_relaxed); }

  /// Data symbols of a piece: the uncoded frame's bits into the round's buffer, or
  /// the coded frame's soft values into its streams (`cf`; null when truncated: no
  /// payload); the soft output of either.
  void decode_piece(const transport::sample_source& src, const taken_frame& tf, const piece& pc, coded_frame* cf,
                    cpu_worker& w)
  {
    const located_frame& lf = *tf.frame;
    const frame_sync& s = lf.sync;
    const bool coded = lf.info.mcs != p::NO_MCS;
    const std::size_t bps = std::size_t(p::bytes_per_symbol(lf.info.mod));
    const auto nbits = std::size_t(p::bits_per_symbol(lf.info.mod));
    const std::size_t llr_bps = nbits * llr_value_bytes(cfg_.llr.format);
    float* llr = cfg_.llr.sink != nullptr || cf != nullptr ? w.llr.data() : nullptr;
    // The piece's symbols and its halo symbols, the frame's whole symbols either side
    // (demap.hpp: a symbol's derotation averages its neighbours').
    constexpr auto K = uint64_t(PHASE_NEIGHBOURS);
    const uint64_t before = std::min<uint64_t>(K, pc.first);
    const uint64_t after = std::min<uint64_t>(K, uint64_t(lf.info.symbols) - (pc.first + pc.count));
    const std::size_t n = pc.count + std::size_t(before + after);
    const uint64_t m0 = p::FIRST_DATA_SYMBOL + pc.first - before;
    w.samples.resize((n - 1) * L + p::N);
    w.ys.resize(n * p::N);
    w.rots.resize(n);
    src.read(fft_window(s, m0), w.samples); // inside: the locator counts only symbols whose window is
    for (std::size_t i = 0; i < n; ++i) {
      const uint64_t m = m0 + i;
      cf32* r = w.samples.data() + i * L;
      const auto nbad = uint32_t(zero_non_finite(std::span<cf32>(r, p::N)));
      if (i >= before && i < before + pc.count) {
        bad_[pc.slot + i - before] = nbad; // a halo symbol's are its own piece's
      }
      const cf32* y = w.fft.transform(r, derotation(s.cfo_cps * double(fft_window(s, m) - s.start)), *tf.rot);
      std::copy_n(y, p::N, w.ys.data() + i * p::N);
      w.rots[i] = data_derotation(y, *lf.channel, (long long)m, lf.info.mod);
    }
    for (std::size_t i = 0; i < pc.count; ++i) {
      const std::size_t at = i + std::size_t(before);
      cf32 acc{};
      for (std::size_t j = at >= K ? at - K : 0; j < std::min(n, at + K + 1); ++j) {
        acc += w.rots[j];
      }
      float ur, ui;
      unit_rotation(acc.real(), acc.imag(), ur, ui);
      const cf32 rot(ur, ui);
      const cf32* y = w.ys.data() + at * p::N;
      uint8_t* bits = coded ? nullptr : bytes_.data() + pc.offset + i * bps; // a coded frame's bits are its FEC's
      demap_symbol(y, *lf.channel, rot, lf.info.mod, bits, llr);
      if (cfg_.llr.sink != nullptr) {
        encode_llrs(llr, nbits, cfg_.llr.format, cfg_.llr.scale, llr_bytes_.data() + pc.llr_offset + i * llr_bps);
      }
      if (cf != nullptr) {
        fec::demultiplex_llrs(cf->g, pc.first + i, std::span<const float>(llr, nbits), fec::LLR_SCALE, cf->streams);
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
  host_pool pool_; ///< decoding
  std::vector<std::unique_ptr<cpu_worker>> workers_; ///< one per thread of pool_
  /// Locating, beside pool_: the look-ahead locates the next region while pool_ decodes.
  host_pool locate_pool_;
  std::vector<std::unique_ptr<candidate_locator>> locators_; ///< one per thread of locate_pool_
  std::array<region, 2> regions_; ///< the region decoded and the one after it
  std::vector<piece> pieces_;
  std::vector<uint8_t> bytes_;
  std::vector<uint8_t> out_; ///< a round's payload where it holds coded frames
  std::vector<std::unique_ptr<coded_frame>> coded_; ///< per frame of decode_frames: its FEC state
  /// Finished coded frames, their buffers reused by the next ones (at most MAX_SPARE).
  std::vector<std::unique_ptr<coded_frame>> spare_;
  static constexpr std::size_t MAX_SPARE = 64;
  fec::coded_decoder fec_;
  std::vector<fec::coded_job> jobs_;
  std::vector<std::size_t> jobs_frame_;
  std::vector<uint8_t> llr_bytes_;
  std::vector<uint32_t> bad_;
  /// Written by the look-ahead's thread (search, locate) and the calling thread (the
  /// rest), read once the look-ahead is joined.
  cpu_stage_times times_;
};

} // namespace

std::unique_ptr<receiver> make_cpu_receiver(const rx_config& cfg) { return std::make_unique<cpu_receiver>(cfg); }

} // namespace whd::baseband
