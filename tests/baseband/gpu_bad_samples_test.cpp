// Non-finite samples and a stop request on the GPU backend: reported as the CPU
// reference reports them (the frames and data symbols they touch), the other
// bits equal; the frames handed over as the run goes are the result's, whole.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include "gpu_guard.hpp"
#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;

struct output {
  bb::receive_result result;
  std::vector<uint8_t> payload;
};

/// A run on the GPU (with `g`) or the CPU; the frames it hands over as it goes
/// (rx_config::on_frames, for the report) must be its result's, each whole (its bad
/// samples noted: a frame's symbols span several chunks here) and after its payload.
output run(const bb::rx_config& rc, const std::optional<bb::gpu_config>& g, const whd::transport::sample_source& src,
           const std::string& what)
{
  bb::memory_sink sink;
  whd::test::frames_recorder handed([&] { return uint64_t(sink.bytes().size()); });
  bb::rx_config c = rc;
  c.on_frames = handed.fn();
  output o;
  o.result = (g ? bb::make_gpu_receiver(c, *g) : bb::make_cpu_receiver(c))->run(src, sink);
  o.payload = sink.bytes();
  whd::test::expect_handed_over(handed, o.result, what);
  return o;
}

TEST(gpu_bad_samples, nan_and_inf_are_reported_as_the_cpu_reports_them)
{
  WHD_REQUIRE_GPU();
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qam16, p::modulation::qpsk};
  cfg.nds = {9, 12};
  cfg.nof_frames = 4;
  cfg.seed = 77;
  cfg.impairments.snr_dB = 30.0;
  cfg.impairments.cfo_Hz = 4e5;
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  auto x = cap.samples();
  constexpr float NAN_F = std::numeric_limits<float>::quiet_NaN();
  // Into data symbols 2 and 3 of frame 1 and symbol 0 of frame 3, and between frames.
  const uint64_t L = p::SYMBOL_LEN;
  x[plan.frames[1].start + (3 + 2) * L + 100] = cf32(NAN_F, 0.0f);
  x[plan.frames[1].start + (3 + 3) * L + 300] = cf32(0.0f, std::numeric_limits<float>::infinity());
  x[plan.frames[3].start + 3 * L + 200] = cf32(NAN_F, NAN_F);
  x[plan.frames[2].start - 50] = cf32(NAN_F, 1.0f);
  const whd::transport::memory_source src(std::move(x));
  bb::rx_config rc;
  const auto cpu = run(rc, std::nullopt, src, "cpu");
  for (auto link : {whd::transport::link_format::f32, whd::transport::link_format::half, whd::transport::link_format::int8}) {
    bb::gpu_config g;
    g.link = link;
    g.symbols_per_batch = 4;
    const std::string what(whd::transport::to_string(link));
    const auto gpu = run(rc, g, src, what);
    ASSERT_EQ(gpu.result.frames.size(), cpu.result.frames.size()) << what;
    uint64_t marked = 0;
    for (std::size_t i = 0; i < cpu.result.frames.size(); ++i) {
      EXPECT_EQ(gpu.result.frames[i].start, cpu.result.frames[i].start) << what;
      EXPECT_EQ(gpu.result.frames[i].bad_samples, cpu.result.frames[i].bad_samples) << what << " frame " << i;
      EXPECT_EQ(gpu.result.frames[i].bad_symbols, cpu.result.frames[i].bad_symbols) << what << " frame " << i;
      marked += cpu.result.frames[i].bad_samples;
    }
    EXPECT_EQ(marked, 3u) << "the CPU reference marks the three samples inside data windows";
    if (link == whd::transport::link_format::f32) {
      EXPECT_EQ(gpu.payload, cpu.payload);
    }
  }
}

TEST(gpu_bad_samples, a_raised_stop_flag_reports_an_interrupted_run_with_whole_frames)
{
  WHD_REQUIRE_GPU();
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk};
  cfg.nds = {10};
  cfg.nof_frames = 3;
  cfg.seed = 5;
  bb::memory_capture cap;
  bb::generate_capture(cfg, cap);
  const whd::transport::memory_source src(cap.samples());
  std::atomic<bool> stop{true};
  bb::rx_config rc;
  rc.stop = &stop;
  const auto out = run(rc, bb::gpu_config{}, src, "stopped");
  EXPECT_TRUE(out.result.interrupted);
  EXPECT_TRUE(out.result.frames.empty());
  EXPECT_TRUE(out.payload.empty());
}

} // namespace
