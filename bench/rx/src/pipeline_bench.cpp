#include <whd/rx_bench/pipeline_bench.hpp>

#include "cufft_chain.hpp"
#include <whd/rx_bench/bench_env.hpp>
#include "gpu_symbol_decoder.hpp"

#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>
#include <whd/transport/cuda.hpp>
#include <whd/transport/link_pack.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <exception>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace whd::rx_bench {

namespace {

namespace p = profile;
namespace bb = baseband;
namespace gpu = baseband::gpu;
namespace tr = transport;
using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

/// Median, min and max of repeated timings.
void summarise(std::vector<double> t, region_row& row)
{
  std::sort(t.begin(), t.end());
  row.median_s = t[t.size() / 2];
  row.min_s = t.front();
  row.max_s = t.back();
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

/// Bit differences between two payloads (length differences count as 8 bits a byte).
uint64_t bit_diff(const uint8_t* a, std::size_t na, const std::vector<uint8_t>& b)
{
  uint64_t n = 0;
  const std::size_t m = std::min(na, b.size());
  for (std::size_t i = 0; i < m; ++i) {
    n += uint64_t(std::popcount(unsigned(a[i] ^ b[i])));
  }
  return n + 8 * (std::max(na, b.size()) - m);
}

std::vector<uint8_t> read_file(const std::string& path)
{
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

/// Copy ceiling of one direction over 1 GiB: median GB/s.
double copy_gbps(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t s, double bytes_counted)
{
  const auto t = time_events(5, s, [&] { WHD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s)); });
  std::vector<double> v = t;
  std::sort(v.begin(), v.end());
  return bytes_counted / v[v.size() / 2] / 1e9;
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

} // namespace

pipeline_bench_result run_pipeline_bench(const pipeline_bench_config& cfg, const std::function<void(std::string_view)>& progress)
{
  pipeline_bench_result r;
  if (cuda::device_count() == 0) {
    throw std::runtime_error("whd-bench pipeline needs a GPU: " + cuda::no_device_reason());
  }
  WHD_CUDA_CHECK(cudaSetDevice(0));
  const bench_env env = collect_env(cfg.commit, cfg.command);
  r.device = env.device;
  r.driver = env.driver;
  r.date = env.date;
  r.commit = env.commit;
  r.command = env.command;
  r.cpu = env.cpu;
  r.host_threads = std::max(1u, env.host_threads);

  // ---- the capture (generated once; delete the files to make it anew)
  const std::string base = cfg.capture.string();
  if (!std::filesystem::exists(base + ".sigmf-meta")) {
    progress("generating " + std::to_string(cfg.nof_frames) + " x " + std::to_string(cfg.nd) + " 16-QAM symbols into " + base);
    bb::capture_config cc;
    cc.mods = {p::modulation::qam16};
    cc.nds = {cfg.nd};
    cc.nof_frames = cfg.nof_frames;
    cc.seed = cfg.seed;
    cc.impairments.snr_dB = cfg.snr_dB;
    cc.impairments.cfo_Hz = cfg.cfo_Hz;
    cc.impairments.nof_taps = cfg.taps;
    cc.impairments.random_phase = true;
    bb::output_config oc;
    oc.base = cfg.capture;
    oc.type = datatype::ci8;
    oc.description = "whd-bench pipeline capture";
    const auto t0 = steady::now();
    bb::write_capture(cc, oc);
    progress("generated in " + std::to_string(seconds_since(t0)) + " s");
  }
  const auto info = tr::open_capture(base + ".sigmf-meta");
  tr::capture_reader reader(info);

  // ---- frames, located once on the host
  bb::rx_config rxc;
  rxc.nof_threads = cfg.cpu_threads;
  std::vector<bb::located_frame> frames;
  {
    const auto t0 = steady::now();
    bb::frame_locator loc(rxc);
    uint64_t pos = 0;
    while (auto ev = loc.next(reader, pos)) {
      pos = ev->resume;
      if (ev->frame) {
        frames.push_back(*ev->frame);
      }
    }
    r.locate_s = seconds_since(t0);
  }
  std::vector<gpu::symbol_desc> desc_host;
  std::vector<uint64_t> window_start;
  for (std::size_t f = 0; f < frames.size(); ++f) {
    for (uint32_t k = 0; k < frames[f].info.symbols; ++k) {
      const uint64_t m = p::FIRST_DATA_SYMBOL + k;
      desc_host.push_back({uint32_t(f), uint32_t(m)});
      window_start.push_back(bb::fft_window(frames[f].sync, m));
    }
  }
  const std::size_t count = desc_host.size();
  r.data_symbols = count;
  progress(std::to_string(frames.size()) + " frames, " + std::to_string(count) + " data symbols located in " + std::to_string(r.locate_s) + " s");
  if (count == 0) {
    throw std::runtime_error("the benchmark capture holds no decodable symbol");
  }

  // ---- the CPU backend's payload: the reference bits (and its end-to-end time)
  std::vector<uint8_t> ref;
  {
    const auto t0 = steady::now();
    auto cpu = bb::make_cpu_receiver(rxc);
    bb::memory_sink sink;
    cpu->run(reader, sink);
    ref = sink.bytes();
    region_row row{"end-to-end (capture in page cache)", "whd cpu (liquid-dsp)", "-", count};
    summarise({seconds_since(t0)}, row);
    r.rows.push_back(row);
    progress("CPU backend: " + std::to_string(row.ns_per_symbol()) + " ns/symbol");
  }

  cuda::stream main_stream;
  // ---- copy ceilings
  {
    const std::size_t bytes = std::size_t(1) << 30;
    cuda::pinned_buffer<std::byte> h(bytes);
    std::fill(h.begin(), h.end(), std::byte{1});
    cuda::device_buffer<std::byte> d(bytes), d2(bytes);
    r.h2d_gbps = copy_gbps(d.data(), h.data(), bytes, cudaMemcpyHostToDevice, main_stream.get(), double(bytes));
    r.d2h_gbps = copy_gbps(h.data(), d.data(), bytes, cudaMemcpyDeviceToHost, main_stream.get(), double(bytes));
    r.d2d_gbps = copy_gbps(d2.data(), d.data(), bytes, cudaMemcpyDeviceToDevice, main_stream.get(), 2.0 * double(bytes));
    progress("ceilings: H2D " + std::to_string(r.h2d_gbps) + " GB/s, D2H " + std::to_string(r.d2h_gbps) + " GB/s, D2D " +
             std::to_string(r.d2d_gbps) + " GB/s");
  }

  // Frame parameters for every frame (small), on the device once.
  std::vector<gpu::frame_params> fp_host(frames.size());
  for (std::size_t f = 0; f < frames.size(); ++f) {
    fp_host[f] = gpu::make_frame_params(frames[f]);
  }
  cuda::device_buffer<gpu::frame_params> d_frames(fp_host.size());
  WHD_CUDA_CHECK(cudaMemcpy(d_frames.data(), fp_host.data(), fp_host.size() * sizeof(gpu::frame_params), cudaMemcpyHostToDevice));
  cuda::pinned_buffer<gpu::symbol_desc> h_desc(count);
  std::copy(desc_host.begin(), desc_host.end(), h_desc.begin());
  cuda::device_buffer<gpu::symbol_desc> d_desc(count);
  WHD_CUDA_CHECK(cudaMemcpy(d_desc.data(), h_desc.data(), count * sizeof(gpu::symbol_desc), cudaMemcpyHostToDevice));
  cuda::pinned_buffer<uint8_t> h_out(count * gpu::OUT_STRIDE);
  cuda::device_buffer<uint8_t> d_out(count * gpu::OUT_STRIDE);

  const std::size_t per_batch = std::min(cfg.symbols_per_batch, count);
  const int nof_streams = std::max(cfg.nof_streams, 1);
  int present = 0;
  WHD_CUDA_CHECK(cudaGetDeviceCount(&present));
  const int nof_gpus = std::min(std::max(cfg.nof_gpus, 1), present);
  if (nof_gpus < cfg.nof_gpus) {
    progress("--gpus " + std::to_string(cfg.nof_gpus) + ": only " + std::to_string(present) + " present; using " + std::to_string(nof_gpus));
  }
  std::vector<int> gpu_counts{1};
  if (nof_gpus > 1) {
    gpu_counts.push_back(nof_gpus);
  }

  for (auto fmt : {tr::link_format::int8, tr::link_format::half, tr::link_format::f32}) {
    const std::string link(tr::to_string(fmt));
    const std::size_t bpw = p::N * tr::link_bytes_per_sample(fmt);
    // ---- pack every window into pinned memory (the pipeline region starts here)
    cuda::pinned_buffer<std::byte> h_samples(count * bpw);
    cuda::pinned_buffer<float> h_scales(count);
    {
      const auto t0 = steady::now();
      const unsigned nt = r.host_threads;
      std::vector<std::jthread> threads;
      for (unsigned t = 0; t < nt; ++t) {
        threads.emplace_back([&, t] {
          constexpr std::size_t RUN = 256; // windows read with one pread
          std::vector<std::byte> raw;
          std::vector<uint64_t> starts;
          const std::size_t lo = count * t / nt, hi = count * (t + 1) / nt;
          for (std::size_t k = lo; k < hi;) {
            std::size_t e = std::min(hi, k + RUN);
            while (e > k + 1 && desc_host[e - 1].frame != desc_host[k].frame) {
              --e;
            }
            const uint64_t first = window_start[k];
            const std::size_t span = std::size_t(window_start[e - 1] - first) + p::N;
            raw.resize(span * bytes_per_sample(info.type));
            reader.read_raw(first, raw);
            starts.resize(e - k);
            for (std::size_t i = k; i < e; ++i) {
              starts[i - k] = window_start[i] - first;
            }
            tr::pack_windows(info.type, raw, starts, p::N, fmt, std::span<std::byte>(h_samples.data() + k * bpw, (e - k) * bpw),
                             std::span<float>(h_scales.data() + k, e - k));
            k = e;
          }
        });
      }
      threads.clear();
      r.pack_ns_per_symbol.emplace_back(link, seconds_since(t0) * 1e9 / double(count));
    }
    const double link_bytes = double(count) * (double(bpw) + sizeof(float) + sizeof(gpu::symbol_desc));

    // ---- (a) device-resident
    {
      cuda::device_buffer<std::byte> d_samples(count * bpw);
      cuda::device_buffer<float> d_scales(count);
      WHD_CUDA_CHECK(cudaMemcpy(d_samples.data(), h_samples.data(), count * bpw, cudaMemcpyHostToDevice));
      WHD_CUDA_CHECK(cudaMemcpy(d_scales.data(), h_scales.data(), count * sizeof(float), cudaMemcpyHostToDevice));
      const gpu::batch_view all{d_samples.data(), d_scales.data(), d_desc.data(), d_frames.data(), d_out.data(), count};
      auto batched = [&](auto&& launch) {
        for (std::size_t k = 0; k < count; k += per_batch) {
          const std::size_t n = std::min(per_batch, count - k);
          const gpu::batch_view b{d_samples.data() + k * bpw, d_scales.data() + k, d_desc.data() + k, d_frames.data(),
                                  d_out.data() + k * gpu::OUT_STRIDE, n};
          launch(b);
        }
      };
      WHD_CUDA_CHECK(cudaMemset(d_out.data(), 0xA5, d_out.size_bytes()));
      region_row ours{"device-resident", "whd fused", link, count};
      summarise(time_events(cfg.repeats, main_stream.get(), [&] { gpu::launch_decode(fmt, all, main_stream.get()); }), ours);
      WHD_CUDA_CHECK(cudaMemcpy(h_out.data(), d_out.data(), count * gpu::OUT_STRIDE, cudaMemcpyDeviceToHost));
      r.bit_differences.emplace_back("device-resident whd fused " + link, bit_diff(h_out.data(), count * gpu::OUT_STRIDE, ref));
      r.rows.push_back(ours);

      cufft_chain chain(per_batch);
      WHD_CUDA_CHECK(cudaMemset(d_out.data(), 0xA5, d_out.size_bytes()));
      region_row base_row{"device-resident", "cufft chain", link, count};
      summarise(time_events(cfg.repeats, main_stream.get(), [&] { batched([&](const gpu::batch_view& b) { chain.run(fmt, b, main_stream.get()); }); }),
                base_row);
      WHD_CUDA_CHECK(cudaMemcpy(h_out.data(), d_out.data(), count * gpu::OUT_STRIDE, cudaMemcpyDeviceToHost));
      r.bit_differences.emplace_back("device-resident cufft chain " + link, bit_diff(h_out.data(), count * gpu::OUT_STRIDE, ref));
      r.rows.push_back(base_row);
      progress("device-resident " + link + ": ours " + std::to_string(ours.ns_per_symbol()) + " ns/symbol, cuFFT chain " +
               std::to_string(base_row.ns_per_symbol()));
    }

    // ---- (b) pipeline: pinned host -> device -> bits -> pinned host, batches over
    // streams (and over GPUs: batch i goes to GPU i mod G), for G = 1 and cfg.nof_gpus.
    // The batches' inputs lie as the receiver sends them: a block a batch (samples,
    // scales, descriptors at gpu::input_layout's offsets), one copy a full batch.
    const gpu::input_layout lay(per_batch, 0, bpw);
    const std::size_t nof_batches = (count + per_batch - 1) / per_batch;
    cuda::pinned_buffer<std::byte> h_blocks(nof_batches * lay.bytes);
    for (std::size_t j = 0; j < nof_batches; ++j) {
      const std::size_t k = j * per_batch, n = std::min(per_batch, count - k);
      std::byte* blk = h_blocks.data() + j * lay.bytes;
      std::memcpy(blk, h_samples.data() + k * bpw, n * bpw);
      std::memcpy(blk + lay.scales, h_scales.data() + k, n * sizeof(float));
      std::memcpy(blk + lay.desc, h_desc.data() + k, n * sizeof(gpu::symbol_desc));
    }
    for (int gpus : gpu_counts) {
      struct lane {
        int device = 0;
        cuda::stream s;
        cuda::device_buffer<std::byte> in; ///< one batch's block
        cuda::device_buffer<uint8_t> out;
        cuda::device_buffer<gpu::frame_params> frames;
        std::unique_ptr<cufft_chain> chain;
      };
      std::vector<std::unique_ptr<lane>> lanes;
      for (int i = 0; i < nof_streams * gpus; ++i) {
        const int dev = i % gpus;
        WHD_CUDA_CHECK(cudaSetDevice(dev));
        auto l = std::make_unique<lane>();
        l->device = dev;
        l->in = cuda::device_buffer<std::byte>(lay.bytes);
        l->out = cuda::device_buffer<uint8_t>(per_batch * gpu::OUT_STRIDE);
        l->frames = cuda::device_buffer<gpu::frame_params>(fp_host.size());
        WHD_CUDA_CHECK(cudaMemcpy(l->frames.data(), fp_host.data(), fp_host.size() * sizeof(gpu::frame_params), cudaMemcpyHostToDevice));
        l->chain = std::make_unique<cufft_chain>(per_batch);
        lanes.push_back(std::move(l));
      }
      // engine 0: ours; 1: the cuFFT chain; 2: the same copies in, nothing else (what the link allows this batching).
      // engine 3 (several GPUs): ours, each GPU's own host thread pulling the next
      // batch when one of its streams is free, against engine 0's round robin.
      // engine 4: the copies in and the payload's copy out, no kernel (what the
      // link allows a chain that returns its bits).
      for (int engine = 0; engine < 5; ++engine) {
        if ((engine == 1 && gpus > 1) || (engine == 3 && gpus == 1)) {
          continue; // the baseline is compared on one GPU; pulling needs several
        }
        auto enqueue = [&](lane& l, std::size_t k) {
          const std::size_t n = std::min(per_batch, count - k);
          cudaStream_t st = l.s.get();
          lay.copy_in(l.in.data(), h_blocks.data() + k / per_batch * lay.bytes, n, per_batch, bpw, 0, st);
          if (engine == 2) {
            return;
          }
          gpu::batch_view b = lay.view(l.in.data(), l.out.data(), n);
          b.frames = l.frames.data(); // every frame's, copied in once
          if (engine == 1) {
            l.chain->run(fmt, b, st);
          } else if (engine != 4) {
            gpu::launch_decode(fmt, b, st);
          }
          WHD_CUDA_CHECK(cudaMemcpyAsync(h_out.data() + k * gpu::OUT_STRIDE, l.out.data(), n * gpu::OUT_STRIDE, cudaMemcpyDeviceToHost, st));
        };
        auto round_robin = [&] {
          std::size_t i = 0;
          for (std::size_t k = 0; k < count; k += per_batch, ++i) {
            lane& l = *lanes[i % lanes.size()];
            WHD_CUDA_CHECK(cudaSetDevice(l.device));
            enqueue(l, k);
          }
        };
        auto pulled = [&] {
          std::atomic<std::size_t> next{0};
          std::vector<std::exception_ptr> errors(static_cast<std::size_t>(gpus));
          {
            std::vector<std::jthread> feeders;
            for (int dev = 0; dev < gpus; ++dev) {
              feeders.emplace_back([&, dev] {
                try {
                  WHD_CUDA_CHECK(cudaSetDevice(dev));
                  for (std::size_t j = 0;; ++j) {
                    const std::size_t k = next.fetch_add(per_batch);
                    if (k >= count) {
                      return;
                    }
                    lane& l = *lanes[std::size_t(dev) + std::size_t(gpus) * (j % std::size_t(nof_streams))];
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
        };
        auto pass = [&] {
          if (engine == 3) {
            pulled();
          } else {
            round_robin();
          }
          for (const auto& l : lanes) {
            l->s.synchronize();
          }
        };
        pass(); // warm-up (plans, first touch)
        std::fill(h_out.begin(), h_out.end(), uint8_t(0xA5));
        std::vector<double> t;
        for (int rep = 0; rep < cfg.repeats; ++rep) {
          const auto t0 = steady::now();
          pass();
          t.push_back(seconds_since(t0));
        }
        const std::string on = gpus > 1 ? " x" + std::to_string(gpus) + " GPUs" : "";
        const char* names[] = {"whd fused", "cufft chain", "copies in only", "whd fused", "copies in and out only"};
        region_row row{"pipeline (pinned host to host)", names[engine] + on + (engine == 3 ? ", pulled" : gpus > 1 ? ", round robin" : ""),
                       link, count};
        summarise(t, row);
        row.link_bytes = link_bytes;
        if (engine != 2 && engine != 4) {
          r.bit_differences.emplace_back("pipeline " + row.engine + " " + link, bit_diff(h_out.data(), count * gpu::OUT_STRIDE, ref));
        }
        r.rows.push_back(row);
        progress("pipeline " + link + " " + row.engine + ": " + std::to_string(row.ns_per_symbol()) + " ns/symbol, link " +
                 std::to_string(link_bytes / row.median_s / 1e9) + " GB/s");
      }
      WHD_CUDA_CHECK(cudaSetDevice(0));
    }
  }

  // ---- (c) end-to-end: capture file (page cache) to payload file, the whole whd-rx chain
  if (cfg.end_to_end) {
    const std::string out_path = cfg.payload.empty() ? base + ".payload" : cfg.payload.string();
    struct e2e_case {
      tr::link_format fmt;
      int gpus;
      std::size_t batch; ///< 0: the receiver's default
      unsigned threads;  ///< the host's packing and locating threads (whd-rx -j); 0: every core
    };
    std::vector<e2e_case> cases{{tr::link_format::int8, 1, 0, 0}, {tr::link_format::half, 1, 0, 0}};
    for (std::size_t b : cfg.e2e_batches) {
      cases.push_back({tr::link_format::int8, 1, b, 0});
    }
    if (nof_gpus > 1) {
      cases.push_back({tr::link_format::int8, nof_gpus, 0, 0});
    }
    for (unsigned n : cfg.e2e_threads) {
      for (int gpus : gpu_counts) {
        cases.push_back({tr::link_format::int8, gpus, 0, n});
      }
    }
    for (const auto& [fmt, gpus, batch, threads] : cases) {
      const std::string on_batch =
          (batch ? ", batch " + std::to_string(batch) : "") + (threads ? ", " + std::to_string(threads) + " threads" : "");
      std::vector<double> t;
      uint64_t diff = 0;
      // Region (c) is the receiver as whd-rx runs it, with its own batch default and
      // the streams of region (b), timed per profile §8 from the capture's opening to
      // the payload written. The receiver (its pinned buffers, the locator's tables) is made
      // once, before the region, as a process decoding capture after capture does;
      // its first run, set-up included, is timed apart and reported beside.
      bb::gpu_config g;
      g.link = fmt;
      g.nof_gpus = gpus;
      g.nof_streams = nof_streams;
      if (batch) {
        g.symbols_per_batch = batch;
      }
      bb::rx_config rxc_case = rxc;
      if (threads) {
        g.pack_threads = threads;
        rxc_case.nof_threads = threads;
      }
      const auto t_make = steady::now();
      auto rx = bb::make_gpu_receiver(rxc_case, g);
      double first_run = 0;
      for (int rep = -1; rep < std::min(cfg.repeats, 3); ++rep) {
        const auto t0 = steady::now();
        const auto info2 = tr::open_capture(base + ".sigmf-meta");
        tr::capture_reader rd(info2);
        bb::payload_file_sink sink(out_path);
        const auto res = rx->run(rd, sink);
        sink.close();
        if (rep < 0) {
          first_run = seconds_since(t_make);
          continue;
        }
        t.push_back(seconds_since(t0));
        if (rep == 0) {
          const std::string what = "end-to-end " + std::string(tr::to_string(fmt)) + " x" + std::to_string(gpus) + " GPU" + on_batch;
          std::string line = what + " stages [s]:";
          for (const auto& [name, sec] : res.stage_seconds) {
            line += " " + name + " " + std::to_string(sec) + ";";
            r.stage_seconds.emplace_back(what + ": " + name, sec);
          }
          progress(line);
        }
        if (rep == 0) {
          const auto got = read_file(out_path);
          diff = bit_diff(got.data(), got.size(), ref);
        }
      }
      const std::string what = "end-to-end " + std::string(tr::to_string(fmt)) + " x" + std::to_string(gpus) + " GPU" + on_batch;
      r.stage_seconds.emplace_back(what + ": first run, receiver made in it (not in the region)", first_run);
      region_row row{"end-to-end (capture in page cache)", (gpus > 1 ? "whd gpu x" + std::to_string(gpus) + " GPUs" : "whd gpu") + on_batch,
                     std::string(tr::to_string(fmt)), count};
      summarise(t, row);
      row.link_bytes = double(count) * double(p::N * tr::link_bytes_per_sample(fmt));
      r.rows.push_back(row);
      // A payload sent where it is not kept (--payload /dev/null) cannot be compared.
      if (std::filesystem::is_regular_file(out_path)) {
        r.bit_differences.emplace_back("end-to-end " + row.engine + " " + row.link, diff);
      } else {
        r.stage_seconds.emplace_back(what + ": payload not kept (" + out_path + "), bits not compared", 0.0);
      }
      progress("end-to-end gpu " + row.link + ": " + std::to_string(row.ns_per_symbol()) + " ns/symbol");
    }
    if (cfg.payload.empty()) {
      std::filesystem::remove(out_path); // ours, beside the capture; a path the caller named (even /dev/null) is left alone
    }
  }
  return r;
}

std::string to_json(const pipeline_bench_result& r)
{
  nlohmann::json j;
  j["device"] = r.device;
  j["driver"] = r.driver;
  j["date"] = r.date;
  j["commit"] = r.commit;
  j["command"] = r.command;
  j["cpu"] = r.cpu;
  j["host_threads"] = r.host_threads;
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
  o << "- device: " << r.device << ", driver " << r.driver << "\n- host: " << r.cpu << ", " << r.host_threads << " threads\n";
  o << "- date: " << r.date << "\n- commit: " << r.commit << "\n- command: `" << r.command << "`\n";
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
