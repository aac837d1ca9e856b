#include <whd/rx_bench/pipeline_bench.hpp>

#include "bench_util.hpp"
#include "cufft_chain.hpp"
#include <whd/rx_bench/bench_env.hpp>
#include "gpu_symbol_decoder.hpp"

#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>
#include <whd/transport/cuda.hpp>
#include <whd/transport/link_pack.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>
#include <thread>

namespace whd::rx_bench {

namespace {

namespace p = profile;
namespace bb = baseband;
namespace gpu = baseband::gpu;
namespace tr = transport;
using progress_fn = std::function<void(std::string_view)>;

/// The median and spread of repeated timings, into `row`.
void set_times(region_row& row, std::vector<double> seconds)
{
  const timing_summary t = summarise(std::move(seconds));
  row.median_s = t.median_s;
  row.min_s = t.min_s;
  row.max_s = t.max_s;
}

/// Times `body` `repeats` times with events on `stream` (after one warm-up).
template <typename F>
std::vector<double> time_events(int repeats, cudaStream_t stream, F&& body)
{
  cuda::event a, b;
  body();
  WHD_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> out;
  for (int r = 0; r < repeats; ++r) {
    a.record(stream);
    body();
    b.record(stream);
    b.synchronize();
    out.push_back(double(b.elapsed_ms_since(a)) * 1e-3);
  }
  return out;
}

/// Copy ceiling of one direction over 1 GiB: median GB/s.
double copy_gbps(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t s, double bytes_counted)
{
  const auto t = time_events(5, s, [&] { WHD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s)); });
  return bytes_counted / summarise(t).median_s / 1e9;
}

/// A several-GPU row against its one-GPU row (same region, link and engine):
/// the aggregate speed-up of the split.
struct scaling {
  std::string what;
  double ratio = 0.0;      ///< one GPU's ns/symbol over the several GPUs'
  double x_realtime = 0.0; ///< the several GPUs'
};

std::vector<scaling> scalings(const pipeline_bench_result& r)
{
  std::vector<scaling> out;
  for (const auto& row : r.rows) {
    // "ENGINE xN GPUs[, round robin | , pulled][REST]" against "ENGINE[REST]".
    const auto at = row.engine.find(" x");
    const auto gpus_at = at == std::string::npos ? at : row.engine.find(" GPUs", at);
    if (gpus_at == std::string::npos) {
      continue;
    }
    std::string rest = row.engine.substr(gpus_at + 5);
    for (const std::string policy : {", round robin", ", pulled"}) {
      if (rest.starts_with(policy)) {
        rest.erase(0, policy.size());
      }
    }
    const std::string base = row.engine.substr(0, at) + rest;
    for (const auto& one : r.rows) {
      if (one.region == row.region && one.link == row.link && one.engine == base && row.ns_per_symbol() > 0.0) {
        out.push_back({row.region + ", " + row.engine + ", " + row.link, one.ns_per_symbol() / row.ns_per_symbol(),
                       p::SYMBOL_PERIOD_NS / row.ns_per_symbol()});
        break;
      }
    }
  }
  return out;
}

/// The capture's base path (BASE.sigmf-meta); generated once when missing (delete
/// the files to make it anew).
std::string capture_base(const pipeline_bench_config& cfg, const progress_fn& progress)
{
  const std::string base = cfg.capture.string();
  if (!std::filesystem::exists(base + ".sigmf-meta")) {
    progress("generating " + std::to_string(cfg.nof_frames) + " x " + std::to_string(cfg.nd) + " 16-QAM symbols into " + base);
    const auto t0 = steady::now();
    write_impaired_capture({.mod = p::modulation::qam16, .nd = cfg.nd, .nof_frames = cfg.nof_frames, .seed = cfg.seed,
                            .snr_dB = cfg.snr_dB, .cfo_Hz = cfg.cfo_Hz, .taps = cfg.taps},
                           cfg.capture, datatype::ci8, "whd-bench pipeline capture");
    progress("generated in " + std::to_string(seconds_since(t0)) + " s");
  }
  return base;
}

/// What the regions share: the configuration, the capture and its data symbols
/// located on the host, the CPU backend's payload to compare bits with, how
/// batches are spread, and the result every region adds its rows to.
struct bench_context {
  bench_context(const pipeline_bench_config& c, const progress_fn& pr, pipeline_bench_result& res)
      : cfg(c), progress(pr), r(res), base(capture_base(c, pr)), reader(tr::open_capture(base + ".sigmf-meta"))
  {
    rxc.nof_threads = c.cpu_threads;
  }

  const pipeline_bench_config& cfg;
  const progress_fn& progress;
  pipeline_bench_result& r;
  std::string base;                        ///< the capture's path without .sigmf-meta
  tr::capture_reader reader;
  bb::rx_config rxc;                       ///< the CPU backend's and the host locator's
  std::vector<bb::located_frame> frames;
  std::vector<gpu::symbol_desc> desc_host; ///< every data symbol: its frame and symbol index
  std::vector<uint64_t> window_start;      ///< every data symbol's FFT window: first sample
  std::size_t count = 0;                   ///< data symbols
  std::vector<uint8_t> ref;                ///< the CPU backend's payload: the reference bits
  std::size_t per_batch = 0;               ///< symbols per batch, regions (a) and (b)
  int nof_streams = 1;                     ///< batches in flight per GPU, regions (b) and (c)
  int nof_gpus = 1;                        ///< the GPUs asked for, of those present
  std::vector<int> gpu_counts;             ///< 1, and nof_gpus when more: regions (b) and (c) on each
};

/// Every frame of the capture, located once on the host, and its data symbols'
/// FFT windows.
void locate_frames(bench_context& ctx)
{
  const auto t0 = steady::now();
  ctx.frames = locate_all(ctx.reader, ctx.rxc);
  ctx.r.locate_s = seconds_since(t0);
  for (std::size_t f = 0; f < ctx.frames.size(); ++f) {
    for (uint32_t k = 0; k < ctx.frames[f].info.symbols; ++k) {
      const uint64_t m = p::FIRST_DATA_SYMBOL + k;
      ctx.desc_host.push_back({uint32_t(f), uint32_t(m)});
      ctx.window_start.push_back(bb::fft_window(ctx.frames[f].sync, m));
    }
  }
  ctx.count = ctx.desc_host.size();
  ctx.r.data_symbols = ctx.count;
  ctx.progress(std::to_string(ctx.frames.size()) + " frames, " + std::to_string(ctx.count) + " data symbols located in " +
               std::to_string(ctx.r.locate_s) + " s");
  if (ctx.count == 0) {
    throw std::runtime_error("the benchmark capture holds no decodable symbol");
  }
}

/// The CPU backend's payload: the reference bits (and its end-to-end time).
void cpu_reference(bench_context& ctx)
{
  const auto t0 = steady::now();
  auto cpu = bb::make_cpu_receiver(ctx.rxc);
  bb::memory_sink sink;
  cpu->run(ctx.reader, sink);
  ctx.ref = sink.bytes();
  region_row row{"end-to-end (capture in page cache)", "whd cpu (liquid-dsp)", "-", ctx.count};
  set_times(row, {seconds_since(t0)});
  ctx.r.rows.push_back(row);
  ctx.progress("CPU backend: " + std::to_string(row.ns_per_symbol()) + " ns/symbol");
}

/// Copy ceilings host to device, device to host and on the device, in this run.
void copy_ceilings(bench_context& ctx)
{
  const std::size_t bytes = std::size_t(1) << 30;
  cuda::stream s;
  cuda::pinned_buffer<std::byte> h(bytes);
  std::fill(h.begin(), h.end(), std::byte{1});
  cuda::device_buffer<std::byte> d(bytes), d2(bytes);
  auto& r = ctx.r;
  r.h2d_gbps = copy_gbps(d.data(), h.data(), bytes, cudaMemcpyHostToDevice, s.get(), double(bytes));
  r.d2h_gbps = copy_gbps(h.data(), d.data(), bytes, cudaMemcpyDeviceToHost, s.get(), double(bytes));
  r.d2d_gbps = copy_gbps(d2.data(), d.data(), bytes, cudaMemcpyDeviceToDevice, s.get(), 2.0 * double(bytes));
  ctx.progress("ceilings: H2D " + std::to_string(r.h2d_gbps) + " GB/s, D2H " + std::to_string(r.d2h_gbps) + " GB/s, D2D " +
               std::to_string(r.d2d_gbps) + " GB/s");
}

/// Symbols per batch, streams, and the GPUs the regions spread batches over.
void choose_batching(bench_context& ctx)
{
  ctx.per_batch = std::min(ctx.cfg.symbols_per_batch, ctx.count);
  ctx.nof_streams = std::max(ctx.cfg.nof_streams, 1);
  int present = 0;
  WHD_CUDA_CHECK(cudaGetDeviceCount(&present));
  ctx.nof_gpus = std::min(std::max(ctx.cfg.nof_gpus, 1), present);
  if (ctx.nof_gpus < ctx.cfg.nof_gpus) {
    ctx.progress("--gpus " + std::to_string(ctx.cfg.nof_gpus) + ": only " + std::to_string(present) + " present; using " +
                 std::to_string(ctx.nof_gpus));
  }
  ctx.gpu_counts = {1};
  if (ctx.nof_gpus > 1) {
    ctx.gpu_counts.push_back(ctx.nof_gpus);
  }
}

/// Regions (a) and (b)'s inputs besides the samples: every frame's parameters
/// (small) and every symbol's descriptor, on the device once, and the payload
/// buffers the regions write.
struct device_symbols {
  explicit device_symbols(const bench_context& ctx)
      : d_frames(ctx.frames.size()), h_desc(ctx.count), d_desc(ctx.count), h_out(ctx.count * gpu::OUT_STRIDE),
        d_out(ctx.count * gpu::OUT_STRIDE), d_rots(ctx.count)
  {
    for (const auto& f : ctx.frames) {
      fp_host.push_back(gpu::make_frame_params(f));
    }
    WHD_CUDA_CHECK(cudaMemcpy(d_frames.data(), fp_host.data(), fp_host.size() * sizeof(gpu::frame_params), cudaMemcpyHostToDevice));
    std::copy(ctx.desc_host.begin(), ctx.desc_host.end(), h_desc.begin());
    WHD_CUDA_CHECK(cudaMemcpy(d_desc.data(), h_desc.data(), h_desc.size_bytes(), cudaMemcpyHostToDevice));
  }

  /// The payload last copied to the host.
  std::span<const uint8_t> payload() const { return {h_out.data(), h_out.size()}; }

  std::vector<gpu::frame_params> fp_host;
  cuda::device_buffer<gpu::frame_params> d_frames;
  cuda::pinned_buffer<gpu::symbol_desc> h_desc;
  cuda::device_buffer<gpu::symbol_desc> d_desc;
  cuda::pinned_buffer<uint8_t> h_out;
  cuda::device_buffer<uint8_t> d_out;
  cuda::device_buffer<float2> d_rots; ///< the symbols' derotations (batch_view::rots)
  cuda::stream stream; ///< region (a)'s
};

/// Every data symbol's window in one link format, in pinned memory, with its scale.
struct packed_windows {
  packed_windows(tr::link_format f, std::size_t count)
      : fmt(f), link(tr::to_string(f)), bytes_per_window(p::N * tr::link_bytes_per_sample(f)), samples(count * bytes_per_window),
        scales(count), link_bytes(double(count) * (double(bytes_per_window) + sizeof(float) + sizeof(gpu::symbol_desc)))
  {
  }

  tr::link_format fmt;
  std::string link;
  std::size_t bytes_per_window;
  cuda::pinned_buffer<std::byte> samples;
  cuda::pinned_buffer<float> scales;
  double link_bytes; ///< samples, scales and descriptors: what region (b) sends
};

/// Packs every window on all host threads (the pipeline region starts here) and
/// records the time it took per symbol.
packed_windows pack_every_window(bench_context& ctx, tr::link_format fmt)
{
  packed_windows w(fmt, ctx.count);
  const std::size_t count = ctx.count, bpw = w.bytes_per_window;
  const datatype type = ctx.reader.type();
  const auto t0 = steady::now();
  const unsigned nt = ctx.r.env.host_threads;
  std::vector<std::jthread> threads;
  for (unsigned t = 0; t < nt; ++t) {
    threads.emplace_back([&, t] {
      constexpr std::size_t RUN = 256; // windows read with one pread
      std::vector<std::byte> raw;
      std::vector<uint64_t> starts;
      const std::size_t lo = count * t / nt, hi = count * (t + 1) / nt;
      for (std::size_t k = lo; k < hi;) {
        std::size_t e = std::min(hi, k + RUN);
        while (e > k + 1 && ctx.desc_host[e - 1].frame != ctx.desc_host[k].frame) {
          --e;
        }
        const uint64_t first = ctx.window_start[k];
        const std::size_t span = std::size_t(ctx.window_start[e - 1] - first) + p::N;
        raw.resize(span * bytes_per_sample(type));
        ctx.reader.read_raw(first, raw);
        starts.resize(e - k);
        for (std::size_t i = k; i < e; ++i) {
          starts[i - k] = ctx.window_start[i] - first;
        }
        // Bench-only packing: the receiver sends the capture as stored and gathers windows on the device.
        tr::pack_windows(type, raw, starts, p::N, fmt, std::span<std::byte>(w.samples.data() + k * bpw, (e - k) * bpw),
                         std::span<float>(w.scales.data() + k, e - k));
        k = e;
      }
    });
  }
  threads.clear();
  ctx.r.pack_ns_per_symbol.emplace_back(w.link, seconds_since(t0) * 1e9 / double(count));
  return w;
}

/// Region (a), device-resident: packed windows already on the GPU to bits on the
/// GPU, the fused kernel over all at once against the cuFFT chain batch by batch.
void device_resident_rows(bench_context& ctx, device_symbols& dev, const packed_windows& w)
{
  const std::size_t count = ctx.count, per_batch = ctx.per_batch, bpw = w.bytes_per_window;
  const cudaStream_t st = dev.stream.get();
  cuda::device_buffer<std::byte> d_samples(count * bpw);
  cuda::device_buffer<float> d_scales(count);
  WHD_CUDA_CHECK(cudaMemcpy(d_samples.data(), w.samples.data(), count * bpw, cudaMemcpyHostToDevice));
  WHD_CUDA_CHECK(cudaMemcpy(d_scales.data(), w.scales.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  gpu::batch_view all{d_samples.data(), d_scales.data(), dev.d_desc.data(), dev.d_frames.data(), dev.d_out.data(), count};
  all.rots = dev.d_rots.data();
  // Each batch decodes alone: a symbol at a batch's edge averages its derotation with
  // one neighbour fewer than whd-rx's chunks (which carry halo symbols) give it.
  auto batched = [&](auto&& launch) {
    for (std::size_t k = 0; k < count; k += per_batch) {
      const std::size_t n = std::min(per_batch, count - k);
      gpu::batch_view b{d_samples.data() + k * bpw, d_scales.data() + k, dev.d_desc.data() + k, dev.d_frames.data(),
                        dev.d_out.data() + k * gpu::OUT_STRIDE, n};
      b.rots = dev.d_rots.data() + k;
      launch(b);
    }
  };
  // Times `body` from a poisoned output, checks its bits against the CPU's, adds the row.
  auto measure = [&](const char* engine, auto&& body) {
    WHD_CUDA_CHECK(cudaMemset(dev.d_out.data(), 0xA5, dev.d_out.size_bytes()));
    region_row row{"device-resident", engine, w.link, count};
    set_times(row, time_events(ctx.cfg.repeats, st, body));
    WHD_CUDA_CHECK(cudaMemcpy(dev.h_out.data(), dev.d_out.data(), dev.d_out.size_bytes(), cudaMemcpyDeviceToHost));
    ctx.r.bit_differences.emplace_back("device-resident " + row.engine + " " + w.link, bit_differences(dev.payload(), ctx.ref));
    ctx.r.rows.push_back(row);
    return row.ns_per_symbol();
  };
  const double ours = measure("whd fused", [&] { gpu::launch_decode(w.fmt, all, st); });
  cufft_chain chain(per_batch);
  const double base = measure("cufft chain", [&] { batched([&](const gpu::batch_view& b) { chain.run(w.fmt, b, st); }); });
  ctx.progress("device-resident " + w.link + ": ours " + std::to_string(ours) + " ns/symbol, cuFFT chain " + std::to_string(base));
}

/// What region (b) does with each batch. The copies-only engines show what the link
/// allows this batching.
enum class engine {
  fused,          ///< ours
  cufft_chain,    ///< the baseline (compared on one GPU)
  copies_in,      ///< the same copies in, nothing else
  fused_pulled,   ///< ours, each GPU's own host thread pulling the next batch when one of
                  ///< its streams is free, against fused's round robin (several GPUs)
  copies_in_out,  ///< the copies in and the payload's copy out, no kernel (what the link
                  ///< allows a chain that returns its bits)
};
constexpr engine ENGINES[] = {engine::fused, engine::cufft_chain, engine::copies_in, engine::fused_pulled, engine::copies_in_out};

const char* engine_name(engine e)
{
  constexpr const char* NAMES[] = {"whd fused", "cufft chain", "copies in only", "whd fused", "copies in and out only"};
  return NAMES[std::size_t(e)];
}

/// One stream of region (b) on one GPU, with one batch's buffers.
struct lane {
  int device = 0;
  cuda::stream s;
  cuda::device_buffer<std::byte> in; ///< one batch's block
  cuda::device_buffer<uint8_t> out;
  cuda::device_buffer<gpu::frame_params> frames;
  cuda::device_buffer<float2> rots; ///< one batch's derotations (batch_view::rots)
  std::unique_ptr<cufft_chain> chain;
};
using lanes = std::vector<std::unique_ptr<lane>>;

/// nof_streams lanes on each of `gpus` GPUs, lane i on GPU i mod gpus.
lanes make_lanes(const bench_context& ctx, const device_symbols& dev, const gpu::input_layout& lay, int gpus)
{
  lanes out;
  for (int i = 0; i < ctx.nof_streams * gpus; ++i) {
    const int d = i % gpus;
    WHD_CUDA_CHECK(cudaSetDevice(d));
    auto l = std::make_unique<lane>();
    l->device = d;
    l->in = cuda::device_buffer<std::byte>(lay.bytes);
    l->out = cuda::device_buffer<uint8_t>(ctx.per_batch * gpu::OUT_STRIDE);
    l->frames = cuda::device_buffer<gpu::frame_params>(dev.fp_host.size());
    WHD_CUDA_CHECK(cudaMemcpy(l->frames.data(), dev.fp_host.data(), dev.fp_host.size() * sizeof(gpu::frame_params), cudaMemcpyHostToDevice));
    l->rots = cuda::device_buffer<float2>(ctx.per_batch);
    l->chain = std::make_unique<cufft_chain>(ctx.per_batch);
    out.push_back(std::move(l));
  }
  return out;
}

/// Batch i (first symbol k) to lane i mod lanes, from this thread.
template <typename Enqueue>
void feed_round_robin(const bench_context& ctx, const lanes& ls, Enqueue&& enqueue)
{
  std::size_t i = 0;
  for (std::size_t k = 0; k < ctx.count; k += ctx.per_batch, ++i) {
    lane& l = *ls[i % ls.size()];
    WHD_CUDA_CHECK(cudaSetDevice(l.device));
    enqueue(l, k);
  }
}

/// Each GPU's own host thread takes the next batch when one of its streams is free.
template <typename Enqueue>
void feed_pulled(const bench_context& ctx, const lanes& ls, int gpus, Enqueue&& enqueue)
{
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(gpus));
  {
    std::vector<std::jthread> feeders;
    for (int dev = 0; dev < gpus; ++dev) {
      feeders.emplace_back([&, dev] {
        try {
          WHD_CUDA_CHECK(cudaSetDevice(dev));
          for (std::size_t j = 0;; ++j) {
            const std::size_t k = next.fetch_add(ctx.per_batch);
            if (k >= ctx.count) {
              return;
            }
            lane& l = *ls[std::size_t(dev) + std::size_t(gpus) * (j % std::size_t(ctx.nof_streams))];
            l.s.synchronize(); // the stream's previous batch is done: this GPU is ready for more
            enqueue(l, k);
          }
        } catch (...) {
          errors[std::size_t(dev)] = std::current_exception();
        }
      });
    }
  }
  for (const auto& e : errors) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
}

/// One engine of region (b) over `gpus` GPUs: every batch from its block in pinned
/// memory through `ls`, timed on the host clock, and its row.
void pipeline_row(bench_context& ctx, device_symbols& dev, const packed_windows& w, const gpu::input_layout& lay,
                  const cuda::pinned_buffer<std::byte>& blocks, const lanes& ls, int gpus, engine e)
{
  const std::size_t count = ctx.count, per_batch = ctx.per_batch;
  auto enqueue = [&](lane& l, std::size_t k) {
    const std::size_t n = std::min(per_batch, count - k);
    cudaStream_t st = l.s.get();
    lay.copy_in(l.in.data(), blocks.data() + k / per_batch * lay.bytes, n, per_batch, w.bytes_per_window, 0, st);
    if (e == engine::copies_in) {
      return;
    }
    gpu::batch_view b = lay.view(l.in.data(), l.out.data(), n);
    b.frames = l.frames.data(); // every frame's, copied in once
    b.rots = l.rots.data();
    if (e == engine::cufft_chain) {
      l.chain->run(w.fmt, b, st);
    } else if (e != engine::copies_in_out) {
      gpu::launch_decode(w.fmt, b, st);
    }
    WHD_CUDA_CHECK(cudaMemcpyAsync(dev.h_out.data() + k * gpu::OUT_STRIDE, l.out.data(), n * gpu::OUT_STRIDE, cudaMemcpyDeviceToHost, st));
  };
  auto pass = [&] {
    if (e == engine::fused_pulled) {
      feed_pulled(ctx, ls, gpus, enqueue);
    } else {
      feed_round_robin(ctx, ls, enqueue);
    }
    for (const auto& l : ls) {
      l->s.synchronize();
    }
  };
  pass(); // warm-up (plans, first touch)
  std::fill(dev.h_out.begin(), dev.h_out.end(), uint8_t(0xA5));
  std::vector<double> t;
  for (int rep = 0; rep < ctx.cfg.repeats; ++rep) {
    const auto t0 = steady::now();
    pass();
    t.push_back(seconds_since(t0));
  }
  const std::string on = gpus > 1 ? " x" + std::to_string(gpus) + " GPUs" : "";
  region_row row{"pipeline (pinned host to host)",
                 engine_name(e) + on + (e == engine::fused_pulled ? ", pulled" : gpus > 1 ? ", round robin" : ""), w.link, count};
  set_times(row, t);
  row.link_bytes = w.link_bytes;
  if (e != engine::copies_in && e != engine::copies_in_out) {
    ctx.r.bit_differences.emplace_back("pipeline " + row.engine + " " + w.link, bit_differences(dev.payload(), ctx.ref));
  }
  ctx.r.rows.push_back(row);
  ctx.progress("pipeline " + w.link + " " + row.engine + ": " + std::to_string(row.ns_per_symbol()) + " ns/symbol, link " +
               std::to_string(w.link_bytes / row.median_s / 1e9) + " GB/s");
}

/// Region (b), pipeline: pinned host -> device -> bits -> pinned host, batches over
/// streams (and over GPUs: batch i goes to GPU i mod G), for G = 1 and cfg.nof_gpus.
/// The batches' inputs lie as the fused kernel reads them: a block a batch (samples,
/// scales, descriptors at gpu::input_layout's offsets), one copy a full batch.
void pipeline_rows(bench_context& ctx, device_symbols& dev, const packed_windows& w)
{
  const std::size_t count = ctx.count, per_batch = ctx.per_batch, bpw = w.bytes_per_window;
  const gpu::input_layout lay(per_batch, 0, bpw);
  const std::size_t nof_batches = (count + per_batch - 1) / per_batch;
  cuda::pinned_buffer<std::byte> blocks(nof_batches * lay.bytes);
  for (std::size_t j = 0; j < nof_batches; ++j) {
    const std::size_t k = j * per_batch, n = std::min(per_batch, count - k);
    std::byte* blk = blocks.data() + j * lay.bytes;
    std::memcpy(blk, w.samples.data() + k * bpw, n * bpw);
    std::memcpy(blk + lay.scales, w.scales.data() + k, n * sizeof(float));
    std::memcpy(blk + lay.desc, dev.h_desc.data() + k, n * sizeof(gpu::symbol_desc));
  }
  for (int gpus : ctx.gpu_counts) {
    const lanes ls = make_lanes(ctx, dev, lay, gpus);
    for (engine e : ENGINES) {
      if ((e == engine::cufft_chain && gpus > 1) || (e == engine::fused_pulled && gpus == 1)) {
        continue; // the baseline is compared on one GPU; pulling needs several
      }
      pipeline_row(ctx, dev, w, lay, blocks, ls, gpus, e);
    }
    WHD_CUDA_CHECK(cudaSetDevice(0));
  }
}

/// One receiver set-up of region (c).
struct e2e_case {
  int gpus = 1;
  std::size_t batch = 0; ///< 0: the receiver's default
  unsigned threads = 0;  ///< the host's reading and locating threads (whd-rx -j); 0: every core
};

/// Region (c) for one set-up: the receiver as whd-rx runs it, with its own batch
/// default and the streams of region (b), timed per profile §8 from the capture's
/// opening to the payload written. The receiver (its pinned buffers, the locator's
/// tables) is made once, before the region, as a process decoding capture after
/// capture does; its first run, set-up included, is timed apart and reported beside.
void end_to_end_row(bench_context& ctx, const e2e_case& c, const std::string& out_path)
{
  const std::string stored(to_string(ctx.reader.type())); // what crosses the link: the capture as stored
  const std::string on_batch =
      (c.batch ? ", batch " + std::to_string(c.batch) : "") + (c.threads ? ", " + std::to_string(c.threads) + " threads" : "");
  const std::string what = "end-to-end " + stored + " x" + std::to_string(c.gpus) + " GPU" + on_batch;
  bb::gpu_config g;
  g.nof_gpus = c.gpus;
  g.nof_streams = ctx.nof_streams;
  if (c.batch) {
    g.symbols_per_batch = c.batch;
  }
  bb::rx_config rxc = ctx.rxc;
  if (c.threads) {
    g.pack_threads = c.threads;
    rxc.nof_threads = c.threads;
  }
  const auto t_make = steady::now();
  auto rx = bb::make_gpu_receiver(rxc, g);
  double first_run = 0;
  std::vector<double> t;
  uint64_t diff = 0;
  for (int rep = -1; rep < std::min(ctx.cfg.repeats, 3); ++rep) {
    const auto t0 = steady::now();
    const auto info = tr::open_capture(ctx.base + ".sigmf-meta");
    tr::capture_reader rd(info);
    bb::payload_file_sink sink(out_path);
    const auto res = rx->run(rd, sink);
    sink.close();
    if (rep < 0) {
      first_run = seconds_since(t_make);
      continue;
    }
    t.push_back(seconds_since(t0));
    if (rep == 0) {
      std::string line = what + " stages [s]:";
      for (const auto& [name, sec] : res.stage_seconds) {
        line += " " + name + " " + std::to_string(sec) + ";";
        ctx.r.stage_seconds.emplace_back(what + ": " + name, sec);
      }
      ctx.progress(line);
      diff = bit_differences(read_bytes(out_path), ctx.ref);
    }
  }
  ctx.r.stage_seconds.emplace_back(what + ": first run, receiver made in it (not in the region)", first_run);
  region_row row{"end-to-end (capture in page cache)", (c.gpus > 1 ? "whd gpu x" + std::to_string(c.gpus) + " GPUs" : "whd gpu") + on_batch,
                 stored, ctx.count};
  set_times(row, t);
  row.link_bytes = double(ctx.reader.size()) * double(bytes_per_sample(ctx.reader.type()));
  ctx.r.rows.push_back(row);
  // A payload sent where it is not kept (--payload /dev/null) cannot be compared.
  if (std::filesystem::is_regular_file(out_path)) {
    ctx.r.bit_differences.emplace_back("end-to-end " + row.engine + " " + row.link, diff);
  } else {
    ctx.r.stage_seconds.emplace_back(what + ": payload not kept (" + out_path + "), bits not compared", 0.0);
  }
  ctx.progress("end-to-end gpu " + row.link + ": " + std::to_string(row.ns_per_symbol()) + " ns/symbol");
}

/// Region (c), end-to-end: capture file (page cache) to payload file, the whole
/// whd-rx chain, with the receiver's defaults, each --e2e-batch, over --gpus GPUs,
/// and each --e2e-threads on 1 and --gpus GPUs.
void end_to_end_rows(bench_context& ctx)
{
  const std::string out_path = ctx.cfg.payload.empty() ? ctx.base + ".payload" : ctx.cfg.payload.string();
  std::vector<e2e_case> cases{{1, 0, 0}};
  for (std::size_t b : ctx.cfg.e2e_batches) {
    cases.push_back({1, b, 0});
  }
  if (ctx.nof_gpus > 1) {
    cases.push_back({ctx.nof_gpus, 0, 0});
  }
  for (unsigned n : ctx.cfg.e2e_threads) {
    for (int gpus : ctx.gpu_counts) {
      cases.push_back({gpus, 0, n});
    }
  }
  for (const auto& c : cases) {
    end_to_end_row(ctx, c, out_path);
  }
  if (ctx.cfg.payload.empty()) {
    std::filesystem::remove(out_path); // ours, beside the capture; a path the caller named (even /dev/null) is left alone
  }
}

} // namespace

pipeline_bench_result run_pipeline_bench(const pipeline_bench_config& cfg, const std::function<void(std::string_view)>& progress)
{
  if (cuda::device_count() == 0) {
    throw std::runtime_error("whd-bench pipeline needs a GPU: " + cuda::no_device_reason());
  }
  WHD_CUDA_CHECK(cudaSetDevice(0));
  pipeline_bench_result r;
  r.env = collect_env(cfg.commit, cfg.command);

  bench_context ctx(cfg, progress, r);
  locate_frames(ctx);
  cpu_reference(ctx);
  copy_ceilings(ctx);
  choose_batching(ctx);
  device_symbols dev(ctx);
  for (auto fmt : {tr::link_format::int8, tr::link_format::half, tr::link_format::f32}) {
    const packed_windows w = pack_every_window(ctx, fmt);
    device_resident_rows(ctx, dev, w);
    pipeline_rows(ctx, dev, w);
  }
  if (cfg.end_to_end) {
    end_to_end_rows(ctx);
  }
  return r;
}

std::string to_json(const pipeline_bench_result& r)
{
  const bench_env& e = r.env;
  nlohmann::json j{{"device", e.device}, {"driver", e.driver},   {"date", e.date},
                   {"commit", e.commit}, {"command", e.command}, {"cpu", e.cpu},
                   {"host_threads", e.host_threads}};
  j["data_symbols"] = r.data_symbols;
  j["locate_s"] = r.locate_s;
  j["ceilings_gbps"] = {{"h2d", r.h2d_gbps}, {"d2h", r.d2h_gbps}, {"d2d_read_plus_write", r.d2d_gbps}};
  for (const auto& [link, ns] : r.pack_ns_per_symbol) {
    j["host_pack_ns_per_symbol"][link] = ns;
  }
  for (const auto& row : r.rows) {
    const double ns = row.ns_per_symbol();
    nlohmann::json o{{"region", row.region},     {"engine", row.engine},          {"link", row.link},
                     {"symbols", row.symbols},   {"median_s", row.median_s},      {"min_s", row.min_s},
                     {"max_s", row.max_s},       {"ns_per_symbol", ns},           {"x_realtime", p::SYMBOL_PERIOD_NS / ns},
                     {"raw_gbps", double(p::bits_per_symbol(p::modulation::qam16)) / ns}};
    if (row.link_bytes > 0.0) {
      o["link_gbps"] = row.link_bytes / row.median_s / 1e9;
      o["pct_of_h2d_ceiling"] = 100.0 * row.link_bytes / row.median_s / 1e9 / r.h2d_gbps;
    }
    j["rows"].push_back(o);
  }
  for (const auto& [what, n] : r.bit_differences) {
    j["bit_differences_vs_cpu"][what] = n;
  }
  for (const auto& [what, sec] : r.stage_seconds) {
    j["end_to_end_stage_seconds"][what] = sec;
  }
  for (const auto& sc : scalings(r)) {
    j["aggregate_vs_one_gpu"][sc.what] = {{"ratio", sc.ratio}, {"x_realtime", sc.x_realtime}};
  }
  return j.dump(2);
}

std::string to_markdown(const pipeline_bench_result& r)
{
  std::ostringstream o;
  char buf[512];
  o << "# whd-bench pipeline\n\n";
  const bench_env& e = r.env;
  o << "- device: " << e.device << ", driver " << e.driver << "\n- host: " << e.cpu << ", " << e.host_threads << " threads\n";
  o << "- date: " << e.date << "\n- commit: " << e.commit << "\n- command: `" << e.command << "`\n";
  o << "- capture: 16-QAM, " << r.data_symbols << " data symbols (ci8 SigMF); frames located on the host in " << r.locate_s << " s\n";
  std::snprintf(buf, sizeof buf, "- ceilings measured in this run: H2D %.2f GB/s, D2H %.2f GB/s, D2D %.1f GB/s (read + write)\n", r.h2d_gbps,
                r.d2h_gbps, r.d2d_gbps);
  o << buf;
  o << "- host packing (all threads):";
  for (const auto& [link, ns] : r.pack_ns_per_symbol) {
    std::snprintf(buf, sizeof buf, " %s %.2f ns/symbol;", link.c_str(), ns);
    o << buf;
  }
  o << "\n\nMedian of repeats; spread = min..max. x real time = 226.95 ns / (ns per symbol); raw Gbps = 1344 bits per symbol.\n\n";
  o << "| region | engine | link | ns/symbol | spread | x real time | raw Gbps | link GB/s | % of H2D ceiling |\n";
  o << "|---|---|---|---:|---|---:|---:|---:|---:|\n";
  for (const auto& row : r.rows) {
    const double ns = row.ns_per_symbol();
    const double spread_lo = row.min_s * 1e9 / double(row.symbols), spread_hi = row.max_s * 1e9 / double(row.symbols);
    std::string link_cols = "| - | - |";
    if (row.link_bytes > 0.0) {
      const double g = row.link_bytes / row.median_s / 1e9;
      std::snprintf(buf, sizeof buf, "| %.2f | %.1f |", g, 100.0 * g / r.h2d_gbps);
      link_cols = buf;
    }
    std::snprintf(buf, sizeof buf, "| %s | %s | %s | %.3f | %.3f..%.3f | %.2f | %.2f %s\n", row.region.c_str(), row.engine.c_str(),
                  row.link.c_str(), ns, spread_lo, spread_hi, p::SYMBOL_PERIOD_NS / ns, 1344.0 / ns, link_cols.c_str());
    o << buf;
  }
  if (const auto sc = scalings(r); !sc.empty()) {
    o << "\nSeveral GPUs against one, same run (one GPU's ns/symbol over theirs):\n\n";
    for (const auto& x : sc) {
      std::snprintf(buf, sizeof buf, "- %s: %.2fx one GPU, %.2fx real time\n", x.what.c_str(), x.ratio, x.x_realtime);
      o << buf;
    }
  }
  if (!r.stage_seconds.empty()) {
    o << "\nWhere the end-to-end time goes (first timed repeat, seconds; the writer's stages overlap the caller's):\n\n";
    for (const auto& [what, sec] : r.stage_seconds) {
      std::snprintf(buf, sizeof buf, "- %s: %.4f\n", what.c_str(), sec);
      o << buf;
    }
  }
  o << "\nBit differences against the CPU backend's payload (same capture):\n\n";
  for (const auto& [what, n] : r.bit_differences) {
    o << "- " << what << ": " << n << "\n";
  }
  return o.str();
}

} // namespace whd::rx_bench
