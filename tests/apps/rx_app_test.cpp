// whd-rx as a user runs it on bad input: each unusable capture ends with exit
// status 1 and one message that names the file and the problem, and writes
// nothing; captures that are usable but odd (all zeros, NaN samples, a header
// announcing more symbols than the file holds, a meta annotating samples the data
// lacks, frames at both ends and back to back) exit 0 with a report and a payload
// that agree with each other and with the truth.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/modulator.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/transport/capture.hpp>

#include "app_runner.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
namespace fs = std::filesystem;
using json = nlohmann::json;
using whd::test::app_result;
using whd::test::run_app;
using whd::cf32;

constexpr auto L = uint64_t(p::SYMBOL_LEN);

/// 'text', as the messages quote file names (appended: GCC 12 warns falsely on "'" + s).
std::string quoted(const std::string& text)
{
  std::string q;
  q.reserve(text.size() + 2);
  q.append(1, '\'').append(text).append(1, '\'');
  return q;
}

app_result rx(const std::vector<std::string>& args, const fs::path& dir)
{
  std::vector<std::string> a{"--backend", "cpu", "--threads", "2"};
  a.insert(a.end(), args.begin(), args.end());
  auto r = run_app(WHD_RX_PATH, a, dir);
  EXPECT_FALSE(whd::test::sanitizer_report(r)) << r.what;
  return r;
}

void write_file(const fs::path& path, const std::string& bytes)
{
  std::ofstream f(path, std::ios::binary);
  f << bytes;
  ASSERT_TRUE(f.good()) << path;
}

void write_samples(const fs::path& path, const std::vector<cf32>& x)
{
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(x.data()), std::streamsize(x.size() * sizeof(cf32)));
  ASSERT_TRUE(f.good()) << path;
}

/// Expect exit status 1, one error naming `file` and containing every one of
/// `phrases`, and no output file created.
void expect_unusable(const fs::path& capture, const fs::path& named, const std::vector<std::string>& phrases,
                     const whd::test::scratch& dir, const std::vector<std::string>& extra = {})
{
  std::vector<std::string> args{capture.string(), "-o", (dir / "out.bin").string(), "--report", (dir / "out.json").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = rx(args, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.what;
  EXPECT_NE(r.err.find(quoted(named.string())), std::string::npos) << "the message names " << named << "\n" << r.what;
  for (const auto& phrase : phrases) {
    EXPECT_NE(r.err.find(phrase), std::string::npos) << "the message says '" << phrase << "'\n" << r.what;
  }
  EXPECT_NE(r.err.find("error"), std::string::npos) << r.what;
  EXPECT_FALSE(fs::exists(dir / "out.bin")) << "no payload written for an unusable capture\n" << r.what;
  EXPECT_FALSE(fs::exists(dir / "out.json")) << "no report written for an unusable capture\n" << r.what;
  EXPECT_TRUE(r.out.empty()) << r.what;
}

/// A decoded run's report, checked for the invariants every report has: frames in
/// capture order, payload offsets contiguous, the payload file exactly their bytes.
json decoded_report(const app_result& r, const fs::path& report, const fs::path& payload)
{
  EXPECT_EQ(r.exit_code, 0) << r.what;
  json j;
  try {
    j = json::parse(whd::test::read_text(report));
  } catch (const json::exception& e) {
    ADD_FAILURE() << "the report is not JSON: " << e.what() << "\n" << r.what;
    return j;
  }
  uint64_t offset = 0, last_start = 0;
  for (const auto& f : j["frames"]) {
    EXPECT_GE(f["start"].get<uint64_t>(), last_start) << r.what;
    last_start = f["start"].get<uint64_t>();
    EXPECT_EQ(f["payload_offset"].get<uint64_t>(), offset) << r.what;
    EXPECT_EQ(f["payload_bytes"].get<uint64_t>(),
              f["symbols"].get<uint64_t>() * uint64_t(p::bytes_per_symbol(f["mod"] == "qpsk" ? p::modulation::qpsk
                                                                                               : p::modulation::qam16)))
        << r.what;
    offset += f["payload_bytes"].get<uint64_t>();
  }
  EXPECT_EQ(j["payload_bytes"].get<uint64_t>(), offset) << r.what;
  EXPECT_EQ(fs::file_size(payload), offset) << "payload file size / the report's payload bytes\n" << r.what;
  return j;
}

/// A clean capture written by the generator: 30 dB, CFO, flat channel.
bb::output_summary generated(const fs::path& base, whd::datatype type, uint64_t seed, bool raw = false,
                             bb::capture_config cfg = {})
{
  cfg.seed = seed;
  if (!cfg.impairments.snr_dB) {
    cfg.impairments.snr_dB = 30.0;
  }
  cfg.impairments.cfo_Hz = 0.9e6;
  bb::output_config out;
  out.base = base;
  out.type = type;
  out.raw = raw;
  std::cout << "capture " << base.filename() << ": seed " << seed << "\n";
  return bb::write_capture(cfg, out);
}

TEST(rx_app, help_exits_0_and_documents_the_exit_statuses)
{
  const whd::test::scratch dir("help");
  const auto r = run_app(WHD_RX_PATH, {"--help"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.what;
  for (const char* s : {"Exit status", "0 ", "1 ", "2 ", "128+SIG", "SIGINT", "interrupted", "NaN", "bad_samples"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << "--help does not mention '" << s << "'";
  }
}

TEST(rx_app, usage_errors_exit_2)
{
  const whd::test::scratch dir("usage");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{}, {"x.cf32", "--backend", "fpga"}, {"x.cf32", "--format", "ci32"}, {"x.cf32", "--bogus"},
        {"x.cf32", "--payload-write", "mmap"}}) {
    const auto r = run_app(WHD_RX_PATH, args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << r.what;
    EXPECT_NE(r.err.find("whd-rx --help"), std::string::npos) << r.what;
  }
}

TEST(rx_app, missing_files_exit_1_naming_them)
{
  const whd::test::scratch dir("missing");
  expect_unusable(dir / "nothing.cf32", dir / "nothing.cf32", {"does not exist"}, dir);
  expect_unusable(dir / "nothing.sigmf-meta", dir / "nothing.sigmf-meta", {"does not exist"}, dir);
  // A meta without its data file.
  write_file(dir / "lonely.sigmf-meta", R"({"global": {"core:datatype": "cf32_le"}})");
  expect_unusable(dir / "lonely.sigmf-meta", dir / "lonely.sigmf-data", {"does not exist"}, dir);
  // A data file without its meta.
  write_file(dir / "bare.sigmf-data", std::string(8 * L, '\0'));
  expect_unusable(dir / "bare.sigmf-data", dir / "bare.sigmf-meta", {"does not exist"}, dir);
}

TEST(rx_app, bad_meta_exits_1_naming_the_meta_and_the_problem)
{
  const whd::test::scratch dir("meta");
  const std::string data(8 * 2 * L, '\0');
  auto recording = [&](const std::string& name, const std::string& meta) {
    write_file(dir / (name + ".sigmf-meta"), meta);
    write_file(dir / (name + ".sigmf-data"), data);
    return dir / (name + ".sigmf-meta");
  };
  auto m = recording("notjson", "{\"global\": {\"core:datatype\": \"cf32_le\",}");
  expect_unusable(m, m, {"not valid JSON", "line 1"}, dir);
  m = recording("nodatatype", R"({"global": {"core:sample_rate": 1e6}})");
  expect_unusable(m, m, {"core:datatype"}, dir);
  m = recording("unsupported", R"({"global": {"core:datatype": "cu16_le"}})");
  expect_unusable(m, m, {"\"cu16_le\" is not supported", "cf32_le, ci16_le, ci8"}, dir);
  // Valid JSON syntax the parser still refuses (found by the sigmf_meta fuzz target:
  // it escaped as a bare nlohmann exception, without the file's name).
  m = recording("overflow", R"({"global": {"core:datatype": "cf32_le", "core:sample_rate": 11e308}})");
  expect_unusable(m, m, {"cannot be read", "number overflow"}, dir);
  // A sample rate nested 200 000 arrays deep: its message once printed the value
  // by a recursion per level, which overflowed the stack (found by fuzzing).
  const std::string deep(200000, '['), shallow(200000, ']');
  m = recording("deep", R"({"global": {"core:datatype": "cf32_le", "core:sample_rate": )" + deep + shallow + "}}");
  expect_unusable(m, m, {"core:sample_rate\" is an array of 1 elements"}, dir);
  // The meta says 8-byte cf32 samples; the data holds 2 L + 1/2 of them.
  m = recording("disagrees", R"({"global": {"core:datatype": "cf32_le"}})");
  write_file(dir / "disagrees.sigmf-data", std::string(8 * 2 * L + 4, '\0'));
  expect_unusable(m, dir / "disagrees.sigmf-data", {"not a whole number of 8-byte cf32_le samples"}, dir);
  // The format option against the meta.
  m = recording("formatted", R"({"global": {"core:datatype": "ci16_le"}})");
  expect_unusable(m, m, {"disagrees with the meta"}, dir, {"--format", "ci8"});
}

TEST(rx_app, empty_short_and_partial_data_exit_1)
{
  const whd::test::scratch dir("size");
  write_file(dir / "empty.ci16", "");
  expect_unusable(dir / "empty.ci16", dir / "empty.ci16", {"is empty", "no samples"}, dir);
  write_file(dir / "empty.sigmf-meta", R"({"global": {"core:datatype": "ci8"}})");
  write_file(dir / "empty.sigmf-data", "");
  expect_unusable(dir / "empty.sigmf-meta", dir / "empty.sigmf-data", {"is empty"}, dir);
  write_file(dir / "short.ci8", std::string(2 * (L - 1), '\x05'));
  expect_unusable(dir / "short.ci8", dir / "short.ci8", {"holds 575 ci8 samples", "fewer than one OFDM symbol (576)"}, dir);
  write_file(dir / "partial.cf32", std::string(8 * L + 3, '\0'));
  expect_unusable(dir / "partial.cf32", dir / "partial.cf32", {"not a whole number", "3 bytes left over"}, dir);
  // One whole symbol is a capture: read, nothing in it.
  write_file(dir / "one.cf32", std::string(8 * L, '\0'));
  const auto r = rx({(dir / "one.cf32").string(), "-o", (dir / "p.bin").string(), "--report", (dir / "r.json").string()},
                    dir.path());
  const auto j = decoded_report(r, dir / "r.json", dir / "p.bin");
  EXPECT_TRUE(j["frames"].empty());
}

TEST(rx_app, unusable_outputs_exit_1_naming_them)
{
  const whd::test::scratch dir("outputs");
  write_file(dir / "zeros.cf32", std::string(8 * 4 * L, '\0'));
  const auto capture = (dir / "zeros.cf32").string();
  const auto no_folder = dir / "no" / "such";
  auto r = rx({capture, "-o", no_folder.string()}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.what;
  EXPECT_NE(r.err.find(no_folder.string()), std::string::npos) << r.what;
  r = rx({capture, "--report", no_folder.string()}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.what;
  EXPECT_NE(r.err.find(no_folder.string()), std::string::npos) << r.what;
  // A missing truth file is found before the capture is decoded.
  r = rx({capture, "-o", (dir / "p.bin").string(), "--truth", no_folder.string()}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.what;
  EXPECT_NE(r.err.find(quoted(no_folder.string())), std::string::npos) << r.what;
  EXPECT_FALSE(fs::exists(dir / "p.bin")) << r.what;
}

TEST(rx_app, all_zero_capture_reads_with_no_frame)
{
  const whd::test::scratch dir("zeros");
  for (const auto type : {whd::datatype::cf32_le, whd::datatype::ci16_le, whd::datatype::ci8}) {
    const fs::path capture = dir / ("zeros" + bb::raw_extension(type));
    const uint64_t samples = 20 * L;
    write_file(capture, std::string(samples * whd::bytes_per_sample(type), '\0'));
    const auto r = rx({capture.string(), "-o", (dir / "p.bin").string(), "--report", (dir / "r.json").string()}, dir.path());
    const auto j = decoded_report(r, dir / "r.json", dir / "p.bin");
    EXPECT_TRUE(j["frames"].empty()) << r.what;
    EXPECT_TRUE(j["header_failures"].empty()) << r.what;
    EXPECT_EQ(j["interrupted"], false) << r.what;
    EXPECT_EQ(j["input"]["samples"], samples) << r.what;
  }
}

TEST(rx_app, nan_and_inf_samples_mark_their_frame_and_spare_the_others)
{
  const whd::test::scratch dir("nan");
  bb::capture_config cfg;
  cfg.nof_frames = 3;
  cfg.nds = {6};
  const auto s = generated(dir / "cap", whd::datatype::cf32_le, 811, true, cfg);
  const auto& frames = s.plan.frames;
  ASSERT_EQ(frames.size(), 3u);
  whd::transport::capture_reader reader(whd::transport::open_capture(s.data_path));
  std::vector<cf32> x(reader.size());
  ASSERT_EQ(reader.read(0, x), x.size());
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Noise before the first frame and between frames: nobody's windows.
  for (uint64_t i = 100; i < 400; ++i) {
    x[i] = cf32(nan, nan);
  }
  x[frames[0].start - 20] = cf32(inf, 0.0f);
  // Frame 1, data symbol 2 (m = 5): three samples in the middle of its FFT window.
  const uint64_t w = frames[1].start + 5 * L + p::G + 100;
  x[w] = cf32(nan, 1.0f);
  x[w + 1] = cf32(1.0f, -inf);
  x[w + 2] = cf32(inf, nan);
  write_samples(dir / "nan.cf32", x);
  const auto r = rx({(dir / "nan.cf32").string(), "-o", (dir / "p.bin").string(), "--report", (dir / "r.json").string()},
                    dir.path());
  const auto j = decoded_report(r, dir / "r.json", dir / "p.bin");
  ASSERT_EQ(j["frames"].size(), 3u) << r.what;
  EXPECT_TRUE(j["header_failures"].empty()) << r.what;
  EXPECT_EQ(j["frames"][0]["bad_samples"], 0) << r.what;
  EXPECT_EQ(j["frames"][1]["bad_samples"], 3) << r.what;
  EXPECT_EQ(j["frames"][1]["bad_symbols"], json::parse("[[2, 1]]")) << r.what;
  EXPECT_EQ(j["frames"][2]["bad_samples"], 0) << r.what;
  EXPECT_NE(r.err.find("1 frame(s) and 0 rejected header(s) held NaN or infinite samples"), std::string::npos) << r.what;
  // Three zeroed samples of 512 cost no bit at 30 dB: the whole payload is the truth.
  EXPECT_EQ(whd::test::read_bytes(dir / "p.bin"), whd::test::read_bytes(s.truth_path));
}

TEST(rx_app, header_announcing_more_symbols_than_the_file_holds_is_truncated)
{
  // A frame whose header says Nd = MAX_ND (about 600 million samples) with 5 data
  // symbols and half of a sixth in the file: truncated, 5 symbols, their payload.
  const whd::test::scratch dir("nd");
  bb::frame_spec f{p::modulation::qam16, p::MAX_ND, 77, false};
  bb::modulator mod;
  std::vector<cf32> x(1000, cf32{});
  std::vector<uint8_t> truth;
  std::vector<cf32> sym(L);
  for (long long m = 0; m < 3 + 6; ++m) {
    std::vector<uint8_t> bytes;
    if (m >= 3) {
      for (int b = 0; b < p::bytes_per_symbol(f.mod); ++b) {
        bytes.push_back(uint8_t(m * 31 + b * 7));
      }
    }
    mod.frame_symbol(f, m, bytes, sym);
    x.insert(x.end(), sym.begin(), sym.begin() + (m == 8 ? std::ptrdiff_t(L / 2) : std::ptrdiff_t(L)));
    if (m >= 3 && m < 8) {
      truth.insert(truth.end(), bytes.begin(), bytes.end());
    }
  }
  // Integer file, as a recorder would write it.
  {
    whd::transport::sigmf_writer w(dir / "long", whd::datatype::ci16_le, p::SAMPLE_RATE_SPS, "");
    w.write(x, 4000.0f);
    w.close();
  }
  const auto r = rx({(dir / "long.sigmf-meta").string(), "-o", (dir / "p.bin").string(), "--report", (dir / "r.json").string()},
                    dir.path());
  const auto j = decoded_report(r, dir / "r.json", dir / "p.bin");
  ASSERT_EQ(j["frames"].size(), 1u) << r.what;
  const auto& fr = j["frames"][0];
  EXPECT_EQ(fr["nd"], p::MAX_ND);
  EXPECT_EQ(fr["seq"], 77);
  EXPECT_EQ(fr["mod"], "qam16");
  EXPECT_EQ(fr["symbols"], 5);
  EXPECT_EQ(fr["truncated"], true);
  EXPECT_NEAR(double(fr["start"].get<uint64_t>()), 1000.0, 1.0);
  EXPECT_EQ(whd::test::read_bytes(dir / "p.bin"), truth);
}

TEST(rx_app, meta_annotating_samples_past_the_data_warns_and_decodes)
{
  const whd::test::scratch dir("cut");
  bb::capture_config cfg;
  cfg.nof_frames = 2;
  cfg.nds = {10};
  const auto s = generated(dir / "cap", whd::datatype::ci8, 812, false, cfg);
  // Cut the data file inside the second frame's 8th data symbol, as a recorder that
  // died would; the meta still annotates both whole frames.
  const auto& last = s.plan.frames.back();
  const uint64_t keep = last.start + (3 + 7) * L + L / 3;
  fs::resize_file(s.data_path, keep * whd::bytes_per_sample(whd::datatype::ci8));
  const auto r = rx({s.meta_path.string(), "-o", (dir / "p.bin").string(), "--report", (dir / "r.json").string(), "--truth",
                     s.truth_path.string()},
                    dir.path());
  const auto j = decoded_report(r, dir / "r.json", dir / "p.bin");
  EXPECT_NE(r.err.find(quoted(s.meta_path.string()) + ": its annotations reach sample"), std::string::npos) << r.what;
  EXPECT_NE(r.err.find("cut short"), std::string::npos) << r.what;
  ASSERT_EQ(j["frames"].size(), 2u) << r.what;
  EXPECT_EQ(j["frames"][1]["truncated"], true);
  EXPECT_EQ(j["frames"][1]["symbols"], 7);
  EXPECT_EQ(j["truth"]["bit_errors"], 0) << "the symbols present decode exactly";
}

TEST(rx_app, frames_from_the_first_to_the_last_sample_back_to_back)
{
  const whd::test::scratch dir("edges");
  bb::capture_config cfg;
  cfg.nof_frames = 5;
  cfg.mods = {p::modulation::qam16, p::modulation::qpsk};
  cfg.nds = {4, 1, 7};
  cfg.lead_samples = 0;
  cfg.gap_samples = 0;
  cfg.tail_samples = 0;
  const auto s = generated(dir / "edges", whd::datatype::ci8, 813, false, cfg);
  ASSERT_EQ(s.plan.nof_samples, 5 * 3 * L + (4 + 1 + 7 + 4 + 1) * L);
  const auto r = rx({s.meta_path.string(), "-o", (dir / "p.bin").string(), "--report", (dir / "r.json").string()},
                    dir.path());
  const auto j = decoded_report(r, dir / "r.json", dir / "p.bin");
  ASSERT_EQ(j["frames"].size(), 5u) << r.what;
  EXPECT_EQ(j["frames"][0]["start"], 0);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(double(j["frames"][i]["start"].get<uint64_t>()), double(s.plan.frames[i].start), 1.0) << i;
    EXPECT_EQ(j["frames"][i]["truncated"], false) << i;
    EXPECT_EQ(j["frames"][i]["seq"], i) << i;
  }
  EXPECT_EQ(whd::test::read_bytes(dir / "p.bin"), whd::test::read_bytes(s.truth_path));
}

TEST(rx_app, a_path_that_is_not_utf8_still_gives_a_json_report)
{
  const whd::test::scratch dir("utf8");
  const fs::path capture = dir / std::string("caf\xE9.ci16"); // Latin-1, as an old recorder names files
  write_file(capture, std::string(4 * 4 * L, '\0'));
  const auto r = rx({capture.string(), "--report", (dir / "r.json").string()}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.what;
  const auto j = json::parse(whd::test::read_text(dir / "r.json"));
  EXPECT_EQ(j["input"]["path"].get<std::string>().find("caf\xEF\xBF\xBD.ci16") != std::string::npos, true)
      << j["input"]["path"];
}

} // namespace

namespace {

TEST(rx_app, every_way_of_writing_the_payload_file_writes_the_payload)
{
  const whd::test::scratch dir("ways");
  const auto s = generated(dir / "cap", whd::datatype::ci16_le, 4243);
  const auto truth = whd::test::read_bytes(s.truth_path);
  for (const std::string way : {"auto", "map", "pwrite", "split"}) {
    const fs::path out = dir / ("payload-" + way + ".bin");
    const auto r = rx({s.meta_path.string(), "-o", out.string(), "--payload-write", way, "--report", (dir / "r.json").string()}, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.what;
    EXPECT_EQ(whd::test::read_bytes(out), truth) << way;
  }
}

TEST(rx_app, payload_to_standard_output_and_the_whole_run_timed)
{
  const whd::test::scratch dir("stdout");
  const auto s = generated(dir / "cap", whd::datatype::ci16_le, 4242);
  const auto r = rx({s.meta_path.string(), "-o", "-", "--report", (dir / "r.json").string()}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.what;
  const auto truth = whd::test::read_bytes(s.truth_path);
  EXPECT_EQ(r.out, std::string(truth.begin(), truth.end())) << "standard output holds the payload, nothing else";
  const json j = json::parse(whd::test::read_text(dir / "r.json"));
  const auto& t = j["timing"];
  // The split a user reads: set-up and decode make the wall time; air time is the
  // capture's samples over its rate, and x_realtime_air their ratio.
  const double air = double(j["input"]["samples"].get<uint64_t>()) / whd::profile::SAMPLE_RATE_SPS;
  EXPECT_DOUBLE_EQ(t["air_seconds"].get<double>(), air);
  EXPECT_GT(t["wall_seconds"].get<double>(), 0.0);
  EXPECT_GE(t["wall_seconds"].get<double>(), t["seconds"].get<double>()) << "the whole process holds the decode";
  EXPECT_GE(t["setup_seconds"].get<double>(), 0.0);
  EXPECT_NEAR(t["setup_seconds"].get<double>() + t["decode_seconds"].get<double>(), t["wall_seconds"].get<double>(), 1e-9);
  EXPECT_NEAR(t["x_realtime_air"].get<double>(), air / t["wall_seconds"].get<double>(), 1e-12);
}

TEST(rx_app, verbose_tells_the_steps_of_set_up_within_the_reported_set_up)
{
  // -v lists set-up as it went: the process's start to main(), then each step's end
  // after main() in order, and the receiver's buffers. The steps follow each other,
  // and together they fit in the report's set-up (process start to the first samples
  // handed over), which also holds the buffers. (Logged to the millisecond.)
  const whd::test::scratch dir("setup_steps");
  const auto s = generated(dir / "cap", whd::datatype::ci8, 4343);
  const auto r = rx({s.meta_path.string(), "-v", "-o", (dir / "p.bin").string(), "--report", (dir / "r.json").string()}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.what;
  double exec = -1, buffers = -1;
  std::vector<std::pair<std::string, double>> steps;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) {
    const auto at = line.find("set-up: ");
    if (at == std::string::npos) {
      continue;
    }
    const std::string rest = line.substr(at + 8);
    double v = 0;
    if (std::sscanf(rest.c_str(), "%lf s from the process's start to main()", &v) == 1) {
      exec = v;
    } else if (std::sscanf(rest.c_str(), "the receiver's buffers took %lf s", &v) == 1) {
      buffers = v;
    } else if (const auto a = rest.find(" at "); a != std::string::npos && std::sscanf(rest.c_str() + a, " at %lf s after main()", &v) == 1) {
      steps.emplace_back(rest.substr(0, a), v);
    }
  }
  ASSERT_GE(exec, 0.0) << r.err;
  ASSERT_GE(buffers, 0.0) << r.err;
  ASSERT_GE(steps.size(), 3u) << r.err;
  EXPECT_EQ(steps.front().first, "capture opened") << r.err;
  EXPECT_EQ(steps.back().first, "receiver made") << r.err;
  for (std::size_t i = 1; i < steps.size(); ++i) {
    EXPECT_GE(steps[i].second, steps[i - 1].second) << steps[i].first << " after " << steps[i - 1].first << "\n" << r.err;
  }
  const double setup = json::parse(whd::test::read_text(dir / "r.json"))["timing"]["setup_seconds"].get<double>();
  EXPECT_LE(exec + steps.back().second + buffers, setup + 0.003) << "the steps fit in the reported set-up\n" << r.err;
}

TEST(rx_app, a_report_file_written_as_the_run_goes_reads_as_the_report_on_standard_output)
{
  // A report file gets its frames as the receiver hands them over; one on standard
  // output is written after the run. Both hold the same frames and failures.
  const whd::test::scratch dir("report-streamed");
  bb::capture_config cfg;
  cfg.nof_frames = 60;
  cfg.nds = {3, 20, 1};
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.corrupt_header_frames = {7, 40};
  const auto s = generated(dir / "cap", whd::datatype::ci8, 909, false, cfg);
  const auto to_file = rx({s.meta_path.string(), "-o", (dir / "p.bin").string(), "--report", (dir / "r.json").string()}, dir.path());
  const json a = decoded_report(to_file, dir / "r.json", dir / "p.bin");
  const auto to_stdout = rx({s.meta_path.string(), "-o", (dir / "q.bin").string()}, dir.path());
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.what;
  const json b = json::parse(to_stdout.out);
  EXPECT_EQ(a["frames"].size(), 58u) << "the frames sent, less the two with a corrupted header";
  EXPECT_EQ(a["frames"], b["frames"]);
  EXPECT_EQ(a["header_failures"], b["header_failures"]);
  EXPECT_EQ(a["header_failures"].size(), 2u);
  EXPECT_EQ(a["payload_bytes"], b["payload_bytes"]);
  EXPECT_EQ(whd::test::read_bytes(dir / "p.bin"), whd::test::read_bytes(s.truth_path));
}

TEST(rx_app, payload_to_standard_output_needs_a_report_file)
{
  const whd::test::scratch dir("stdout-usage");
  const auto r = rx({"whatever.ci8", "-o", "-"}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.what;
  EXPECT_NE(r.err.find("--report"), std::string::npos) << r.what;
}

TEST(rx_app, a_reader_that_closes_the_pipe_stops_the_run_with_a_message)
{
  const whd::test::scratch dir("pipe");
  bb::capture_config cfg;
  cfg.nof_frames = 4;
  cfg.nds = {600}; // 400 kB of payload: far more than a pipe holds
  cfg.mods = {p::modulation::qam16};
  const auto s = generated(dir / "cap", whd::datatype::ci8, 4243, false, cfg);
  std::string cmd;
  for (const std::string& part : {quoted(WHD_RX_PATH), std::string(" "), quoted(s.meta_path.string()), std::string(" -q -o - --report "),
                                  quoted((dir / "r.json").string()), std::string(" | head -c 100 >/dev/null; exit ${PIPESTATUS[0]}")}) {
    cmd.append(part);
  }
  const auto r = whd::test::run_app("/bin/bash", {"-c", cmd}, dir.path());
  EXPECT_EQ(r.signal, 0) << "no death by SIGPIPE\n" << r.what;
  EXPECT_EQ(r.exit_code, 1) << r.what;
  EXPECT_NE(r.err.find("closed the pipe"), std::string::npos) << r.what;
  EXPECT_FALSE(fs::exists(dir / "r.json")) << "no partial report";
}

} // namespace

TEST(rx_app, soft_output_to_a_file_with_its_form_in_the_report)
{
  const whd::test::scratch dir("llr");
  const auto s = generated(dir / "cap", whd::datatype::ci8, 77);
  const auto truth = whd::test::read_bytes(s.truth_path);
  for (const char* form : {"int8", "f16", "f32"}) {
    const auto soft = dir / (std::string("soft.") + form);
    const auto r = rx({s.meta_path.string(), "-o", (dir / "p.bin").string(), "--llr", soft.string(), "--llr-format", form,
                       "--llr-scale", "2", "--report", (dir / "r.json").string()},
                      dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.what;
    EXPECT_EQ(whd::test::read_bytes(dir / "p.bin"), truth) << "the payload does not change with soft output";
    const json j = json::parse(whd::test::read_text(dir / "r.json"));
    const std::size_t vb = std::string(form) == "int8" ? 1 : std::string(form) == "f16" ? 2 : 4;
    EXPECT_EQ(j["llr"]["format"], form);
    EXPECT_EQ(j["llr"]["values"].get<uint64_t>(), truth.size() * 8);
    EXPECT_EQ(j["llr"]["bytes"].get<uint64_t>(), truth.size() * 8 * vb);
    EXPECT_EQ(j["llr"]["scale"].get<double>(), std::string(form) == "int8" ? 2.0 : 1.0);
    EXPECT_EQ(std::filesystem::file_size(soft), truth.size() * 8 * vb) << form;
  }
}

TEST(rx_app, soft_output_usage_errors_exit_2)
{
  const whd::test::scratch dir("llr-usage");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"x.ci8", "--llr", "s", "--llr-format", "f64"}, {"x.ci8", "--llr", "s", "--llr-scale", "0"},
        {"x.ci8", "--llr", "-"}, {"x.ci8", "-o", "same", "--llr", "same", "--report", "r.json"}}) {
    const auto r = rx(args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << r.what;
    EXPECT_NE(r.err.find("--llr"), std::string::npos) << r.what;
  }
}
