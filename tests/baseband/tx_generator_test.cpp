// The capture generator and its files: the conformance captures regenerated whole
// from their sidecars, their layouts reproduced, and captures written to disk
// checked by an ideal demodulator (exact timing, written from the profile) and by
// the project's receiver.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/modulator.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>

#include "test_env.hpp"
#include "tx_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <fstream>
#include <iostream>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;
using whd::datatype;
using whd::test::vector_file;

/// The layout of the conformance captures: lead 1000, gap and tail 777.
bb::capture_config vectors_layout(std::vector<p::modulation> mods, uint32_t nd, uint64_t frames)
{
  bb::capture_config cfg;
  cfg.mods = std::move(mods);
  cfg.nds = {nd};
  cfg.nof_frames = frames;
  cfg.lead_samples = 1000;
  cfg.gap_samples = 777;
  return cfg;
}

void expect_frames_equal(const std::vector<bb::frame_record>& got, const std::vector<whd::test::listed_frame>& want,
                         const std::string& what)
{
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].start, want[i].start) << what << " frame " << i;
    EXPECT_EQ(got[i].nd, want[i].nd) << what << " frame " << i;
    EXPECT_EQ(got[i].mod, want[i].mod) << what << " frame " << i;
    EXPECT_EQ(got[i].seq, want[i].seq) << what << " frame " << i;
    EXPECT_EQ(got[i].header_ok, want[i].header_ok) << what << " frame " << i;
  }
}

TEST(tx_generator, regenerates_the_clean_conformance_captures_whole)
{
  struct vec {
    std::string name;
    p::modulation mod;
    double max_residual; // relative, after one fitted gain
  };
  for (const auto& v : {vec{"basic_qpsk_cf32", p::modulation::qpsk, 1e-5}, vec{"basic_qam16_ci16", p::modulation::qam16, 2e-4}}) {
    auto cfg = vectors_layout({v.mod}, 8, 2);
    cfg.payload_path = vector_file(v.name + ".truth");
    bb::memory_capture cap;
    bb::generate_capture(cfg, cap);
    const auto theirs = whd::test::read_samples(vector_file(v.name + ".sigmf-meta"));
    ASSERT_EQ(cap.samples().size(), theirs.size()) << v.name;
    expect_frames_equal(cap.frames(), whd::test::read_frames_json(vector_file(v.name + ".frames.json")), v.name);
    EXPECT_EQ(cap.truth(), whd::test::read_file_bytes(vector_file(v.name + ".truth"))) << v.name;
    // One gain for the whole capture, silence included.
    std::complex<double> cross;
    double e_ours = 0, e_theirs = 0;
    for (std::size_t n = 0; n < theirs.size(); ++n) {
      cross += std::conj(std::complex<double>(cap.samples()[n])) * std::complex<double>(theirs[n]);
      e_ours += std::norm(std::complex<double>(cap.samples()[n]));
      e_theirs += std::norm(std::complex<double>(theirs[n]));
    }
    const auto g = cross / e_ours;
    double e_res = 0, worst = 0;
    std::size_t worst_n = 0;
    for (std::size_t n = 0; n < theirs.size(); ++n) {
      const double e = std::abs(std::complex<double>(theirs[n]) - g * std::complex<double>(cap.samples()[n]));
      e_res += e * e;
      if (e > worst) {
        worst = e;
        worst_n = n;
      }
    }
    const double residual = std::sqrt(e_res / e_theirs);
    std::cout << v.name << ": whole capture residual " << residual << ", worst " << worst / std::abs(g)
              << " (signal units) at sample " << worst_n << ", gain " << g << "\n";
    EXPECT_LT(residual, v.max_residual) << v.name;
  }
}

TEST(tx_generator, reproduces_the_layout_of_every_conformance_capture)
{
  struct vec {
    std::string name;
    bb::capture_config cfg;
  };
  std::vector<vec> vecs;
  {
    auto c = vectors_layout({p::modulation::qam16}, 6, 3);
    c.corrupt_header_frames = {1};
    vecs.push_back({"header_crc_fail_cf32", c});
  }
  {
    auto c = vectors_layout({p::modulation::qam16}, 10, 2);
    c.cut_samples = 3000;
    vecs.push_back({"truncated_ci16", c});
  }
  vecs.push_back({"impaired_mixed_ci8", vectors_layout({p::modulation::qpsk, p::modulation::qam16}, 20, 3)});
  {
    auto c = vectors_layout({p::modulation::qpsk}, 1, 0);
    c.lead_samples = 200000;
    c.tail_samples = 0;
    vecs.push_back({"noise_only_ci8", c});
  }
  for (const auto& v : vecs) {
    const auto plan = bb::plan_capture(v.cfg);
    const auto info = whd::transport::open_capture(vector_file(v.name + ".sigmf-meta"));
    EXPECT_EQ(plan.nof_samples, info.nof_samples) << v.name;
    expect_frames_equal(plan.frames, whd::test::read_frames_json(vector_file(v.name + ".frames.json")), v.name);
    EXPECT_EQ(plan.truth_bytes, std::filesystem::file_size(vector_file(v.name + ".truth"))) << v.name;
  }
}

TEST(tx_generator, cut_off_frames_keep_their_whole_truth)
{
  auto cfg = vectors_layout({p::modulation::qam16}, 10, 3);
  // Frame 2 starts at 1000 + 2 (7488 + 777) = 17530; cut inside its header, frame 1
  // inside its data.
  const uint64_t uncut = 1000 + 3 * 7488 + 3 * 777;
  cfg.cut_samples = uncut - (17530 + 2 * 576 + 100);
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  ASSERT_EQ(cap.frames().size(), 2u) << "the frame whose header is cut is not listed";
  EXPECT_EQ(plan.nof_frames_dropped, 1u);
  EXPECT_EQ(cap.frames()[1].samples_present, 7488u);
  EXPECT_EQ(cap.truth().size(), 2u * 10 * 168);
  cfg.cut_samples = uncut - (9265 + 5 * 576 + 10);
  bb::memory_capture cut;
  bb::generate_capture(cfg, cut);
  ASSERT_EQ(cut.frames().size(), 2u);
  EXPECT_EQ(cut.frames()[1].samples_present, 5u * 576 + 10);
  EXPECT_EQ(cut.truth().size(), 2u * 10 * 168) << "the truth holds the whole payload of a cut frame";
  // And the payload of the cut frame is what the uncut capture carries.
  EXPECT_TRUE(std::equal(cut.truth().begin(), cut.truth().end(), cap.truth().begin()));
  EXPECT_EQ(cut.samples().size(), 9265u + 5 * 576 + 10);
}

TEST(tx_generator, seq_wraps_and_lists_cycle)
{
  bb::capture_config cfg;
  cfg.nof_frames = 300;
  cfg.nds = {1, 2, 3};
  cfg.mods = {p::modulation::qam16, p::modulation::qpsk};
  cfg.first_seq = 250;
  const auto plan = bb::plan_capture(cfg);
  ASSERT_EQ(plan.frames.size(), 300u);
  for (std::size_t i = 0; i < 300; ++i) {
    EXPECT_EQ(plan.frames[i].seq, (250 + i) % 256);
    EXPECT_EQ(plan.frames[i].nd, 1 + i % 3);
    EXPECT_EQ(plan.frames[i].mod, i % 2 ? p::modulation::qpsk : p::modulation::qam16);
  }
}

TEST(tx_generator, seeded_and_file_payloads)
{
  bb::capture_config cfg;
  cfg.nof_frames = 3;
  cfg.nds = {2};
  cfg.impairments.snr_dB = 10.0;
  bb::memory_capture a, b, c;
  bb::generate_capture(cfg, a);
  bb::generate_capture(cfg, b);
  EXPECT_EQ(a.samples(), b.samples()) << "same seed, same capture";
  EXPECT_EQ(a.truth(), b.truth());
  cfg.seed = 2;
  bb::generate_capture(cfg, c);
  EXPECT_NE(a.truth(), c.truth());

  // A payload file is read in order and from its start again.
  const auto dir = whd::test::scratch_dir("payload");
  std::vector<uint8_t> bytes(100);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  }
  std::ofstream(dir / "p.bin", std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), 100);
  cfg.payload_path = dir / "p.bin";
  cfg.corrupt_header_frames = {1};
  bb::memory_capture d;
  bb::generate_capture(cfg, d);
  ASSERT_EQ(d.truth().size(), 2u * 2 * 84);
  // Frame 1 (corrupted) consumed bytes 168..335 of the stream; frame 2 carries 336..503.
  for (std::size_t i = 0; i < 168; ++i) {
    EXPECT_EQ(d.truth()[i], bytes[i % 100]);
    EXPECT_EQ(d.truth()[168 + i], bytes[(336 + i) % 100]);
  }
  cfg.payload_path = dir / "missing.bin";
  bb::memory_capture e;
  EXPECT_THROW(bb::generate_capture(cfg, e), std::runtime_error);
  std::filesystem::remove_all(dir);
}

TEST(tx_generator, rejects_bad_configurations)
{
  bb::capture_config cfg;
  cfg.nof_frames = 2;
  cfg.corrupt_header_frames = {2};
  EXPECT_THROW(bb::plan_capture(cfg), std::invalid_argument);
  cfg.corrupt_header_frames.clear();
  cfg.nds = {0};
  EXPECT_THROW(bb::plan_capture(cfg), std::invalid_argument);
  cfg.nds = {p::MAX_ND + 1};
  EXPECT_THROW(bb::plan_capture(cfg), std::invalid_argument);
  cfg.nds = {1};
  cfg.cut_samples = 1'000'000;
  EXPECT_THROW(bb::plan_capture(cfg), std::invalid_argument);
  cfg.cut_samples = 0;
  cfg.impairments.gain = 0.0;
  EXPECT_THROW(bb::plan_capture(cfg), std::invalid_argument);
}

// ---------------------------------------------------------------- files

/// Writes a capture and checks its files with the ideal demodulator: the frames
/// sit at the starts frames.json gives, .truth is the payload of the intact frames
/// and nothing else, corrupted headers fail the CRC.
void check_written_capture(datatype type, bool raw, std::vector<p::modulation> mods)
{
  const auto dir = whd::test::scratch_dir(std::string(whd::to_string(type)) + (raw ? "-raw" : "-sigmf"));
  bb::capture_config cfg;
  cfg.mods = std::move(mods);
  cfg.nds = {3, 5};
  cfg.nof_frames = 5;
  cfg.corrupt_header_frames = {1, 4};
  cfg.lead_samples = 321;
  cfg.gap_samples = 50;
  cfg.seed = 11;
  bb::output_config out;
  out.base = dir / "cap";
  out.type = type;
  out.raw = raw;
  const auto summary = bb::write_capture(cfg, out);
  const std::string what = std::string(whd::to_string(type)) + (raw ? " raw" : " sigmf");
  EXPECT_EQ(summary.nof_clipped, 0u) << what;
  EXPECT_TRUE(std::filesystem::exists(raw ? dir / ("cap" + bb::raw_extension(type)) : dir / "cap.sigmf-meta")) << what;

  const auto samples = whd::test::read_samples(summary.data_path);
  ASSERT_EQ(samples.size(), summary.plan.nof_samples) << what;
  const auto frames = whd::test::read_frames_json(summary.frames_path);
  expect_frames_equal(summary.plan.frames, frames, what);
  const auto truth = whd::test::read_file_bytes(summary.truth_path);
  EXPECT_EQ(truth.size(), summary.nof_truth_bytes);

  // Back to signal units (integers are written scaled).
  std::vector<cf32> y(samples.size());
  for (std::size_t n = 0; n < y.size(); ++n) {
    y[n] = samples[n] / summary.scale;
  }
  const double tol = type == datatype::ci8 ? 0.05 : 1e-3; // quantisation step in signal units, and some
  std::vector<uint8_t> expected_truth;
  for (const auto& f : frames) {
    // Silence just before the frame, the preamble just after its start.
    EXPECT_EQ(samples[f.start - 1], cf32{}) << what << " frame at " << f.start;
    EXPECT_NE(samples[f.start], cf32{}) << what << " frame at " << f.start;
    const auto& pre = bb::preamble_time_symbol();
    double worst = 0.0;
    for (int s = 0; s < 2; ++s) {
      for (int n = 0; n < p::N; ++n) {
        const auto at = f.start + static_cast<uint64_t>(s * p::SYMBOL_LEN + p::G + n);
        worst = std::max(worst, static_cast<double>(std::abs(y[at] - pre[static_cast<std::size_t>(n)])));
      }
    }
    EXPECT_LT(worst, tol) << what << " preamble at " << f.start;
    p::header_fields hf;
    const auto status = p::parse_header(
        whd::test::decide_header(whd::test::tones_at(y, f.start + 2 * static_cast<uint64_t>(p::SYMBOL_LEN))), hf);
    if (!f.header_ok) {
      EXPECT_EQ(status, p::header_status::crc) << what << " corrupted frame at " << f.start;
      continue;
    }
    ASSERT_EQ(status, p::header_status::ok) << what << " frame at " << f.start;
    EXPECT_EQ(hf.nd, f.nd);
    EXPECT_EQ(hf.seq, f.seq);
    EXPECT_EQ(hf.mod_field, static_cast<uint8_t>(f.mod));
    const auto bytes = whd::test::demodulate_frame(y, f.start, f.mod, f.nd);
    expected_truth.insert(expected_truth.end(), bytes.begin(), bytes.end());
  }
  EXPECT_EQ(truth, expected_truth) << what << ": .truth is the payload of the intact frames, bit for bit";
  std::filesystem::remove_all(dir);
}

TEST(tx_files, every_datatype_and_modulation_demodulates_to_the_truth)
{
  for (auto type : {datatype::cf32_le, datatype::ci16_le, datatype::ci8}) {
    for (bool raw : {false, true}) {
      check_written_capture(type, raw, {p::modulation::qpsk, p::modulation::qam16});
    }
  }
  check_written_capture(datatype::ci8, false, {p::modulation::qam16});
}

TEST(tx_files, a_base_with_a_capture_extension_names_the_same_capture)
{
  const auto dir = whd::test::scratch_dir("ext");
  bb::capture_config cfg;
  cfg.nof_frames = 1;
  bb::output_config out;
  out.base = dir / "a.sigmf-meta";
  const auto s = bb::write_capture(cfg, out);
  EXPECT_EQ(s.data_path, dir / "a.sigmf-data");
  EXPECT_EQ(s.truth_path, dir / "a.truth");
  EXPECT_TRUE(std::filesystem::exists(dir / "a.sigmf-meta"));
  out.base = dir / "b.ci16";
  out.type = datatype::ci16_le;
  out.raw = true;
  const auto r = bb::write_capture(cfg, out);
  EXPECT_EQ(r.data_path, dir / "b.ci16");
  EXPECT_EQ(r.frames_path, dir / "b.frames.json");
  std::filesystem::remove_all(dir);
}

TEST(tx_files, integer_outputs_use_the_range_without_clipping)
{
  for (auto type : {datatype::ci16_le, datatype::ci8}) {
    for (std::optional<double> snr : {std::optional<double>{}, std::optional<double>{3.0}, std::optional<double>{25.0}}) {
      const auto dir = whd::test::scratch_dir("range");
      bb::capture_config cfg;
      cfg.mods = {p::modulation::qam16, p::modulation::qpsk};
      cfg.nds = {50};
      cfg.nof_frames = 40;
      cfg.impairments.snr_dB = snr;
      cfg.impairments.nof_taps = 4;
      cfg.impairments.gain = 0.01;
      cfg.impairments.random_phase = true;
      bb::output_config out;
      out.base = dir / "cap";
      out.type = type;
      const auto summary = bb::write_capture(cfg, out);
      const double full = bb::integer_full_scale(type);
      const auto samples = whd::test::read_samples(summary.data_path);
      float peak = 0.0f;
      for (auto v : samples) {
        peak = std::max({peak, std::abs(v.real()), std::abs(v.imag())});
      }
      std::cout << whd::to_string(type) << " SNR " << (snr ? std::to_string(*snr) : "none") << ": peak " << peak
                << " of " << full << ", scale " << summary.scale << "\n";
      EXPECT_EQ(summary.nof_clipped, 0u);
      EXPECT_LT(peak, full) << "nothing reaches full scale";
      EXPECT_GT(peak, 0.4 * full) << "the range is used";
      EXPECT_NEAR(peak, std::round(summary.peak), 1.0);
      std::filesystem::remove_all(dir);
    }
  }
}

TEST(tx_files, project_receiver_decodes_impaired_captures_of_every_datatype)
{
  for (auto type : {datatype::cf32_le, datatype::ci16_le, datatype::ci8}) {
    const auto dir = whd::test::scratch_dir(std::string("rx-") + std::string(whd::to_string(type)));
    bb::capture_config cfg;
    cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
    cfg.nds = {12};
    cfg.nof_frames = 4;
    cfg.corrupt_header_frames = {2};
    cfg.seed = 21;
    // 40 dB: ci8's quantisation (full scale at 7 sigma) is noise of its own at about
    // 36 dB, and this 3-tap channel's weakest 16-QAM tones need the margin.
    cfg.impairments.snr_dB = 40.0;
    cfg.impairments.cfo_Hz = 500e3;
    cfg.impairments.nof_taps = 3;
    cfg.impairments.gain = 0.5;
    cfg.impairments.random_phase = true;
    bb::output_config out;
    out.base = dir / "cap";
    out.type = type;
    const auto summary = bb::write_capture(cfg, out);
    whd::transport::capture_reader reader(whd::transport::open_capture(summary.data_path));
    bb::rx_config rc;
    rc.nof_threads = 1;
    auto rx = bb::make_cpu_receiver(rc);
    bb::memory_sink sink;
    const auto res = rx->run(reader, sink);
    EXPECT_EQ(sink.bytes(), whd::test::read_file_bytes(summary.truth_path)) << whd::to_string(type);
    EXPECT_EQ(res.frames.size(), 3u) << whd::to_string(type);
    EXPECT_EQ(res.header_failures.size(), 1u) << whd::to_string(type);
    std::filesystem::remove_all(dir);
  }
}

} // namespace
