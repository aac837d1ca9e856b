// The CPU receiver's result does not depend on its thread count (receiver.hpp:
// "the result is identical for any thread count"): on a capture of many frames,
// long ones split over threads and short ones not, corrupted headers and a frame
// cut off at the end, every thread count and batch size gives the same frames,
// the same header failures and the same payload bytes, and those are the
// generator's.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;

using whd::test::expect_identical;

TEST(rx_threads, one_and_many_threads_give_identical_results)
{
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qam16, p::modulation::qpsk, p::modulation::qam16};
  // Frames of 1 to 300 data symbols: a thread takes 64 symbols or more, so these
  // run on 1 to 5 threads; 64 and 65 sit on the boundary.
  cfg.nds = {1, 70, 300, 130, 3, 64, 65, 129, 7};
  cfg.nof_frames = 40;
  cfg.corrupt_header_frames = {5, 17};
  cfg.lead_samples = 1234;
  cfg.gap_samples = 321;
  // The last frame (nd 130) keeps 29 whole data symbols: 133 symbols less 100 and a bit.
  cfg.cut_samples = 321 + 100 * p::SYMBOL_LEN + 100;
  cfg.seed = 4242;
  // Noise, CFO and a channel, so that decisions near the boundaries exist and any
  // order-dependent arithmetic would show.
  cfg.impairments.snr_dB = 22.0;
  cfg.impairments.cfo_Hz = -1.7e6;
  cfg.impairments.nof_taps = 4;
  cfg.impairments.random_phase = true;
  std::cout << "seed " << cfg.seed << "\n";
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  ASSERT_EQ(plan.frames.size(), 40u);
  ASSERT_EQ(whd::test::symbols_present(plan.frames.back()), 29u) << "the last frame is cut";
  const whd::transport::memory_source src(cap.samples());

  bb::rx_config rc;
  rc.nof_threads = 1;
  const auto reference = whd::test::run_cpu_receiver(src, rc);
  // The reference is the generator's capture: every frame, both failures, the cut.
  const auto errors = whd::test::check_against_plan(plan, cap.truth(), reference, "1 thread", 1, 4);
  std::cout << "1 thread: " << reference.result.frames.size() << " frames, " << reference.result.data_symbols
            << " data symbols, " << errors.errors << " bit errors in " << errors.bits << " bits\n";
  EXPECT_EQ(reference.result.frames.size(), 38u);
  EXPECT_EQ(reference.result.header_failures.size(), 2u);
  EXPECT_LT(errors.ber(), 1e-2) << "a capture the receiver decodes";

  for (unsigned threads : {2u, 3u, 5u, 8u}) {
    for (std::size_t batch : {std::size_t(4096), std::size_t(100), std::size_t(1)}) {
      rc.nof_threads = threads;
      rc.symbols_per_batch = batch;
      expect_identical(reference, whd::test::run_cpu_receiver(src, rc),
                       std::to_string(threads) + " threads, batches of " + std::to_string(batch));
    }
  }
}

// A symbol's derotation averages its neighbours' (demap.hpp's PHASE_NEIGHBOURS), and a
// thread's piece reads the windows either side of it for theirs: at an SNR where every
// soft value depends on the phase, pieces of 1, 7, 64 and 4096 symbols give the same
// values bit for bit. A piece that averaged over its own symbols only would change the
// values of its first and last symbols with the cut.
TEST(rx_threads, soft_values_do_not_depend_on_the_pieces)
{
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.nds = {150, 1, 2, 71};
  cfg.nof_frames = 8;
  cfg.gap_samples = 500;
  cfg.seed = 4343;
  cfg.impairments.snr_dB = 6.0;
  cfg.impairments.cfo_Hz = 0.9e6;
  cfg.impairments.nof_taps = 3;
  cfg.impairments.random_phase = true;
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  const whd::transport::memory_source src(cap.samples());
  auto soft = [&](unsigned threads, std::size_t batch) {
    bb::memory_sink llrs;
    bb::rx_config rc;
    rc.nof_threads = threads;
    rc.symbols_per_batch = batch;
    rc.llr.sink = &llrs;
    rc.llr.format = bb::llr_format::f32;
    const auto out = whd::test::run_cpu_receiver(src, rc);
    EXPECT_EQ(out.result.frames.size(), plan.frames.size()) << "batches of " << batch;
    return llrs.bytes();
  };
  const std::vector<uint8_t> whole = soft(1, 4096);
  ASSERT_FALSE(whole.empty());
  for (const auto& [threads, batch] : {std::pair{1u, std::size_t(1)}, {3u, std::size_t(7)}, {2u, std::size_t(64)}}) {
    EXPECT_TRUE(soft(threads, batch) == whole) << threads << " threads, batches of " << batch;
  }
}

TEST(rx_threads, long_noisy_gaps_scanned_ahead_find_the_frames_of_one_thread)
{
  // The detector scans the blocks after an empty one in parallel, more at a time
  // the longer nothing is found: gaps of several blocks (65 536 positions each)
  // put each preamble somewhere inside such a parallel sweep, and the first
  // crossing in block order must be the one a single thread finds.
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.nds = {20, 5, 40};
  cfg.nof_frames = 9;
  cfg.lead_samples = 200001;
  cfg.gap_samples = 450013;
  cfg.tail_samples = 300007;
  cfg.seed = 4343;
  cfg.impairments.snr_dB = 12.0; // noise over the whole capture, so every block has a metric to compute
  cfg.impairments.cfo_Hz = 0.9e6;
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  const whd::transport::memory_source src(cap.samples());
  bb::rx_config rc;
  rc.nof_threads = 1;
  const auto reference = whd::test::run_cpu_receiver(src, rc);
  const auto errors = whd::test::check_against_plan(plan, cap.truth(), reference, "1 thread");
  EXPECT_EQ(reference.result.frames.size(), 9u);
  EXPECT_LT(errors.ber(), 1e-2);
  for (unsigned threads : {2u, 3u, 8u}) {
    rc.nof_threads = threads;
    expect_identical(reference, whd::test::run_cpu_receiver(src, rc), std::to_string(threads) + " threads, long gaps");
  }
}

} // namespace
