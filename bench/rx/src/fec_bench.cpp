#include <whd/rx_bench/fec_bench.hpp>

#include "bench_util.hpp"
#include "gpu_fec.hpp"

#include <whd/fec/coded_rx.hpp>
#include <whd/fec/coded_tx.hpp>
#include <whd/transport/at_once.hpp>
#include <whd/transport/cuda.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace whd::rx_bench {

namespace {

fec_bench_row row_of(std::string what, std::vector<double> t, uint64_t info_bits)
{
  std::sort(t.begin(), t.end());
  fec_bench_row r;
  r.what = std::move(what);
  r.median_s = t[t.size() / 2];
  r.min_s = t.front();
  r.max_s = t.back();
  r.info_gbps = double(info_bits) / r.median_s / 1e9;
  return r;
}

/// The FEC jobs of `count` frames of `g` laid one after another in `d_streams` (their
/// soft values) and `d_info` (their information bytes).
std::vector<baseband::gpu::coded_end> frame_ends(const fec::frame_geometry& g, int8_t* d_streams, uint8_t* d_info, unsigned count)
{
  std::vector<baseband::gpu::coded_end> ends(count);
  for (unsigned f = 0; f < count; ++f) {
    ends[f].result = f;
    ends[f].g = g;
    ends[f].d_streams = d_streams + std::size_t(f) * fec::NOF_ENCODERS * g.ce;
    ends[f].d_info = d_info + std::size_t(f) * g.info_bytes;
  }
  return ends;
}

/// The FEC of `frames` frames of `g` split over GPUs 0 .. n - 1 (contiguous shares), each
/// GPU's own buffers, decoder and stream, a host thread each enqueuing: wall times of
/// `repeats` runs after a warm-up, from the threads' start to every GPU done.
/// `info`: the information bytes of the last run, in frame order.
std::vector<double> time_split_fec(const std::vector<int8_t>& streams, const fec::frame_geometry& g, unsigned frames, int n,
                                   unsigned repeats, std::vector<uint8_t>& info)
{
  struct part {
    unsigned first = 0, count = 0;
    cuda::device_buffer<int8_t> d_streams;
    cuda::device_buffer<uint8_t> d_info;
    cuda::device_buffer<uint32_t> d_rs;
    std::optional<cuda::stream> st;
    baseband::gpu::gpu_fec dec;
    std::vector<baseband::gpu::coded_end> ends;
  };
  const std::size_t per_frame = std::size_t(fec::NOF_ENCODERS) * g.ce;
  std::vector<part> parts(static_cast<std::size_t>(n));
  transport::run_at_once(parts.size(), [&](std::size_t d) {
    part& p = parts[d];
    p.first = unsigned(uint64_t(frames) * d / parts.size());
    p.count = unsigned(uint64_t(frames) * (d + 1) / parts.size()) - p.first;
    WHD_CUDA_CHECK(cudaSetDevice(int(d)));
    p.d_streams = cuda::device_buffer<int8_t>(std::max<std::size_t>(p.count * per_frame, 1));
    p.d_info = cuda::device_buffer<uint8_t>(std::max<std::size_t>(std::size_t(p.count) * g.info_bytes, 1));
    p.d_rs = cuda::device_buffer<uint32_t>(2 * std::max(p.count, 1u));
    p.st.emplace();
    WHD_CUDA_CHECK(cudaMemcpy(p.d_streams.data(), streams.data() + p.first * per_frame, p.count * per_frame, cudaMemcpyHostToDevice));
    p.ends = frame_ends(g, p.d_streams.data(), p.d_info.data(), p.count);
  });
  std::vector<double> t;
  for (unsigned i = 0; i <= repeats; ++i) {
    const auto t0 = steady::now();
    transport::run_at_once(parts.size(), [&](std::size_t d) {
      part& p = parts[d];
      WHD_CUDA_CHECK(cudaSetDevice(int(d)));
      if (p.count > 0) {
        p.dec.run(p.ends, p.d_rs.data(), p.st->get());
      }
      p.st->synchronize();
    });
    if (i > 0) {
      t.push_back(seconds_since(t0));
    }
  }
  info.assign(std::size_t(frames) * g.info_bytes, 0);
  for (std::size_t d = 0; d < parts.size(); ++d) {
    WHD_CUDA_CHECK(cudaSetDevice(int(d)));
    WHD_CUDA_CHECK(cudaMemcpy(info.data() + std::size_t(parts[d].first) * g.info_bytes, parts[d].d_info.data(),
                              std::size_t(parts[d].count) * g.info_bytes, cudaMemcpyDeviceToHost));
  }
  WHD_CUDA_CHECK(cudaSetDevice(0));
  return t;
}

} // namespace

fec_bench_result run_fec_bench(const fec_bench_config& cfg, const std::function<void(std::string_view)>& progress)
{
  if (cfg.frames < 1 || cfg.repeats < 1 || !fec::mcs_defined(cfg.mcs)) {
    throw std::invalid_argument("fec: at least one frame and one repeat, and an MCS of 0, 1, 2, 7");
  }
  fec_bench_result r;
  r.cfg = cfg;
  r.env = collect_env(cfg.commit, cfg.command, true);
  const fec::frame_geometry g = fec::geometry(cfg.mcs, cfg.nd);
  r.info_bits = uint64_t(cfg.frames) * g.info_bytes * 8;
  r.coded_bits = uint64_t(cfg.frames) * g.coded_bits();
  // The frames' demultiplexed soft values: coded bits at +-20, a fraction turned.
  std::mt19937 rng(unsigned(cfg.seed));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<int8_t> streams(std::size_t(cfg.frames) * fec::NOF_ENCODERS * g.ce);
  for (unsigned f = 0; f < cfg.frames; ++f) {
    std::vector<uint8_t> info(g.info_bytes);
    for (auto& b : info) {
      b = uint8_t(rng());
    }
    const auto tx = fec::encode_frame(g, info);
    std::vector<int8_t> soft(g.coded_bits());
    for (std::size_t i = 0; i < soft.size(); ++i) {
      const bool one = (tx[i / 8] >> (7 - i % 8)) & 1u;
      const bool turned = u(rng) < cfg.flip;
      soft[i] = int8_t((one != turned) ? -20 : 20);
    }
    fec::demultiplex_symbols(g, 0, soft, std::span<int8_t>(streams).subspan(std::size_t(f) * fec::NOF_ENCODERS * g.ce, fec::NOF_ENCODERS * g.ce));
  }
  // CPU: the coded decoder over the host's threads.
  const unsigned threads = cfg.cpu_threads ? cfg.cpu_threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<uint8_t> cpu_info(std::size_t(cfg.frames) * g.info_bytes);
  std::vector<fec::coded_job> jobs;
  for (unsigned f = 0; f < cfg.frames; ++f) {
    jobs.push_back({g, std::span<const int8_t>(streams).subspan(std::size_t(f) * fec::NOF_ENCODERS * g.ce, fec::NOF_ENCODERS * g.ce),
                    std::span<uint8_t>(cpu_info).subspan(std::size_t(f) * g.info_bytes, g.info_bytes), {}});
  }
  const fec::parallel_for pf = [&](std::size_t n, const std::function<void(std::size_t)>& body) {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (std::size_t i; (i = next.fetch_add(1)) < n;) {
          body(i);
        }
      });
    }
    for (auto& t : pool) {
      t.join();
    }
  };
  fec::coded_decoder cpu;
  std::vector<double> tc;
  for (unsigned i = 0; i <= cfg.repeats; ++i) {
    const auto t0 = steady::now();
    cpu.decode(jobs, pf);
    if (i > 0) {
      tc.push_back(seconds_since(t0));
    }
  }
  for (const auto& j : jobs) {
    r.rs_failed += j.rs.failed;
    r.rs_corrected += j.rs.corrected;
  }
  r.rows.push_back(row_of("CPU: coded decoder, " + std::to_string(threads) + " threads (AVX-512 Viterbi where present, else AVX2; libfec RS)", tc, r.info_bits));
  progress(r.rows.back().what + ": " + format_value("%.2f", r.rows.back().info_gbps) + " Gb/s");
  if (!r.env.gpu) {
    progress(r.env.no_gpu_reason);
    return r;
  }
  // GPU: the receiver's FEC stage, everything on the device.
  cuda::device_buffer<int8_t> d_streams(streams.size());
  cuda::device_buffer<uint8_t> d_info(cpu_info.size());
  cuda::device_buffer<uint32_t> d_rs(2 * std::size_t(cfg.frames));
  WHD_CUDA_CHECK(cudaMemcpy(d_streams.data(), streams.data(), streams.size(), cudaMemcpyHostToDevice));
  const std::vector<baseband::gpu::coded_end> ends = frame_ends(g, d_streams.data(), d_info.data(), cfg.frames);
  cuda::stream st;
  cuda::event e0, e1, e2;
  baseband::gpu::gpu_fec dec;
  std::vector<double> tall, tvit, trs;
  for (unsigned i = 0; i <= cfg.repeats; ++i) {
    e0.record(st);
    dec.run(ends, d_rs.data(), st.get(), e1.get());
    e2.record(st);
    st.synchronize();
    if (i > 0) {
      float a = 0, b = 0;
      WHD_CUDA_CHECK(cudaEventElapsedTime(&a, e0.get(), e1.get()));
      WHD_CUDA_CHECK(cudaEventElapsedTime(&b, e1.get(), e2.get()));
      tvit.push_back(a * 1e-3);
      trs.push_back(b * 1e-3);
      tall.push_back((a + b) * 1e-3);
    }
  }
  std::vector<uint8_t> gpu_info(cpu_info.size());
  WHD_CUDA_CHECK(cudaMemcpy(gpu_info.data(), d_info.data(), gpu_info.size(), cudaMemcpyDeviceToHost));
  r.same_bytes = gpu_info == cpu_info;
  r.rows.push_back(row_of("GPU: FEC, device-resident (uploads of the job table, Viterbi, RS)", tall, r.info_bits));
  r.rows.push_back(row_of("GPU: of which the job table's upload and the Viterbi kernel", tvit, r.info_bits));
  r.rows.push_back(row_of("GPU: of which the RS kernel (un-parsing, syndromes, corrections)", trs, r.info_bits));
  for (std::size_t k = r.rows.size() - 3; k < r.rows.size(); ++k) {
    progress(r.rows[k].what + ": " + format_value("%.2f", r.rows[k].info_gbps) + " Gb/s");
  }
  r.gpus_present = cuda::device_count();
  if (cfg.gpus > 1) {
    if (r.gpus_present < cfg.gpus) {
      progress("--gpus " + std::to_string(cfg.gpus) + ": only " + std::to_string(r.gpus_present) + " CUDA device(s); no several-GPU rows");
      return r;
    }
    for (const int n : {1, cfg.gpus}) {
      std::vector<uint8_t> info;
      r.rows.push_back(row_of("GPU x" + std::to_string(n) + ": FEC, device-resident, wall time (a host thread a GPU)",
                              time_split_fec(streams, g, cfg.frames, n, cfg.repeats, info), r.info_bits));
      r.same_bytes = r.same_bytes && info == cpu_info;
      progress(r.rows.back().what + ": " + format_value("%.2f", r.rows.back().info_gbps) + " Gb/s");
    }
  }
  return r;
}

std::string to_json(const fec_bench_result& r)
{
  nlohmann::json j = to_json(r.env);
  j["benchmark"] = "fec";
  j["config"] = {{"mcs", r.cfg.mcs}, {"nd", r.cfg.nd}, {"frames", r.cfg.frames}, {"flip", r.cfg.flip}, {"repeats", r.cfg.repeats}, {"gpus", r.cfg.gpus}};
  j["gpus_present"] = r.gpus_present;
  j["info_bits"] = r.info_bits;
  j["coded_bits"] = r.coded_bits;
  j["gpu_equals_cpu"] = r.same_bytes;
  j["rs_failed"] = r.rs_failed;
  j["rs_corrected"] = r.rs_corrected;
  for (const auto& row : r.rows) {
    j["rows"].push_back({{"what", row.what}, {"median_s", row.median_s}, {"min_s", row.min_s}, {"max_s", row.max_s}, {"info_gbps", row.info_gbps}});
  }
  return j.dump(2);
}

std::string to_markdown(const fec_bench_result& r)
{
  std::ostringstream o;
  char buf[320];
  o << "# whd-bench fec\n\n" << to_markdown(r.env);
  o << "- " << r.cfg.frames << " frames of MCS " << r.cfg.mcs << ", Nd " << r.cfg.nd << ": " << r.info_bits << " information bits, "
    << r.coded_bits << " coded bits; soft values +-20 with " << r.cfg.flip * 100 << " % turned; median of " << r.cfg.repeats
    << " runs after a warm-up (GPU: CUDA events)\n";
  o << "- RS: " << r.rs_corrected << " bytes corrected, " << r.rs_failed << " codewords failed (CPU); GPU bytes = CPU bytes: "
    << (r.env.gpu ? (r.same_bytes ? "yes" : "NO") : "no GPU") << "\n\n";
  if (r.cfg.gpus > 1) {
    o << "- " << r.cfg.gpus << " GPUs asked for, " << r.gpus_present << " present: the frames split over them in contiguous shares\n\n";
  }
  o << "| what | information Gb/s | run s (min / median / max) |\n|---|---:|---|\n";
  for (const auto& row : r.rows) {
    std::snprintf(buf, sizeof buf, "| %s | %.2f | %.5f / %.5f / %.5f |\n", row.what.c_str(), row.info_gbps, row.min_s, row.median_s, row.max_s);
    o << buf;
  }
  return o.str();
}

} // namespace whd::rx_bench
