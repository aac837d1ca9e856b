/// The tune cache: written by the tuner, read by the receiver, defaults when missing,
/// malformed or for another GPU.
#include <whd/fft/tune_cache.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace whd::fft {
namespace {

namespace fs = std::filesystem;

class fft_tune_cache : public ::testing::Test {
protected:
  void SetUp() override
  {
    dir_ = fs::temp_directory_path() / ("whd-fft-tune-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path file() const { return dir_ / "sub" / "fft-tune.json"; }
  fs::path dir_;
};

tuned_choice sample()
{
  tuned_choice c;
  c.device_name = "NVIDIA H100 80GB HBM3";
  c.batch = 65536;
  c[input_type::cf32] = variant{ordering::dit, exchange::shfl, twiddle::sincos, 8, true};
  c[input_type::cf16] = variant{ordering::stockham, exchange::smem, twiddle::table, 2, false};
  c[input_type::ci8] = variant{ordering::dit, exchange::smem, twiddle::table, 1, true};
  c.ns_per_fft = {2.5, 2.0, 1.75};
  return c;
}

TEST_F(fft_tune_cache, round_trips_for_the_same_gpu)
{
  save_tuned_choice(file(), sample(), "2026-11-22T00:00:00Z");
  const auto c = load_tuned_choice(file(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c.choice, sample().choice);
  EXPECT_EQ(c.ns_per_fft, sample().ns_per_fft);
  EXPECT_EQ(c.batch, 65536u);
  EXPECT_NE(c.source.find("tune cache"), std::string::npos) << c.source;
}

TEST_F(fft_tune_cache, defaults_for_another_gpu)
{
  save_tuned_choice(file(), sample(), "2026-11-22T00:00:00Z");
  const auto c = load_tuned_choice(file(), "NVIDIA H200");
  EXPECT_EQ(c.choice, tuned_choice{}.choice);
  EXPECT_NE(c.source.find("default"), std::string::npos) << c.source;
  EXPECT_NE(c.source.find("NVIDIA H200"), std::string::npos) << c.source;
}

TEST_F(fft_tune_cache, defaults_when_missing_or_malformed)
{
  EXPECT_EQ(load_tuned_choice(file(), "x").choice, tuned_choice{}.choice);
  EXPECT_NE(load_tuned_choice(file(), "x").source.find("no tune cache"), std::string::npos);
  fs::create_directories(file().parent_path());
  for (const char* text : {"not json", "{}", R"({"version": 1, "device": "x", "batch": 1})",
                           R"({"version": 1, "device": "x", "batch": 1, "choice": {"cf32": {"variant": "bad/name", "ns_per_fft": 1}, "cf16": {"variant": "bad", "ns_per_fft": 1}, "ci8": {"variant": "bad", "ns_per_fft": 1}}})",
                           R"({"version": 99, "device": "x"})"}) {
    std::ofstream(file()) << text;
    const auto c = load_tuned_choice(file(), "x");
    EXPECT_EQ(c.choice, tuned_choice{}.choice) << text;
    EXPECT_NE(c.source.find("default"), std::string::npos) << text << " -> " << c.source;
  }
}

TEST_F(fft_tune_cache, path_honours_overrides)
{
  const char* old = std::getenv("WHD_FFT_TUNE_CACHE");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("WHD_FFT_TUNE_CACHE", "/tmp/elsewhere.json", 1);
  EXPECT_EQ(tune_cache_path(), fs::path("/tmp/elsewhere.json"));
  ::unsetenv("WHD_FFT_TUNE_CACHE");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_xdg = xdg != nullptr ? xdg : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(tune_cache_path(), fs::path("/tmp/xdg/whd-rx/fft-tune.json"));
  if (saved_xdg.empty()) {
    ::unsetenv("XDG_CACHE_HOME");
  } else {
    ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  }
  if (!saved.empty()) {
    ::setenv("WHD_FFT_TUNE_CACHE", saved.c_str(), 1);
  }
}

} // namespace
} // namespace whd::fft
