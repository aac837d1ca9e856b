// The GPU backend against the CPU reference over the generator's loopback grid:
// both modulations x three datatypes (real files, so the quantisation is real) x
// CFO up to +-2 MHz x 1, 4 and 16 taps at SNR 30 dB, with batches of a few
// symbols so that frames cross batch boundaries and a frame is longer than a
// batch; on one GPU and, where two are present, on two. Report fields must be
// equal, and so must payload bits, but for a bit whose equalised value lies within
// float rounding of its decision threshold (a near-tie, told by the CPU's own soft
// value): the two backends' FFTs and equalisers round differently. Of 625 000 bits a
// grid, near-ties are rare (one seen in a grid); any other differing bit fails.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include "gpu_guard.hpp"
#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <iostream>
#include <tuple>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
namespace tr = whd::transport;
using whd::datatype;

constexpr std::array<double, 5> CFOS_Hz = {0.0, 1e6, -1e6, 2e6, -2e6};
constexpr std::array<int, 3> TAPS = {1, 4, 16};

/// Differing payload bits (`a`, `b` of one size) split into near-ties and the rest. A
/// near-tie is a bit whose soft value on the CPU (`llr`: f32 LLRs, one per payload bit,
/// MSB first) is under 1e-3 of the median |LLR|: its equalised value lies within the backends' float
/// rounding (their FFTs and equalisers differ) of the decision threshold, so either
/// decision is right. Any other difference is a fault.
struct bit_differences {
  uint64_t ties = 0;
  uint64_t beyond_ties = 0;
};

bit_differences classify_differences(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const std::vector<uint8_t>& llr)
{
  bit_differences d;
  const std::size_t nbits = 8 * a.size();
  std::vector<float> mag(nbits);
  std::memcpy(mag.data(), llr.data(), llr.size());
  for (float& v : mag) {
    v = std::fabs(v);
  }
  std::vector<float> sorted = mag;
  std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(nbits / 2), sorted.end());
  const float tie = 1e-3f * sorted[nbits / 2];
  for (std::size_t i = 0; i < a.size(); ++i) {
    const unsigned x = unsigned(a[i] ^ b[i]);
    for (unsigned j = 0; j < 8; ++j) {
      if ((x & (0x80u >> j)) != 0) {
        ++(mag[8 * i + j] < tie ? d.ties : d.beyond_ties);
      }
    }
  }
  return d;
}

void expect_equal_reports(const bb::receive_result& g, const bb::receive_result& c, const std::string& what)
{
  ASSERT_EQ(g.frames.size(), c.frames.size()) << what;
  for (std::size_t i = 0; i < c.frames.size(); ++i) {
    EXPECT_EQ(g.frames[i].start, c.frames[i].start) << what;
    EXPECT_EQ(g.frames[i].mod, c.frames[i].mod) << what;
    EXPECT_EQ(g.frames[i].nd, c.frames[i].nd) << what;
    EXPECT_EQ(g.frames[i].seq, c.frames[i].seq) << what;
    EXPECT_EQ(g.frames[i].symbols, c.frames[i].symbols) << what;
    EXPECT_EQ(g.frames[i].truncated, c.frames[i].truncated) << what;
    EXPECT_EQ(g.frames[i].payload_offset, c.frames[i].payload_offset) << what;
  }
  ASSERT_EQ(g.header_failures.size(), c.header_failures.size()) << what;
  for (std::size_t i = 0; i < c.header_failures.size(); ++i) {
    EXPECT_EQ(g.header_failures[i].start, c.header_failures[i].start) << what;
  }
}

class gpu_loopback_grid : public ::testing::TestWithParam<std::tuple<p::modulation, datatype>> {};

TEST_P(gpu_loopback_grid, bits_and_report_equal_the_cpu_backend)
{
  WHD_REQUIRE_GPU();
  const auto [mod, type] = GetParam();
  const std::string tag = std::string(p::to_string(mod)) + "-" + std::string(whd::to_string(type));
  whd::test::temp_dir dir("gpu-" + tag);
  const uint64_t seed0 = 20'000 + 1000 * uint64_t(mod) + 100 * uint64_t(type);
  std::cout << tag << ": capture seeds " << seed0 << " .. " << seed0 + CFOS_Hz.size() * TAPS.size() - 1 << "\n";
  const int gpus = whd::cuda::device_count();
  uint64_t idx = 0, compared_bits = 0, differing = 0, ties = 0;
  for (double cfo : CFOS_Hz) {
    for (int taps : TAPS) {
      bb::capture_config cfg;
      cfg.mods = {mod};
      cfg.nds = {uint32_t(3 + idx % 4), 23}; // the second frame spans several batches
      cfg.nof_frames = 3;
      cfg.lead_samples = 300 + 53 * idx;
      cfg.gap_samples = 50 * (idx % 3); // back-to-back frames too
      cfg.cut_samples = idx % 4 == 3 ? 2000 : 0; // and a truncated last frame
      cfg.seed = seed0 + idx;
      cfg.impairments.snr_dB = 30.0;
      cfg.impairments.cfo_Hz = cfo;
      cfg.impairments.nof_taps = taps;
      cfg.impairments.random_phase = true;
      bb::output_config out;
      out.base = dir.path() / ("cap" + std::to_string(idx));
      out.type = type;
      const auto written = bb::write_capture(cfg, out);
      const std::string what = tag + " seed " + std::to_string(cfg.seed) + ", cfo " + std::to_string(cfo) + " Hz, " +
                               std::to_string(taps) + " taps";
      tr::capture_reader reader(tr::open_capture(written.meta_path));
      bb::rx_config rc;
      bb::rx_config rc_soft = rc; // the reference's soft values tell near-ties
      bb::memory_sink llr;
      rc_soft.llr = {&llr, bb::llr_format::f32, 1.0f};
      const auto ref = whd::test::run_receiver(*bb::make_cpu_receiver(rc_soft), reader);
      ASSERT_FALSE(ref.result.frames.empty()) << what;
      for (int n = 1; n <= std::min(gpus, 2); ++n) {
        bb::gpu_config g;
        g.link = tr::link_format::f32;
        g.symbols_per_batch = 5 + idx % 3;
        g.nof_gpus = n;
        g.start = bb::gpu_start::at_once; // the second GPU decodes from the first chunk on
        const auto got = whd::test::run_receiver(*bb::make_gpu_receiver(rc, g), reader);
        const std::string on = what + " on " + std::to_string(n) + " GPU(s)";
        expect_equal_reports(got.result, ref.result, on);
        ASSERT_EQ(got.payload.size(), ref.payload.size()) << on;
        ASSERT_EQ(llr.bytes().size(), 4 * 8 * ref.payload.size()) << on; // an f32 soft value a payload bit
        const auto d = classify_differences(got.payload, ref.payload, llr.bytes());
        EXPECT_EQ(d.beyond_ties, 0u) << on;
        EXPECT_LE(d.ties, 2u) << on; // rare: more would mean the backends' arithmetic drifted apart
        differing += d.ties + d.beyond_ties;
        ties += d.ties;
        compared_bits += 8 * ref.payload.size();
      }
      ++idx;
    }
  }
  std::cout << tag << ": " << differing << " differing bits in " << compared_bits << " compared, " << ties << " of them near-ties\n";
}

INSTANTIATE_TEST_SUITE_P(mod_x_datatype, gpu_loopback_grid, whd::test::mod_x_datatype_values(), whd::test::mod_x_datatype_name);

} // namespace
