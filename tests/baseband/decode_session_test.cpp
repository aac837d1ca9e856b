// One decode as whd-rx and whdrx run it (decode_session), on the conformance
// captures (../shared/vectors) with the CPU backend: the payload equals the
// capture's .truth byte for byte, the report lists the frames and header failures
// its .frames.json does, a truth with flipped bits counts exactly those, and a
// capture, truth or payload file that cannot be used is refused with a message
// naming it.
#include "file_bytes.hpp"
#include <whd/baseband/decode_session.hpp>
#include <whd/baseband/profile.hpp>

#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>
#include <unistd.h>

namespace {

namespace bb = whd::baseband;
namespace fs = std::filesystem;
using whd::test::vector_file;

constexpr unsigned THREADS = 2;

std::vector<uint8_t> read_bytes(const fs::path& path)
{
  return whd::test::file_bytes(path);
}

void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes)
{
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

/// The frames a capture's table lists with their header intact, and with it broken.
struct table_counts {
  std::size_t frames = 0;
  std::size_t header_failures = 0;
};

table_counts read_table(const std::string& name)
{
  std::ifstream f(vector_file(name + ".frames.json"));
  table_counts c;
  for (const auto& o : nlohmann::json::parse(f)) {
    ++(o.at("header_ok").get<bool>() ? c.frames : c.header_failures);
  }
  return c;
}

/// A file name in the test's temporary folder, unique to this test and process.
fs::path temp_path(const std::string& leaf)
{
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return fs::path(::testing::TempDir()) /
         ("decode_session_" + std::string(test->name()) + "_" + std::to_string(::getpid()) + "_" + leaf);
}

bb::decode_options cpu_options(const fs::path& capture)
{
  bb::decode_options o;
  o.path = capture.string();
  o.nof_threads = THREADS;
  return o;
}

bb::receiver_request cpu_request()
{
  bb::receiver_request req;
  req.backend = bb::backend_kind::cpu;
  req.threads = THREADS;
  return req;
}

/// The report with its frames, as the front ends write it.
nlohmann::json full_report(const bb::decode_session& s)
{
  return nlohmann::json::parse(bb::dump_report(s.report(0.5), s.result().frames, -1));
}

TEST(decode_session, decodes_conformance_captures_to_their_truth_and_reports_their_frames)
{
  for (const std::string name : {"basic_qpsk_cf32", "basic_qam16_ci16", "impaired_mixed_ci8", "header_crc_fail_cf32",
                                 "coded_mcs1_ci16", "noise_only_ci8"}) {
    SCOPED_TRACE(name);
    const auto truth = read_bytes(vector_file(name + ".truth"));
    const auto table = read_table(name);
    auto opts = cpu_options(vector_file(name + ".sigmf-meta"));
    opts.truth = vector_file(name + ".truth").string();
    std::vector<std::string> warnings;
    opts.warn = [&warnings](const std::string& line) { warnings.push_back(line); };
    bb::decode_session s(opts);
    EXPECT_EQ(s.config().nof_threads, THREADS);
    EXPECT_DOUBLE_EQ(s.config().sample_rate_sps, s.info().sample_rate_sps.value_or(whd::profile::SAMPLE_RATE_SPS));
    const auto made = s.make_receiver(cpu_request());
    ASSERT_EQ(made.choice.backend, "cpu");
    bb::memory_sink payload;
    const auto& res = s.run(*made.rx, &payload);

    EXPECT_EQ(payload.bytes(), truth);
    EXPECT_EQ(res.frames.size(), table.frames);
    EXPECT_EQ(res.header_failures.size(), table.header_failures);
    ASSERT_TRUE(s.truth().has_value());
    EXPECT_EQ(s.truth()->bit_errors, 0u);
    EXPECT_EQ(s.truth()->missing_bits, 0u);
    EXPECT_EQ(s.truth()->compared_bits, uint64_t(truth.size()) * 8);
    EXPECT_TRUE(warnings.empty()) << warnings.front();

    const auto r = full_report(s);
    EXPECT_EQ(r.at("frames").size(), table.frames);
    EXPECT_EQ(r.at("header_failures").size(), table.header_failures);
    EXPECT_EQ(r.at("payload_bytes"), truth.size());
    EXPECT_EQ(r.at("input").at("path"), opts.path); // no name given: the path as given
    EXPECT_EQ(r.at("input").at("samples"), s.info().nof_samples);
    EXPECT_EQ(r.at("timing").at("backend"), "cpu");
    EXPECT_EQ(r.at("timing").at("seconds"), 0.5);
    EXPECT_EQ(r.at("truth").at("bit_errors"), 0);
    EXPECT_EQ(r.at("truth").at("path"), *opts.truth);
    EXPECT_FALSE(r.contains("llr"));
    EXPECT_FALSE(r.at("timing").contains("wall_seconds")); // no split asked for
  }
}

TEST(decode_session, payload_file_holds_the_truth_and_a_truth_with_flipped_bits_counts_them)
{
  const std::string name = "basic_qpsk_cf32";
  const auto truth = read_bytes(vector_file(name + ".truth"));
  ASSERT_GT(truth.size(), 1000u);
  // Seven bits flipped, in different bytes spread over both frames.
  auto wrong = truth;
  const std::vector<std::size_t> flipped = {0, 3, 100, 511, 672, 900, truth.size() - 1};
  for (std::size_t i = 0; i < flipped.size(); ++i) {
    wrong[flipped[i]] ^= uint8_t(1u << (i % 8));
  }
  const auto truth_path = temp_path("wrong.truth");
  const auto payload_path = temp_path("payload.bin");
  write_bytes(truth_path, wrong);

  auto opts = cpu_options(vector_file(name + ".cf32")); // the raw file: its format from the extension
  opts.name = "the raw capture";
  opts.truth = truth_path.string();
  opts.payload = payload_path.string();
  bb::decode_session s(opts);
  EXPECT_EQ(s.payload_file(), nullptr); // opened by run, or by open_payload before it
  s.open_payload();
  ASSERT_NE(s.payload_file(), nullptr);
  const auto made = s.make_receiver(cpu_request());
  bb::memory_sink unused; // the payload goes to the file
  const auto& res = s.run(*made.rx, &unused);

  EXPECT_TRUE(unused.bytes().empty());
  EXPECT_EQ(read_bytes(payload_path), truth);
  EXPECT_EQ(res.payload_bytes, truth.size());
  ASSERT_TRUE(s.truth().has_value());
  EXPECT_EQ(s.truth()->bit_errors, flipped.size());
  EXPECT_EQ(s.truth()->compared_bits, uint64_t(truth.size()) * 8);
  const auto r = full_report(s);
  EXPECT_EQ(r.at("truth").at("bit_errors"), flipped.size());
  EXPECT_EQ(r.at("input").at("path"), "the raw capture");
  EXPECT_EQ(r.at("frames").size(), read_table(name).frames);
  fs::remove(truth_path);
  fs::remove(payload_path);
}

TEST(decode_session, soft_output_is_one_value_per_payload_bit_and_reported)
{
  const std::string name = "basic_qam16_ci16";
  bb::memory_sink soft;
  auto opts = cpu_options(vector_file(name + ".sigmf-meta"));
  opts.llr = {&soft, bb::llr_format::f32, 1.0f};
  opts.llr_name = "<memory>";
  bb::decode_session s(opts);
  const auto made = s.make_receiver(cpu_request());
  bb::memory_sink payload;
  const auto& res = s.run(*made.rx, &payload);

  EXPECT_EQ(payload.bytes(), read_bytes(vector_file(name + ".truth")));
  EXPECT_EQ(soft.bytes().size(), payload.bytes().size() * 8 * sizeof(float));
  // A positive LLR says 0: every value's sign gives the payload's bit.
  std::vector<float> llr(soft.bytes().size() / sizeof(float));
  std::memcpy(llr.data(), soft.bytes().data(), soft.bytes().size());
  std::size_t disagree = 0;
  for (std::size_t i = 0; i < llr.size(); ++i) {
    const bool one = (payload.bytes()[i / 8] >> (7 - i % 8)) & 1u;
    disagree += (llr[i] < 0.0f) != one;
  }
  EXPECT_EQ(disagree, 0u);
  const auto r = s.report(1.0, bb::run_seconds{2.0, 0.5});
  ASSERT_TRUE(r.contains("llr"));
  EXPECT_EQ(r.at("llr").at("file"), "<memory>");
  EXPECT_EQ(r.at("llr").at("format"), "f32");
  EXPECT_EQ(r.at("llr").at("values"), llr.size());
  EXPECT_EQ(r.at("llr").at("bytes"), res.llr_bytes);
  EXPECT_EQ(r.at("timing").at("wall_seconds"), 2.0);
  EXPECT_EQ(r.at("timing").at("setup_seconds"), 0.5);
  EXPECT_EQ(r.at("timing").at("decode_seconds"), 1.5);
}

TEST(decode_session, capture_too_short_or_empty_is_unusable_and_named)
{
  // One sample short of an OFDM symbol.
  const auto short_path = temp_path("short.ci8");
  write_bytes(short_path, std::vector<uint8_t>(2 * (whd::profile::SYMBOL_LEN - 1), 5));
  const auto empty_path = temp_path("empty.ci16");
  write_bytes(empty_path, {});
  const auto expect_unusable = [](const bb::decode_options& opts, const std::string& named, const std::string& why) {
    try {
      bb::decode_session s(opts);
      ADD_FAILURE() << opts.path << " was taken";
    } catch (const whd::transport::capture_error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("'" + named + "': ", 0), 0u) << what;
      EXPECT_NE(what.find(why), std::string::npos) << what;
    }
  };
  auto opts = cpu_options(short_path);
  expect_unusable(opts, short_path.string(), "fewer than one OFDM symbol (" + std::to_string(whd::profile::SYMBOL_LEN) + ")");
  opts.name = "samples in memory";
  expect_unusable(opts, "samples in memory", "holds " + std::to_string(whd::profile::SYMBOL_LEN - 1) + " ci8 samples");
  expect_unusable(cpu_options(empty_path), empty_path.string(), "is empty");
  fs::remove(short_path);
  fs::remove(empty_path);
}

TEST(decode_session, unusable_truth_and_payload_files_are_named)
{
  const auto no_folder = temp_path("no") / "such";
  auto opts = cpu_options(vector_file("basic_qpsk_cf32.sigmf-meta"));
  opts.truth = no_folder.string();
  try {
    bb::decode_session s(opts);
    ADD_FAILURE() << "a missing truth file was taken";
  } catch (const bb::unusable_file& e) {
    EXPECT_NE(std::string(e.what()).find(no_folder.string()), std::string::npos) << e.what();
  }
  opts.truth.reset();
  opts.payload = no_folder.string();
  bb::decode_session s(opts);
  try {
    s.open_payload();
    ADD_FAILURE() << "a payload file in a missing folder was taken";
  } catch (const bb::unusable_file& e) {
    EXPECT_NE(std::string(e.what()).find(no_folder.string()), std::string::npos) << e.what();
  }
}

TEST(decode_session, a_capture_cut_short_is_warned_of_and_its_first_frame_decoded)
{
  const std::string name = "truncated_ci16";
  auto opts = cpu_options(vector_file(name + ".sigmf-meta"));
  std::vector<std::string> warnings;
  opts.warn = [&warnings](const std::string& line) { warnings.push_back(line); };
  bb::decode_session s(opts);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("the data file looks cut short"), std::string::npos) << warnings[0];
  const auto made = s.make_receiver(cpu_request());
  bb::memory_sink payload;
  const auto& res = s.run(*made.rx, &payload);
  EXPECT_EQ(warnings.size(), 1u);
  ASSERT_EQ(res.frames.size(), read_table(name).frames);
  EXPECT_FALSE(res.frames[0].truncated);
  EXPECT_TRUE(res.frames[1].truncated);
  // Frame 0 whole, frame 1's first 6 of its 10 data symbols (the vectors' table).
  const auto truth = read_bytes(vector_file(name + ".truth"));
  const std::size_t frame_bytes = truth.size() / 2;
  const std::size_t expected = frame_bytes + 6 * frame_bytes / 10;
  ASSERT_EQ(payload.bytes().size(), expected);
  EXPECT_TRUE(std::equal(payload.bytes().begin(), payload.bytes().end(), truth.begin()));
}

// A truth that holds the frame whose header is broken (as a transmitter's does) is
// compared out of step after it: the run says so. The conformance truth, without that
// frame, stays in step: no warning.
TEST(decode_session, a_failed_header_that_shifts_the_truth_is_warned_of)
{
  const std::string name = "header_crc_fail_cf32";
  const auto truth = read_bytes(vector_file(name + ".truth"));
  ASSERT_EQ(read_table(name).header_failures, 1u);
  const std::size_t frame_bytes = truth.size() / read_table(name).frames;
  for (const bool with_lost_frame : {false, true}) {
    auto opts = cpu_options(vector_file(name + ".sigmf-meta"));
    std::vector<std::string> warnings;
    opts.warn = [&warnings](const std::string& line) { warnings.push_back(line); };
    const auto truth_path = temp_path(with_lost_frame ? "with.truth" : "without.truth");
    auto t = truth;
    if (with_lost_frame) { // frame 1's payload (any bytes) between frames 0 and 2
      t.insert(t.begin() + std::ptrdiff_t(frame_bytes), frame_bytes, uint8_t(0x5a));
    }
    write_bytes(truth_path, t);
    opts.truth = truth_path.string();
    bb::decode_session s(opts);
    const auto made = s.make_receiver(cpu_request());
    bb::memory_sink payload;
    const auto& res = s.run(*made.rx, &payload);
    ASSERT_EQ(res.header_failures.size(), 1u);
    ASSERT_TRUE(s.truth().has_value());
    const auto shift = std::count_if(warnings.begin(), warnings.end(),
                                     [](const std::string& w) { return w.find("compared as one stream") != std::string::npos; });
    if (with_lost_frame) {
      EXPECT_EQ(shift, 1) << "a truth holding the lost frame";
      EXPECT_GT(s.truth()->bit_errors, 0u);
      EXPECT_EQ(s.truth()->missing_bits, uint64_t(frame_bytes) * 8);
    } else {
      EXPECT_EQ(shift, 0) << "the conformance truth";
      EXPECT_EQ(s.truth()->bit_errors, 0u);
    }
    fs::remove(truth_path);
  }
}

} // namespace
