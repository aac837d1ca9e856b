// The receiver's cancellation hook (rx_config::stop): raised while a frame is being
// decoded, that frame is finished and no other is started; raised during the
// search, the search ends at its next block. Either way the result lists whole
// frames, the payload holds exactly their bytes, and `interrupted` says the
// capture was not read to its end.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;

/// A sink that raises the stop flag on its first write.
class stopping_sink final : public bb::payload_sink {
public:
  explicit stopping_sink(std::atomic<bool>& stop) : stop_(stop) {}
  void write(std::span<const uint8_t> bytes) override
  {
    stop_.store(true);
    ++nof_writes_;
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  }
  const std::vector<uint8_t>& bytes() const noexcept { return bytes_; }
  int nof_writes() const noexcept { return nof_writes_; }

private:
  std::atomic<bool>& stop_;
  std::vector<uint8_t> bytes_;
  int nof_writes_ = 0;
};

bb::capture_config three_frames(uint64_t seed)
{
  bb::capture_config cfg;
  cfg.nof_frames = 3;
  cfg.nds = {100, 20};
  cfg.mods = {p::modulation::qam16};
  cfg.seed = seed;
  cfg.impairments.snr_dB = 30.0;
  cfg.impairments.cfo_Hz = 0.5e6;
  return cfg;
}

TEST(rx_stop, stop_during_a_frame_finishes_it_and_starts_no_other)
{
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(three_frames(921), cap);
  const whd::transport::memory_source src(cap.samples());
  std::atomic<bool> stop{false};
  bb::rx_config rc;
  rc.nof_threads = 2;
  rc.symbols_per_batch = 16; // the first frame takes 7 writes: the stop comes at the first
  rc.stop = &stop;
  stopping_sink sink(stop);
  const auto res = bb::make_cpu_receiver(rc)->run(src, sink);
  EXPECT_TRUE(res.interrupted);
  ASSERT_EQ(res.frames.size(), 1u);
  EXPECT_EQ(sink.nof_writes(), 7);
  const auto& f = res.frames[0];
  EXPECT_EQ(f.nd, plan.frames[0].nd);
  EXPECT_EQ(f.symbols, f.nd);
  EXPECT_FALSE(f.truncated);
  EXPECT_EQ(res.payload_bytes, f.payload_bytes);
  ASSERT_EQ(sink.bytes().size(), f.payload_bytes);
  EXPECT_TRUE(std::equal(sink.bytes().begin(), sink.bytes().end(), cap.truth().begin()));
}

TEST(rx_stop, stop_during_the_search_ends_it)
{
  // 400 000 samples of silence, then the frames: the stop raised at the first
  // progress report ends the search after one block, before any frame.
  auto cfg = three_frames(922);
  cfg.lead_samples = 400000;
  bb::memory_capture cap;
  bb::generate_capture(cfg, cap);
  const whd::transport::memory_source src(cap.samples());
  std::atomic<bool> stop{false};
  bb::rx_config rc;
  rc.stop = &stop;
  uint64_t furthest = 0;
  bb::memory_sink sink;
  const auto res = bb::make_cpu_receiver(rc)->run(src, sink, [&](uint64_t done, uint64_t) {
    furthest = done;
    stop.store(true);
  });
  EXPECT_TRUE(res.interrupted);
  EXPECT_TRUE(res.frames.empty());
  EXPECT_TRUE(sink.bytes().empty());
  EXPECT_LT(furthest, cfg.lead_samples) << "the search went on after the stop";
}

TEST(rx_stop, a_flag_never_raised_changes_nothing)
{
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(three_frames(923), cap);
  const whd::transport::memory_source src(cap.samples());
  std::atomic<bool> stop{false};
  bb::rx_config rc;
  rc.stop = &stop;
  const auto out = whd::test::run_cpu_receiver(src, rc);
  EXPECT_FALSE(out.result.interrupted);
  const auto errors = whd::test::check_against_plan(plan, cap.truth(), out, "stop never raised", 1, 1);
  EXPECT_EQ(errors.errors, 0u);
}

} // namespace
