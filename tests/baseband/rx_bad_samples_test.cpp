// Samples a receiver should not trust: NaN and infinities in a cf32 capture, and
// integer captures clipped at their full scale. Non-finite samples are taken as 0
// where they lie, counted against the frame whose FFT windows hold them, and cost
// nothing elsewhere (one NaN must not poison the detector's running sums over the
// rest of its block). Clipping costs SNR, never frames or the payload's layout.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/transport/capture.hpp>

#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;

constexpr auto L = uint64_t(p::SYMBOL_LEN);
constexpr float NAN_F = std::numeric_limits<float>::quiet_NaN();
constexpr float INF_F = std::numeric_limits<float>::infinity();

bb::rx_config two_threads()
{
  bb::rx_config rc;
  rc.nof_threads = 2;
  return rc;
}

/// Five frames at 30 dB with a CFO and a random phase: each decodes without error.
bb::capture_config clean(uint64_t seed)
{
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qam16, p::modulation::qpsk};
  cfg.nds = {6, 9};
  cfg.nof_frames = 5;
  cfg.gap_samples = 3000;
  cfg.seed = seed;
  cfg.impairments.snr_dB = 30.0;
  cfg.impairments.cfo_Hz = 1.1e6;
  cfg.impairments.random_phase = true;
  return cfg;
}

/// First sample of the FFT window of symbol m of a frame sent at `start` (flat channel).
uint64_t window(uint64_t start, uint64_t m, const bb::rx_config& rc)
{
  return start + m * L + uint64_t(p::G - rc.timing_backoff);
}

TEST(rx_bad_samples, zero_non_finite_replaces_and_counts)
{
  std::vector<cf32> x{{1, 2}, {NAN_F, 0}, {0, -INF_F}, {INF_F, NAN_F}, {3e38f, -3e38f}, {-0.0f, 1e-45f}};
  EXPECT_EQ(bb::zero_non_finite(x), 3u);
  const std::vector<cf32> want{{1, 2}, {0, 0}, {0, 0}, {0, 0}, {3e38f, -3e38f}, {-0.0f, 1e-45f}};
  EXPECT_EQ(x, want);
  EXPECT_EQ(bb::zero_non_finite(x), 0u);
}

TEST(rx_bad_samples, nan_outside_every_frame_changes_nothing)
{
  // Before the detector took non-finite samples as 0, one NaN made the metric of
  // every position of its 65536-position block NaN, and the frames there unseen.
  const auto cfg = clean(901);
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  auto x = cap.samples();
  const auto& fr = plan.frames;
  x[5] = cf32(NAN_F, NAN_F);          // lead
  x[fr[0].start - 30] = cf32(INF_F, 0); // just before the first preamble
  for (std::size_t i = 1; i < fr.size(); ++i) {
    // A burst in each gap, ending 100 samples before the next frame.
    for (uint64_t k = fr[i].start - 600; k < fr[i].start - 100; ++k) {
      x[k] = cf32(i % 2 ? NAN_F : -INF_F, 0.5f);
    }
  }
  const whd::transport::memory_source src(std::move(x));
  const auto out = whd::test::run_cpu_receiver(src, two_threads());
  const auto errors = whd::test::check_against_plan(plan, cap.truth(), out, "NaN and Inf between frames", 1, 1);
  EXPECT_EQ(errors.errors, 0u);
  for (const auto& f : out.result.frames) {
    EXPECT_EQ(f.bad_samples, 0u) << "frame at " << f.start;
    EXPECT_TRUE(f.bad_symbols.empty()) << "frame at " << f.start;
  }
}

TEST(rx_bad_samples, nan_in_data_windows_marks_those_symbols_only)
{
  const auto rc = two_threads();
  const auto cfg = clean(902);
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  auto x = cap.samples();
  const auto& fr = plan.frames;
  ASSERT_EQ(fr.size(), 5u);
  // Frame 1 (QPSK, 9 symbols): one NaN in data symbol 0, and symbols 4..6 wholly
  // NaN, guards included. Frame 3: one +Inf in Q in its last data symbol.
  x[window(fr[1].start, 3, rc) + 7] = cf32(NAN_F, 0);
  for (uint64_t k = fr[1].start + 7 * L; k < fr[1].start + 10 * L; ++k) {
    x[k] = cf32(NAN_F, NAN_F);
  }
  x[window(fr[3].start, 3 + 8, rc) + 300] = cf32(0.25f, INF_F);
  const whd::transport::memory_source src(std::move(x));
  const auto out = whd::test::run_cpu_receiver(src, rc);
  const auto& res = out.result;
  ASSERT_EQ(res.frames.size(), 5u);
  EXPECT_TRUE(res.header_failures.empty());
  // Every frame is listed whole; the payload keeps its layout (whole symbols).
  const auto bps = [](const bb::frame_result& f) { return uint64_t(p::bytes_per_symbol(f.mod)); };
  uint64_t truth_pos = 0;
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& f = res.frames[i];
    EXPECT_EQ(f.symbols, fr[i].nd) << i;
    EXPECT_EQ(f.payload_bytes, f.symbols * bps(f)) << i;
    // Bytes outside the marked symbols are the truth, bit for bit.
    for (uint32_t d = 0; d < f.symbols; ++d) {
      const bool marked = std::any_of(f.bad_symbols.begin(), f.bad_symbols.end(),
                                      [&](const bb::symbol_run& r) { return d >= r.first && d < r.first + r.count; });
      if (marked && i == 1 && d >= 4) {
        continue; // wholly NaN: nothing to decode
      }
      const auto at = f.payload_offset + d * bps(f);
      EXPECT_TRUE(std::equal(out.payload.begin() + std::ptrdiff_t(at), out.payload.begin() + std::ptrdiff_t(at + bps(f)),
                             cap.truth().begin() + std::ptrdiff_t(truth_pos + d * bps(f))))
          << "frame " << i << " data symbol " << d << (marked ? " (one sample taken as 0)" : "");
    }
    truth_pos += f.symbols * bps(f);
  }
  EXPECT_EQ(res.frames[1].bad_samples, 1u + 3 * p::N);
  EXPECT_EQ(res.frames[1].bad_symbols, (std::vector<bb::symbol_run>{{0, 1}, {4, 3}}));
  EXPECT_EQ(res.frames[3].bad_samples, 1u);
  EXPECT_EQ(res.frames[3].bad_symbols, (std::vector<bb::symbol_run>{{8, 1}}));
  for (const std::size_t i : {0, 2, 4}) {
    EXPECT_EQ(res.frames[i].bad_samples, 0u) << i;
    EXPECT_TRUE(res.frames[i].bad_symbols.empty()) << i;
  }
}

TEST(rx_bad_samples, nan_in_a_preamble_or_header_marks_the_frame_or_its_failure)
{
  const auto rc = two_threads();
  const auto cfg = clean(903);
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  auto x = cap.samples();
  const auto& fr = plan.frames;
  // Frame 1: 40 NaN in preamble symbol 1's window. Its header still decodes (CRC
  // checked), so it is accepted, marked.
  for (uint64_t k = 0; k < 40; ++k) {
    x[window(fr[1].start, 1, rc) + 200 + k] = cf32(NAN_F, 1.0f);
  }
  // Frame 2: the whole header symbol NaN: nothing to decide, the CRC fails; the
  // failure says why. Its data symbols are then searched like any samples.
  for (uint64_t k = fr[2].start + 2 * L; k < fr[2].start + 3 * L; ++k) {
    x[k] = cf32(-INF_F, NAN_F);
  }
  // Frame 4: the whole frame NaN. Zeros hold no preamble: not a frame.
  for (uint64_t k = fr[4].start; k < fr[4].start + bb::frame_samples(fr[4].nd); ++k) {
    x[k] = cf32(NAN_F, NAN_F);
  }
  const whd::transport::memory_source src(std::move(x));
  const auto out = whd::test::run_cpu_receiver(src, rc);
  const auto& res = out.result;
  ASSERT_EQ(res.frames.size(), 3u);
  EXPECT_EQ(res.frames[0].bad_samples, 0u);
  EXPECT_NEAR(double(res.frames[1].start), double(fr[1].start), 1.0);
  EXPECT_EQ(res.frames[1].bad_samples, 40u);
  EXPECT_TRUE(res.frames[1].bad_symbols.empty()) << "no data window held any";
  EXPECT_EQ(res.frames[1].nd, fr[1].nd);
  EXPECT_EQ(res.frames[1].seq, fr[1].seq);
  EXPECT_NEAR(double(res.frames[2].start), double(fr[3].start), 1.0);
  EXPECT_EQ(res.frames[2].bad_samples, 0u);
  ASSERT_EQ(res.header_failures.size(), 1u);
  EXPECT_NEAR(double(res.header_failures[0].start), double(fr[2].start), 1.0);
  EXPECT_EQ(res.header_failures[0].reason, p::header_status::crc);
  EXPECT_EQ(res.header_failures[0].bad_samples, uint64_t(p::N));
  EXPECT_EQ(out.payload.size(), res.payload_bytes);
}

TEST(rx_bad_samples, a_capture_of_nan_gives_nothing)
{
  const whd::transport::memory_source src(std::vector<cf32>(300000, cf32(NAN_F, -INF_F)));
  const auto out = whd::test::run_cpu_receiver(src, two_threads());
  EXPECT_TRUE(out.result.frames.empty());
  EXPECT_TRUE(out.result.header_failures.empty());
  EXPECT_FALSE(out.result.interrupted);
}

/// What clipping at `clip` times the RMS of I and Q does to an integer capture of
/// `cfg`: the fraction of components clipped, and the receiver's bit errors.
struct clip_outcome {
  double clipped = 0.0;
  whd::test::bit_count bits;
  std::size_t frames = 0;
};

clip_outcome clip_and_decode(const bb::capture_config& cfg, whd::datatype type, double clip, const std::string& what)
{
  const whd::test::temp_dir dir("clip");
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  const double sigma = std::sqrt((plan.signal_power + plan.noise_power) / 2.0);
  const auto scale = float(bb::integer_full_scale(type) / (clip * sigma));
  {
    whd::transport::sigmf_writer w(dir.path() / "clipped", type, p::SAMPLE_RATE_SPS, "");
    w.write(cap.samples(), scale);
    w.close();
  }
  const whd::transport::capture_reader reader(whd::transport::open_capture(dir.path() / "clipped.sigmf-meta"));
  std::vector<cf32> y(reader.size());
  EXPECT_EQ(reader.read(0, y), y.size());
  const auto fs = float(bb::integer_full_scale(type));
  uint64_t nof_clipped = 0, nof_frame_components = 0;
  for (const auto& f : plan.frames) {
    for (uint64_t k = f.start; k < f.start + f.samples_present; ++k) {
      nof_clipped += (std::abs(y[k].real()) >= fs ? 1 : 0) + (std::abs(y[k].imag()) >= fs ? 1 : 0);
      nof_frame_components += 2;
    }
  }
  clip_outcome o;
  o.clipped = double(nof_clipped) / double(nof_frame_components);
  bb::rx_config rc = two_threads();
  const auto out = whd::test::run_cpu_receiver(reader, rc);
  o.frames = out.result.frames.size();
  // The payload's layout holds whatever the bits: whole symbols, contiguous offsets.
  uint64_t offset = 0;
  for (const auto& f : out.result.frames) {
    EXPECT_EQ(f.payload_offset, offset) << what;
    EXPECT_EQ(f.payload_bytes, uint64_t(f.symbols) * uint64_t(p::bytes_per_symbol(f.mod))) << what;
    EXPECT_EQ(f.bad_samples, 0u) << what << ": integers are never non-finite";
    offset += f.payload_bytes;
  }
  EXPECT_EQ(out.payload.size(), offset) << what;
  if (o.frames == plan.frames.size() && out.result.header_failures.empty()) {
    o.bits = whd::test::check_against_plan(plan, cap.truth(), out, what, 1, 1);
  }
  std::cout << what << ": " << 100.0 * o.clipped << "% of I/Q clipped, " << o.frames << " of " << plan.frames.size()
            << " frames, " << out.result.header_failures.size() << " header failures, BER " << o.bits.ber() << " ("
            << o.bits.errors << " of " << o.bits.bits << ")\n";
  return o;
}

TEST(rx_bad_samples, clipped_integer_captures_decode_or_degrade_gracefully)
{
  for (const auto type : {whd::datatype::ci16_le, whd::datatype::ci8}) {
    const std::string t(whd::to_string(type));
    bb::capture_config cfg = clean(904);
    cfg.nds = {40, 30};
    // Clipped at 2.5 RMS (1% of components; the clipping noise is about 27 dB
    // below the signal): every frame, every bit.
    auto o = clip_and_decode(cfg, type, 2.5, t + " clipped at 2.5 RMS");
    EXPECT_GT(o.clipped, 0.005);
    EXPECT_EQ(o.frames, 5u);
    EXPECT_EQ(o.bits.errors, 0u);
    // Clipped at 1 RMS (a third of components; about 9 dB signal to clipping
    // noise): every frame is found and its header read; QPSK and 16-QAM bits suffer.
    o = clip_and_decode(cfg, type, 1.0, t + " clipped at 1 RMS");
    EXPECT_GT(o.clipped, 0.25);
    EXPECT_EQ(o.frames, 5u);
    EXPECT_GT(o.bits.bits, 0u);
    EXPECT_LT(o.bits.ber(), 0.05);
    // Hard-limited (every component at +-full scale: 1-bit I and Q): frames are
    // still found; the bits are what they are, the layout is whole.
    o = clip_and_decode(cfg, type, 1e-3, t + " hard-limited");
    EXPECT_GT(o.clipped, 0.99);
    EXPECT_EQ(o.frames, 5u);
  }
}

} // namespace
