#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/gpu_receiver.hpp>

#include "gpu_symbol_decoder.hpp"
#include "host_pool.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <span>
#include <stdexcept>
#include <thread>
#include <vector>

namespace whd::baseband {

namespace gpu {

frame_params make_frame_params(const located_frame& f)
{
  frame_params fp{};
  fp.cfo_cps = f.sync.cfo_cps;
  fp.window_offset = double(f.sync.fft0 - f.sync.start);
  fp.mod = int32_t(f.info.mod);
  for (int d = 0; d < profile::NOF_DATA; ++d) {
    const cf32 inv = f.channel.inv[std::size_t(profile::DATA_USED[std::size_t(d)])];
    fp.inv[profile::DATA_BIN[std::size_t(d)]] = float2{inv.real(), inv.imag()};
  }
  for (int j = 0; j < profile::N / 64; ++j) {
    for (int t = 0; t < 64; ++t) {
      fp.inv_held[64 * j + t] = fp.inv[held_lane(t) + 64 * j];
    }
  }
  for (int i = 0; i < profile::NOF_PILOTS; ++i) {
    const cf32 h = f.channel.h[std::size_t(profile::PILOT_USED[std::size_t(i)])];
    fp.hconj_re[i] = h.real();
    fp.hconj_im[i] = -h.imag();
  }
  for (int t = 0; t < 64; ++t) {
    const cf32 r = derotation(f.sync.cfo_cps * t);
    fp.rot_re[t] = r.real();
    fp.rot_im[t] = r.imag();
  }
  const cf32 step = derotation(f.sync.cfo_cps * 64.0);
  fp.step_re = step.real();
  fp.step_im = step.imag();
  return fp;
}

} // namespace gpu

namespace {

namespace p = profile;
namespace tr = transport;
constexpr uint64_t L = p::SYMBOL_LEN;
/// Frames whose parameters one batch carries; a batch of many short frames is
/// submitted early when it reaches this.
constexpr std::size_t MAX_FRAMES_PER_BATCH = 256;
/// Windows packed per task of the host pool.
constexpr std::size_t PACK_GRAIN = 128;
/// Bytes of capture read at a time by one packing thread (fits its L2 cache).
constexpr std::size_t PACK_READ_BYTES = std::size_t(288) << 10;
/// The smallest batch set-up falls back to when memory is short.
constexpr std::size_t MIN_BATCH = 64;
/// Bytes of the mapped capture released from the resident set at a time.
constexpr uint64_t RELEASE_STEP = uint64_t(64) << 20;

using steady = std::chrono::steady_clock;

/// Adds the time of a scope to an accumulator.
class stage_timer {
public:
  explicit stage_timer(double& acc) : acc_(acc), t0_(steady::now()) {}
  ~stage_timer() { acc_ += std::chrono::duration<double>(steady::now() - t0_).count(); }
  stage_timer(const stage_timer&) = delete;
  stage_timer& operator=(const stage_timer&) = delete;

private:
  double& acc_;
  steady::time_point t0_;
};

/// Seconds spent per stage in one run.
struct stage_times {
  double setup = 0, locate = 0, wait_locate = 0, pack = 0, enqueue = 0, wait_slot = 0, wait_gpu = 0, write_sink = 0, drain = 0;
};

/// A run of consecutive data symbols of one frame inside a batch.
struct segment {
  std::size_t first = 0; ///< first slot of the batch
  std::size_t count = 0;
  std::size_t bytes_per_symbol = 0;
  std::size_t result = 0;   ///< index of the frame in receive_result::frames
  uint32_t first_symbol = 0; ///< data symbol number (0 = the frame's first) of the first slot
};

/// One batch in flight on one GPU: its stream, pinned and device buffers.
struct slot {
  slot(int dev, std::size_t symbols, std::size_t max_frames, tr::link_format fmt)
      : device(dev), layout(symbols, max_frames, p::N * tr::link_bytes_per_sample(fmt)), h_in(layout.bytes),
        h_out(symbols * gpu::OUT_STRIDE), d_in(layout.bytes), d_out(h_out.size()), done(false), starts(symbols), bad(symbols)
  {
    h_scales = {reinterpret_cast<float*>(h_in.data() + layout.scales), symbols};
    h_desc = {reinterpret_cast<gpu::symbol_desc*>(h_in.data() + layout.desc), symbols};
    h_frames = {reinterpret_cast<gpu::frame_params*>(h_in.data() + layout.frames), max_frames};
  }
  int device;
  gpu::input_layout layout;
  cuda::stream stream;
  cuda::pinned_buffer<std::byte> h_in; ///< samples, scales, descriptors and frames (layout)
  std::span<float> h_scales;
  std::span<gpu::symbol_desc> h_desc;
  std::span<gpu::frame_params> h_frames;
  cuda::pinned_buffer<uint8_t> h_out;
  cuda::device_buffer<std::byte> d_in; ///< h_in's copy
  cuda::device_buffer<uint8_t> d_out;
  cuda::event done;
  std::vector<uint64_t> starts; ///< first capture sample of each window
  std::vector<uint32_t> bad;    ///< non-finite samples packed as 0, per window
  std::vector<segment> segments;
  std::size_t nof_frames = 0;
  uint64_t last_start = ~uint64_t(0); ///< start of the frame whose parameters are last
  std::size_t count = 0;
  bool busy = false; ///< submitted and not yet written
};

/// A slot is created with its device current.
std::unique_ptr<slot> make_slot(int dev, std::size_t symbols, tr::link_format fmt)
{
  WHD_CUDA_CHECK(cudaSetDevice(dev));
  return std::make_unique<slot>(dev, symbols, std::min(symbols, MAX_FRAMES_PER_BATCH), fmt);
}

/// Located frames handed from the search thread to the one that packs them, in
/// order, at most CAPACITY ahead.
class event_queue {
public:
  static constexpr std::size_t CAPACITY = 64;
  /// Search side: false once the consumer has quit (stop searching).
  bool push(std::unique_ptr<locator_event> ev)
  {
    std::unique_lock lk(m_);
    space_.wait(lk, [&] { return q_.size() < CAPACITY || quit_; });
    if (quit_) {
      return false;
    }
    q_.push_back(std::move(ev));
    ready_.notify_one();
    return true;
  }
  /// Search side: nothing follows; `stopped` when the search ended on the stop flag.
  void finish(bool stopped)
  {
    std::lock_guard lk(m_);
    done_ = true;
    stopped_ = stopped;
    ready_.notify_one();
  }
  /// Search side: the search failed.
  void fail(std::exception_ptr e)
  {
    std::lock_guard lk(m_);
    error_ = std::move(e);
    done_ = true;
    ready_.notify_one();
  }
  /// Consumer side: the next event; null when the search is over (rethrows its error).
  std::unique_ptr<locator_event> pop()
  {
    std::unique_lock lk(m_);
    ready_.wait(lk, [&] { return !q_.empty() || done_; });
    if (!q_.empty()) {
      auto ev = std::move(q_.front());
      q_.pop_front();
      space_.notify_one();
      return ev;
    }
    if (error_) {
      std::rethrow_exception(error_);
    }
    return nullptr;
  }
  /// Consumer side: no more events wanted.
  void quit()
  {
    std::lock_guard lk(m_);
    quit_ = true;
    space_.notify_all();
  }
  bool stopped() const
  {
    std::lock_guard lk(m_);
    return stopped_;
  }

private:
  mutable std::mutex m_;
  std::condition_variable space_, ready_;
  std::deque<std::unique_ptr<locator_event>> q_; // by pointer: a frame's channel estimate is a few kB
  bool done_ = false, stopped_ = false, quit_ = false;
  std::exception_ptr error_;
};

class gpu_receiver final : public receiver {
public:
  gpu_receiver(const rx_config& cfg, const gpu_config& gcfg)
      : cfg_(cfg), gcfg_(gcfg), pool_(gcfg.pack_threads ? gcfg.pack_threads : std::max(1u, std::thread::hardware_concurrency())),
        locator_(std::make_unique<frame_locator>(cfg))
  {
    const int present = cuda::device_count();
    if (present == 0) {
      throw std::runtime_error("GPU backend: " + cuda::no_device_reason());
    }
    if (gcfg_.nof_gpus < 1 || gcfg_.device < 0 || gcfg_.device + gcfg_.nof_gpus > present) {
      throw std::invalid_argument("GPU backend: devices " + std::to_string(gcfg_.device) + ".." +
                                  std::to_string(gcfg_.device + gcfg_.nof_gpus - 1) + " asked for, " + std::to_string(present) +
                                  " present");
    }
  }

  std::string_view backend() const noexcept override { return "gpu"; }

  receive_result run(const tr::sample_source& src, payload_sink& sink, const progress_fn& caller_progress) override
  {
    times_ = {};
    {
      stage_timer t(times_.setup);
      setup(src);
    }
    // The search thread and this one both report progress: one at a time.
    auto progress_mutex = std::make_shared<std::mutex>();
    const progress_fn progress = caller_progress ? progress_fn([progress_mutex, &caller_progress](uint64_t done, uint64_t total) {
      std::lock_guard lk(*progress_mutex);
      caller_progress(done, total);
    })
                                                 : progress_fn{};
    receive_result res;
    res.nof_samples = src.size();
    writer_error_ = nullptr;
    std::jthread writer([this, &sink] { write_loop(sink); });
    // Frames are located on their own thread, ahead of this one, which packs and
    // submits their symbols: the two host stages overlap (the events and their
    // order are the locator's, as on the CPU).
    event_queue events;
    std::jthread search([&] { search_loop(src, progress, events); });
    try {
      for (;;) {
        // Frames are whole in the result and the payload: a stop is honoured between them.
        if (cfg_.stop != nullptr && cfg_.stop->load(std::memory_order_relaxed)) {
          res.interrupted = true;
          break;
        }
        std::unique_ptr<locator_event> ev;
        {
          stage_timer t(times_.wait_locate);
          ev = events.pop();
        }
        if (!ev) {
          res.interrupted = events.stopped();
          break;
        }
        if (ev->failure) {
          res.header_failures.push_back(*ev->failure);
          continue;
        }
        frame_result f = ev->frame->info;
        f.payload_offset = res.payload_bytes;
        f.payload_bytes = uint64_t(f.symbols) * uint64_t(p::bytes_per_symbol(f.mod));
        res.payload_bytes += f.payload_bytes;
        res.data_symbols += f.symbols;
        res.frames.push_back(f);
        add_frame(*ev->frame, res, progress, src.size());
      }
      events.quit();
      search.join();
      if (current_ != nullptr && current_->count > 0) {
        submit(*current_);
      }
      current_ = nullptr;
    } catch (...) {
      events.quit();
      if (search.joinable()) {
        search.join();
      }
      finish_writer(writer);
      throw;
    }
    {
      stage_timer t(times_.drain);
      finish_writer(writer);
    }
    if (writer_error_) {
      std::rethrow_exception(writer_error_);
    }
    res.stage_seconds = {{"setup (buffers, mapping)", times_.setup},   {"search: locate frames (host)", times_.locate},
                         {"wait for located frames", times_.wait_locate},
                         {"pack for the link (host pool)", times_.pack}, {"enqueue copies and kernel", times_.enqueue},
                         {"wait for a free slot", times_.wait_slot},      {"writer: wait for the GPU", times_.wait_gpu},
                         {"writer: payload to the sink", times_.write_sink}, {"drain at the end", times_.drain}};
    res.resources = resources();
    return res;
  }

private:
  /// Buffers sized for this source (a small capture does not pin 100 MB).
  void setup(const tr::sample_source& src)
  {
    file_ = dynamic_cast<const tr::capture_reader*>(&src);
    const auto* mem = dynamic_cast<const tr::memory_source*>(&src);
    in_type_ = file_ ? file_->info().type : datatype::cf32_le;
    fmt_ = gcfg_.link.value_or(tr::auto_link_format(in_type_));
    raw_ = {};
    if (file_ != nullptr) {
      raw_ = file_->mapped();
    } else if (mem != nullptr) {
      raw_ = std::as_bytes(std::span<const cf32>(mem->samples()));
    }
    src_ = &src;
    // Long silences of integer capture files are searched on the GPU first.
    const bool integer = file_ != nullptr && is_integer(in_type_);
    if (integer && gcfg_.search_on_gpu && !filter_) {
      filter_ = make_gpu_block_filter(gcfg_.device, cfg_.detect_threshold);
    }
    locator_->set_block_filter(integer && gcfg_.search_on_gpu ? filter_.get() : nullptr);
    const std::size_t most = std::size_t(std::max<uint64_t>(src.size() / L, 1));
    const std::size_t wanted = gcfg_.symbols_per_batch != 0 ? gcfg_.symbols_per_batch
                                                            : AUTO_BATCH_LINK_BYTES / (p::N * tr::link_bytes_per_sample(fmt_));
    const std::size_t asked = std::min(wanted, most);
    if (asked != asked_ || fmt_ != slots_fmt_ || slots_.empty()) {
      make_slots(asked);
      asked_ = asked;
      slots_fmt_ = fmt_;
    }
    released_ = 0;
    next_slot_ = 0;
    current_ = nullptr;
    writer_done_ = false;
    queue_.clear();
  }

  /// The search thread: every frame and header failure, in capture order.
  void search_loop(const tr::sample_source& src, const progress_fn& progress, event_queue& events)
  {
    try {
      uint64_t pos = 0;
      for (;;) {
        std::optional<locator_event> ev;
        {
          stage_timer t(times_.locate);
          ev = locator_->next(src, pos, progress);
        }
        if (!ev) {
          events.finish(locator_->stopped());
          return;
        }
        pos = ev->resume;
        if (!events.push(std::make_unique<locator_event>(std::move(*ev)))) {
          return;
        }
      }
    } catch (...) {
      events.fail(std::current_exception());
    }
  }

  /// Every slot of every GPU at `asked` symbols per batch; when device or pinned
  /// memory is too short for them, halve the batch (down to MIN_BATCH) and say so.
  void make_slots(std::size_t asked)
  {
    slots_.clear();
    for (std::size_t per_batch = asked;; per_batch = std::max(per_batch / 2, MIN_BATCH)) {
      try {
        for (int k = 0; k < std::max(gcfg_.nof_streams, 1); ++k) {
          for (int d = 0; d < gcfg_.nof_gpus; ++d) {
            slots_.push_back(make_slot(gcfg_.device + d, per_batch, fmt_));
          }
        }
        if (per_batch != asked && gcfg_.notice) {
          gcfg_.notice("GPU memory or page-locked host memory too short for " + std::to_string(asked) +
                       " symbols per batch; running with " + std::to_string(per_batch));
        }
        per_batch_ = per_batch;
        return;
      } catch (const cuda::cuda_error& e) {
        slots_.clear();
        (void)cudaGetLastError(); // the failed allocation must not surface at the next launch check
        if (e.code() != cudaErrorMemoryAllocation || per_batch <= MIN_BATCH) {
          throw;
        }
      }
    }
  }

  /// Memory held by the slots, and the busiest device's use as the driver reports it.
  resource_use resources() const
  {
    resource_use r;
    r.symbols_per_batch = per_batch_;
    for (const auto& s : slots_) {
      r.device_bytes += s->d_in.size() + s->d_out.size();
      r.pinned_bytes += s->h_in.size() + s->h_out.size();
    }
    for (int d = 0; d < gcfg_.nof_gpus; ++d) {
      std::size_t free = 0, total = 0;
      WHD_CUDA_CHECK(cudaSetDevice(gcfg_.device + d));
      WHD_CUDA_CHECK(cudaMemGetInfo(&free, &total));
      r.device_used_bytes = std::max<uint64_t>(r.device_used_bytes, total - free);
    }
    r.peak_rss_bytes = peak_rss_bytes();
    return r;
  }

  /// Queue every data symbol of a frame, filling and submitting batches.
  void add_frame(const located_frame& f, receive_result& res, const progress_fn& progress, uint64_t total)
  {
    res_ = &res;
    const std::size_t bps = std::size_t(p::bytes_per_symbol(f.info.mod));
    uint64_t done = 0;
    while (done < f.info.symbols) {
      if (current_ == nullptr) {
        current_ = acquire();
      }
      slot& s = *current_;
      if (s.nof_frames == 0 || s.last_start != f.info.start) {
        s.h_frames[s.nof_frames++] = gpu::make_frame_params(f);
        s.last_start = f.info.start;
      }
      const std::size_t n = std::size_t(std::min<uint64_t>(f.info.symbols - done, per_batch_ - s.count));
      const uint32_t frame_index = uint32_t(s.nof_frames - 1);
      for (std::size_t i = 0; i < n; ++i) {
        const uint64_t m = p::FIRST_DATA_SYMBOL + done + i;
        s.starts[s.count + i] = fft_window(f.sync, m);
        s.h_desc[s.count + i] = {frame_index, uint32_t(m)};
      }
      s.segments.push_back({s.count, n, bps, res.frames.size() - 1, uint32_t(done)});
      s.count += n;
      done += n;
      if (s.count == per_batch_ || s.nof_frames == s.h_frames.size()) {
        submit(s);
        current_ = nullptr;
        if (progress) {
          progress(fft_window(f.sync, p::FIRST_DATA_SYMBOL + done - 1), total);
        }
      }
    }
  }

  /// The next slot, once the writer has written its previous batch.
  slot* acquire()
  {
    slot* s = slots_[next_slot_].get();
    next_slot_ = (next_slot_ + 1) % slots_.size();
    stage_timer t(times_.wait_slot);
    std::unique_lock lk(m_);
    free_cv_.wait(lk, [&] { return !s->busy || writer_error_; });
    if (writer_error_) {
      std::rethrow_exception(writer_error_);
    }
    lk.unlock();
    s->segments.clear();
    s->nof_frames = 0;
    s->last_start = ~uint64_t(0);
    s->count = 0;
    return s;
  }

  /// Pack the batch's windows on the host pool, then copy, decode and copy back.
  void submit(slot& s)
  {
    {
      stage_timer t(times_.pack);
      pack(s);
      if (in_type_ == datatype::cf32_le || file_ == nullptr) {
        note_bad_samples(s);
      }
      release_packed(s);
    }
    stage_timer t(times_.enqueue);
    WHD_CUDA_CHECK(cudaSetDevice(s.device));
    const std::size_t bpw = p::N * tr::link_bytes_per_sample(fmt_);
    cudaStream_t st = s.stream.get();
    // A short batch: the last, or one cut by its frames.
    s.layout.copy_in(s.d_in.data(), s.h_in.data(), s.count, s.h_scales.size(), bpw, s.nof_frames, st);
    const gpu::batch_view b = s.layout.view(s.d_in.data(), s.d_out.data(), s.count);
    gpu::launch_decode(fmt_, b, st, gcfg_.fft_exchange);
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_out.data(), s.d_out.data(), s.count * gpu::OUT_STRIDE, cudaMemcpyDeviceToHost, st));
    s.done.record(s.stream);
    {
      std::lock_guard lk(m_);
      s.busy = true;
      queue_.push_back(&s);
    }
    queue_cv_.notify_one();
  }

  /// Windows are packed in capture order: the mapped capture before this batch's
  /// last window is not read again, so its pages leave the resident set (in steps
  /// of RELEASE_STEP bytes) and a capture larger than memory runs in bounded memory.
  void release_packed(const slot& s)
  {
    if (file_ == nullptr || raw_.empty() || s.count == 0) {
      return;
    }
    const uint64_t upto = s.starts[s.count - 1];
    if ((upto - released_) * bytes_per_sample(in_type_) >= RELEASE_STEP) {
      file_->release_mapped(released_, upto);
      released_ = upto;
    }
  }

  /// Non-finite samples packed as 0, into the frames' results as the CPU reports them.
  void note_bad_samples(const slot& s)
  {
    for (const segment& seg : s.segments) {
      frame_result& f = res_->frames[seg.result];
      for (std::size_t i = 0; i < seg.count; ++i) {
        const uint32_t n = s.bad[seg.first + i];
        if (n == 0) {
          continue;
        }
        f.bad_samples += n;
        const uint32_t d = seg.first_symbol + uint32_t(i);
        if (!f.bad_symbols.empty() && f.bad_symbols.back().first + f.bad_symbols.back().count == d) {
          ++f.bad_symbols.back().count;
        } else {
          f.bad_symbols.push_back({d, 1});
        }
      }
    }
  }

  void pack(slot& s)
  {
    const std::size_t bpw = p::N * tr::link_bytes_per_sample(fmt_);
    const unsigned parts = unsigned(std::min<std::size_t>(pool_.size() * 4, (s.count + PACK_GRAIN - 1) / PACK_GRAIN));
    pool_.run(std::max(parts, 1u), [&](unsigned part, unsigned nof_parts) {
      const std::size_t lo = s.count * part / nof_parts, hi = s.count * (part + 1) / nof_parts;
      if (lo == hi) {
        return;
      }
      const std::span<std::byte> out(s.h_in.data() + lo * bpw, (hi - lo) * bpw);
      const std::span<float> scales(s.h_scales.data() + lo, hi - lo);
      const std::span<const uint64_t> starts(s.starts.data() + lo, hi - lo);
      const std::span<uint32_t> bad(s.bad.data() + lo, hi - lo);
      if (file_ != nullptr) {
        pack_from_file(starts, out, scales, bad);
        return;
      }
      if (!raw_.empty()) {
        // Straight from memory into pinned memory.
        tr::pack_windows(datatype::cf32_le, raw_, starts, p::N, fmt_, out, scales, bad);
        return;
      }
      // Fallback: read the span the windows cover, then pack.
      thread_local std::vector<cf32> staging;
      thread_local std::vector<uint64_t> rel;
      const uint64_t first = starts.front();
      staging.resize(std::size_t(starts.back() - first) + p::N);
      src_->read(first, staging);
      rel.resize(starts.size());
      for (std::size_t i = 0; i < starts.size(); ++i) {
        rel[i] = starts[i] - first;
      }
      tr::pack_windows(datatype::cf32_le, std::as_bytes(std::span<const cf32>(staging)), rel, p::N, fmt_, out, scales, bad);
    });
  }

  /// Windows of a capture file: runs of them are read with pread into a small
  /// per-thread buffer (which stays in cache) and packed from there. Reading
  /// through the mapping instead costs a page fault per few windows, contended
  /// between the packing threads and the search (on the H100 machine, end to end
  /// at 32768 symbols per batch: 64 ns/symbol that way, 42 this way;
  /// bench/results/e2e-h100-2026-11-23.md).
  void pack_from_file(std::span<const uint64_t> starts, std::span<std::byte> out, std::span<float> scales, std::span<uint32_t> bad)
  {
    const std::size_t bps = bytes_per_sample(in_type_);
    const std::size_t bpw = p::N * tr::link_bytes_per_sample(fmt_);
    thread_local std::vector<std::byte> staging;
    thread_local std::vector<uint64_t> rel;
    for (std::size_t k = 0; k < starts.size();) {
      // The longest run from k whose span fits the buffer (at least one window).
      const uint64_t first = starts[k];
      std::size_t e = k + 1;
      while (e < starts.size() && starts[e] >= first && (starts[e] + p::N - first) * bps <= PACK_READ_BYTES) {
        ++e;
      }
      const std::size_t span = std::size_t(starts[e - 1] - first) + p::N;
      staging.resize(span * bps);
      // A capture cut short under us reads short: pack_windows then names the window outside it.
      staging.resize(file_->read_raw(first, staging) * bps);
      rel.resize(e - k);
      for (std::size_t i = k; i < e; ++i) {
        rel[i - k] = starts[i] - first;
      }
      tr::pack_windows(in_type_, staging, rel, p::N, fmt_, out.subspan(k * bpw, (e - k) * bpw), scales.subspan(k, e - k),
                       bad.subspan(k, e - k));
      k = e;
    }
  }

  /// The writer thread: batches in submission order, payload to the sink.
  void write_loop(payload_sink& sink)
  {
    for (;;) {
      slot* s = nullptr;
      {
        std::unique_lock lk(m_);
        queue_cv_.wait(lk, [&] { return !queue_.empty() || writer_done_; });
        if (queue_.empty()) {
          return;
        }
        s = queue_.front();
        queue_.pop_front();
      }
      try {
        if (!writer_error_) {
          {
            stage_timer t(times_.wait_gpu);
            s->done.synchronize();
          }
          stage_timer t(times_.write_sink);
          for (const segment& seg : s->segments) {
            const uint8_t* out = s->h_out.data() + seg.first * gpu::OUT_STRIDE;
            if (seg.bytes_per_symbol == gpu::OUT_STRIDE) {
              sink.write(std::span<const uint8_t>(out, seg.count * seg.bytes_per_symbol));
            } else {
              for (std::size_t i = 0; i < seg.count; ++i) {
                sink.write(std::span<const uint8_t>(out + i * gpu::OUT_STRIDE, seg.bytes_per_symbol));
              }
            }
          }
        }
      } catch (...) {
        std::lock_guard lk(m_);
        writer_error_ = std::current_exception();
      }
      {
        std::lock_guard lk(m_);
        s->busy = false;
      }
      free_cv_.notify_all();
    }
  }

  void finish_writer(std::jthread& writer)
  {
    {
      std::lock_guard lk(m_);
      writer_done_ = true;
    }
    queue_cv_.notify_all();
    if (writer.joinable()) {
      writer.join();
    }
  }

  rx_config cfg_;
  gpu_config gcfg_;
  host_pool pool_;
  std::unique_ptr<frame_locator> locator_; ///< made once: its channel smoother's set-up costs more than a short capture
  std::unique_ptr<block_filter> filter_;   ///< the search's block filter, made at the first integer capture
  datatype in_type_ = datatype::cf32_le;
  tr::link_format fmt_ = tr::link_format::f32;
  tr::link_format slots_fmt_ = tr::link_format::f32;
  const tr::capture_reader* file_ = nullptr;
  const tr::sample_source* src_ = nullptr;
  std::span<const std::byte> raw_;
  std::vector<std::unique_ptr<slot>> slots_;
  std::size_t asked_ = 0;     ///< symbols per batch asked for (slots are remade when it changes)
  std::size_t per_batch_ = 0; ///< symbols per batch of the slots (fewer than asked when memory was short)
  uint64_t released_ = 0;     ///< mapped samples before this were released from the resident set
  std::size_t next_slot_ = 0;
  slot* current_ = nullptr;
  receive_result* res_ = nullptr; ///< the run's result (main thread only)
  // Shared with the writer thread.
  std::mutex m_;
  std::condition_variable queue_cv_, free_cv_;
  std::deque<slot*> queue_;
  bool writer_done_ = false;
  stage_times times_; // wait_gpu and write_sink are the writer's, the rest the caller's
  std::exception_ptr writer_error_;
};

} // namespace

std::unique_ptr<receiver> make_gpu_receiver(const rx_config& cfg, const gpu_config& gcfg)
{
  return std::make_unique<gpu_receiver>(cfg, gcfg);
}

} // namespace whd::baseband
