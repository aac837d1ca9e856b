#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/gpu_receiver.hpp>

#include "gpu_symbol_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace whd::baseband {

namespace {

namespace p = profile;
namespace tr = transport;
constexpr uint64_t L = p::SYMBOL_LEN;
/// Frames whose parameters one batch carries; a batch of many short frames is
/// submitted early when it reaches this.
constexpr std::size_t MAX_FRAMES_PER_BATCH = 1024;

/// A run of consecutive data symbols of one frame inside a batch.
struct segment {
  const located_frame* frame = nullptr;
  uint32_t frame_index = 0; ///< into the batch's frame table
  uint64_t m0 = 0;          ///< first symbol number
  std::size_t first = 0;    ///< first slot of the batch
  std::size_t count = 0;
};

/// One batch in flight: its stream, pinned and device buffers.
struct slot {
  slot(std::size_t symbols, std::size_t max_frames, tr::link_format fmt)
      : h_samples(symbols * p::N * tr::link_bytes_per_sample(fmt)), h_scales(symbols), h_desc(symbols), h_frames(max_frames),
        h_out(symbols * gpu::OUT_STRIDE), d_samples(h_samples.size()), d_scales(symbols), d_desc(symbols), d_frames(max_frames),
        d_out(h_out.size()), done(false)
  {
  }
  cuda::stream stream;
  cuda::pinned_buffer<std::byte> h_samples;
  cuda::pinned_buffer<float> h_scales;
  cuda::pinned_buffer<gpu::symbol_desc> h_desc;
  cuda::pinned_buffer<gpu::frame_params> h_frames;
  cuda::pinned_buffer<uint8_t> h_out;
  cuda::device_buffer<std::byte> d_samples;
  cuda::device_buffer<float> d_scales;
  cuda::device_buffer<gpu::symbol_desc> d_desc;
  cuda::device_buffer<gpu::frame_params> d_frames;
  cuda::device_buffer<uint8_t> d_out;
  cuda::event done;
  std::vector<segment> segments;
  std::vector<std::unique_ptr<located_frame>> frames; // owned copies for the segments
  std::size_t count = 0;
  bool in_flight = false;
};

class gpu_receiver final : public receiver {
public:
  gpu_receiver(const rx_config& cfg, const gpu_config& gcfg) : cfg_(cfg), gcfg_(gcfg)
  {
    if (cuda::device_count() == 0) {
      throw std::runtime_error("GPU backend: " + cuda::no_device_reason());
    }
    WHD_CUDA_CHECK(cudaSetDevice(gcfg_.device));
    nof_threads_ = cfg.nof_threads ? cfg.nof_threads : std::max(1u, std::thread::hardware_concurrency());
  }

  std::string_view backend() const noexcept override { return "gpu"; }

  receive_result run(const tr::sample_source& src, payload_sink& sink, const progress_fn& progress) override
  {
    const auto* file = dynamic_cast<const tr::capture_reader*>(&src);
    in_type_ = file ? file->info().type : datatype::cf32_le;
    fmt_ = gcfg_.link.value_or(tr::auto_link_format(in_type_));
    file_ = file;
    src_ = &src;
    const std::size_t per_batch = std::max<std::size_t>(gcfg_.symbols_per_batch, 1);
    slots_.clear();
    for (int i = 0; i < std::max(gcfg_.nof_streams, 1); ++i) {
      slots_.push_back(std::make_unique<slot>(per_batch, std::min(per_batch, MAX_FRAMES_PER_BATCH), fmt_));
    }
    per_batch_ = per_batch;
    next_slot_ = 0;
    current_ = nullptr;

    receive_result res;
    res.nof_samples = src.size();
    frame_locator locator(cfg_);
    uint64_t pos = 0;
    while (auto ev = locator.next(src, pos, progress)) {
      pos = ev->resume;
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
      add_frame(*ev->frame, sink);
    }
    if (current_ != nullptr && current_->count > 0) {
      submit(*current_);
    }
    // Drain in submission order.
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      slot& s = *slots_[(next_slot_ + i) % slots_.size()];
      flush(s, sink);
    }
    return res;
  }

private:
  /// Queue every data symbol of a frame, filling and submitting batches.
  void add_frame(const located_frame& f, payload_sink& sink)
  {
    uint64_t done = 0;
    while (done < f.info.symbols) {
      if (current_ == nullptr) {
        current_ = acquire(sink);
      }
      slot& s = *current_;
      const std::size_t n = std::size_t(std::min<uint64_t>(f.info.symbols - done, per_batch_ - s.count));
      if (s.frames.empty() || s.frames.back()->info.start != f.info.start) {
        s.frames.push_back(std::make_unique<located_frame>(f));
        s.h_frames[s.frames.size() - 1] = gpu::make_frame_params(f);
      }
      segment seg{s.frames.back().get(), uint32_t(s.frames.size() - 1), p::FIRST_DATA_SYMBOL + done, s.count, n};
      pack(s, seg);
      s.segments.push_back(seg);
      s.count += n;
      done += n;
      if (s.count == per_batch_ || s.frames.size() == s.h_frames.size()) {
        submit(s);
        current_ = nullptr;
      }
    }
  }

  /// The next slot, after its previous batch's payload went to the sink.
  slot* acquire(payload_sink& sink)
  {
    slot& s = *slots_[next_slot_];
    next_slot_ = (next_slot_ + 1) % slots_.size();
    flush(s, sink);
    s.segments.clear();
    s.frames.clear();
    s.count = 0;
    return &s;
  }

  /// Read and pack a segment's windows into the slot's pinned buffers, over threads.
  void pack(slot& s, const segment& seg)
  {
    const std::size_t out_bpw = p::N * tr::link_bytes_per_sample(fmt_);
    const std::size_t nt = std::min<std::size_t>(nof_threads_, (seg.count + 255) / 256);
    auto work = [&](std::size_t t) {
      const std::size_t lo = seg.count * t / nt, hi = seg.count * (t + 1) / nt;
      if (lo == hi) {
        return;
      }
      const frame_sync& sync = seg.frame->sync;
      const uint64_t first = fft_window(sync, seg.m0 + lo);
      const std::size_t span = (hi - lo - 1) * L + p::N;
      thread_local std::vector<std::byte> raw;
      thread_local std::vector<uint64_t> starts;
      datatype type = in_type_;
      if (file_ != nullptr) {
        raw.resize(span * bytes_per_sample(type));
        file_->read_raw(first, raw);
      } else {
        raw.resize(span * sizeof(cf32));
        src_->read(first, std::span<cf32>(reinterpret_cast<cf32*>(raw.data()), span));
        type = datatype::cf32_le;
      }
      starts.resize(hi - lo);
      for (std::size_t i = 0; i < hi - lo; ++i) {
        starts[i] = i * L;
      }
      const std::size_t slot0 = seg.first + lo;
      tr::pack_windows(type, raw, starts, p::N, fmt_, std::span<std::byte>(s.h_samples.data() + slot0 * out_bpw, (hi - lo) * out_bpw),
                       std::span<float>(s.h_scales.data() + slot0, hi - lo));
      for (std::size_t i = lo; i < hi; ++i) {
        s.h_desc[seg.first + i] = {seg.frame_index, uint32_t(seg.m0 + i)};
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
  }

  void submit(slot& s)
  {
    const std::size_t out_bpw = p::N * tr::link_bytes_per_sample(fmt_);
    cudaStream_t st = s.stream.get();
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_samples.data(), s.h_samples.data(), s.count * out_bpw, cudaMemcpyHostToDevice, st));
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_scales.data(), s.h_scales.data(), s.count * sizeof(float), cudaMemcpyHostToDevice, st));
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_desc.data(), s.h_desc.data(), s.count * sizeof(gpu::symbol_desc), cudaMemcpyHostToDevice, st));
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.d_frames.data(), s.h_frames.data(), s.frames.size() * sizeof(gpu::frame_params),
                                   cudaMemcpyHostToDevice, st));
    gpu::batch_view b{s.d_samples.data(), s.d_scales.data(), s.d_desc.data(), s.d_frames.data(), s.d_out.data(), s.count};
    gpu::launch_decode(fmt_, b, st);
    WHD_CUDA_CHECK(cudaMemcpyAsync(s.h_out.data(), s.d_out.data(), s.count * gpu::OUT_STRIDE, cudaMemcpyDeviceToHost, st));
    s.done.record(s.stream);
    s.in_flight = true;
  }

  /// Wait for a slot's batch and write its payload, in order.
  void flush(slot& s, payload_sink& sink)
  {
    if (!s.in_flight) {
      return;
    }
    s.done.synchronize();
    s.in_flight = false;
    for (const segment& seg : s.segments) {
      const std::size_t bps = std::size_t(p::bytes_per_symbol(seg.frame->info.mod));
      const uint8_t* out = s.h_out.data() + seg.first * gpu::OUT_STRIDE;
      if (bps == gpu::OUT_STRIDE) {
        sink.write(std::span<const uint8_t>(out, seg.count * bps));
      } else {
        for (std::size_t i = 0; i < seg.count; ++i) {
          sink.write(std::span<const uint8_t>(out + i * gpu::OUT_STRIDE, bps));
        }
      }
    }
  }

  rx_config cfg_;
  gpu_config gcfg_;
  unsigned nof_threads_ = 1;
  datatype in_type_ = datatype::cf32_le;
  tr::link_format fmt_ = tr::link_format::f32;
  const tr::capture_reader* file_ = nullptr;
  const tr::sample_source* src_ = nullptr;
  std::vector<std::unique_ptr<slot>> slots_;
  std::size_t per_batch_ = 0;
  std::size_t next_slot_ = 0;
  slot* current_ = nullptr;
};

} // namespace

namespace gpu {

frame_params make_frame_params(const located_frame& f)
{
  frame_params fp{};
  fp.cfo_cps = f.sync.cfo_cps;
  fp.window_offset = double(f.sync.fft0 - f.sync.start);
  fp.mod = int32_t(f.info.mod);
  for (int u = 0; u < p::NOF_USED; ++u) {
    fp.inv_re[u] = f.channel.inv[std::size_t(u)].real();
    fp.inv_im[u] = f.channel.inv[std::size_t(u)].imag();
  }
  for (int i = 0; i < p::NOF_PILOTS; ++i) {
    const cf32 h = f.channel.h[std::size_t(p::PILOT_USED[std::size_t(i)])];
    fp.hconj_re[i] = h.real();
    fp.hconj_im[i] = -h.imag();
  }
  return fp;
}

} // namespace gpu

std::unique_ptr<receiver> make_gpu_receiver(const rx_config& cfg, const gpu_config& gcfg)
{
  return std::make_unique<gpu_receiver>(cfg, gcfg);
}

} // namespace whd::baseband
