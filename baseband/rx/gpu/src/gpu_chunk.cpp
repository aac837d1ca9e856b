// Chunk slots of the GPU receiver: their buffers, reading a chunk into one, and the
// ring the chunks go through (gpu_chunk.hpp).
#include "gpu_chunk.hpp"

#include "gpu_window_gather.hpp"

#include <whd/baseband/demap.hpp>

#include <whd/transport/at_once.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <span>
#include <string>
#include <vector>

namespace whd::baseband::gpu {

namespace {

/// Bytes one reading task preads into pinned memory.
constexpr std::size_t READ_GRAIN = std::size_t(1) << 20;

} // namespace

chunk_slot::chunk_slot(int dev, uint64_t positions, std::size_t max_cands, datatype type, transport::link_format lf,
                       const rx_config& cfg)
    : device(dev), link(type == datatype::cf32_le ? lf : transport::link_format::f32), capacity(positions + HALO_BEFORE + HALO_AFTER),
      max_symbols(capacity / CHUNK_L + 1 + 2 * PHASE_NEIGHBOURS), max_candidates(max_cands),
      h_raw(capacity * (packed() ? transport::link_bytes_per_sample(link) : bytes_per_sample(type))),
      h_scales(packed() ? transport::run_scales(capacity) : 0), d_link(packed() ? h_raw.size() : 0), d_scales_in(h_scales.size()),
      d_raw(capacity * bytes_per_sample(type)), d_x(capacity), search(capacity, max_cands, cfg.detect_threshold),
      locate(cfg, max_cands + MAX_CARRIED), h_count(1), h_cands(max_cands), h_located(max_cands), h_offsets(max_symbols),
      h_desc(max_symbols), d_offsets(max_symbols), d_desc(max_symbols), d_win(max_symbols * profile::N), d_rots(max_symbols), d_scales(max_symbols),
      d_bad(max_symbols), h_bad(max_symbols), d_out(max_symbols * OUT_STRIDE), h_out(d_out.size()), h_out_offsets(max_symbols),
      d_out_offsets(max_symbols), h_carry(MAX_CARRIED),
      llr_stride_bytes(cfg.llr.sink != nullptr ? LLR_STRIDE * llr_value_bytes(cfg.llr.format) : 0),
      d_llr(max_symbols * llr_stride_bytes), h_llr(d_llr.size()), h_llr_offsets(llr_stride_bytes > 0 ? max_symbols : 0),
      d_llr_offsets(h_llr_offsets.size()), d_coded_streams(max_symbols * profile::MAX_BITS_PER_SYMBOL), h_coded(max_cands + MAX_CARRIED),
      d_coded(h_coded.size()), d_rs(2 * (max_symbols + MAX_CARRIED)), h_rs(d_rs.size())
{
  launch_fill(d_scales.data(), d_scales.size(), 1.0f, stream.get()); // f32 windows are unscaled
}

void read_chunk(const transport::sample_source& src, datatype type, chunk_slot& s, host_pool& pool)
{
  const std::size_t bps = bytes_per_sample(type);
  const std::size_t bytes = std::size_t(s.nof) * bps;
  const std::size_t grain = READ_GRAIN / bps * bps;
  static_assert(READ_GRAIN / 8 % transport::RUN_SCALE_BLOCK == 0, "a packed part holds whole blocks of one scale");
  const auto parts = unsigned((bytes + grain - 1) / grain);
  pool.run(parts, [&](unsigned part, unsigned) {
    const std::size_t off = std::size_t(part) * grain;
    const std::size_t n = std::min(grain, bytes - off);
    const uint64_t first = s.first + off / bps;
    if (!s.packed()) {
      const std::span<std::byte> out(s.h_raw.data() + off, n);
      const std::size_t got = src.read_raw(first, out) * bps;
      if (got < n) {
        std::fill(out.begin() + std::ptrdiff_t(got), out.end(), std::byte{0}); // a file cut short under us
      }
      return;
    }
    // cf32 read a part at a time into this thread's buffer, then packed into the
    // pinned one: the part's samples start at off / 8 of the chunk.
    thread_local std::vector<cf32> stored;
    stored.resize(n / 8);
    const std::size_t got = src.read_raw(first, std::as_writable_bytes(std::span<cf32>(stored)));
    std::fill(stored.begin() + std::ptrdiff_t(got), stored.end(), cf32{}); // a file cut short under us
    const std::size_t i0 = off / 8, lbps = transport::link_bytes_per_sample(s.link);
    transport::pack_cf32_run(stored, s.link, std::span<std::byte>(s.h_raw.data() + i0 * lbps, stored.size() * lbps),
                             std::span<float>(s.h_scales.data() + i0 / transport::RUN_SCALE_BLOCK, transport::run_scales(stored.size())));
  });
}

std::size_t slots_for(const gpu_config& gcfg, uint64_t nof_chunks)
{
  return std::size_t(std::min<uint64_t>(uint64_t(std::max(gcfg.nof_streams, 1)) * uint64_t(std::max(gcfg.nof_gpus, 1)),
                                        std::max<uint64_t>(nof_chunks, 1)));
}

slot_ring::~slot_ring()
{
  if (starter_.joinable()) {
    starter_.join();
  }
  settle(false);
}

void slot_ring::settle(bool check)
{
  // A run that ended on an error may leave work on the streams, host functions that
  // release inputs among it: done before the slots are remade, reopened or freed.
  // The started GPUs' slots (a start under way fills in the others meanwhile).
  const std::vector<chunk_slot*> slots = started_slots();
  int current = 0;
  if (slots.empty() || cudaGetDevice(&current) != cudaSuccess) {
    return;
  }
  const auto call = [check](cudaError_t code, const char* what) {
    if (check) {
      cuda::check(code, what, __FILE__, __LINE__);
    } else {
      cuda::check_nothrow(code, what, __FILE__, __LINE__);
    }
  };
  for (const chunk_slot* s : slots) {
    call(cudaSetDevice(s->device), "cudaSetDevice (a slot's)");
    call(cudaStreamSynchronize(s->stream.get()), "cudaStreamSynchronize (a slot's stream)");
    call(cudaStreamSynchronize(s->fec_stream.get()), "cudaStreamSynchronize (a slot's FEC stream)");
  }
  call(cudaSetDevice(current), "cudaSetDevice (the one before)");
}

uint64_t slot_ring::make(uint64_t positions, uint64_t nof_chunks, datatype type, transport::link_format link, const rx_config& cfg,
                         const gpu_config& gcfg)
{
  if (starter_.joinable()) {
    starter_.join(); // a start of further GPUs begun in the run before: its slots are remade below
  }
  settle(true);
  slots_.clear();
  const std::size_t wanted = slots_for(gcfg, nof_chunks);
  nof_gpus_ = std::max(1, std::min<int>(gcfg.nof_gpus, int(wanted)));
  if (gcfg.start == gpu_start::at_once) {
    up_ = std::max(up_, gcfg.nof_gpus); // the receiver started them all
  }
  started_ = std::min(up_, nof_gpus_);
  for (uint64_t per = positions;; per = std::max<uint64_t>(per / 2, 64 * CHUNK_L)) {
    try {
      // Candidates: a frame gives a few, a tone or a DC offset one a symbol; twice
      // that per symbol of the chunk and some to spare (the search flags more).
      const std::size_t max_cands = std::size_t(std::min<uint64_t>(2 * (per / CHUNK_L) + 256, 1 << 20));
      // The slots are made at once, a thread each: their page-locked buffers' pages
      // and registrations, device buffers and streams do not wait for each other's.
      slots_.resize(wanted);
      std::vector<std::exception_ptr> failed(wanted);
      transport::run_at_once(wanted, [&](std::size_t i) {
        if (gpu_of(i) >= started_) {
          return; // made when its GPU starts
        }
        try {
          // Slot i is on GPU i mod G: consecutive chunks go to the GPUs in turn.
          const int device = gcfg.device + gpu_of(i);
          WHD_CUDA_CHECK(cudaSetDevice(device));
          slots_[i] = std::make_unique<chunk_slot>(device, per, max_cands, type, link, cfg);
        } catch (...) {
          failed[i] = std::current_exception();
        }
      });
      const cudaError_t set_device_back = cudaSetDevice(gcfg.device); // slots made on this thread moved its device
      for (const auto& e : failed) {
        if (e) {
          slots_.clear(); // none half made stays for a later run to take
          std::rethrow_exception(e); // the first slot's failure, below as if made in turn
        }
      }
      WHD_CUDA_CHECK(set_device_back); // checked once the slots' errors are told
      per_ = per;
      max_cands_ = max_cands;
      type_ = type;
      link_ = link;
      cfg_ = &cfg;
      gcfg_ = gcfg;
      turn_.assign(std::size_t(nof_gpus_), 0);
      if (per != positions && gcfg.notice) {
        gcfg.notice("GPU memory or page-locked host memory too short for batches of " + std::to_string(positions / CHUNK_L) +
                    " symbols (chunks of " + std::to_string(positions) + " samples); running with " + std::to_string(per / CHUNK_L));
      }
      return per;
    } catch (const cuda::cuda_error& e) {
      slots_.clear();
      (void)cudaGetLastError();
      if (e.code() != cudaErrorMemoryAllocation || per <= 64 * CHUNK_L) {
        throw;
      }
    }
  }
}

std::vector<chunk_slot*> slot_ring::started_slots()
{
  std::lock_guard lk(m_);
  std::vector<chunk_slot*> out;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (gpu_of(i) < started_) {
      out.push_back(slots_[i].get());
    }
  }
  return out;
}

int slot_ring::started_gpus()
{
  std::lock_guard lk(m_);
  return started_;
}

void slot_ring::open(uint64_t nof_chunks)
{
  settle(true); // (before the lock: a pending release takes it)
  std::lock_guard lk(m_);
  next_ = 0;
  std::fill(turn_.begin(), turn_.end(), 0);
  closed_ = false;
  error_ = nullptr;
  nof_chunks_ = nof_chunks;
  acquired_ = 0;
  behind_seconds_ = 0.0;
  chunks_per_gpu_.assign(std::size_t(nof_gpus_), 0);
  notes_.clear();
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (gpu_of(i) < started_) {
      slots_[i]->input_held = slots_[i]->output_held = false;
    }
  }
}

std::size_t slot_ring::next_of(int g) const noexcept
{
  const std::size_t n = std::size_t(nof_gpus_);
  const std::size_t own = (slots_.size() - std::size_t(g) + n - 1) / n; // slots g, g + n, ... below size
  return std::size_t(g) + n * (turn_[std::size_t(g)] % own);
}

namespace {
/// "GPU d" or "GPUs d..e": the ring's GPUs [from, to), by device ordinal.
std::string gpu_range(const gpu_config& g, int from, int to)
{
  return to - from == 1 ? "GPU " + std::to_string(g.device + from)
                        : "GPUs " + std::to_string(g.device + from) + ".." + std::to_string(g.device + to - 1);
}

std::string seconds_text(double s)
{
  char b[32];
  std::snprintf(b, sizeof b, "%.3f s", s);
  return b;
}
} // namespace

void slot_ring::consider_start(std::unique_lock<std::mutex>& lk)
{
  if (start_asked_ || started_ >= nof_gpus_ || gcfg_.start != gpu_start::when_behind) {
    return;
  }
  const std::string which = gpu_range(gcfg_, started_, nof_gpus_);
  if (gcfg_.start_after_chunks != 0) {
    if (acquired_ < gcfg_.start_after_chunks) {
      return;
    }
    start_asked_ = true;
    notes_.push_back(which + " started after chunk " + std::to_string(acquired_) + " of " + std::to_string(nof_chunks_) +
                     ", as set (gpu_config::start_after_chunks)");
    lk.unlock(); // the reader waits for them; the writer and the walk go on
    start_further();
    lk.lock();
    return;
  }
  if (acquired_ < 2 || behind_seconds_ <= 0.0) {
    return;
  }
  // What waiting for the first GPU would cost over the rest of the capture, at the
  // rate it has so far, against what starting another costs.
  const double projected = behind_seconds_ * double(nof_chunks_ - std::min(acquired_, nof_chunks_)) / double(acquired_);
  if (projected <= gcfg_.start_cost_seconds) {
    return;
  }
  start_asked_ = true;
  notes_.push_back(which + " started after chunk " + std::to_string(acquired_) + " of " + std::to_string(nof_chunks_) +
                   ": the reader had waited " + seconds_text(behind_seconds_) + " for chunks still on " +
                   gpu_range(gcfg_, 0, started_) + ", about " + seconds_text(projected) +
                   " more at that rate, over the " + seconds_text(gcfg_.start_cost_seconds) + " a start costs");
  starter_ = std::thread([this] {
    transport::name_this_thread("whd-gpu-start");
    start_further();
  });
}

void slot_ring::start_further()
{
  const int from = started_; // only this thread changes it, under m_, below
  const int to = nof_gpus_;
  std::vector<int> devices;
  for (int g = 0; g < to; ++g) {
    devices.push_back(gcfg_.device + g);
  }
  std::string failed;
  try {
    // A coded frame whose chunks went to different GPUs gathers its soft values in
    // one GPU's memory, which the others then write: peer access is a must.
    if (!cuda::start_devices(devices)) {
      failed = gpu_range(gcfg_, 0, to) + " cannot reach each other's memory (no peer access)";
    }
  } catch (const std::exception& e) {
    failed = e.what();
  }
  std::vector<std::exception_ptr> errors(slots_.size());
  if (failed.empty()) {
    transport::run_at_once(slots_.size(), [&](std::size_t i) {
      if (gpu_of(i) < from) {
        return;
      }
      try {
        const int device = gcfg_.device + gpu_of(i);
        WHD_CUDA_CHECK(cudaSetDevice(device));
        slots_[i] = std::make_unique<chunk_slot>(device, per_, max_cands_, type_, link_, *cfg_);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
    (void)cudaSetDevice(gcfg_.device);
    for (const auto& e : errors) {
      if (e && failed.empty()) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& x) {
          failed = x.what();
        }
      }
    }
  }
  // The slots of GPUs that did not start are freed outside the lock: freeing device
  // memory may wait for the first GPU's streams, whose host functions take the lock.
  std::vector<std::unique_ptr<chunk_slot>> unused;
  {
    std::lock_guard lk(m_);
    if (failed.empty()) {
      started_ = to;
      up_ = std::max(up_, to);
    } else {
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        if (gpu_of(i) >= from) {
          unused.push_back(std::move(slots_[i]));
        }
      }
      notes_.push_back(gpu_range(gcfg_, from, to) + " not started (" + failed + "): decoding on " +
                       gpu_range(gcfg_, 0, from) + " alone");
    }
  }
  free_cv_.notify_all();
  unused.clear();
  (void)cudaGetLastError();
}

chunk_slot* slot_ring::acquire()
{
  std::unique_lock lk(m_);
  consider_start(lk);
  auto take = [&](chunk_slot* s) {
    s->input_held = true;
    ++acquired_;
    ++chunks_per_gpu_[std::size_t(s->device - gcfg_.device)];
    return s;
  };
  if (gcfg_.spread == gpu_spread::when_busy && nof_gpus_ > 1) {
    for (;;) {
      if (error_) {
        std::rethrow_exception(error_);
      }
      if (closed_) {
        return nullptr;
      }
      bool on_gpu = true;
      for (int g = 0; g < started_; ++g) {
        chunk_slot* s = slots_[next_of(g)].get();
        if (!s->input_held) {
          ++turn_[std::size_t(g)];
          return take(s);
        }
        if (s->located.done() && s->done.done()) {
          on_gpu = false;
          break; // held by the host (the walk, the writer), not its GPU: another GPU would not go faster
        }
      }
      // A release wakes this; a GPU finishing its chunk does not, hence the timeout.
      const auto w0 = std::chrono::steady_clock::now();
      free_cv_.wait_for(lk, std::chrono::microseconds(200));
      if (on_gpu) {
        add_behind(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
      }
    }
  }
  for (;;) {
    if (next_ >= slots_.size()) {
      next_ = 0;
    }
    if (gpu_of(next_) < started_) {
      break;
    }
    ++next_; // its GPU is not started
  }
  chunk_slot* s = slots_[next_].get();
  ++next_;
  const bool on_gpu = s->input_held && !(s->located.done() && s->done.done());
  const auto w0 = std::chrono::steady_clock::now();
  free_cv_.wait(lk, [&] { return !s->input_held || error_ || closed_; });
  if (on_gpu) {
    add_behind(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
  }
  if (error_) {
    std::rethrow_exception(error_);
  }
  if (closed_) {
    return nullptr;
  }
  return take(s);
}

std::vector<uint64_t> slot_ring::chunks_per_gpu()
{
  std::lock_guard lk(m_);
  return chunks_per_gpu_;
}

std::vector<std::string> slot_ring::notes()
{
  std::lock_guard lk(m_);
  std::vector<std::string> out;
  if (nof_gpus_ > 1) {
    std::string per = "chunks per GPU:";
    for (std::size_t g = 0; g < chunks_per_gpu_.size(); ++g) {
      per += (g ? ", " : " ") + std::to_string(gcfg_.device + int(g)) + ": " + std::to_string(chunks_per_gpu_[g]);
    }
    out.push_back(per + " (" + (gcfg_.spread == gpu_spread::when_busy ? "to the next GPU only while those before are busy" : "in turn") + ")");
    if (gcfg_.start == gpu_start::when_behind && !start_asked_ && started_ < nof_gpus_) {
      out.push_back(gpu_range(gcfg_, started_, nof_gpus_) + " not started: " + gpu_range(gcfg_, 0, started_) +
                    " kept up (the reader waited " + seconds_text(behind_seconds_) + " for chunks still on it over " +
                    std::to_string(acquired_) + " chunks; starting another costs about " + seconds_text(gcfg_.start_cost_seconds) + ")");
    }
  }
  out.insert(out.end(), notes_.begin(), notes_.end());
  return out;
}

void slot_ring::hold_output(chunk_slot& s)
{
  std::unique_lock lk(m_);
  free_cv_.wait(lk, [&] { return !s.output_held || error_; });
  if (error_) {
    std::rethrow_exception(error_);
  }
  s.output_held = true;
}

void slot_ring::release_input(chunk_slot& s)
{
  {
    std::lock_guard lk(m_);
    s.input_held = false;
  }
  free_cv_.notify_all();
}

namespace {

void CUDART_CB release_input_fn(void* p)
{
  auto* s = static_cast<chunk_slot*>(p);
  s->ring->release_input(*s); // a lock and a notify: no CUDA call
}

} // namespace

void slot_ring::release_input_after(chunk_slot& s)
{
  s.ring = this;
  WHD_CUDA_CHECK(cudaLaunchHostFunc(s.stream.get(), release_input_fn, &s));
}

void slot_ring::release_output(chunk_slot& s)
{
  {
    std::lock_guard lk(m_);
    s.output_held = false;
  }
  free_cv_.notify_all();
}

void slot_ring::release(chunk_slot& s)
{
  {
    std::lock_guard lk(m_);
    s.input_held = s.output_held = false;
  }
  free_cv_.notify_all();
}

void slot_ring::close()
{
  {
    std::lock_guard lk(m_);
    closed_ = true;
  }
  free_cv_.notify_all();
}

void slot_ring::fail(std::exception_ptr e)
{
  {
    std::lock_guard lk(m_);
    error_ = std::move(e);
  }
  free_cv_.notify_all();
}

} // namespace whd::baseband::gpu
