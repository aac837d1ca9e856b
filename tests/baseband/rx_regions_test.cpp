// The CPU receiver goes through a capture in regions of 64 search blocks (4 194 304
// positions), and searches and locates the next region on threads of its own while
// it decodes the frames of one. On captures of several regions (packets over more
// than three; long frames across a region's end, corrupted headers and a frame cut
// off at the end) the result, the payload and the soft values do not depend on the
// thread count, and they are the generator's; a stop raised in the middle of a run
// leaves whole frames only: the first frames of the full run, their header
// failures, and their payload and soft values, to the byte; every run hands the
// frames of its result to rx_config::on_frames (the report written as the run goes),
// each once, in order, whole and after its payload, and none that a stop dropped;
// a read that fails while the next region is searched reaches the caller of run();
// the stage times the run reports are parts of it (those of one thread together fit
// within the run's wall time).
#include <whd/baseband/generator.hpp>
#include <whd/baseband/modulator.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/transport/capture.hpp>

#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iostream>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;

/// Positions of one region of the CPU receiver (cpu_receiver.cpp).
constexpr uint64_t REGION = 64 * bb::candidate_search::BLOCK;

/// One run: the result, the payload, and the soft values (f32).
struct run_output {
  whd::test::rx_output out;
  std::vector<uint8_t> llrs;
};

/// A payload sink that raises `stop` once `after` bytes have been written.
class stopping_sink final : public bb::payload_sink {
public:
  stopping_sink(std::atomic<bool>& stop, uint64_t after) : stop_(stop), after_(after) {}
  void write(std::span<const uint8_t> bytes) override
  {
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
    if (bytes_.size() >= after_) {
      stop_.store(true);
    }
  }
  const std::vector<uint8_t>& bytes() const noexcept { return bytes_; }

private:
  std::atomic<bool>& stop_;
  uint64_t after_;
  std::vector<uint8_t> bytes_;
};

/// A source whose reads from sample `from` on fail, as those of a file that went bad.
class failing_source final : public whd::transport::sample_source {
public:
  failing_source(const whd::transport::sample_source& inner, uint64_t from) : inner_(inner), from_(from) {}
  uint64_t size() const override { return inner_.size(); }
  whd::datatype type() const override { return inner_.type(); }
  std::size_t read(uint64_t first, std::span<whd::cf32> out) const override
  {
    check(first + out.size());
    return inner_.read(first, out);
  }
  std::size_t read_raw(uint64_t first, std::span<std::byte> out) const override
  {
    check(first + 1);
    return inner_.read_raw(first, out);
  }
  void release(uint64_t first, uint64_t end) const override { inner_.release(first, end); }

private:
  void check(uint64_t end) const
  {
    if (end > from_) {
      throw std::runtime_error("read past sample " + std::to_string(from_));
    }
  }
  const whd::transport::sample_source& inner_;
  uint64_t from_;
};

bb::rx_config config(unsigned threads, bb::memory_sink& llrs)
{
  bb::rx_config rc;
  rc.nof_threads = threads;
  rc.llr.sink = &llrs;
  rc.llr.format = bb::llr_format::f32;
  return rc;
}

run_output decode(const whd::transport::sample_source& src, unsigned threads)
{
  bb::memory_sink llrs;
  bb::rx_config rc = config(threads, llrs);
  bb::memory_sink sink;
  whd::test::frames_recorder handed{[&] { return uint64_t(sink.bytes().size()); }};
  rc.on_frames = handed.fn();
  run_output r;
  r.out.result = bb::make_cpu_receiver(rc)->run(src, sink);
  r.out.payload = sink.bytes();
  r.llrs = llrs.bytes();
  whd::test::expect_handed_over(handed, r.out.result, std::to_string(threads) + " threads");
  return r;
}

/// Runs that stopped early hold the first frames of `full` (a run to the end), whole:
/// the same frames, the header failures before the first frame left out, and the
/// payload and soft values of the frames kept, byte for byte.
void expect_first_frames_of(const run_output& full, const run_output& stopped, std::span<const uint8_t> sink_bytes,
                            const std::string& what)
{
  const auto& x = full.out.result;
  const auto& y = stopped.out.result;
  EXPECT_TRUE(y.interrupted) << what;
  const std::size_t n = y.frames.size();
  ASSERT_LT(n, x.frames.size()) << what << ": the stop ended the run early";
  // The header failures kept are the first of the full run's: all those before the
  // last frame kept, none after the first frame left out.
  const std::size_t m = y.header_failures.size();
  ASSERT_LE(m, x.header_failures.size()) << what;
  const uint64_t last_kept = n > 0 ? x.frames[n - 1].start : 0;
  EXPECT_TRUE(m == x.header_failures.size() || x.header_failures[m].start > last_kept) << what << ": a header failure is missing";
  EXPECT_TRUE(m == 0 || x.header_failures[m - 1].start < x.frames[n].start) << what << ": a header failure after the frames kept";
  // Compared through the common helper: the full run cut to the same frames.
  run_output cut = full;
  auto& c = cut.out.result;
  c.frames.resize(n);
  c.header_failures.resize(m);
  c.payload_bytes = x.frames[n].payload_offset;
  c.data_symbols = 0;
  for (const auto& f : c.frames) {
    c.data_symbols += f.symbols;
  }
  c.interrupted = true;
  cut.out.payload.resize(c.payload_bytes);
  whd::test::expect_identical(cut.out, stopped.out, what);
  EXPECT_TRUE(std::equal(sink_bytes.begin(), sink_bytes.end(), cut.out.payload.begin(), cut.out.payload.end()))
      << what << ": the bytes written are the payload of the frames kept";
  // f32 soft values: 32 a payload byte, in payload order.
  ASSERT_EQ(stopped.llrs.size(), c.payload_bytes * 32) << what;
  EXPECT_TRUE(std::equal(stopped.llrs.begin(), stopped.llrs.end(), full.llrs.begin())) << what << ": soft values";
}

/// Checks `one`, the one-thread run over `src`, against the generator's capture, and
/// that runs with 2 and 5 threads are identical to it. Then stops runs in the
/// middle, by the payload written and by a progress report, and checks what they leave.
void check_capture(const bb::capture_plan& plan, const bb::memory_capture& cap, const whd::transport::sample_source& src,
                   const run_output& one, const std::string& name)
{
  const auto errors = whd::test::check_against_plan(plan, cap.truth(), one.out, name + ", 1 thread", 1, 4);
  std::cout << name << ": " << src.size() << " samples, " << one.out.result.frames.size() << " frames, "
            << one.out.result.header_failures.size() << " header failures, " << errors.errors << " bit errors in "
            << errors.bits << " bits\n";
  EXPECT_LT(errors.ber(), 1e-3) << name << ": a capture the receiver decodes";
  EXPECT_EQ(one.llrs.size(), one.out.payload.size() * 32) << name << ": a soft value a payload bit";
  for (unsigned threads : {2u, 5u}) {
    const std::string what = name + ", " + std::to_string(threads) + " threads";
    const run_output many = decode(src, threads);
    whd::test::expect_identical(one.out, many.out, what);
    EXPECT_TRUE(many.llrs == one.llrs) << what << ": soft values differ";
  }

  for (unsigned threads : {1u, 2u, 5u}) {
    // Stopped once half the payload is written: in the middle of a region's frames,
    // while the next region is being located.
    {
      const std::string what = name + ", " + std::to_string(threads) + " threads, stopped by the payload written";
      std::atomic<bool> stop{false};
      bb::memory_sink llrs;
      bb::rx_config rc = config(threads, llrs);
      rc.stop = &stop;
      rc.symbols_per_batch = 256; // rounds of a few packets, so that the stop lands between frames
      stopping_sink sink(stop, one.out.payload.size() / 2);
      whd::test::frames_recorder handed{[&] { return uint64_t(sink.bytes().size()); }};
      rc.on_frames = handed.fn();
      run_output r;
      r.out.result = bb::make_cpu_receiver(rc)->run(src, sink);
      r.out.payload = sink.bytes();
      r.llrs = llrs.bytes();
      expect_first_frames_of(one, r, sink.bytes(), what);
      whd::test::expect_handed_over(handed, r.out.result, what);
    }
    // Stopped at the second region's progress report (from the calling thread):
    // the first region's frames, and no more.
    {
      const std::string what = name + ", " + std::to_string(threads) + " threads, stopped by progress";
      std::atomic<bool> stop{false};
      bb::memory_sink llrs;
      bb::rx_config rc = config(threads, llrs);
      rc.stop = &stop;
      bb::memory_sink sink;
      whd::test::frames_recorder handed{[&] { return uint64_t(sink.bytes().size()); }};
      rc.on_frames = handed.fn();
      uint64_t stopped_at = 0;
      run_output r;
      r.out.result = bb::make_cpu_receiver(rc)->run(src, sink, [&](uint64_t done, uint64_t) {
        if (done > 0 && stopped_at == 0) {
          stopped_at = done;
          stop.store(true);
        }
      });
      r.out.payload = sink.bytes();
      r.llrs = llrs.bytes();
      ASSERT_GT(stopped_at, 0u) << what << ": a second region";
      expect_first_frames_of(one, r, sink.bytes(), what);
      ASSERT_FALSE(r.out.result.frames.empty()) << what;
      EXPECT_LT(r.out.result.frames.back().start, stopped_at) << what << ": no frame of the region stopped at";
      whd::test::expect_handed_over(handed, r.out.result, what);
    }
  }
}

TEST(rx_regions, packets_over_several_regions)
{
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.nds = {12, 30, 5, 52};
  cfg.nof_frames = 805;
  cfg.corrupt_header_frames = {100, 401, 650};
  cfg.gap_samples = 777;
  // The last frame (nd 12) loses 6 symbols and a bit: 5 whole data symbols remain.
  cfg.cut_samples = 777 + 6 * p::SYMBOL_LEN + 100;
  cfg.seed = 5151;
  cfg.impairments.snr_dB = 25.0;
  cfg.impairments.cfo_Hz = 0.3e6;
  cfg.impairments.nof_taps = 3;
  cfg.impairments.random_phase = true;
  std::cout << "seed " << cfg.seed << "\n";
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  ASSERT_GT(cap.samples().size(), 3 * REGION) << "the packets span more than three regions";
  ASSERT_EQ(whd::test::symbols_present(plan.frames.back()), 5u) << "the last frame is cut";
  const whd::transport::memory_source src(cap.samples());
  const run_output one = decode(src, 1);
  check_capture(plan, cap, src, one, "packets");

  // Reads fail from the middle of the second region on: the first region's frames
  // (whose last one ends well before) are decoded and written while the second is
  // searched, and the search's error then reaches the caller.
  const failing_source bad(src, REGION + REGION / 2);
  for (unsigned threads : {1u, 2u, 5u}) {
    const std::string what = "packets, reads failing, " + std::to_string(threads) + " threads";
    bb::rx_config rc;
    rc.nof_threads = threads;
    bb::memory_sink sink;
    EXPECT_THROW(bb::make_cpu_receiver(rc)->run(bad, sink), std::runtime_error) << what;
    EXPECT_FALSE(sink.bytes().empty()) << what << ": the first region is decoded";
    ASSERT_LT(sink.bytes().size(), one.out.payload.size()) << what;
    EXPECT_TRUE(std::equal(sink.bytes().begin(), sink.bytes().end(), one.out.payload.begin())) << what << ": the first region's payload";
  }
}

TEST(rx_regions, long_frames_across_regions_with_failures_and_a_cut)
{
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qam16, p::modulation::qpsk};
  // Long frames whose data run past a region's end (their data are not searched:
  // the next region starts after them), packets between them.
  cfg.nds = {40, 5000, 3, 25, 8000, 60, 40, 5000};
  cfg.nof_frames = 8;
  cfg.corrupt_header_frames = {3, 6};
  cfg.lead_samples = 1234;
  cfg.gap_samples = 321;
  // The last frame (nd 5000) loses 3766 symbols and a bit: 1233 whole data symbols remain.
  cfg.cut_samples = 321 + 3766 * p::SYMBOL_LEN + 100;
  cfg.seed = 5252;
  cfg.impairments.snr_dB = 25.0;
  cfg.impairments.cfo_Hz = -0.8e6;
  cfg.impairments.nof_taps = 3;
  cfg.impairments.random_phase = true;
  std::cout << "seed " << cfg.seed << "\n";
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  ASSERT_EQ(plan.frames.size(), 8u);
  ASSERT_EQ(whd::test::symbols_present(plan.frames.back()), 1233u) << "the last frame is cut";
  const bool crosses = std::any_of(plan.frames.begin(), plan.frames.end(), [](const bb::frame_record& r) {
    return r.start < REGION && r.start + bb::frame_samples(r.nd) > REGION;
  });
  ASSERT_TRUE(crosses) << "a long frame crosses the first region's end";
  const whd::transport::memory_source src(cap.samples());
  check_capture(plan, cap, src, decode(src, 1), "long frames");
}

TEST(rx_regions, stage_times_are_parts_of_the_run)
{
  // Frames over more than two regions, so that the look-ahead searches and locates
  // beside the decode.
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.nds = {12, 3};
  cfg.nof_frames = 240;
  cfg.gap_samples = 36000;
  cfg.seed = 5353;
  cfg.impairments.snr_dB = 25.0;
  bb::memory_capture cap;
  bb::generate_capture(cfg, cap);
  ASSERT_GT(cap.samples().size(), 2 * REGION);
  const whd::transport::memory_source src(cap.samples());
  for (unsigned threads : {1u, 3u}) {
    const std::string what = std::to_string(threads) + " threads";
    bb::rx_config rc;
    rc.nof_threads = threads;
    bb::memory_sink sink;
    whd::test::frames_recorder handed{[&] { return uint64_t(sink.bytes().size()); }};
    rc.on_frames = handed.fn();
    const auto rx = bb::make_cpu_receiver(rc);
    const auto t0 = std::chrono::steady_clock::now();
    const bb::receive_result res = rx->run(src, sink);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(res.frames.size(), 240u) << what;
    std::map<std::string, double> stage;
    for (const auto& [name, sec] : res.stage_seconds) {
      EXPECT_FALSE(name.empty()) << what;
      EXPECT_GE(sec, 0.0) << what << ": " << name;
      EXPECT_TRUE(stage.emplace(name, sec).second) << what << ": " << name << " listed twice";
    }
    auto sum = [&](std::initializer_list<std::string_view> keys) {
      double t = 0;
      for (std::string_view k : keys) {
        const auto it = std::find_if(stage.begin(), stage.end(), [&](const auto& e) { return e.first.starts_with(k); });
        EXPECT_NE(it, stage.end()) << what << ": no stage '" << k << "'";
        t += it == stage.end() ? 0.0 : it->second;
      }
      return t;
    };
    // One region is searched and located at a time (the first on the calling thread,
    // each later one on the look-ahead's): together they fit in the run.
    EXPECT_LE(sum({"search", "locate"}), wall) << what;
    // The calling thread's stages are disjoint parts of the run.
    EXPECT_LE(sum({"wait for the next", "walk", "decode", "payload", "frames handed"}), wall) << what;
    // Every stage that had work did some.
    EXPECT_GT(sum({"search"}), 0.0) << what;
    EXPECT_GT(sum({"locate"}), 0.0) << what;
    EXPECT_GT(sum({"decode"}), 0.0) << what;
  }
}

} // namespace
