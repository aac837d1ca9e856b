// The GPU backend: the capture crosses the link once, as stored (cf32 packed when
// gpu_config::link says half or int8), in chunks; the device searches every chunk
// for candidates, locates all of them at once (fine timing, CFO, channel, header)
// and decodes the data symbols from the same chunk.
// The host reads the file, walks the candidates in order (frame_walk: which are
// taken), lists the symbols to decode and writes the payload: no per-frame signal
// work. See frame_locator.hpp for the three steps both backends share.
//
// This file holds the run's order of work; its parts live beside it:
//   gpu_chunk.{hpp,cpp}          a chunk's buffers, reading it, the ring of slots
//   gpu_chunk_symbols.{hpp,cpp}  which data symbols a chunk's decode holds
//   gpu_chunk_writer.{hpp,cpp}   the writer thread
//   gpu_frame_params.cpp         a located frame's device parameters
//   gpu_search*, gpu_locate*, gpu_window_gather*, gpu_symbol_*  the device stages
#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/gpu_receiver.hpp>

#include "gpu_chunk.hpp"
#include "gpu_chunk_symbols.hpp"
#include "gpu_chunk_writer.hpp"
#include "gpu_window_gather.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace whd::baseband {

namespace {

namespace p = profile;
namespace tr = transport;
using gpu::chunk_slot;
constexpr uint64_t L = p::SYMBOL_LEN;

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

class gpu_receiver final : public receiver {
public:
  gpu_receiver(const rx_config& cfg, const gpu_config& gcfg)
      : cfg_(cfg), gcfg_(gcfg), pool_(gcfg.pack_threads ? gcfg.pack_threads : std::max(1u, std::thread::hardware_concurrency()), "whd-read"),
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
    // The contexts side by side, a thread each (the further GPUs' when the first falls
    // behind, gpu_start::when_behind; slot_ring starts them). A coded frame whose
    // chunks went to different GPUs gathers its soft values in one GPU's memory, which
    // the others then write: without peer access between them the run keeps to the
    // first GPU.
    std::vector<int> used;
    for (int d = 0; d < (gcfg_.start == gpu_start::at_once ? gcfg_.nof_gpus : 1); ++d) {
      used.push_back(gcfg_.device + d);
    }
    if (!cuda::start_devices(used)) {
      if (gcfg_.notice) {
        gcfg_.notice("GPUs " + std::to_string(gcfg_.device) + ".." + std::to_string(gcfg_.device + gcfg_.nof_gpus - 1) +
                     " cannot reach each other's memory (no peer access): decoding on GPU " + std::to_string(gcfg_.device) + " alone");
      }
      gcfg_.nof_gpus = 1;
    }
    WHD_CUDA_CHECK(cudaSetDevice(gcfg_.device));
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
    open_.clear();
    ring_.open(nof_chunks(src));
    {
      gpu::chunk_writer writer(sink, cfg_.llr, cfg_.on_frames, ring_, type_, res, res_m_, times_, spans_);
      decode_all(src, res, writer, progress); // on a throw, the writer finishes as it goes out of scope
      stage_timer t(times_.drain);
      writer.finish();
      if (writer.error()) {
        std::rethrow_exception(writer.error());
      }
      writer.hand_over(res.frames.size()); // every frame is whole now
    }
    res.stage_seconds = {{"setup (buffers)", times_.setup},
                         {"read chunks (pread into pinned memory)", times_.read},
                         {"wait for the device's candidates", times_.wait_located},
                         {"copy the candidates back", times_.fetch},
                         {"walk the candidates (host)", times_.walk},
                         {"  of which candidates past the chunk located on the host", times_.host_locate},
                         {"list the symbols to decode (host)", times_.list},
                         {"enqueue the decode", times_.enqueue},
                         {"wait for a free slot (its input: the decode before done)", times_.wait_slot},
                         {"wait for the writer to free a slot's output", times_.wait_output},
                         {"writer: wait for the first chunk", times_.wait_first_chunk},
                         {"writer: wait for a chunk (after the first)", times_.wait_chunk},
                         {"writer: wait for the GPU", times_.wait_gpu},
                         {"writer: payload to the sink", times_.write_sink},
                         {"frames handed over (a thread beside the writer; the report as the run goes)", times_.hand_over},
                         {"drain at the end", times_.drain}};
    res.resources = resources();
    res.notes = ring_.notes();
    res.setup_seconds = times_.setup;
    return res;
  }

private:
  /// Buffers sized for this source: a small capture does not pin a large chunk.
  void setup(const tr::sample_source& src)
  {
    type_ = src.type();
    const uint64_t npos = candidate_search::nof_positions(src.size());
    const uint64_t wanted = gcfg_.symbols_per_batch != 0 ? uint64_t(gcfg_.symbols_per_batch) * L : gpu::AUTO_CHUNK_POSITIONS;
    const uint64_t positions = std::max<uint64_t>(std::min(wanted, npos), 1);
    const uint64_t nof_chunks = (npos + positions - 1) / positions;
    // The slots of an earlier run serve when they hold this capture's chunks: a
    // receiver kept between captures (the Python module's) allocates once. A chunk
    // shorter than the slots is what every capture's last chunk is. (Slots halved to
    // fit the memory are not made again for a capture that asks up to what they were
    // made for: they would be halved again.)
    if (type_ != slots_type_ || ring_.empty() || ring_.size() < gpu::slots_for(gcfg_, nof_chunks) ||
        (positions > slot_positions_ && positions > asked_positions_)) {
      slot_positions_ = ring_.make(positions, nof_chunks, type_, gcfg_.link.value_or(tr::link_format::f32), cfg_, gcfg_);
      asked_positions_ = positions;
      slots_type_ = type_;
    }
    positions_ = std::min(positions, slot_positions_);
  }

  /// Chunks of this run (after setup).
  uint64_t nof_chunks(const tr::sample_source& src) const
  {
    return (candidate_search::nof_positions(src.size()) + positions_ - 1) / positions_;
  }

  resource_use resources()
  {
    resource_use r;
    r.symbols_per_batch = std::size_t(positions_ / L);
    for (const gpu::chunk_slot* s : ring_.started_slots()) {
      r.device_bytes += s->d_raw.size_bytes() + s->d_link.size_bytes() + s->d_x.size_bytes() + s->d_win.size_bytes() + s->d_out.size_bytes();
      r.pinned_bytes += s->h_raw.size_bytes() + s->h_scales.size_bytes() + s->h_out.size_bytes();
    }
    for (int d = 0; d < ring_.started_gpus(); ++d) {
      std::size_t free = 0, total = 0;
      WHD_CUDA_CHECK(cudaSetDevice(gcfg_.device + d));
      WHD_CUDA_CHECK(cudaMemGetInfo(&free, &total));
      r.device_used_bytes = std::max<uint64_t>(r.device_used_bytes, total - free);
    }
    r.chunks_per_gpu = ring_.chunks_per_gpu();
    r.peak_rss_bytes = peak_rss_bytes();
    return r;
  }

  /// The chunks in order: a reading thread reads each into a slot whose input is free
  /// and enqueues its search and locate stages (as many ahead as there are slots);
  /// this thread walks them as they come, takes the slot's output once the writer has
  /// written the chunk before from it, and enqueues their decode; the writer frees the
  /// input once the decode is done and the output once it has written the chunk.
  void decode_all(const tr::sample_source& src, receive_result& res, gpu::chunk_writer& writer, const progress_fn& progress)
  {
    const uint64_t total = src.size();
    const uint64_t npos = candidate_search::nof_positions(total);
    const uint64_t nof_chunks = this->nof_chunks(src);
    frame_walk walk;
    chunk_queue ready;
    std::jthread reader([&] {
      transport::name_this_thread("whd-reader");
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
      ring_.close();
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
        ring_.release_input(*s); // its output was never held
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
          stage_timer tm(times_.fetch);
          fetch_candidates(s);
        }
        if (!stopping) {
          stage_timer tm(times_.walk);
          walk_chunk(src, s, walk, res);
          if (k == 0) {
            std::lock_guard lk(res_m_); // the writer's hand-over reads the frames
            reserve_frames(res.frames, s.hi, npos);
          }
        }
        {
          // The chunk that used this slot before may still be being written.
          stage_timer tm(times_.wait_output);
          ring_.hold_output(s);
        }
        {
          stage_timer tm(times_.list);
          open_.list(s, spans_);
          s.final_frames = open_.empty() ? res.frames.size() : open_.first_result();
        }
        submit_decode(s);
        const uint64_t done_to = s.hi; // once pushed, the slot may take the next chunk
        writer.push(&s);
        if (progress) {
          progress(done_to, total);
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
    chunk_slot* sp = nullptr;
    {
      stage_timer t(times_.wait_slot);
      sp = ring_.acquire();
    }
    if (sp == nullptr) {
      return nullptr;
    }
    chunk_slot& s = *sp;
    const uint64_t total = src.size();
    s.lo = k * positions_;
    s.hi = std::min(npos, s.lo + positions_);
    s.first = s.lo >= gpu::HALO_BEFORE ? s.lo - gpu::HALO_BEFORE : 0;
    s.nof = std::min(total, s.hi + gpu::HALO_AFTER) - s.first;
    {
      stage_timer t(times_.read);
      gpu::read_chunk(src, type_, s, pool_);
    }
    WHD_CUDA_CHECK(cudaSetDevice(s.device));
    cudaStream_t st = s.stream.get();
    if (s.packed()) {
      // A cf32 chunk over a half or int8 link: unpacked to cf32 as stored (marks as
      // NaN, which the locate stage and the gather count) and with those as 0.
      const std::size_t lbps = tr::link_bytes_per_sample(s.link);
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_link.data(), s.h_raw.data(), s.nof * lbps, cudaMemcpyHostToDevice, st));
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_scales_in.data(), s.h_scales.data(), tr::run_scales(s.nof) * sizeof(float),
                                     cudaMemcpyHostToDevice, st));
      gpu::unpack_link_run(s.d_link.data(), s.d_scales_in.data(), s.link, s.nof, reinterpret_cast<float2*>(s.d_raw.data()),
                           s.d_x.data(), st);
    } else {
      const std::size_t bps = bytes_per_sample(type_);
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_raw.data(), s.h_raw.data(), s.nof * bps, cudaMemcpyHostToDevice, st));
      gpu::convert_to_float2(s.d_raw.data(), type_, s.nof, s.d_x.data(), nullptr, st);
    }
    s.search.run(s.d_x.data(), s.first, s.nof, total, s.lo, s.hi, st);
    s.locate.run(s.located_input(type_), s.first, s.nof, total, s.search.d_candidates(),
                 reinterpret_cast<const uint32_t*>(s.search.d_count()), st); // search_count's first field
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_count.data(), s.search.d_count(), sizeof(gpu::search_count), cudaMemcpyDeviceToHost, st));
    s.located.record(s.stream);
    return &s;
  }

  /// The candidates and what the device found for each, to the host.
  void fetch_candidates(chunk_slot& s)
  {
    if (s.h_count[0].overflow != 0) {
      throw std::runtime_error("GPU backend: " + std::to_string(s.h_count[0].nof_found) + " frame candidates in samples " +
                               std::to_string(s.lo) + ".." + std::to_string(s.hi) + ", more than a chunk holds (" +
                               std::to_string(s.max_candidates) + "); run with a smaller --batch or --backend cpu");
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
      if (g.status == locate_outcome::needs_more) {
        // Its windows reach past the chunk (cannot happen with the halo above; kept
        // so that a wrong halo costs speed, never a frame): located on the host.
        stage_timer t(times_.host_locate);
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
      f.payload_bytes = payload_bytes_of(f);
      res.payload_bytes += f.payload_bytes;
      res.data_symbols += f.symbols;
      gpu::open_frame o;
      o.fft0 = lc.frame->sync.fft0;
      o.next = p::FIRST_DATA_SYMBOL;
      o.end = p::FIRST_DATA_SYMBOL + f.symbols;
      o.result = res.frames.size();
      o.bytes_per_symbol = std::size_t(p::bytes_per_symbol(f.mod));
      o.params = i;
      if (f.mcs != p::NO_MCS) {
        o.coded = true;
        o.fec = !f.truncated;
        o.geo = fec::geometry(f.mcs, f.nd);
      }
      if (g.status == locate_outcome::needs_more) {
        o.carried = std::make_unique<gpu::frame_params>(gpu::make_frame_params(*lc.frame));
      }
      res.frames.push_back(std::move(f));
      if (o.next < o.end) {
        open_.add(std::move(o));
      }
    }
  }

  /// The host's record of a candidate the device located (no signal work: its
  /// fields, turned into what the walk keeps as the CPU backend turns its own; the
  /// channel stays on the device).
  located_candidate to_host(const gpu::located_candidate& g, const detection& d, uint64_t total) const
  {
    if (g.status == locate_outcome::needs_more) {
      return {};
    }
    located_summary x;
    x.what = g.status;
    x.sync = {g.start, g.fft0, g.cfo_cps};
    x.snr_dB = g.snr_dB;
    x.header = g.header;
    x.fields.mod_field = g.mode;
    x.fields.nd = g.nd;
    x.fields.seq = g.seq;
    x.bad_samples = g.bad_samples;
    return fallback_.conclude(x, nullptr, d, total);
  }

  /// The decode of the listed symbols on the chunk's stream, then its bits to the host;
  /// the chunk's input is released once the decode is done.
  void submit_decode(chunk_slot& s)
  {
    stage_timer t(times_.enqueue);
    WHD_CUDA_CHECK(cudaSetDevice(s.device));
    cudaStream_t st = s.stream.get();
    // A chunk with coded symbols frees its input as soon as its decode is done (the
    // FEC and the writer are not waited for); the others when the writer takes them:
    // their runs are bound by the payload's writes, which reading further ahead slows
    // (bench/results/coded-traffic-h200-2026-11-29.md).
    s.release_by_writer = s.coded_symbols == 0;
    if (s.count == 0) {
      s.done.record(s.stream);
      return;
    }
    if (s.nof_carried > 0) {
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.locate.d_frame_params() + s.max_candidates, s.h_carry.data(),
                                     s.nof_carried * sizeof(gpu::frame_params), cudaMemcpyHostToDevice, st));
    }
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_offsets.data(), s.h_offsets.data(), s.count * sizeof(uint32_t), cudaMemcpyHostToDevice, st));
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_desc.data(), s.h_desc.data(), s.count * sizeof(gpu::symbol_desc), cudaMemcpyHostToDevice, st));
    const bool cf32 = type_ == datatype::cf32_le;
    gpu::launch_gather_windows(s.located_input(type_), s.d_offsets.data(), s.count, s.d_win.data(), cf32 ? s.d_bad.data() : nullptr, st);
    gpu::batch_view b{s.d_win.data(), s.d_scales.data(), s.d_desc.data(), s.locate.d_frame_params(), s.d_out.data(), s.count};
    b.rots = s.d_rots.data();
    if (!s.out_strided()) {
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_out_offsets.data(), s.h_out_offsets.data(), s.count * sizeof(uint32_t),
                                     cudaMemcpyHostToDevice, st));
      b.out_offsets = s.d_out_offsets.data();
    }
    if (s.llr_stride_bytes > 0) {
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_llr_offsets.data(), s.h_llr_offsets.data(), s.count * sizeof(uint32_t),
                                     cudaMemcpyHostToDevice, st));
      b.llr = s.d_llr.data();
      b.llr_offsets = s.d_llr_offsets.data();
      b.llr_form = cfg_.llr.format;
      b.llr_scale = cfg_.llr.scale;
    }
    if (s.coded_symbols > 0) {
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_coded.data(), s.h_coded.data(), s.coded_frames * sizeof(gpu::coded_target), cudaMemcpyHostToDevice, st));
      b.coded = s.d_coded.data();
    }
    gpu::launch_decode(tr::link_format::f32, b, st, gcfg_.fft_exchange);
    s.decoded.record(s.stream);
    if (!s.release_by_writer) {
      ring_.release_input_after(s);
    }
    // The copies back follow the FEC where the chunk runs one (on its own stream, so
    // that the next chunk's copy in and search need not wait for it).
    cudaStream_t out = st;
    if (!s.coded_ends.empty()) {
      out = s.fec_stream.get();
      submit_fec(s);
    }
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_out.data(), s.d_out.data(), s.out_bytes, cudaMemcpyDeviceToHost, out));
    if (s.llr_stride_bytes > 0) {
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_llr.data(), s.d_llr.data(), s.llr_bytes, cudaMemcpyDeviceToHost, out));
    }
    if (cf32) {
      WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_bad.data(), s.d_bad.data(), s.count * sizeof(uint32_t), cudaMemcpyDeviceToHost, out));
    }
    s.done.record(out);
  }

  /// The FEC of the coded frames that end in chunk `s`, on its FEC stream once its
  /// decode is done: their L bytes into the chunk's payload (or, for a frame that
  /// spans chunks, its span, copied to the host for the writer), RS's counts to h_rs.
  void submit_fec(chunk_slot& s)
  {
    cudaStream_t st = s.fec_stream.get();
    WHD_CUDA_CHECK(cudaStreamWaitEvent(st, s.decoded.get(), 0));
    bool spanning = false;
    for (const gpu::coded_end& e : s.coded_ends) {
      spanning = spanning || e.span != nullptr;
    }
    if (spanning) {
      // A spanning frame's earlier symbols were demultiplexed by earlier chunks on the
      // other slots' streams: each slot's last decode (and, in its stream's order,
      // every decode before it) is done before this FEC runs.
      for (const gpu::chunk_slot* other : ring_.started_slots()) {
        if (other != &s) {
          WHD_CUDA_CHECK(cudaStreamWaitEvent(st, other->decoded.get(), 0));
        }
      }
    }
    s.fec.run(s.coded_ends, s.d_rs.data(), st);
    for (const gpu::coded_end& e : s.coded_ends) {
      if (e.span) {
        WHD_CUDA_CHECK(cudaMemcpyAsync(e.span->h_info.data(), e.d_info, e.g.info_bytes, cudaMemcpyDefault, st));
      }
    }
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_rs.data(), s.d_rs.data(), 2 * s.coded_ends.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
  }

  rx_config cfg_;
  gpu_config gcfg_;
  host_pool pool_;
  std::unique_ptr<channel_smoother> smoother_;
  candidate_locator fallback_; ///< for a candidate whose windows reach past its chunk
  datatype type_ = datatype::cf32_le;
  datatype slots_type_ = datatype::cf32_le;
  gpu::slot_ring ring_;
  uint64_t asked_positions_ = 0; ///< positions per chunk the slots were asked for
  uint64_t slot_positions_ = 0;  ///< positions a slot holds (asked, or halved to fit)
  uint64_t positions_ = 0;       ///< positions searched per chunk of this run
  gpu::open_frames open_;
  gpu::coded_span_cache spans_; ///< buffers of coded frames that span chunks, kept between runs
  std::mutex res_m_; ///< the writer's bad-sample notes against the walk's appends
  gpu::stage_times times_; // wait_first_chunk, wait_chunk, wait_gpu and write_sink are the writer's, hand_over its handing thread's, the rest the caller's
};

} // namespace

std::unique_ptr<receiver> make_gpu_receiver(const rx_config& cfg, const gpu_config& gcfg)
{
  return std::make_unique<gpu_receiver>(cfg, gcfg);
}

} // namespace whd::baseband
