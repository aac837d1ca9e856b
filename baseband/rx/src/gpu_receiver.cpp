// The GPU backend: the capture crosses the link once, as stored, in chunks; the
// device searches every chunk for candidates, locates all of them at once (fine
// timing, CFO, channel, header) and decodes the data symbols from the same chunk.
// The host reads the file, walks the candidates in order (frame_walk: which are
// taken), lists the symbols to decode and writes the payload: no per-frame signal
// work. See frame_locator.hpp for the three steps both backends share.
#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/gpu_receiver.hpp>

#include "gpu_locate.hpp"
#include "gpu_search.hpp"
#include "gpu_symbol_decoder.hpp"
#include "gpu_window_gather.hpp"
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
/// Samples a chunk holds before its first searched position: a candidate's edge
/// and grid rules look L + 1 back.
constexpr uint64_t HALO_BEFORE = L + 1;
/// Samples a chunk holds after its last searched position: the candidate's window
/// (L), the cross-correlation's lags and the preamble and header windows.
constexpr uint64_t HALO_AFTER = 4 * L + p::N;
/// Positions searched per chunk when gpu_config::symbols_per_batch is 0.
constexpr uint64_t AUTO_CHUNK_POSITIONS = uint64_t(1) << 24;
/// Frames whose data go on into the next chunk (frames do not overlap: one or two).
constexpr std::size_t MAX_CARRIED = 4;
/// Bytes one reading task preads into pinned memory.
constexpr std::size_t READ_GRAIN = std::size_t(1) << 20;

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
  double setup = 0, read = 0, wait_located = 0, walk = 0, enqueue = 0, wait_slot = 0, wait_gpu = 0, write_sink = 0, drain = 0;
};

/// A run of consecutive data symbols of one frame inside a chunk.
struct segment {
  std::size_t first = 0; ///< first symbol slot of the chunk's decode
  std::size_t count = 0;
  std::size_t bytes_per_symbol = 0;
  std::size_t result = 0;    ///< index of the frame in receive_result::frames
  uint32_t first_symbol = 0; ///< data symbol number (0 = the frame's first) of the first slot
};

/// A frame taken by the walk whose data symbols are not all decoded yet.
struct open_frame {
  uint64_t fft0 = 0;          ///< first sample of preamble symbol 0's FFT window
  uint64_t next = 0;          ///< next symbol m to decode (>= FIRST_DATA_SYMBOL)
  uint64_t end = 0;           ///< FIRST_DATA_SYMBOL + symbols
  std::size_t result = 0;     ///< index in receive_result::frames
  std::size_t bytes_per_symbol = 0;
  uint32_t params = 0;        ///< its decode parameters in the current chunk's table
  gpu::frame_params carried{}; ///< the parameters, kept on the host while it goes on into later chunks
  bool has_carried = false;
};

/// One chunk in flight on one GPU: the capture's samples as stored, the search, the
/// locate stage and the decode, with their buffers (allocated once).
struct chunk_slot {
  chunk_slot(int dev, uint64_t positions, std::size_t max_candidates, datatype type, const rx_config& cfg)
      : device(dev), capacity(positions + HALO_BEFORE + HALO_AFTER), max_symbols(capacity / L + 1),
        h_raw(capacity * bytes_per_sample(type)), d_raw(h_raw.size()), d_x(capacity),
        search(capacity, max_candidates, cfg.detect_threshold), locate(cfg, max_candidates + MAX_CARRIED),
        h_count(1), h_cands(max_candidates), h_located(max_candidates), h_offsets(max_symbols), h_desc(max_symbols),
        d_offsets(max_symbols), d_desc(max_symbols), d_win(max_symbols * p::N), d_scales(max_symbols), d_bad(max_symbols),
        h_bad(max_symbols), d_out(max_symbols * gpu::OUT_STRIDE), h_out(d_out.size()), h_carry(MAX_CARRIED)
  {
    gpu::launch_fill(d_scales.data(), d_scales.size(), 1.0f, stream.get()); // f32 windows are unscaled
  }
  int device;
  uint64_t capacity;       ///< samples a chunk holds at most
  std::size_t max_symbols; ///< data symbols whose windows fit in a chunk
  cuda::stream stream;
  cuda::pinned_buffer<std::byte> h_raw;
  cuda::device_buffer<std::byte> d_raw;
  cuda::device_buffer<float2> d_x; ///< the chunk as float2 (non-finite samples as 0)
  gpu::candidate_search search;
  gpu::candidate_locator locate;
  cuda::pinned_buffer<gpu::search_count> h_count;
  cuda::pinned_buffer<gpu::sync_candidate> h_cands;
  cuda::pinned_buffer<gpu::located_candidate> h_located;
  cuda::event located;
  // The decode.
  cuda::pinned_buffer<uint32_t> h_offsets;
  cuda::pinned_buffer<gpu::symbol_desc> h_desc;
  cuda::device_buffer<uint32_t> d_offsets;
  cuda::device_buffer<gpu::symbol_desc> d_desc;
  cuda::device_buffer<float2> d_win;
  cuda::device_buffer<float> d_scales;
  cuda::device_buffer<uint32_t> d_bad;
  cuda::pinned_buffer<uint32_t> h_bad;
  cuda::device_buffer<uint8_t> d_out;
  cuda::pinned_buffer<uint8_t> h_out;
  cuda::pinned_buffer<gpu::frame_params> h_carry;
  cuda::event done;
  // What the chunk holds.
  uint64_t first = 0, nof = 0, lo = 0, hi = 0;
  std::size_t count = 0; ///< data symbols decoded from it
  std::size_t nof_carried = 0; ///< frame parameters carried in from earlier chunks
  std::vector<segment> segments;
  bool busy = false; ///< submitted and not yet written
};

class gpu_receiver final : public receiver {
public:
  gpu_receiver(const rx_config& cfg, const gpu_config& gcfg)
      : cfg_(cfg), gcfg_(gcfg), pool_(gcfg.pack_threads ? gcfg.pack_threads : std::max(1u, std::thread::hardware_concurrency())),
        smoother_(make_channel_smoother(cfg)), fallback_(cfg, smoother_.get())
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

  receive_result run(const tr::sample_source& src, payload_sink& sink, const progress_fn& progress) override
  {
    times_ = {};
    {
      stage_timer t(times_.setup);
      setup(src);
    }
    receive_result res;
    res.nof_samples = src.size();
    res_ = &res;
    writer_error_ = nullptr;
    writer_done_ = false;
    queue_.clear();
    std::jthread writer([this, &sink] { write_loop(sink); });
    try {
      decode_all(src, res, progress);
    } catch (...) {
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
    res.stage_seconds = {{"setup (buffers)", times_.setup},
                         {"read chunks (pread into pinned memory)", times_.read},
                         {"wait for the device's candidates", times_.wait_located},
                         {"walk the candidates, list the symbols (host)", times_.walk},
                         {"enqueue the decode", times_.enqueue},
                         {"wait for a free slot", times_.wait_slot},
                         {"writer: wait for the GPU", times_.wait_gpu},
                         {"writer: payload to the sink", times_.write_sink},
                         {"drain at the end", times_.drain}};
    res.resources = resources();
    res.setup_seconds = times_.setup;
    return res;
  }

private:
  /// Buffers sized for this source: a small capture does not pin a large chunk.
  void setup(const tr::sample_source& src)
  {
    type_ = src.type();
    const uint64_t npos = candidate_search::nof_positions(src.size());
    const uint64_t wanted = gcfg_.symbols_per_batch != 0 ? uint64_t(gcfg_.symbols_per_batch) * L : AUTO_CHUNK_POSITIONS;
    const uint64_t positions = std::max<uint64_t>(std::min(wanted, npos), 1);
    if (positions != positions_ || type_ != slots_type_ || slots_.empty()) {
      make_slots(positions);
      slots_type_ = type_;
    }
    next_slot_ = 0;
  }

  /// Every slot of every GPU; when device or pinned memory is too short, halve the
  /// chunk (down to a few symbols) and say so.
  void make_slots(uint64_t positions)
  {
    slots_.clear();
    for (uint64_t per = positions;; per = std::max<uint64_t>(per / 2, 64 * L)) {
      try {
        // Candidates: a frame gives a few, a tone or a DC offset one a symbol; twice
        // that per symbol of the chunk and some to spare (the search flags more).
        const std::size_t max_cands = std::size_t(std::min<uint64_t>(2 * (per / L) + 256, 1 << 20));
        for (int k = 0; k < std::max(gcfg_.nof_streams, 1); ++k) {
          for (int d = 0; d < gcfg_.nof_gpus; ++d) {
            WHD_CUDA_CHECK(cudaSetDevice(gcfg_.device + d));
            slots_.push_back(std::make_unique<chunk_slot>(gcfg_.device + d, per, max_cands, type_, cfg_));
          }
        }
        if (per != positions && gcfg_.notice) {
          gcfg_.notice("GPU memory or page-locked host memory too short for batches of " + std::to_string(positions / L) +
                       " symbols (chunks of " + std::to_string(positions) + " samples); running with " + std::to_string(per / L));
        }
        positions_ = per;
        max_cands_ = max_cands;
        return;
      } catch (const cuda::cuda_error& e) {
        slots_.clear();
        (void)cudaGetLastError();
        if (e.code() != cudaErrorMemoryAllocation || per <= 64 * L) {
          throw;
        }
      }
    }
  }

  resource_use resources() const
  {
    resource_use r;
    r.symbols_per_batch = std::size_t(positions_ / L);
    for (const auto& s : slots_) {
      r.device_bytes += s->d_raw.size_bytes() + s->d_x.size_bytes() + s->d_win.size_bytes() + s->d_out.size_bytes();
      r.pinned_bytes += s->h_raw.size_bytes() + s->h_out.size_bytes();
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

  /// Chunks read, searched and located ahead of the walk, handed over in order by
  /// the reading thread (null: the reader stopped; its error, if any, is rethrown).
  class chunk_queue {
  public:
    void push(chunk_slot* s)
    {
      std::lock_guard lk(m_);
      q_.push_back(s);
      cv_.notify_one();
    }
    void fail(std::exception_ptr e)
    {
      std::lock_guard lk(m_);
      error_ = std::move(e);
      q_.push_back(nullptr);
      cv_.notify_one();
    }
    chunk_slot* pop()
    {
      std::unique_lock lk(m_);
      cv_.wait(lk, [&] { return !q_.empty(); });
      chunk_slot* s = q_.front();
      q_.pop_front();
      if (s == nullptr && error_) {
        std::rethrow_exception(error_);
      }
      return s;
    }

  private:
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<chunk_slot*> q_;
    std::exception_ptr error_;
  };

  /// The chunks in order: a reading thread reads each into a free slot and enqueues
  /// its search and locate stages (as many ahead as there are slots); this thread
  /// walks them as they come and enqueues their decode; the writer writes them.
  void decode_all(const tr::sample_source& src, receive_result& res, const progress_fn& progress)
  {
    const uint64_t total = src.size();
    const uint64_t npos = candidate_search::nof_positions(total);
    const uint64_t nof_chunks = (npos + positions_ - 1) / positions_;
    frame_walk walk;
    chunk_queue ready;
    quit_reader_ = false;
    std::jthread reader([&] {
      try {
        for (uint64_t k = 0; k < nof_chunks; ++k) {
          chunk_slot* s = submit_search(src, k, npos);
          if (s == nullptr) {
            break; // told to quit
          }
          ready.push(s);
        }
        ready.push(nullptr);
      } catch (...) {
        ready.fail(std::current_exception());
      }
    });
    bool stopping = false;
    bool reader_done = false; // its last word (null) was taken
    auto quit = [&] {
      {
        std::lock_guard lk(m_);
        quit_reader_ = true;
      }
      free_cv_.notify_all();
      // Chunks read ahead and not walked are dropped (after a stop or the end).
      while (!reader_done) {
        chunk_slot* s = nullptr;
        try {
          s = ready.pop();
        } catch (...) {
          s = nullptr; // the reader's error after the walk was over: nothing lost
        }
        if (s == nullptr) {
          reader_done = true;
          break;
        }
        s->located.synchronize();
        release(*s);
      }
    };
    try {
      for (uint64_t k = 0; k < nof_chunks; ++k) {
        chunk_slot* sp = nullptr;
        {
          stage_timer tm(times_.wait_located);
          try {
            sp = ready.pop();
          } catch (...) {
            reader_done = true;
            throw;
          }
          if (sp == nullptr) {
            reader_done = true;
            break;
          }
          sp->located.synchronize();
        }
        chunk_slot& s = *sp;
        if (!stopping && cfg_.stop != nullptr && cfg_.stop->load(std::memory_order_relaxed)) {
          stopping = true; // no further frame is taken; frames being decoded are finished
          res.interrupted = true;
        }
        {
          stage_timer tm(times_.walk);
          fetch_candidates(s);
          if (!stopping) {
            walk_chunk(src, s, walk, res);
          }
          list_symbols(s, res);
        }
        submit_decode(s);
        if (progress) {
          progress(s.hi, total);
        }
        if (walk.ended() && !stopping) {
          stopping = true; // decode what is open, then end
        }
        if (stopping && open_.empty()) {
          break;
        }
      }
      quit();
    } catch (...) {
      quit();
      throw;
    }
    if (progress && !res.interrupted) {
      progress(total, total);
    }
  }

  /// Read chunk k into a free slot and enqueue its search and locate stages.
  chunk_slot* submit_search(const tr::sample_source& src, uint64_t k, uint64_t npos)
  {
    chunk_slot* sp = acquire();
    if (sp == nullptr) {
      return nullptr;
    }
    chunk_slot& s = *sp;
    const uint64_t total = src.size();
    s.lo = k * positions_;
    s.hi = std::min(npos, s.lo + positions_);
    s.first = s.lo >= HALO_BEFORE ? s.lo - HALO_BEFORE : 0;
    s.nof = std::min(total, s.hi + HALO_AFTER) - s.first;
    {
      stage_timer t(times_.read);
      read_chunk(src, s);
    }
    WHD_CUDA_CHECK(cudaSetDevice(s.device));
    cudaStream_t st = s.stream.get();
    const std::size_t bps = bytes_per_sample(type_);
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_raw.data(), s.h_raw.data(), s.nof * bps, cudaMemcpyHostToDevice, st));
    gpu::convert_to_float2(s.d_raw.data(), type_, s.nof, s.d_x.data(), nullptr, st);
    s.search.run(s.d_x.data(), s.first, s.nof, total, s.lo, s.hi, st);
    // cf32 chunks are located from the samples as stored, so that non-finite ones are counted.
    s.locate.run(located_input(s), s.first, s.nof, total, s.search.d_candidates(),
                 reinterpret_cast<const uint32_t*>(s.search.d_count()), st); // search_count's first field
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_count.data(), s.search.d_count(), sizeof(gpu::search_count), cudaMemcpyDeviceToHost, st));
    s.located.record(s.stream);
    return &s;
  }

  const float2* located_input(const chunk_slot& s) const
  {
    return type_ == datatype::cf32_le ? reinterpret_cast<const float2*>(s.d_raw.data()) : s.d_x.data();
  }

  /// The chunk's samples as stored, preaded into pinned memory by the host pool.
  void read_chunk(const tr::sample_source& src, chunk_slot& s)
  {
    const std::size_t bps = bytes_per_sample(type_);
    const std::size_t bytes = std::size_t(s.nof) * bps;
    const std::size_t grain = READ_GRAIN / bps * bps;
    const auto parts = unsigned((bytes + grain - 1) / grain);
    pool_.run(parts, [&](unsigned part, unsigned) {
      const std::size_t off = std::size_t(part) * grain;
      const std::size_t n = std::min(grain, bytes - off);
      const std::span<std::byte> out(s.h_raw.data() + off, n);
      const uint64_t first = s.first + off / bps;
      const std::size_t got = src.read_raw(first, out) * bps;
      if (got < n) {
        std::fill(out.begin() + std::ptrdiff_t(got), out.end(), std::byte{0}); // a file cut short under us
      }
    });
  }

  /// The candidates and what the device found for each, to the host.
  void fetch_candidates(chunk_slot& s)
  {
    if (s.h_count[0].overflow != 0) {
      throw std::runtime_error("GPU backend: " + std::to_string(s.h_count[0].nof_found) + " frame candidates in samples " +
                               std::to_string(s.lo) + ".." + std::to_string(s.hi) + ", more than a chunk holds (" +
                               std::to_string(max_cands_) + "); run with a smaller --batch or --backend cpu");
    }
    const uint32_t n = s.h_count[0].nof_candidates;
    if (n == 0) {
      return;
    }
    cudaStream_t st = s.stream.get();
    WHD_CUDA_CHECK(cudaSetDevice(s.device));
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_cands.data(), s.search.d_candidates(), n * sizeof(gpu::sync_candidate), cudaMemcpyDeviceToHost, st));
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_located.data(), s.locate.d_located(), n * sizeof(gpu::located_candidate), cudaMemcpyDeviceToHost, st));
    s.stream.synchronize();
  }

  /// The walk over this chunk's candidates, in order.
  void walk_chunk(const tr::sample_source& src, chunk_slot& s, frame_walk& walk, receive_result& res)
  {
    const uint64_t total = src.size();
    for (uint32_t i = 0; i < s.h_count[0].nof_candidates && !walk.ended(); ++i) {
      const gpu::sync_candidate& c = s.h_cands[i];
      detection d;
      d.window = c.window;
      d.coarse = c.coarse;
      d.metric = c.metric;
      d.cfo_cps = c.cfo_cps;
      if (!walk.takes(d)) {
        continue;
      }
      const gpu::located_candidate& g = s.h_located[i];
      located_candidate lc = to_host(g, d, total);
      if (g.status == gpu::locate_status::needs_more) {
        // Its windows reach past the chunk (cannot happen with the halo above; kept
        // so that a wrong halo costs speed, never a frame): located on the host.
        lc = fallback_.locate(src, d);
      }
      if (!walk.take(d, lc)) {
        continue;
      }
      std::lock_guard lk(res_m_); // the writer notes bad samples in frames already listed
      if (lc.failure) {
        res.header_failures.push_back(*lc.failure);
        continue;
      }
      frame_result f = lc.frame->info;
      f.payload_offset = res.payload_bytes;
      f.payload_bytes = uint64_t(f.symbols) * uint64_t(p::bytes_per_symbol(f.mod));
      res.payload_bytes += f.payload_bytes;
      res.data_symbols += f.symbols;
      open_frame o;
      o.fft0 = lc.frame->sync.fft0;
      o.next = p::FIRST_DATA_SYMBOL;
      o.end = p::FIRST_DATA_SYMBOL + f.symbols;
      o.result = res.frames.size();
      o.bytes_per_symbol = std::size_t(p::bytes_per_symbol(f.mod));
      o.params = i;
      if (g.status == gpu::locate_status::needs_more) {
        o.carried = gpu::make_frame_params(*lc.frame);
        o.has_carried = true;
      }
      res.frames.push_back(std::move(f));
      if (o.next < o.end) {
        open_.push_back(o);
      }
    }
  }

  /// The host's record of a candidate the device located (no signal work: its
  /// fields, turned into what the walk keeps as the CPU backend turns its own).
  located_candidate to_host(const gpu::located_candidate& g, const detection& d, uint64_t total) const
  {
    located_detection x;
    switch (g.status) {
    case gpu::locate_status::no_sync: x.what = located_detection::outcome::no_sync; break;
    case gpu::locate_status::cut_off: x.what = located_detection::outcome::cut_off; break;
    case gpu::locate_status::rejected: x.what = located_detection::outcome::rejected; break;
    case gpu::locate_status::ok: x.what = located_detection::outcome::accepted; break;
    case gpu::locate_status::needs_more: return {};
    }
    x.sync = {g.start, g.fft0, g.cfo_cps};
    x.channel.snr_dB = g.snr_dB;
    x.header = g.header;
    x.fields.mod_field = uint8_t(g.mod);
    x.fields.nd = g.nd;
    x.fields.seq = g.seq;
    x.bad_samples = g.bad_samples;
    return fallback_.conclude(x, d, total);
  }

  /// The data symbols of the open frames whose windows lie in this chunk, in order;
  /// frames that go on past it keep their parameters on the host for the next.
  void list_symbols(chunk_slot& s, receive_result&)
  {
    s.count = 0;
    s.segments.clear();
    std::size_t nof_carried = 0;
    const uint64_t end = s.first + s.nof;
    for (open_frame& o : open_) {
      if (o.has_carried) {
        if (nof_carried == MAX_CARRIED) {
          break; // the rest go on in the next chunk
        }
        s.h_carry[nof_carried] = o.carried;
        o.params = uint32_t(max_cands_ + nof_carried);
        ++nof_carried;
      }
      const std::size_t first = s.count;
      const uint64_t m0 = o.next;
      while (o.next < o.end && o.fft0 + o.next * L + p::N <= end && s.count < s.max_symbols) {
        s.h_offsets[s.count] = uint32_t(o.fft0 + o.next * L - s.first);
        s.h_desc[s.count] = {o.params, uint32_t(o.next)};
        ++s.count;
        ++o.next;
      }
      if (s.count > first) {
        s.segments.push_back({first, s.count - first, o.bytes_per_symbol, o.result, uint32_t(m0 - p::FIRST_DATA_SYMBOL)});
      }
      if (o.next < o.end && !o.has_carried) {
        // Goes on past this chunk: its parameters come to the host once.
        WHD_CUDA_CHECK(cudaSetDevice(s.device));
        WHD_CUDA_CHECK(cudaMemcpyAsync(&o.carried, s.locate.d_frame_params() + o.params, sizeof(gpu::frame_params), cudaMemcpyDeviceToHost,
                                       s.stream.get()));
        s.stream.synchronize();
        o.has_carried = true;
      }
    }
    std::erase_if(open_, [](const open_frame& o) { return o.next == o.end; });
    s.nof_carried = nof_carried;
  }

  /// The decode of the listed symbols on the chunk's stream, then its bits to the host.
  void submit_decode(chunk_slot& s)
  {
    stage_timer t(times_.enqueue);
    WHD_CUDA_CHECK(cudaSetDevice(s.device));
    cudaStream_t st = s.stream.get();
    if (s.count > 0) {
      if (s.nof_carried > 0) {
        WHD_CUDA_CHECK(cudaMemcpyAsync(s.locate.d_frame_params() + max_cands_, s.h_carry.data(), s.nof_carried * sizeof(gpu::frame_params),
                                       cudaMemcpyHostToDevice, st));
      }
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_offsets.data(), s.h_offsets.data(), s.count * sizeof(uint32_t), cudaMemcpyHostToDevice, st));
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_desc.data(), s.h_desc.data(), s.count * sizeof(gpu::symbol_desc), cudaMemcpyHostToDevice, st));
      const bool cf32 = type_ == datatype::cf32_le;
      gpu::launch_gather_windows(cf32 ? reinterpret_cast<const float2*>(s.d_raw.data()) : s.d_x.data(), s.d_offsets.data(), s.count,
                                 s.d_win.data(), cf32 ? s.d_bad.data() : nullptr, st);
      const gpu::batch_view b{s.d_win.data(), s.d_scales.data(), s.d_desc.data(), s.locate.d_frame_params(), s.d_out.data(), s.count};
      gpu::launch_decode(tr::link_format::f32, b, st, gcfg_.fft_exchange);
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_out.data(), s.d_out.data(), s.count * gpu::OUT_STRIDE, cudaMemcpyDeviceToHost, st));
      if (cf32) {
        WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_bad.data(), s.d_bad.data(), s.count * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
      }
    }
    s.done.record(s.stream);
    {
      std::lock_guard lk(m_);
      queue_.push_back(&s);
    }
    queue_cv_.notify_one();
  }

  /// The next slot in turn, once the writer has written its last chunk (the reading
  /// thread's); null when the walk told the reader to quit.
  chunk_slot* acquire()
  {
    chunk_slot* s = slots_[next_slot_].get();
    next_slot_ = (next_slot_ + 1) % slots_.size();
    stage_timer t(times_.wait_slot);
    std::unique_lock lk(m_);
    free_cv_.wait(lk, [&] { return !s->busy || writer_error_ || quit_reader_; });
    if (writer_error_) {
      std::rethrow_exception(writer_error_);
    }
    if (quit_reader_) {
      return nullptr;
    }
    s->busy = true;
    return s;
  }

  void release(chunk_slot& s)
  {
    {
      std::lock_guard lk(m_);
      s.busy = false;
    }
    free_cv_.notify_all();
  }

  /// Non-finite samples decoded as 0, into the frames' results as the CPU reports them.
  void note_bad_samples(const chunk_slot& s)
  {
    for (const segment& seg : s.segments) {
      frame_result& f = res_->frames[seg.result];
      for (std::size_t i = 0; i < seg.count; ++i) {
        const uint32_t n = s.h_bad[seg.first + i];
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

  /// The writer thread: chunks in order, payload to the sink.
  void write_loop(payload_sink& sink)
  {
    for (;;) {
      chunk_slot* s = nullptr;
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
          if (type_ == datatype::cf32_le) {
            std::lock_guard lk(res_m_);
            note_bad_samples(*s);
          }
          // One write a chunk: QPSK symbols (84 of the 168 bytes of their slot) are
          // packed together first, so that the sink sees large writes.
          bool packed = true;
          for (const segment& seg : s->segments) {
            packed = packed && seg.bytes_per_symbol == gpu::OUT_STRIDE;
          }
          if (packed) {
            sink.write(std::span<const uint8_t>(s->h_out.data(), s->count * gpu::OUT_STRIDE));
          } else {
            compact_.clear();
            for (const segment& seg : s->segments) {
              const uint8_t* out = s->h_out.data() + seg.first * gpu::OUT_STRIDE;
              for (std::size_t i = 0; i < seg.count; ++i) {
                compact_.insert(compact_.end(), out + i * gpu::OUT_STRIDE, out + i * gpu::OUT_STRIDE + seg.bytes_per_symbol);
              }
            }
            sink.write(compact_);
          }
        }
      } catch (...) {
        std::lock_guard lk(m_);
        writer_error_ = std::current_exception();
      }
      release(*s);
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
  std::unique_ptr<channel_smoother> smoother_;
  candidate_locator fallback_; ///< for a candidate whose windows reach past its chunk
  datatype type_ = datatype::cf32_le;
  datatype slots_type_ = datatype::cf32_le;
  std::vector<std::unique_ptr<chunk_slot>> slots_;
  uint64_t positions_ = 0;    ///< positions searched per chunk
  std::size_t max_cands_ = 0; ///< candidates a chunk holds at most
  std::size_t next_slot_ = 0;
  std::vector<open_frame> open_;
  receive_result* res_ = nullptr;
  std::mutex res_m_; ///< the writer's bad-sample notes against the walk's appends
  // Shared with the writer thread.
  std::mutex m_;
  std::condition_variable queue_cv_, free_cv_;
  std::deque<chunk_slot*> queue_;
  bool writer_done_ = false;
  bool quit_reader_ = false; ///< the walk is over: the reading thread stops
  stage_times times_; // wait_gpu and write_sink are the writer's, the rest the caller's
  std::exception_ptr writer_error_;
  std::vector<uint8_t> compact_; ///< the writer's packed chunk of mixed modulations
};

} // namespace

std::unique_ptr<receiver> make_gpu_receiver(const rx_config& cfg, const gpu_config& gcfg)
{
  return std::make_unique<gpu_receiver>(cfg, gcfg);
}

} // namespace whd::baseband
