// The FEC of coded frames on the device against the CPU's (baseband/fec): given the same
// soft values, the same information bytes and RS counts, exactly; and coded traffic
// through the whole GPU receiver (frames over many chunks, truncated, mixed with uncoded
// ones) against the CPU receiver.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/fec/coded_rx.hpp>
#include <whd/fec/coded_tx.hpp>
#include <whd/transport/capture.hpp>

#include "gpu_fec.hpp"
#include "gpu_guard.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace fec = whd::fec;
namespace cuda = whd::cuda;

struct frame_case {
  fec::frame_geometry g;
  std::vector<int8_t> streams;
};

/// Soft values of a frame: a clean codeword with a fraction of values turned (0: none),
/// or, with `random`, any values (RS mostly fails), or saturated +-127.
frame_case make_frame(int mcs, uint32_t nd, int kind, std::mt19937& rng)
{
  frame_case f{fec::geometry(mcs, nd), {}};
  std::vector<uint8_t> info(f.g.info_bytes);
  for (auto& b : info) {
    b = uint8_t(rng());
  }
  const auto tx = fec::encode_frame(f.g, info);
  std::vector<int8_t> soft(f.g.coded_bits());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t i = 0; i < soft.size(); ++i) {
    const bool one = (tx[i / 8] >> (7 - i % 8)) & 1u;
    int v = one ? -20 : 20;
    if (kind == 1 && u(rng) < 0.04) {
      v = -v; // scattered errors: the Viterbi and RS work
    } else if (kind == 2) {
      v = int(rng() % 255) - 127;
    } else if (kind == 3) {
      v = rng() & 1u ? 127 : -127;
    }
    soft[i] = int8_t(v);
  }
  f.streams.assign(fec::NOF_ENCODERS * f.g.ce, 0);
  fec::demultiplex_symbols(f.g, 0, soft, f.streams);
  return f;
}

TEST(gpu_fec, equals_the_cpu_decoder_on_the_same_soft_values)
{
  WHD_REQUIRE_GPU();
  std::mt19937 rng(31);
  std::printf("seed 31\n");
  std::vector<frame_case> frames;
  for (int kind = 0; kind < 4; ++kind) {
    for (int mcs : fec::MCS_LIST) {
      for (uint32_t nd : {1u, 2u, 7u, 52u, 300u}) {
        frames.push_back(make_frame(mcs, nd, kind, rng));
      }
    }
  }
  frames.push_back(make_frame(2, 9000, 1, rng)); // more tiles than one launch decodes
  // The CPU's bytes and counts.
  std::vector<std::vector<uint8_t>> want(frames.size());
  std::vector<fec::coded_job> jobs;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    want[i].resize(frames[i].g.info_bytes);
    jobs.push_back({frames[i].g, frames[i].streams, want[i], {}});
  }
  fec::coded_decoder().decode(jobs);
  // The device's, all frames in one run.
  std::size_t stream_bytes = 0, info_bytes = 0;
  for (const auto& f : frames) {
    stream_bytes += f.streams.size();
    info_bytes += f.g.info_bytes;
  }
  cuda::device_buffer<int8_t> d_streams(stream_bytes);
  cuda::device_buffer<uint8_t> d_info(info_bytes);
  cuda::device_buffer<uint32_t> d_rs(2 * frames.size());
  std::vector<bb::gpu::coded_end> ends;
  std::size_t s_at = 0, i_at = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    WHD_CUDA_CHECK(cudaMemcpy(d_streams.data() + s_at, frames[i].streams.data(), frames[i].streams.size(), cudaMemcpyHostToDevice));
    bb::gpu::coded_end e;
    e.result = i;
    e.g = frames[i].g;
    e.d_streams = d_streams.data() + s_at;
    e.d_info = d_info.data() + i_at;
    ends.push_back(e);
    s_at += frames[i].streams.size();
    i_at += frames[i].g.info_bytes;
  }
  cuda::stream st;
  bb::gpu::gpu_fec dec;
  dec.run(ends, d_rs.data(), st.get());
  st.synchronize();
  std::vector<uint8_t> got(info_bytes);
  std::vector<uint32_t> rs(2 * frames.size());
  WHD_CUDA_CHECK(cudaMemcpy(got.data(), d_info.data(), info_bytes, cudaMemcpyDeviceToHost));
  WHD_CUDA_CHECK(cudaMemcpy(rs.data(), d_rs.data(), rs.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  i_at = 0;
  uint64_t failed = 0, corrected = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const std::vector<uint8_t> g(got.begin() + std::ptrdiff_t(i_at), got.begin() + std::ptrdiff_t(i_at + frames[i].g.info_bytes));
    EXPECT_EQ(g, want[i]) << "frame " << i << ": MCS " << frames[i].g.mcs << ", Nd " << frames[i].g.nd;
    EXPECT_EQ(rs[2 * i], jobs[i].rs.corrected) << "frame " << i;
    EXPECT_EQ(rs[2 * i + 1], jobs[i].rs.failed) << "frame " << i;
    failed += jobs[i].rs.failed;
    corrected += jobs[i].rs.corrected;
    i_at += frames[i].g.info_bytes;
  }
  // The cases reach both of RS's outcomes.
  EXPECT_GT(failed, 0u);
  EXPECT_GT(corrected, 0u);
}

/// The whole receivers on one capture: frames, RS counts and payload equal, and the
/// payload the truth (less a truncated coded frame's bytes, which it does not write).
void expect_gpu_equals_cpu(const bb::capture_config& cc, std::size_t symbols_per_batch, const std::string& what)
{
  bb::memory_capture cap;
  const bb::capture_plan plan = bb::generate_capture(cc, cap);
  const whd::transport::memory_source src(cap.samples());
  bb::rx_config cfg;
  bb::memory_sink cpu_sink, gpu_sink, cpu_llr, gpu_llr;
  cfg.llr = {&cpu_llr, bb::llr_format::int8, 4.0f}; // the soft output beside the FEC's own soft values
  const auto cpu = bb::make_cpu_receiver(cfg)->run(src, cpu_sink);
  bb::gpu_config g;
  g.symbols_per_batch = symbols_per_batch;
  cfg.llr.sink = &gpu_llr;
  const auto gpu = bb::make_gpu_receiver(cfg, g)->run(src, gpu_sink);
  // The soft output of every symbol, coded or not: int8 values a rounding step apart at most.
  ASSERT_EQ(gpu_llr.bytes().size(), cpu_llr.bytes().size()) << what;
  std::size_t apart = 0;
  for (std::size_t i = 0; i < cpu_llr.bytes().size(); ++i) {
    const int d = int(int8_t(gpu_llr.bytes()[i])) - int(int8_t(cpu_llr.bytes()[i]));
    EXPECT_LE(std::abs(d), 1) << what << " soft value " << i;
    apart += d != 0 ? 1 : 0;
  }
  std::printf("%s: %zu of %zu int8 soft values a step apart\n", what.c_str(), apart, cpu_llr.bytes().size());
  ASSERT_EQ(gpu.frames.size(), cpu.frames.size()) << what;
  for (std::size_t i = 0; i < cpu.frames.size(); ++i) {
    EXPECT_EQ(gpu.frames[i].mcs, cpu.frames[i].mcs) << what << " frame " << i;
    EXPECT_EQ(gpu.frames[i].payload_bytes, cpu.frames[i].payload_bytes) << what << " frame " << i;
    EXPECT_EQ(gpu.frames[i].rs_corrected, cpu.frames[i].rs_corrected) << what << " frame " << i;
    EXPECT_EQ(gpu.frames[i].rs_failed, cpu.frames[i].rs_failed) << what << " frame " << i;
  }
  EXPECT_TRUE(gpu_sink.bytes() == cpu_sink.bytes()) << what << ": payloads differ";
  std::vector<uint8_t> want;
  std::size_t at = 0;
  for (std::size_t i = 0; i < plan.frames.size(); ++i) {
    const auto& r = plan.frames[i];
    const bool whole = r.samples_present == bb::frame_samples(r.nd);
    if (whole || r.mcs == whd::profile::NO_MCS) {
      const std::size_t n = whole ? r.payload_bytes : std::size_t(cpu.frames.at(i).payload_bytes);
      want.insert(want.end(), cap.truth().begin() + std::ptrdiff_t(at), cap.truth().begin() + std::ptrdiff_t(at + n));
    }
    at += r.payload_bytes;
  }
  EXPECT_TRUE(cpu_sink.bytes() == want) << what << ": the CPU's payload is not the truth";
}

TEST(gpu_fec, coded_traffic_through_the_gpu_receiver_equals_the_cpu)
{
  WHD_REQUIRE_GPU();
  bb::capture_config cc;
  cc.mcs = {0, 1, 2, 7, whd::profile::NO_MCS, 2};
  cc.mods = {whd::profile::modulation::qam16};
  cc.nds = {3, 40, 700, 12};
  cc.nof_frames = 24;
  cc.impairments.snr_dB = 25.0;
  cc.impairments.random_phase = true;
  cc.seed = 5;
  // Small chunks: frames over many chunks (spans), several frames a chunk; and the default.
  expect_gpu_equals_cpu(cc, 64, "chunks of 64 symbols");
  expect_gpu_equals_cpu(cc, 0, "default chunks");
  // A capture cut inside a long coded frame: truncated, no payload.
  cc.nof_frames = 3;
  cc.nds = {40, 40, 900};
  cc.cut_samples = 300 * 576;
  expect_gpu_equals_cpu(cc, 64, "cut inside a coded frame");
}

} // namespace
