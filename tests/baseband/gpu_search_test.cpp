// The search's block filter on the GPU clears only blocks without a crossing:
// with it, the detector finds exactly what the host scan alone finds (position,
// metric and CFO bit for bit), and the GPU receiver exactly the same frames and
// payload. Captures of ci8 and ci16 with noise between frames long enough for
// several of the filter's runs of blocks, frames at low
// SNR (metrics near the threshold) and a frame close to the end (the last, short
// block).
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/transport/capture.hpp>

#include "gpu_guard.hpp"
#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace tr = whd::transport;
namespace p = whd::profile;

bb::output_summary write(const std::filesystem::path& base, whd::datatype type, double snr, uint64_t seed)
{
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.nds = {4, 30};
  cfg.nof_frames = 4;
  // 36 M samples of noise first (more than two runs of the filter's 256 blocks of
  // 65536, the third a partial one), then frames 5 M apart (each found inside a
  // run), the last close to the end.
  cfg.lead_samples = 36000001;
  cfg.gap_samples = 5000003;
  cfg.tail_samples = 1500;
  cfg.seed = seed;
  cfg.impairments.snr_dB = snr;
  cfg.impairments.cfo_Hz = -0.8e6;
  cfg.impairments.nof_taps = 3;
  bb::output_config out;
  out.base = base;
  out.type = type;
  return bb::write_capture(cfg, out);
}

TEST(gpu_search, the_block_filter_leaves_every_detection_of_the_host_scan)
{
  WHD_REQUIRE_GPU();
  whd::test::temp_dir dir("gpu-search");
  const auto filter = bb::make_gpu_block_filter(0, bb::rx_config{}.detect_threshold);
  int k = 0;
  for (auto type : {whd::datatype::ci8, whd::datatype::ci16_le}) {
    for (double snr : {3.0, 20.0}) {
      const auto written = write(dir.path() / ("cap" + std::to_string(k)), type, snr, 900 + uint64_t(k));
      ++k;
      const tr::capture_reader file(tr::open_capture(written.meta_path));
      const std::string what = std::string(whd::to_string(type)) + ", SNR " + std::to_string(snr) + " dB";
      const auto want = whd::test::all_detections(file, 4);
      std::cout << what << ": " << want.size() << " detections\n";
      EXPECT_GE(want.size(), 4u) << what;
      whd::test::expect_same_detections(whd::test::all_detections(file, 4, filter.get()), want, what);
    }
  }
}

TEST(gpu_search, the_gpu_receiver_decodes_what_the_cpu_decodes_over_long_silences)
{
  WHD_REQUIRE_GPU();
  whd::test::temp_dir dir("gpu-search-rx");
  const auto written = write(dir.path() / "cap", whd::datatype::ci8, 12.0, 77);
  const tr::capture_reader file(tr::open_capture(written.meta_path));
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<bb::receive_result> results;
  for (bool on_gpu : {false, true}) {
    auto rx = on_gpu ? bb::make_gpu_receiver(bb::rx_config{}) : bb::make_cpu_receiver(bb::rx_config{});
    bb::memory_sink sink;
    results.push_back(rx->run(file, sink));
    payloads.push_back(sink.bytes());
  }
  ASSERT_EQ(results[0].frames.size(), 4u);
  ASSERT_EQ(results[1].frames.size(), results[0].frames.size());
  for (std::size_t i = 0; i < results[0].frames.size(); ++i) {
    EXPECT_EQ(results[1].frames[i].start, results[0].frames[i].start) << "frame " << i;
    EXPECT_NEAR(results[1].frames[i].cfo_Hz, results[0].frames[i].cfo_Hz, 1.0) << "frame " << i;
  }
  EXPECT_EQ(payloads[1], payloads[0]);
}

} // namespace
