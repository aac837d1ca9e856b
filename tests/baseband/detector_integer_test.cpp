// The detector's fast path for integer captures (ci8, ci16: its sums reassociated,
// positions cleared without the division) finds exactly what the in-order path
// finds on the same samples as floats. Every detection of a capture (position,
// metric and CFO, compared bit for bit) is collected both ways, over low SNR (so
// that metrics sit near the threshold), strong and weak signals, long noisy gaps
// (every block holds positions to clear) and frames close together.
#include <whd/baseband/generator_files.hpp>
#include <whd/transport/capture.hpp>

#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <span>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace tr = whd::transport;
namespace p = whd::profile;

TEST(detector_integer, integer_captures_detect_exactly_as_their_floats_do)
{
  whd::test::temp_dir dir("detector-integer");
  int cases = 0;
  for (auto type : {whd::datatype::ci8, whd::datatype::ci16_le}) {
    for (double snr : {2.5, 4.0, 25.0}) { // metrics near the threshold (0.4) at the lower two
      for (double gain : {0.05, 1.0}) {
        bb::capture_config cfg;
        cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
        cfg.nds = {3, 20};
        cfg.nof_frames = 5;
        cfg.lead_samples = 150001;
        cfg.gap_samples = cases % 2 == 0 ? 777 : 70001;
        cfg.seed = 600 + uint64_t(cases);
        cfg.impairments.snr_dB = snr;
        cfg.impairments.cfo_Hz = 1.3e6;
        cfg.impairments.nof_taps = 4;
        cfg.impairments.gain = gain;
        cfg.impairments.random_phase = true;
        bb::output_config out;
        out.base = dir.path() / ("cap" + std::to_string(cases));
        out.type = type;
        const auto written = bb::write_capture(cfg, out);
        const tr::capture_reader file(tr::open_capture(written.meta_path));
        // The same samples as floats: an in-memory source, summed in order.
        std::vector<whd::cf32> samples(file.size());
        ASSERT_EQ(file.read(0, samples), samples.size());
        const tr::memory_source floats(std::move(samples));
        const std::string what = std::string(whd::to_string(type)) + ", SNR " + std::to_string(snr) + " dB, gain " +
                                 std::to_string(gain) + ", seed " + std::to_string(cfg.seed);
        const auto want = whd::test::all_detections(floats, 1);
        std::cout << what << ": " << want.size() << " detections\n";
        EXPECT_GE(want.size(), snr > 10.0 ? 5u : 1u) << what << ": a capture with crossings to compare";
        for (unsigned threads : {1u, 4u}) {
          whd::test::expect_same_detections(whd::test::all_detections(file, threads), want, what + ", " + std::to_string(threads) + " threads");
        }
        ++cases;
      }
    }
  }
}

/// A block filter that clears nothing and records what it was asked.
class recording_filter final : public bb::block_filter {
public:
  void mark(const tr::sample_source&, uint64_t base, std::span<uint8_t> maybe) override
  {
    bases.push_back(base);
    blocks += maybe.size();
  }
  std::vector<uint64_t> bases;
  std::size_t blocks = 0;
};

TEST(detector_integer, a_block_filter_that_clears_nothing_changes_no_detection)
{
  whd::test::temp_dir dir("detector-filter");
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk};
  cfg.nds = {3};
  cfg.nof_frames = 3;
  // Silences long enough for the filter (past the ramp of blocks scanned ahead).
  cfg.lead_samples = 3 * bb::candidate_search::BLOCK * 16;
  cfg.gap_samples = 2 * bb::candidate_search::BLOCK * 16;
  cfg.impairments.snr_dB = 25.0;
  cfg.seed = 31;
  bb::output_config out;
  out.base = dir.path() / "cap";
  out.type = whd::datatype::ci8;
  const auto written = bb::write_capture(cfg, out);
  const tr::capture_reader file(tr::open_capture(written.meta_path));
  recording_filter filter;
  const auto found = whd::test::all_detections(file, 4, &filter);
  EXPECT_FALSE(filter.bases.empty()) << "the silences went through the filter";
  // A filter that clears nothing changes nothing.
  whd::test::expect_same_detections(found, whd::test::all_detections(file, 4), "ci8 with a filter that clears nothing");
}

} // namespace
