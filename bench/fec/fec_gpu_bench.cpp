/// @file fec_gpu_bench.cpp
/// whd-fec-gpu-bench [--mcs M] [--nd N] [--frames F] [--repeats R] [--distinct D] [--seed S] [--groups G]
///
/// gpu_coded_decoder device-resident: F coded frames' demultiplexed soft values on the
/// device to their information bytes on the device, every Viterbi form, median of R
/// timed runs after two warm-ups (cudaEvents: whole run, Viterbi kernel, RS kernel); with
/// G > 1, the default form also with the F frames in G groups run by two decoders on two
/// streams in turn (one group's RS beside the next one's Viterbi, as the receiver's slots
/// run them), timed from the first group's start to the last one's end; and
/// fec::coded_decoder on one host thread over the D distinct frames the F repeat. The
/// frames are encoded random information with noisy soft values (the Viterbi and RS both
/// work); the GPU's bytes and counts are checked against the CPU's. Markdown on stdout.
#include <whd/fec/coded_rx.hpp>
#include <whd/fec/coded_tx.hpp>
#include <whd/fec/gpu_coded_decoder.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

namespace fec = whd::fec;
namespace cuda = whd::cuda;

struct options {
  int mcs = 2;
  uint32_t nd = 4096;
  std::size_t frames = 64;
  int repeats = 15;
  std::size_t distinct = 4;
  unsigned seed = 1;
  std::size_t groups = 1;
};

int usage(const char* why)
{
  std::fprintf(stderr, "whd-fec-gpu-bench: %s\nusage: whd-fec-gpu-bench [--mcs 0|1|2|7] [--nd N] [--frames F] [--repeats R] "
                       "[--distinct D] [--seed S] [--groups G]\n", why);
  return 2;
}

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

} // namespace

int main(int argc, char** argv)
{
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage("the FEC of coded frames on the device against one CPU thread");
      return 0;
    }
    if (i + 1 >= argc) {
      return usage(("missing value after " + a).c_str());
    }
    const char* v = argv[++i];
    if (a == "--mcs") {
      o.mcs = std::atoi(v);
    } else if (a == "--nd") {
      o.nd = uint32_t(std::strtoul(v, nullptr, 10));
    } else if (a == "--frames") {
      o.frames = std::strtoull(v, nullptr, 10);
    } else if (a == "--repeats") {
      o.repeats = std::atoi(v);
    } else if (a == "--distinct") {
      o.distinct = std::strtoull(v, nullptr, 10);
    } else if (a == "--groups") {
      o.groups = std::strtoull(v, nullptr, 10);
    } else if (a == "--seed") {
      o.seed = unsigned(std::strtoul(v, nullptr, 10));
    } else {
      return usage(("unknown option " + a).c_str());
    }
  }
  if (!fec::mcs_defined(o.mcs) || o.frames < 1 || o.repeats < 1 || o.distinct < 1 || o.groups < 1 || o.groups > o.frames) {
    return usage("--mcs must be 0, 1, 2 or 7; --frames, --repeats, --distinct, --groups at least 1, --groups at most --frames");
  }
  try {
    o.distinct = std::min(o.distinct, o.frames);
    const fec::frame_geometry g = fec::geometry(o.mcs, o.nd);
    // The distinct frames: random information, encoded, +-40 soft values with uniform noise.
    std::mt19937 rng(o.seed);
    std::vector<std::vector<int8_t>> streams(o.distinct);
    for (auto& s : streams) {
      std::vector<uint8_t> info(g.info_bytes);
      for (auto& b : info) {
        b = uint8_t(rng());
      }
      const auto tx = fec::encode_frame(g, info);
      std::vector<int8_t> soft(g.coded_bits());
      for (std::size_t i = 0; i < soft.size(); ++i) {
        const bool one = (tx[i / 8] >> (7 - i % 8)) & 1u;
        soft[i] = int8_t((one ? -40 : 40) + int(rng() % 91) - 45);
      }
      s.assign(fec::NOF_ENCODERS * g.ce, 0);
      fec::demultiplex_symbols(g, 0, soft, s);
    }
    // The CPU on one thread, the distinct frames once each (best of 3).
    std::vector<std::vector<uint8_t>> want(o.distinct, std::vector<uint8_t>(g.info_bytes));
    std::vector<fec::coded_job> jobs;
    for (std::size_t i = 0; i < o.distinct; ++i) {
      jobs.push_back({g, streams[i], want[i], {}});
    }
    fec::coded_decoder cpu;
    double cpu_s = 1e30;
    for (int r = 0; r < 3; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      cpu.decode(jobs);
      cpu_s = std::min(cpu_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double info_bits_distinct = double(o.distinct) * double(g.info_bytes) * 8.0;

    // The device: F frames (frame i is distinct frame i mod D).
    const std::size_t per = fec::NOF_ENCODERS * g.ce;
    cuda::device_buffer<int8_t> d_streams(o.frames * per);
    cuda::device_buffer<uint8_t> d_info(o.frames * g.info_bytes);
    cuda::device_buffer<fec::rs_stats> d_rs(o.frames);
    std::vector<fec::gpu_coded_frame> frames;
    for (std::size_t i = 0; i < o.frames; ++i) {
      WHD_CUDA_CHECK(cudaMemcpy(d_streams.data() + i * per, streams[i % o.distinct].data(), per, cudaMemcpyHostToDevice));
      frames.push_back({g, d_streams.data() + i * per, d_info.data() + i * g.info_bytes});
    }
    const uint64_t tiles_per_frame = fec::NOF_ENCODERS * fec::nof_tiles(g.nin);
    fec::gpu_coded_decoder dec({o.frames, o.frames * g.coded_bits(), o.frames * tiles_per_frame, o.frames * g.codewords});
    // Trellis steps run per frame (every tile's acquisition, output and depth).
    uint64_t steps_per_frame = 0;
    for (uint64_t k = 0; k < fec::nof_tiles(g.nin); ++k) {
      const fec::tile_span t = fec::tile_of(g.nin, k);
      steps_per_frame += fec::NOF_ENCODERS * (t.run_end - t.run_first);
    }
    int device = 0, sms = 0;
    WHD_CUDA_CHECK(cudaGetDevice(&device));
    WHD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    cudaDeviceProp prop{};
    WHD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    cuda::stream st;
    cuda::event start, mid, end;
    const double info_bits = double(o.frames) * double(g.info_bytes) * 8.0;
    std::printf("# whd-fec-gpu-bench\n\n- device: %s, %d SMs\n- frames: %zu x MCS %d (rate %s), Nd %u: Ce %llu, nin %llu, L %llu bytes, "
                "%llu codewords, %llu tiles a frame (%zu distinct frames repeated)\n- decoder memory: %.1f MiB, %llu tile pairs at once\n"
                "- timed: median of %d runs after 2 warm-ups; Gb/s of information bits (8 L a frame)\n\n",
                prop.name, sms, o.frames, o.mcs, fec::to_string(fec::rate_of_mcs(o.mcs)), o.nd, (unsigned long long)g.ce,
                (unsigned long long)g.nin, (unsigned long long)g.info_bytes, (unsigned long long)g.codewords,
                (unsigned long long)tiles_per_frame, o.distinct, double(dec.device_bytes()) / 1048576.0,
                (unsigned long long)dec.resident_pairs(), o.repeats);
    std::printf("| backend | run ms (median) | Viterbi ms | RS ms | info Gb/s | Viterbi Gsteps/s (tile steps) | Viterbi Gbutterflies/s | agrees with CPU |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---|\n");
    // Each way of running starts from information bytes overwritten with a pattern, so
    // that its check cannot pass on the bytes of the way before.
    const auto scramble = [&] { WHD_CUDA_CHECK(cudaMemset(d_info.data(), 0xA5, o.frames * g.info_bytes)); };
    // The bytes and counts on the device against the CPU's.
    const auto agrees = [&] {
      std::vector<uint8_t> got(o.frames * g.info_bytes);
      std::vector<fec::rs_stats> counts(o.frames);
      WHD_CUDA_CHECK(cudaMemcpy(got.data(), d_info.data(), got.size(), cudaMemcpyDeviceToHost));
      WHD_CUDA_CHECK(cudaMemcpy(counts.data(), d_rs.data(), counts.size() * sizeof(fec::rs_stats), cudaMemcpyDeviceToHost));
      bool agree = true;
      for (std::size_t i = 0; i < o.frames; ++i) {
        const std::size_t d = i % o.distinct;
        agree = agree && std::equal(want[d].begin(), want[d].end(), got.begin() + std::ptrdiff_t(i * g.info_bytes)) &&
                counts[i].corrected == jobs[d].rs.corrected && counts[i].failed == jobs[d].rs.failed;
      }
      return agree;
    };
    const fec::viterbi_form default_form = dec.form();
    bool all_agree = true;
    for (const fec::viterbi_form form : fec::VITERBI_FORMS) {
      dec.use_form(form);
      scramble();
      std::vector<double> total, vit, rs;
      for (int r = -2; r < o.repeats; ++r) {
        start.record(st);
        dec.run(frames, d_rs.data(), st, mid.get());
        end.record(st);
        end.synchronize();
        if (r >= 0) {
          total.push_back(end.elapsed_ms_since(start));
          vit.push_back(mid.elapsed_ms_since(start));
          rs.push_back(end.elapsed_ms_since(mid));
        }
      }
      const bool agree = agrees();
      all_agree = all_agree && agree;
      const double t = median(total), v = median(vit);
      const double steps = double(o.frames) * double(steps_per_frame);
      std::printf("| GPU, %s | %.3f | %.3f | %.3f | %.1f | %.1f | %.0f | %s |\n", fec::to_string(form), t, v, median(rs),
                  info_bits / (t * 1e-3) / 1e9, steps / (v * 1e-3) / 1e9, 32.0 * steps / (v * 1e-3) / 1e9, agree ? "yes" : "NO");
    }
    if (o.groups > 1) {
      // Groups of frames (the first F mod G one frame larger) in turn on two decoders and
      // two streams; the second stream starts at `start`, the first waits for its end.
      const std::size_t most = (o.frames + o.groups - 1) / o.groups;
      dec.use_form(default_form);
      fec::gpu_coded_decoder dec2({most, most * g.coded_bits(), most * tiles_per_frame, most * g.codewords});
      fec::gpu_coded_decoder* decs[2] = {&dec, &dec2};
      cuda::stream st2;
      cuda::stream_ref sts[2] = {st, st2};
      cuda::event other_done;
      std::vector<double> total;
      scramble();
      for (int r = -2; r < o.repeats; ++r) {
        start.record(st);
        WHD_CUDA_CHECK(cudaStreamWaitEvent(st2.get(), start.get(), 0));
        std::size_t first = 0;
        for (std::size_t k = 0; k < o.groups; ++k) {
          const std::size_t count = o.frames / o.groups + (k < o.frames % o.groups ? 1 : 0);
          decs[k % 2]->run(std::span(frames).subspan(first, count), d_rs.data() + first, sts[k % 2]);
          first += count;
        }
        other_done.record(st2);
        WHD_CUDA_CHECK(cudaStreamWaitEvent(st.get(), other_done.get(), 0));
        end.record(st);
        end.synchronize();
        if (r >= 0) {
          total.push_back(end.elapsed_ms_since(start));
        }
      }
      const bool agree = agrees();
      all_agree = all_agree && agree;
      const double t = median(total);
      std::printf("| GPU, %s, %zu groups on 2 streams | %.3f | | | %.1f | | | %s |\n", fec::to_string(default_form), o.groups, t,
                  info_bits / (t * 1e-3) / 1e9, agree ? "yes" : "NO");
    }
    uint64_t corrected = 0, failed = 0;
    for (const auto& j : jobs) {
      corrected += j.rs.corrected;
      failed += j.rs.failed;
    }
    std::printf("| CPU coded_decoder, 1 thread (%s) | %.3f (%zu frames) | | | %.3f | | | |\n\n",
                fec::viterbi_vectorised() ? "AVX2" : "reference", cpu_s * 1e3, o.distinct, info_bits_distinct / cpu_s / 1e9);
    std::printf("- RS over the distinct frames: %llu bytes corrected, %llu of %llu codewords failed\n", (unsigned long long)corrected,
                (unsigned long long)failed, (unsigned long long)(o.distinct * g.codewords));
    std::printf("- trellis steps per information bit: %.3f\n", double(steps_per_frame) / (double(g.info_bytes) * 8.0));
    return all_agree ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "whd-fec-gpu-bench: %s\n", e.what());
    return 1;
  }
}
