// No frame in captures that hold none, on both backends, at a size set by
// WHD_FALSE_ALARM_SAMPLES (default 2e7 samples a kind; 1e9 is run on
// the GPU machine): complex Gaussian noise, all-zero samples, a tone between bins
// (the largest preamble leakage) over noise at -30 dB, and a DC offset over noise at
// -6 dB. The tone and the offset repeat at lag 576, so the search flags a candidate
// a symbol and every one must be turned down by locating it (checked: the test
// counts them). The CPU backend runs on every core, the GPU backend in its default
// chunks; rx_false_alarm_test.cpp holds the CPU's smaller cases.
#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/baseband/sync.hpp>

#include "false_alarm_sources.hpp"
#include "gpu_guard.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;
using whd::test::function_source;

uint64_t samples_wanted()
{
  if (const char* e = std::getenv("WHD_FALSE_ALARM_SAMPLES"); e != nullptr && *e != '\0') {
    return uint64_t(std::stod(e));
  }
  return 20'000'000;
}

struct kind {
  std::string what;
  std::function<cf32(uint64_t)> sample;
  bool periodic; ///< repeats at lag 576: candidates expected
};

std::vector<kind> kinds()
{
  const double f = 79.5 / p::N;
  return {{"Gaussian noise (seed 0x5EED0002)", [](uint64_t n) { return whd::test::gaussian_noise(0x5EED0002, n); }, false},
          {"all-zero samples", [](uint64_t) { return cf32{}; }, false},
          {"tone at k = 79.5 with noise at -30 dB",
           [f](uint64_t n) { return whd::test::tone(f, n) + 0.0316f * whd::test::gaussian_noise(79, n); }, true},
          {"DC offset with noise at -6 dB", [](uint64_t n) { return cf32(0.3f, -0.2f) + 0.18f * whd::test::gaussian_noise(78, n); }, true}};
}

TEST(gpu_false_alarm, no_frame_in_noise_zeros_tones_or_dc_on_either_backend)
{
  WHD_REQUIRE_GPU();
  const uint64_t n = samples_wanted();
  for (const auto& k : kinds()) {
    const function_source src(n, k.sample);
    if (k.periodic) {
      bb::candidate_search search(bb::rx_config{});
      EXPECT_FALSE(search.find(src, 0, 100000).empty()) << k.what << ": no candidate, so nothing is exercised";
    }
    for (bool gpu : {true, false}) {
      const auto t0 = std::chrono::steady_clock::now();
      auto rx = gpu ? bb::make_gpu_receiver(bb::rx_config{}) : bb::make_cpu_receiver(bb::rx_config{});
      bb::memory_sink sink;
      const auto res = rx->run(src, sink);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const std::string what = k.what + ", " + std::to_string(n) + " samples, " + (gpu ? "GPU" : "CPU");
      std::cout << what << ": " << res.frames.size() << " frames, " << res.header_failures.size() << " header failures in " << s
                << " s\n";
      EXPECT_EQ(res.nof_samples, n) << what;
      EXPECT_TRUE(res.frames.empty()) << what << ": the first at " << (res.frames.empty() ? 0 : res.frames[0].start);
      EXPECT_TRUE(res.header_failures.empty())
          << what << ": the first at " << (res.header_failures.empty() ? 0 : res.header_failures[0].start);
      EXPECT_TRUE(sink.bytes().empty()) << what;
    }
  }
}

} // namespace
