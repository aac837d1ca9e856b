// The capture generator on several threads: the same files, byte for byte, for any
// number of threads; blocks that do not depend on where the capture is cut into
// blocks; and a capture made on several threads decoded by the CPU receiver to its
// truth.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>

#include "test_env.hpp"
#include "tx_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <iostream>
#include <random>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;
using whd::datatype;

/// Uncoded QPSK and 16-QAM frames and coded ones of every MCS, with every impairment,
/// gaps shorter than the channel (a frame's channel tail runs into the next frame),
/// a corrupted header and a cut through the last frame; blocks of an odd size, so
/// that symbols, frames and the channel's history straddle blocks.
bb::capture_config mixed_capture(uint64_t seed)
{
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.mcs = {p::NO_MCS, 0, 2, p::NO_MCS, 1, 7};
  cfg.nds = {7, 20, 3, 12};
  cfg.nof_frames = 13;
  cfg.lead_samples = 500;
  cfg.gap_samples = 2;
  cfg.tail_samples = 900;
  cfg.cut_samples = 3000;
  cfg.corrupt_header_frames = {4};
  cfg.seed = seed;
  cfg.impairments.snr_dB = 22.0;
  cfg.impairments.cfo_Hz = 400e3;
  cfg.impairments.nof_taps = 5;
  cfg.impairments.gain = 0.7;
  cfg.impairments.random_phase = true;
  cfg.block_samples = 3001;
  return cfg;
}

TEST(tx_threads, impairments_of_a_block_alone_equal_the_streamed_ones)
{
  // The chain run block after block (state carried over) against each block impaired
  // alone from its clean samples and the channel's history, blocks taken backwards.
  constexpr uint64_t SEED = 12;
  std::cout << "seed " << SEED << "\n";
  bb::impairment_config ic;
  ic.snr_dB = 10.0;
  ic.cfo_Hz = 1.1e6;
  ic.nof_taps = 6;
  ic.random_phase = true;
  const auto seeds = bb::derive_seeds(SEED);
  std::mt19937_64 rng(SEED);
  std::vector<cf32> clean(20000);
  for (auto& v : clean) {
    v = cf32(static_cast<float>(rng() >> 40) * 0x1.0p-24f - 0.5f, static_cast<float>(rng() >> 40) * 0x1.0p-24f - 0.5f);
  }
  const std::vector<std::size_t> bounds = {0, 1, 4, 700, 701, 5000, 12345, 20000};
  bb::impairment_chain streamed(ic, seeds);
  std::vector<cf32> a = clean;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    streamed.run(bounds[i], std::span<cf32>(a).subspan(bounds[i], bounds[i + 1] - bounds[i]));
  }
  const bb::impairment_chain alone(ic, seeds);
  const std::size_t mem = alone.taps().size() - 1;
  std::vector<cf32> b(clean.size());
  for (std::size_t i = bounds.size() - 1; i-- > 0;) {
    std::vector<cf32> in(mem, cf32{});
    for (std::size_t k = 0; k < mem; ++k) {
      if (bounds[i] + k >= mem) {
        in[k] = clean[bounds[i] + k - mem];
      }
    }
    in.insert(in.end(), clean.begin() + static_cast<std::ptrdiff_t>(bounds[i]),
              clean.begin() + static_cast<std::ptrdiff_t>(bounds[i + 1]));
    alone.apply(bounds[i], in, std::span<cf32>(b).subspan(bounds[i], bounds[i + 1] - bounds[i]));
  }
  EXPECT_TRUE(a == b) << "a block impaired alone differs from the streamed one";
  // The same noise drawn in pieces and in one go.
  bb::awgn w(0.5, SEED);
  std::vector<cf32> x(3000), y(3000);
  w.add(std::span<cf32>(x).first(1000));
  w.add(std::span<cf32>(x).subspan(1000));
  bb::awgn(0.5, SEED).add_at(1000, std::span<cf32>(y).subspan(1000));
  bb::awgn(0.5, SEED).add_at(0, std::span<cf32>(y).first(1000));
  EXPECT_TRUE(x == y);
  std::vector<cf32> bad(10);
  EXPECT_THROW(alone.apply(0, bad, std::span<cf32>(bad).first(10)), std::invalid_argument);
}

TEST(tx_threads, the_files_are_the_same_for_any_number_of_threads)
{
  constexpr uint64_t SEED = 77;
  std::cout << "seed " << SEED << "\n";
  const auto dir = whd::test::scratch_dir("tx-threads");
  auto cfg = mixed_capture(SEED);
  for (auto type : {datatype::cf32_le, datatype::ci8}) {
    std::vector<uint8_t> data_1, truth_1, frames_1;
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      cfg.nof_threads = threads;
      bb::output_config out;
      out.base = dir / ("cap-" + std::to_string(threads));
      out.type = type;
      const auto summary = bb::write_capture(cfg, out);
      const std::string what = std::string(whd::to_string(type)) + ", " + std::to_string(threads) + " threads";
      ASSERT_EQ(summary.plan.frames.size(), 13u) << what << ": the cut leaves the last frame listed";
      const auto data = whd::test::read_file_bytes(summary.data_path);
      const auto truth = whd::test::read_file_bytes(summary.truth_path);
      const auto frames = whd::test::read_file_bytes(summary.frames_path);
      EXPECT_EQ(data.size(), summary.plan.nof_samples * whd::bytes_per_sample(type)) << what;
      EXPECT_EQ(truth.size(), summary.plan.truth_bytes) << what;
      if (threads == 1) {
        data_1 = data;
        truth_1 = truth;
        frames_1 = frames;
        continue;
      }
      EXPECT_TRUE(data == data_1) << what << ": samples differ from one thread's";
      EXPECT_TRUE(truth == truth_1) << what << ": truth differs from one thread's";
      EXPECT_TRUE(frames == frames_1) << what << ": frames.json differs from one thread's";
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(tx_threads, blocks_do_not_depend_on_the_block_size_but_for_the_cfo_phasor)
{
  // Without CFO every sample is a function of its index alone: the same bits for any
  // block size. With CFO the phasor restarts (exactly, in double) at each block, so
  // the samples agree to float rounding.
  for (double cfo_Hz : {0.0, 400e3}) {
    auto cfg = mixed_capture(5);
    cfg.impairments.cfo_Hz = cfo_Hz;
    cfg.nof_threads = 3;
    bb::memory_capture a, b;
    cfg.block_samples = 1u << 16;
    bb::generate_capture(cfg, a);
    cfg.block_samples = 777;
    bb::generate_capture(cfg, b);
    ASSERT_EQ(a.samples().size(), b.samples().size());
    EXPECT_EQ(a.truth(), b.truth());
    double worst = 0.0;
    std::size_t worst_n = 0;
    for (std::size_t n = 0; n < a.samples().size(); ++n) {
      const double d = std::abs(std::complex<double>(a.samples()[n]) - std::complex<double>(b.samples()[n]));
      if (d > worst) {
        worst = d;
        worst_n = n;
      }
    }
    std::cout << "CFO " << cfo_Hz << " Hz: largest difference " << worst << " at sample " << worst_n << "\n";
    if (cfo_Hz == 0.0) {
      EXPECT_EQ(worst, 0.0) << "at sample " << worst_n;
    } else {
      EXPECT_LT(worst, 1e-5) << "at sample " << worst_n;
    }
  }
}

TEST(tx_threads, noise_spans_the_gaps_with_the_stated_power_and_fresh_draws)
{
  // Noise only: each block's noise is its own (no block repeats another's draws),
  // and the power is the one asked for over the whole capture.
  bb::capture_config cfg;
  cfg.nof_frames = 0;
  cfg.lead_samples = 400000;
  cfg.tail_samples = 0;
  cfg.impairments.snr_dB = 0.0; // noise power = the signal power frames would have (1)
  cfg.block_samples = 1000;
  cfg.nof_threads = 4;
  bb::memory_capture cap;
  bb::generate_capture(cfg, cap);
  const auto& x = cap.samples();
  ASSERT_EQ(x.size(), 400000u);
  double power = 0.0;
  double lag_block = 0.0; // correlation of samples one block apart
  for (std::size_t n = 0; n < x.size(); ++n) {
    power += std::norm(std::complex<double>(x[n]));
    if (n >= cfg.block_samples) {
      lag_block += std::real(std::complex<double>(x[n]) * std::conj(std::complex<double>(x[n - cfg.block_samples])));
    }
  }
  power /= static_cast<double>(x.size());
  lag_block /= static_cast<double>(x.size() - cfg.block_samples) * power;
  std::cout << "noise power " << power << " (wanted " << cap.plan().noise_power << "), correlation at a block's lag "
            << lag_block << "\n";
  EXPECT_NEAR(power, cap.plan().noise_power, 0.01 * cap.plan().noise_power);
  EXPECT_LT(std::abs(lag_block), 0.01);
}

TEST(tx_threads, the_cpu_receiver_decodes_a_capture_made_on_several_threads_to_its_truth)
{
  constexpr uint64_t SEED = 31;
  std::cout << "seed " << SEED << "\n";
  const auto dir = whd::test::scratch_dir("tx-threads-rx");
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.mcs = {p::NO_MCS, 2, p::NO_MCS, 0, 7, 1};
  cfg.nds = {14, 9, 30};
  cfg.nof_frames = 12;
  cfg.gap_samples = 1500;
  cfg.corrupt_header_frames = {7};
  cfg.seed = SEED;
  cfg.impairments.snr_dB = 30.0;
  cfg.impairments.cfo_Hz = 300e3;
  cfg.impairments.nof_taps = 4;
  cfg.impairments.gain = 0.5;
  cfg.impairments.random_phase = true;
  cfg.block_samples = 5000;
  cfg.nof_threads = 4;
  bb::output_config out;
  out.base = dir / "cap";
  out.type = datatype::ci16_le;
  const auto summary = bb::write_capture(cfg, out);
  whd::transport::capture_reader reader(whd::transport::open_capture(summary.data_path));
  bb::rx_config rc;
  rc.nof_threads = 2;
  auto rx = bb::make_cpu_receiver(rc);
  bb::memory_sink sink;
  const auto res = rx->run(reader, sink);
  EXPECT_EQ(sink.bytes(), whd::test::read_file_bytes(summary.truth_path)) << "the payload, bit for bit";
  EXPECT_EQ(res.frames.size(), 11u);
  EXPECT_EQ(res.header_failures.size(), 1u);
  std::filesystem::remove_all(dir);
}

} // namespace
