// whd-tx as a user runs it: exit statuses, a help that names every option, and
// options that translate to exactly the generator configuration they say.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>

#include "tx_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;

struct run_result {
  int status = -1;
  std::string output; // stdout and stderr
};

run_result run_tx(const std::string& args)
{
  const std::string cmd = std::string("'") + WHD_TX_PATH + "' " + args + " 2>&1";
  run_result r;
  std::FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    return r;
  }
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) {
    r.output.append(buf, n);
  }
  const int st = ::pclose(pipe);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(tx_app, help_exits_0_and_explains_every_option)
{
  const auto r = run_tx("--help");
  EXPECT_EQ(r.status, 0);
  for (const char* opt :
       {"--output", "--datatype", "--raw", "--mod", "--frames", "--nd", "--payload", "--seed", "--snr-db", "--cfo-hz",
        "--taps", "--tap-decay-db", "--gain", "--phase-rad", "--random-phase", "--lead", "--gap", "--tail",
        "--corrupt-header", "--cut", "--first-seq", "--sample-rate", "--quiet", "--verbose"}) {
    EXPECT_NE(r.output.find(opt), std::string::npos) << opt << " missing from --help";
  }
}

TEST(tx_app, usage_errors_exit_2_and_say_what_to_do)
{
  const auto dir = whd::test::scratch_dir("usage");
  const std::string o = " -o '" + (dir / "x").string() + "'";
  for (const std::string& args :
       {std::string(""), "--mod bpsk" + o, "--frames -1" + o, "--nd 0" + o, "--nd 1048576" + o,
        "--datatype ci32" + o, "--corrupt-header 2" + o, "--cut 99999999" + o, "--phase-rad 1 --random-phase" + o,
        "--taps 65" + o, "--gain 0" + o, "--bogus" + o, "--first-seq 256" + o, "--snr-db nan" + o}) {
    const auto r = run_tx(args);
    EXPECT_EQ(r.status, 2) << "whd-tx " << args << "\n" << r.output;
    EXPECT_NE(r.output.find("whd-tx --help"), std::string::npos) << "whd-tx " << args;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "nothing written on a usage error";
  std::filesystem::remove_all(dir);
}

TEST(tx_app, runtime_errors_exit_1)
{
  const auto dir = whd::test::scratch_dir("runtime");
  EXPECT_EQ(run_tx("-q -o '" + (dir / "no/such/folder/x").string() + "'").status, 1);
  EXPECT_EQ(run_tx("-q -o '" + (dir / "x").string() + "' --payload '" + (dir / "missing.bin").string() + "'").status,
            1);
  std::filesystem::remove_all(dir);
}

TEST(tx_app, options_make_the_capture_they_describe)
{
  const auto dir = whd::test::scratch_dir("options");
  const auto r = run_tx("-q -o '" + (dir / "app").string() +
                        "' -d ci8 --raw --mod qpsk,qam16 --frames 4 --nd 4,5 --snr-db 20 --cfo-hz 1e5 --taps 3 "
                        "--tap-decay-db 2 --gain 0.5 --random-phase --seed 9 --lead 100 --gap 60 --tail 10 "
                        "--corrupt-header 1,3 --cut 50 --first-seq 7");
  ASSERT_EQ(r.status, 0) << r.output;

  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.nds = {4, 5};
  cfg.nof_frames = 4;
  cfg.impairments.snr_dB = 20.0;
  cfg.impairments.cfo_Hz = 1e5;
  cfg.impairments.nof_taps = 3;
  cfg.impairments.tap_decay_dB = 2.0;
  cfg.impairments.gain = 0.5;
  cfg.impairments.random_phase = true;
  cfg.seed = 9;
  cfg.lead_samples = 100;
  cfg.gap_samples = 60;
  cfg.tail_samples = 10;
  cfg.corrupt_header_frames = {1, 3};
  cfg.cut_samples = 50;
  cfg.first_seq = 7;
  bb::output_config out;
  out.base = dir / "lib";
  out.type = whd::datatype::ci8;
  out.raw = true;
  bb::write_capture(cfg, out);

  for (const char* ext : {".ci8", ".truth", ".frames.json"}) {
    EXPECT_EQ(whd::test::read_file_bytes(dir / (std::string("app") + ext)),
              whd::test::read_file_bytes(dir / (std::string("lib") + ext)))
        << ext;
  }
  const auto frames = whd::test::read_frames_json(dir / "app.frames.json");
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames[0].start, 100u);
  EXPECT_EQ(frames[1].seq, 8);
  EXPECT_FALSE(frames[1].header_ok);
  EXPECT_EQ(frames[1].mod, p::modulation::qam16);
  EXPECT_EQ(frames[1].nd, 5u);
  // SigMF by default: the pair and the sidecars.
  ASSERT_EQ(run_tx("-q -o '" + (dir / "sig").string() + "' --frames 1").status, 0);
  for (const char* ext : {".sigmf-data", ".sigmf-meta", ".truth", ".frames.json"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / (std::string("sig") + ext))) << ext;
  }
  const auto info = whd::transport::open_capture(dir / "sig.sigmf-meta");
  EXPECT_EQ(info.type, whd::datatype::cf32_le);
  ASSERT_TRUE(info.sample_rate_sps.has_value());
  EXPECT_EQ(*info.sample_rate_sps, p::SAMPLE_RATE_SPS);
  ASSERT_EQ(info.annotations.size(), 1u);
  EXPECT_EQ(info.annotations[0].sample_start, 1000u);
  EXPECT_EQ(info.annotations[0].label, "qpsk");
  std::filesystem::remove_all(dir);
}

} // namespace
