// whd-rx's options that choose and shape the backend (--gpus, --device, --streams,
// --batch, --link), --sample-rate and --dump, as a user on a machine without a GPU
// meets them: each malformed value is a usage error (exit 2) naming its option; the
// GPU's options leave the CPU backend's output as it was; --backend gpu without a
// device (or --device past the devices present) is a runtime error (exit 1) that
// says what to do; --sample-rate states the CFO in Hz at that rate; --dump writes
// the frames it names, as the report has them.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/transport/cuda.hpp>

#include "app_runner.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
namespace fs = std::filesystem;
using json = nlohmann::json;
using whd::test::app_result;
using whd::test::run_app;

app_result rx(std::vector<std::string> args, const fs::path& dir)
{
  auto r = run_app(WHD_RX_PATH, args, dir);
  EXPECT_FALSE(whd::test::sanitizer_report(r)) << r.what;
  return r;
}

/// A clean ci16 capture of `frames` QPSK frames of 6 data symbols, CFO 0.9 MHz at the
/// profile's rate.
bb::output_summary capture(const fs::path& base, uint64_t frames, uint64_t seed)
{
  bb::capture_config cfg;
  cfg.seed = seed;
  cfg.nof_frames = frames;
  cfg.nds = {6};
  cfg.impairments.snr_dB = 30.0;
  cfg.impairments.cfo_Hz = 0.9e6;
  bb::output_config out;
  out.base = base;
  out.type = whd::datatype::ci16_le;
  std::cout << "capture " << base.filename() << ": seed " << seed << "\n";
  return bb::write_capture(cfg, out);
}

json report_of(const app_result& r, const fs::path& path)
{
  EXPECT_EQ(r.exit_code, 0) << r.what;
  try {
    return json::parse(whd::test::read_text(path));
  } catch (const json::exception& e) {
    ADD_FAILURE() << path << " is not JSON: " << e.what() << "\n" << r.what;
    return json::object();
  }
}

TEST(rx_options, malformed_values_are_usage_errors_that_name_the_option)
{
  const whd::test::scratch dir("options");
  struct bad {
    std::vector<std::string> args;
    std::string named; ///< what the message must contain
  };
  for (const bad& b : std::vector<bad>{
         {{"--gpus", "0"}, "--gpus"},          {{"--gpus", "-1"}, "--gpus"},          {{"--gpus", "two"}, "--gpus"},
         {{"--gpus", "1.5"}, "--gpus"},        {{"--gpus", ""}, "--gpus"},            {{"--device", "x"}, "--device"},
         {{"--device", "-1"}, "--device"},     {{"--streams", "x"}, "--streams"},     {{"--streams", "-1"}, "--streams"},
         {{"--batch", "x"}, "--batch"},        {{"--batch", "-1"}, "--batch"},        {{"--threads", "-1"}, "--threads"},
         {{"--threads", "4294967295"}, "--threads"}, {{"--link", "f16"}, "--link"}, {{"--link", ""}, "--link"},
         {{"--sample-rate", "0"}, "--sample-rate"}, {{"--sample-rate", "-2.5e9"}, "--sample-rate"},
         {{"--sample-rate", "fast"}, "--sample-rate"}, {{"--sample-rate", "nan"}, "--sample-rate"},
         {{"--sample-rate", "inf"}, "--sample-rate"}, {{"--dump-frames", "first"}, "--dump-frames"},
         {{"--dump-frames", ""}, "--dump-frames"}, {{"--dump-symbols", "-1"}, "--dump-symbols"},
         {{"--dump-symbols", "x"}, "--dump-symbols"}}) {
    std::vector<std::string> args{"x.ci16", "--backend", "cpu"};
    args.insert(args.end(), b.args.begin(), b.args.end());
    const auto r = rx(args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << r.what;
    EXPECT_NE(r.err.find(b.named), std::string::npos) << "the message names " << b.named << "\n" << r.what;
    EXPECT_NE(r.err.find("whd-rx --help"), std::string::npos) << r.what;
    EXPECT_EQ(r.err.find("does not exist"), std::string::npos) << "checked before the capture is opened\n" << r.what;
  }
}

TEST(rx_options, the_gpu_options_leave_the_cpu_backends_output_as_it_was)
{
  const whd::test::scratch dir("gpu-options-on-cpu");
  const auto s = capture(dir / "cap", 3, 6101);
  const auto truth = whd::test::read_bytes(s.truth_path);
  const auto plain = rx({s.meta_path.string(), "--backend", "cpu", "-o", (dir / "a.bin").string(), "--report", (dir / "a.json").string()},
                        dir.path());
  const auto with = rx({s.meta_path.string(), "--backend", "cpu", "-o", (dir / "b.bin").string(), "--report", (dir / "b.json").string(),
                        "--gpus", "4", "--device", "3", "--streams", "7", "--batch", "5", "--link", "int8"},
                       dir.path());
  const json a = report_of(plain, dir / "a.json");
  const json b = report_of(with, dir / "b.json");
  EXPECT_EQ(whd::test::read_bytes(dir / "a.bin"), truth);
  EXPECT_EQ(whd::test::read_bytes(dir / "b.bin"), truth);
  ASSERT_EQ(a["frames"].size(), 3u) << plain.what;
  EXPECT_EQ(a["frames"], b["frames"]) << with.what;
  EXPECT_EQ(b["timing"]["backend"], "cpu") << with.what;
}

TEST(rx_options, gpus_beyond_the_devices_present_fail_saying_so)
{
  const whd::test::scratch dir("gpus");
  const auto s = capture(dir / "cap", 2, 6102);
  const int devices = whd::cuda::device_count();
  std::cout << devices << " CUDA device(s) present\n";
  // A device past those present: exit 1, naming it, on any backend but the CPU.
  const std::string past = std::to_string(devices + 8);
  for (const char* backend : {"gpu", "auto"}) {
    const auto r = rx({s.meta_path.string(), "--backend", backend, "--device", past, "--gpus", "2", "--report", (dir / "r.json").string()},
                      dir.path());
    EXPECT_EQ(r.exit_code, 1) << r.what;
    EXPECT_NE(r.err.find("--device " + past + ": no CUDA device " + past + " present"), std::string::npos) << r.what;
    EXPECT_FALSE(fs::exists(dir / "r.json")) << "a failed run leaves no report\n" << r.what;
  }
  // More GPUs than present from device 0 on: exit 1 saying how many there are;
  // without any GPU, --backend auto decodes on the CPU all the same.
  const std::string more = std::to_string(devices + 1);
  const auto a = rx({s.meta_path.string(), "--gpus", more, "-o", (dir / "p.bin").string(), "--report", (dir / "a.json").string()},
                    dir.path());
  if (devices == 0) {
    const json j = report_of(a, dir / "a.json");
    EXPECT_EQ(whd::test::read_bytes(dir / "p.bin"), whd::test::read_bytes(s.truth_path)) << a.what;
    EXPECT_EQ(j["timing"]["backend"], "cpu") << a.what;
    EXPECT_NE(a.err.find("using the CPU"), std::string::npos) << a.what;
  } else {
    EXPECT_EQ(a.exit_code, 1) << a.what;
    EXPECT_NE(a.err.find("--gpus " + more + ": only " + std::to_string(devices) + " CUDA device(s) present from device 0 on"),
              std::string::npos)
        << a.what;
    EXPECT_FALSE(fs::exists(dir / "a.json")) << a.what;
  }
  // --backend gpu without any GPU: exit 1, saying to use the CPU.
  if (devices == 0) {
    const auto g = rx({s.meta_path.string(), "--backend", "gpu", "--report", (dir / "g.json").string()}, dir.path());
    EXPECT_EQ(g.exit_code, 1) << g.what;
    EXPECT_NE(g.err.find("--backend gpu: "), std::string::npos) << g.what;
    EXPECT_NE(g.err.find("use --backend cpu"), std::string::npos) << g.what;
  }
}

TEST(rx_options, sample_rate_states_the_cfo_at_that_rate)
{
  // The CFO is measured in cycles a sample; --sample-rate turns it into Hz. Half the
  // rate, half the Hz, whatever the meta says.
  const whd::test::scratch dir("rate");
  const auto s = capture(dir / "cap", 2, 6103);
  const auto at = [&](const std::string& rate, const std::string& name) {
    std::vector<std::string> args{s.meta_path.string(), "--backend", "cpu", "--report", (dir / name).string()};
    if (!rate.empty()) {
      args.insert(args.end(), {"--sample-rate", rate});
    }
    return report_of(rx(args, dir.path()), dir / name);
  };
  const json meta_rate = at("", "m.json");
  const json full = at("2.538e9", "f.json");
  const json half = at("1.269e9", "h.json");
  ASSERT_EQ(full["frames"].size(), 2u);
  ASSERT_EQ(half["frames"].size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const double f = full["frames"][i]["cfo_hz"].get<double>();
    const double h = half["frames"][i]["cfo_hz"].get<double>();
    EXPECT_NEAR(f, 0.9e6, 20e3) << "frame " << i << ": the generator's CFO at the profile's rate";
    EXPECT_NEAR(h / f, 0.5, 1e-6) << "frame " << i;
    EXPECT_EQ(meta_rate["frames"][i]["cfo_hz"], full["frames"][i]["cfo_hz"]) << "the meta's core:sample_rate is the profile's";
  }
}

TEST(rx_options, dump_writes_the_frames_it_names_as_the_report_has_them)
{
  const whd::test::scratch dir("dump");
  const auto s = capture(dir / "cap", 4, 6104);
  const auto r = rx({s.meta_path.string(), "--backend", "cpu", "--report", (dir / "r.json").string(), "--dump", (dir / "d.json").string(),
                     "--dump-frames", "2,0,99", "--dump-symbols", "3"},
                    dir.path());
  const json report = report_of(r, dir / "r.json");
  ASSERT_EQ(report["frames"].size(), 4u) << r.what;
  const json d = json::parse(whd::test::read_text(dir / "d.json"));
  ASSERT_EQ(d["frames"].size(), 2u) << "frames 0 and 2; there is no frame 99\n" << r.what;
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& f = d["frames"][k];
    const std::size_t index = k == 0 ? 0 : 2; // in capture order
    EXPECT_EQ(f["index"], index);
    EXPECT_EQ(f["start"], report["frames"][index]["start"]);
    EXPECT_EQ(f["seq"], report["frames"][index]["seq"]);
    EXPECT_EQ(f["dumped_symbols"], 3);
    ASSERT_EQ(f["points"].size(), 3u);
    EXPECT_EQ(f["points"][0].size(), std::size_t(p::NOF_DATA));
    EXPECT_EQ(f["tones"].size(), std::size_t(p::NOF_USED));
    // QPSK at 30 dB: the equalised points sit near the constellation's (+-1 +-j)/sqrt(2).
    for (const auto& sym : f["points"]) {
      for (const auto& z : sym) {
        EXPECT_NEAR(std::abs(z[0].get<double>()), std::sqrt(0.5), 0.25);
        EXPECT_NEAR(std::abs(z[1].get<double>()), std::sqrt(0.5), 0.25);
      }
    }
  }
  // A dump that cannot be written: exit 1 naming it.
  const auto bad = rx({s.meta_path.string(), "--backend", "cpu", "--report", (dir / "r2.json").string(), "--dump",
                       (dir / "no-such-folder" / "d.json").string()},
                      dir.path());
  EXPECT_EQ(bad.exit_code, 1) << bad.what;
  EXPECT_NE(bad.err.find("cannot write dump"), std::string::npos) << bad.what;
}

} // namespace
