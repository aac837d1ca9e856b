// whd-rx stopped by SIGINT or SIGTERM in the middle of a capture: it exits with
// 128 + the signal, says so, and leaves a payload and a report that agree with
// each other and with the truth, every listed frame whole.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/profile.hpp>

#include "app_runner.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
namespace fs = std::filesystem;
using json = nlohmann::json;

/// 48 frames of 800 QPSK symbols in ci8: about 22 million samples, which one
/// thread decodes in under a second (more under a sanitizer). The payload file
/// buffers 1 MiB, about 20 of these frames, before its first bytes show: the half
/// that follows leaves the signal rounds of frames to stop (the next region is
/// searched while one is decoded, so no search lies between them to wait for it).
bb::output_summary long_capture(const fs::path& base)
{
  bb::capture_config cfg;
  cfg.nof_frames = 48;
  cfg.nds = {800};
  cfg.seed = 4242;
  cfg.impairments.cfo_Hz = -0.4e6;
  cfg.impairments.snr_dB = 30.0;
  bb::output_config out;
  out.base = base;
  out.type = whd::datatype::ci8;
  std::cout << "capture: seed " << cfg.seed << ", " << cfg.nof_frames << " frames of " << cfg.nds[0] << " symbols\n";
  return bb::write_capture(cfg, out);
}

void interrupt_and_check(int sig, const char* name)
{
  const whd::test::scratch dir(std::string("sig") + name);
  const auto s = long_capture(dir / "long");
  const fs::path payload = dir / "p.bin", report = dir / "r.json";
  whd::test::app_process proc(WHD_RX_PATH,
                              {"--backend", "cpu", "--threads", "1", "-q", s.meta_path.string(), "-o", payload.string(),
                               "--report", report.string()},
                              dir.path());
  // Signal as soon as the first frame's bytes reach the file.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto written = [&] {
    std::error_code ec;
    const auto n = fs::file_size(payload, ec);
    return !ec && n > 0;
  };
  while (proc.running() && !written() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(proc.running()) << "whd-rx ended before it could be interrupted: the capture is too short for this machine";
  ASSERT_EQ(::kill(proc.pid(), sig), 0);
  const auto r = proc.wait();
  EXPECT_FALSE(whd::test::sanitizer_report(r)) << r.what;
  EXPECT_EQ(r.exit_code, 128 + sig) << r.what;
  EXPECT_NE(r.err.find(std::string("interrupted by ") + name), std::string::npos) << r.what;

  const json j = json::parse(whd::test::read_text(report));
  EXPECT_EQ(j["interrupted"], true);
  const auto& frames = j["frames"];
  ASSERT_GE(frames.size(), 1u) << "the frame being decoded when the signal came is finished";
  EXPECT_LT(frames.size(), s.plan.frames.size()) << "the run stopped early";
  std::cout << name << " after " << frames.size() << " of " << s.plan.frames.size() << " frames\n";
  const auto bytes = whd::test::read_bytes(payload);
  const auto truth = whd::test::read_bytes(s.truth_path);
  uint64_t offset = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto& f = frames[i];
    EXPECT_EQ(f["seq"], s.plan.frames[i].seq) << i;
    EXPECT_EQ(f["symbols"], s.plan.frames[i].nd) << "frame " << i << " is whole";
    EXPECT_EQ(f["truncated"], false) << i;
    EXPECT_EQ(f["payload_offset"].get<uint64_t>(), offset) << i;
    offset += f["payload_bytes"].get<uint64_t>();
  }
  EXPECT_EQ(j["payload_bytes"].get<uint64_t>(), offset);
  ASSERT_EQ(bytes.size(), offset) << "the payload file holds exactly the listed frames";
  ASSERT_LE(bytes.size(), truth.size());
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), truth.begin())) << "each listed frame's bytes are the truth";
}

TEST(rx_interrupt, sigint_leaves_whole_frames_and_says_so) { interrupt_and_check(SIGINT, "SIGINT"); }

TEST(rx_interrupt, sigterm_leaves_whole_frames_and_says_so) { interrupt_and_check(SIGTERM, "SIGTERM"); }

} // namespace
