// The conformance captures (../shared/vectors), each checked against what its
// README table demands: the frames of .frames.json, payload equal to .truth,
// exactly the header failures, the truncated frame's whole symbols, nothing on noise.
#include "file_bytes.hpp"
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::test::vector_file;

struct expected_frame {
  uint64_t start;
  uint32_t nd;
  std::string mod;
  int seq;
  bool header_ok;
  int mcs = p::NO_MCS;        ///< profile 2: coded frames
  uint64_t payload_bytes = 0; ///< coded frames: L
};

std::vector<expected_frame> read_frames(const std::string& name)
{
  std::ifstream f(vector_file(name + ".frames.json"));
  const auto j = nlohmann::json::parse(f);
  std::vector<expected_frame> out;
  for (const auto& o : j) {
    out.push_back({o.at("start").get<uint64_t>(), o.at("nd").get<uint32_t>(), o.at("mod").get<std::string>(),
                   o.at("seq").get<int>(), o.at("header_ok").get<bool>(), o.value("mcs", int(p::NO_MCS)),
                   o.value("payload_bytes", uint64_t(0))});
  }
  return out;
}

std::vector<uint8_t> read_bytes(const std::filesystem::path& path)
{
  return whd::test::file_bytes(path);
}

struct run_output {
  bb::receive_result result;
  std::vector<uint8_t> payload;
};

run_output receive(const std::filesystem::path& path, unsigned threads = 2)
{
  const auto info = whd::transport::open_capture(path);
  whd::transport::capture_reader reader(info);
  bb::rx_config cfg;
  cfg.nof_threads = threads;
  auto rx = bb::make_cpu_receiver(cfg);
  bb::memory_sink sink;
  run_output out;
  out.result = rx->run(reader, sink);
  out.payload = sink.bytes();
  return out;
}

/// Checks a receive result against the capture's .frames.json and .truth.
void check_against_truth(const std::string& name, const run_output& out, uint64_t nof_samples)
{
  const auto frames = read_frames(name);
  const auto truth = read_bytes(vector_file(name + ".truth"));
  const auto& res = out.result;
  constexpr int64_t START_TOLERANCE = 4; // a multipath channel delays the energy by a few samples

  std::vector<uint8_t> expected_payload;
  std::size_t truth_pos = 0;
  std::size_t accepted = 0, failed = 0;
  for (const auto& e : frames) {
    if (!e.header_ok) {
      ASSERT_LT(failed, res.header_failures.size()) << name << ": header failure at " << e.start << " not reported";
      EXPECT_NEAR(double(res.header_failures[failed].start), double(e.start), START_TOLERANCE) << name;
      EXPECT_EQ(res.header_failures[failed].reason, p::header_status::crc) << name;
      ++failed;
      continue;
    }
    ASSERT_LT(accepted, res.frames.size()) << name << ": frame at " << e.start << " not found";
    const auto& f = res.frames[accepted];
    const auto bps = std::size_t(e.mod == "qpsk" ? 84 : 168);
    // Whole data symbols the file holds for this frame, from its length alone.
    const uint64_t whole = (nof_samples - e.start) / p::SYMBOL_LEN;
    const uint32_t present = uint32_t(std::min<uint64_t>(e.nd, whole > 3 ? whole - 3 : 0));
    EXPECT_NEAR(double(f.start), double(e.start), START_TOLERANCE) << name << " frame " << accepted;
    EXPECT_EQ(p::to_string(f.mod), e.mod) << name << " frame " << accepted;
    EXPECT_EQ(f.nd, e.nd) << name << " frame " << accepted;
    EXPECT_EQ(int(f.seq), e.seq) << name << " frame " << accepted;
    EXPECT_EQ(f.symbols, present) << name << " frame " << accepted;
    EXPECT_EQ(f.truncated, present < e.nd) << name << " frame " << accepted;
    EXPECT_EQ(f.payload_offset, expected_payload.size()) << name << " frame " << accepted;
    EXPECT_EQ(f.mcs, e.mcs) << name << " frame " << accepted;
    // Uncoded: the whole symbols present. Coded (profile 2 §3): the L information
    // bytes, none when truncated; RS corrects what the Viterbi left, failing nowhere.
    const bool coded = e.mcs != p::NO_MCS;
    const uint64_t sent = coded ? e.payload_bytes : e.nd * bps;
    const uint64_t written = coded ? (present < e.nd ? 0 : e.payload_bytes) : present * bps;
    EXPECT_EQ(f.payload_bytes, written) << name << " frame " << accepted;
    EXPECT_EQ(f.rs_failed, 0u) << name << " frame " << accepted;
    ASSERT_LE(truth_pos + sent, truth.size()) << name << ": truth shorter than its frames";
    expected_payload.insert(expected_payload.end(), truth.begin() + std::ptrdiff_t(truth_pos),
                            truth.begin() + std::ptrdiff_t(truth_pos + written));
    truth_pos += sent;
    ++accepted;
  }
  EXPECT_EQ(truth_pos, truth.size()) << name << ": truth holds more than its frames";
  EXPECT_EQ(res.frames.size(), accepted) << name << ": extra frames detected";
  EXPECT_EQ(res.header_failures.size(), failed) << name << ": extra header failures";
  ASSERT_EQ(out.payload.size(), expected_payload.size()) << name;
  std::size_t bit_errors = 0;
  for (std::size_t i = 0; i < expected_payload.size(); ++i) {
    bit_errors += std::size_t(__builtin_popcount(unsigned(out.payload[i] ^ expected_payload[i])));
  }
  EXPECT_EQ(bit_errors, 0u) << name << ": payload differs from truth";
}

class conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(conformance, capture_gives_what_the_table_demands)
{
  const std::string name = GetParam();
  const auto out = receive(vector_file(name + ".sigmf-meta"));
  check_against_truth(name, out, out.result.nof_samples);
}

INSTANTIATE_TEST_SUITE_P(vectors, conformance,
                         ::testing::Values("basic_qpsk_cf32", "basic_qam16_ci16", "impaired_mixed_ci8", "header_crc_fail_cf32",
                                           "truncated_ci16", "noise_only_ci8", "coded_mcs0_cf32", "coded_mcs1_ci16",
                                           "coded_mcs2_ci8", "coded_mcs7_cf32", "coded_lowsnr_mcs1_cf32",
                                           "coded_truncated_mcs2_ci16"));

TEST(conformance_extra, raw_cf32_gives_the_same_result_as_sigmf)
{
  const auto a = receive(vector_file("basic_qpsk_cf32.cf32"));
  const auto b = receive(vector_file("basic_qpsk_cf32.sigmf-meta"));
  check_against_truth("basic_qpsk_cf32", a, a.result.nof_samples);
  ASSERT_EQ(a.result.frames.size(), b.result.frames.size());
  for (std::size_t i = 0; i < a.result.frames.size(); ++i) {
    EXPECT_EQ(a.result.frames[i].start, b.result.frames[i].start);
  }
  EXPECT_EQ(a.payload, b.payload);
}

TEST(conformance_extra, impaired_capture_reports_cfo_within_5kHz)
{
  const auto out = receive(vector_file("impaired_mixed_ci8.sigmf-meta"));
  ASSERT_EQ(out.result.frames.size(), 3u);
  for (const auto& f : out.result.frames) {
    EXPECT_NEAR(f.cfo_Hz, 700e3, 5e3);
    EXPECT_NEAR(f.snr_dB, 28.0, 3.0) << "SNR estimate far from the capture's 28 dB";
  }
}

TEST(conformance_extra, result_is_identical_for_one_and_many_threads)
{
  for (const char* name : {"impaired_mixed_ci8", "basic_qam16_ci16", "coded_lowsnr_mcs1_cf32", "coded_mcs2_ci8"}) {
    const auto one = receive(vector_file(std::string(name) + ".sigmf-meta"), 1);
    const auto many = receive(vector_file(std::string(name) + ".sigmf-meta"), 5);
    EXPECT_EQ(one.payload, many.payload) << name;
    ASSERT_EQ(one.result.frames.size(), many.result.frames.size()) << name;
    for (std::size_t i = 0; i < one.result.frames.size(); ++i) {
      EXPECT_EQ(one.result.frames[i].start, many.result.frames[i].start) << name;
      EXPECT_EQ(one.result.frames[i].cfo_Hz, many.result.frames[i].cfo_Hz) << name;
    }
  }
}

} // namespace
