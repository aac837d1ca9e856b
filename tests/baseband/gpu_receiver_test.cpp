// The GPU backend against the CPU reference on the same input: frames, starts,
// modulation, Nd, seq, symbols, header failures equal; payload bits equal for the
// f32 link (any differing bit is counted and must come from a tie); every link
// form decodes the conformance captures without error.
#include <whd/baseband/decode_run.hpp>
#include <whd/baseband/generator.hpp>
#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include "gpu_guard.hpp"
#include "rx_test_util.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <thread>

namespace {

namespace bb = whd::baseband;
namespace tr = whd::transport;
using whd::test::vector_file;

struct run_output {
  bb::receive_result result;
  std::vector<uint8_t> payload;
};

run_output receive(bb::receiver& rx, const tr::sample_source& src)
{
  bb::memory_sink sink;
  run_output out;
  out.result = rx.run(src, sink);
  out.payload = sink.bytes();
  return out;
}

std::size_t bit_differences(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b)
{
  std::size_t n = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    n += std::size_t(std::popcount(unsigned(a[i] ^ b[i])));
  }
  return n + 8 * (std::max(a.size(), b.size()) - std::min(a.size(), b.size()));
}

void expect_same_report(const bb::receive_result& gpu, const bb::receive_result& cpu, const std::string& what)
{
  ASSERT_EQ(gpu.frames.size(), cpu.frames.size()) << what;
  for (std::size_t i = 0; i < cpu.frames.size(); ++i) {
    const auto &g = gpu.frames[i], &c = cpu.frames[i];
    EXPECT_EQ(g.start, c.start) << what << " frame " << i;
    EXPECT_EQ(g.mod, c.mod) << what << " frame " << i;
    EXPECT_EQ(g.nd, c.nd) << what << " frame " << i;
    EXPECT_EQ(g.seq, c.seq) << what << " frame " << i;
    EXPECT_EQ(g.symbols, c.symbols) << what << " frame " << i;
    EXPECT_EQ(g.truncated, c.truncated) << what << " frame " << i;
    EXPECT_EQ(g.payload_offset, c.payload_offset) << what << " frame " << i;
    EXPECT_EQ(g.payload_bytes, c.payload_bytes) << what << " frame " << i;
    EXPECT_EQ(g.mcs, c.mcs) << what << " frame " << i;
    EXPECT_EQ(g.rs_corrected, c.rs_corrected) << what << " frame " << i;
    EXPECT_EQ(g.rs_failed, c.rs_failed) << what << " frame " << i;
  }
  ASSERT_EQ(gpu.header_failures.size(), cpu.header_failures.size()) << what;
  for (std::size_t i = 0; i < cpu.header_failures.size(); ++i) {
    EXPECT_EQ(gpu.header_failures[i].start, cpu.header_failures[i].start) << what;
    EXPECT_EQ(gpu.header_failures[i].reason, cpu.header_failures[i].reason) << what;
  }
}

class gpu_vs_cpu : public ::testing::TestWithParam<std::string> {};

TEST_P(gpu_vs_cpu, conformance_capture_equal_for_every_link)
{
  WHD_REQUIRE_GPU();
  const std::string name = GetParam();
  const auto info = tr::open_capture(vector_file(name + ".sigmf-meta"));
  tr::capture_reader reader(info);
  bb::rx_config cfg;
  auto cpu = bb::make_cpu_receiver(cfg);
  const auto ref = receive(*cpu, reader);
  for (auto link : {tr::link_format::f32, tr::link_format::half, tr::link_format::int8}) {
    bb::gpu_config g;
    g.link = link;
    g.symbols_per_batch = 7; // several batches and frames split across them
    auto gpu = bb::make_gpu_receiver(cfg, g);
    const auto out = receive(*gpu, reader);
    const std::string what = name + " link " + std::string(tr::to_string(link));
    expect_same_report(out.result, ref.result, what);
    // The README claims GPU = CPU over every link. Packed cf32 (half: 2^-11 of a value;
    // int8: half a step of the block's peak / 127) could move a value near a
    // decision's edge (whd-rx --help says so), but on these captures none moves
    // (0 bits measured over half and int8 on the uncoded ones; a coded frame's FEC
    // corrects a moved soft value): a bit that differs here means the claim must be
    // narrowed, not the test loosened.
    const uint64_t differ = bit_differences(out.payload, ref.payload);
    EXPECT_EQ(differ, 0u) << what << ": " << differ << " of " << 8 * ref.payload.size() << " payload bits differ from the CPU's"
                          << (info.type != whd::datatype::cf32_le || link == tr::link_format::f32 ? " (the capture crosses as stored)"
                                                                                                  : " (packed cf32)");
  }
}

INSTANTIATE_TEST_SUITE_P(vectors, gpu_vs_cpu,
                         ::testing::Values("basic_qpsk_cf32", "basic_qam16_ci16", "impaired_mixed_ci8", "header_crc_fail_cf32",
                                           "truncated_ci16", "noise_only_ci8", "coded_mcs0_cf32", "coded_mcs1_ci16",
                                           "coded_mcs2_ci8", "coded_mcs7_cf32", "coded_lowsnr_mcs1_cf32",
                                           "coded_truncated_mcs2_ci16"));

TEST(gpu_receiver, memory_source_and_large_batches_agree_with_cpu)
{
  WHD_REQUIRE_GPU();
  const auto info = tr::open_capture(vector_file("impaired_mixed_ci8.sigmf-meta"));
  tr::capture_reader reader(info);
  std::vector<whd::cf32> samples(reader.size());
  reader.read(0, samples);
  tr::memory_source mem(samples);
  bb::rx_config cfg;
  const auto ref = receive(*bb::make_cpu_receiver(cfg), mem);
  for (std::size_t batch : {1u, 64u, 1u << 15}) {
    bb::gpu_config g;
    g.link = tr::link_format::f32;
    g.symbols_per_batch = batch;
    g.nof_streams = batch == 1 ? 1 : 3;
    // The frames handed over as the run goes (for the report) are the result's, each
    // whole and after its payload: with batch 1 every frame spans several chunks.
    bb::memory_sink sink;
    whd::test::frames_recorder handed([&] { return uint64_t(sink.bytes().size()); });
    bb::rx_config c = cfg;
    c.on_frames = handed.fn();
    run_output out;
    out.result = bb::make_gpu_receiver(c, g)->run(mem, sink);
    out.payload = sink.bytes();
    whd::test::expect_handed_over(handed, out.result, "batch " + std::to_string(batch));
    expect_same_report(out.result, ref.result, "batch " + std::to_string(batch));
    EXPECT_EQ(out.payload, ref.payload) << "batch " << batch;
  }
}

/// Packets of QPSK and 16-QAM in turn, 52 and 17 symbols, over 4 taps at 25 dB.
bb::memory_capture mixed_packets(std::size_t nof_frames, uint64_t seed)
{
  bb::capture_config c;
  c.mods = {whd::profile::modulation::qpsk, whd::profile::modulation::qam16};
  c.nds = {52, 17};
  c.nof_frames = nof_frames;
  c.seed = seed;
  c.impairments.snr_dB = 25;
  c.impairments.nof_taps = 4;
  bb::memory_capture cap;
  bb::generate_capture(c, cap);
  return cap;
}

TEST(gpu_receiver, one_receiver_decodes_capture_after_capture)
{
  // A receiver kept between captures (the Python module keeps one) reuses its slots
  // when they hold the next capture's chunks and makes them again when they do not
  // (a larger capture, another sample type): each capture decodes as on the CPU.
  WHD_REQUIRE_GPU();
  const bb::memory_capture cap = mixed_packets(300, 4242);
  const tr::memory_source packets(cap.samples());
  struct source {
    std::string name;
    std::unique_ptr<tr::capture_reader> reader;
  };
  std::vector<source> files;
  for (const char* name : {"impaired_mixed_ci8", "basic_qpsk_cf32", "truncated_ci16", "header_crc_fail_cf32"}) {
    files.push_back({name, std::make_unique<tr::capture_reader>(tr::open_capture(vector_file(std::string(name) + ".sigmf-meta")))});
  }
  const std::vector<std::pair<std::string, const tr::sample_source*>> order{
      {"small ci8", files[0].reader.get()},   {"small cf32", files[1].reader.get()}, {"packets cf32 (larger)", &packets},
      {"small cf32 again", files[3].reader.get()}, {"ci16", files[2].reader.get()}, {"small ci8 again", files[0].reader.get()}};
  bb::rx_config cfg;
  const auto gpu = bb::make_gpu_receiver(cfg);
  const auto cpu = bb::make_cpu_receiver(cfg);
  for (const auto& [what, src] : order) {
    const auto ref = receive(*cpu, *src);
    const auto out = receive(*gpu, *src);
    expect_same_report(out.result, ref.result, what);
    EXPECT_EQ(out.payload, ref.payload) << what;
    EXPECT_FALSE(ref.result.frames.empty()) << what;
  }
}

/// Keeps the payload, slowly, and what it was told before each write.
class slow_sink final : public bb::payload_sink {
public:
  explicit slow_sink(std::chrono::milliseconds per_write) : per_write_(per_write) {}
  void behind(bool more_waiting) override { told_ = more_waiting; }
  void write(std::span<const uint8_t> bytes) override
  {
    std::this_thread::sleep_for(per_write_);
    heard.push_back(told_.value_or(false));
    untold += !told_.has_value();
    told_.reset();
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  }
  const std::vector<uint8_t>& bytes() const noexcept { return bytes_; }
  std::vector<bool> heard; ///< per write: more were waiting
  int untold = 0;          ///< writes not told first

private:
  std::chrono::milliseconds per_write_;
  std::optional<bool> told_;
  std::vector<uint8_t> bytes_;
};

TEST(gpu_receiver, a_slot_takes_the_next_chunk_while_the_writer_writes_the_last)
{
  // A slot's input is free once its chunk is decoded and its output once written: with
  // one or two slots and a sink slower than the decode, the next chunk is read and
  // searched into a slot whose payload the writer is still writing, and the walk waits
  // for the writer before listing into it. Mixed modulations (payload offsets per
  // symbol) and a cf32 capture with non-finite samples (the writer marks frames from
  // the slot's lists) give the CPU's payload and report all the same.
  WHD_REQUIRE_GPU();
  bb::memory_capture cap = mixed_packets(120, 4545);
  std::vector<whd::cf32> samples(cap.samples().begin(), cap.samples().end());
  for (std::size_t i = 40000; i < samples.size(); i += 250000) {
    samples[i] = whd::cf32(std::numeric_limits<float>::quiet_NaN(), 0.0f);
  }
  const tr::memory_source src(samples);
  bb::rx_config cfg;
  const auto ref = receive(*bb::make_cpu_receiver(cfg), src);
  ASSERT_GT(ref.result.frames.size(), 90u);
  for (int streams : {1, 2}) {
    bb::gpu_config g;
    g.link = tr::link_format::f32;
    g.symbols_per_batch = 64; // many chunks
    g.nof_streams = streams;
    slow_sink slow(std::chrono::milliseconds(2));
    const auto res = bb::make_gpu_receiver(cfg, g)->run(src, slow);
    expect_same_report(res, ref.result, std::to_string(streams) + " slot(s)");
    EXPECT_EQ(slow.bytes(), ref.payload) << streams << " slot(s)";
  }
}

TEST(gpu_receiver, the_writer_tells_the_sinks_whether_chunks_wait_for_it)
{
  // A sink slower than the decode holds the writer up, so chunks wait for it: it is
  // told so before those writes (the automatic way of a payload file on tmpfs then
  // splits them), through whd-rx's tee, and the payload is the CPU's all the same.
  WHD_REQUIRE_GPU();
  const bb::memory_capture cap = mixed_packets(200, 4343);
  const tr::memory_source src(cap.samples());
  bb::rx_config cfg;
  const auto ref = receive(*bb::make_cpu_receiver(cfg), src);
  bb::gpu_config g;
  g.symbols_per_batch = 64; // many chunks
  slow_sink slow(std::chrono::milliseconds(3)), other(std::chrono::milliseconds(0));
  bb::tee_sink tee(&slow, &other);
  const auto res = bb::make_gpu_receiver(cfg, g)->run(src, tee);
  expect_same_report(res, ref.result, "slow sink");
  EXPECT_EQ(slow.bytes(), ref.payload);
  EXPECT_EQ(other.bytes(), ref.payload);
  ASSERT_GT(slow.heard.size(), 8u) << "chunks";
  EXPECT_EQ(slow.untold, 0) << "every write told first";
  EXPECT_EQ(other.untold, 0) << "every write told first, through the tee";
  EXPECT_EQ(slow.heard, other.heard) << "both told the same";
  EXPECT_GT(std::count(slow.heard.begin(), slow.heard.end(), true), 0) << "chunks waited for a sink 3 ms a write";
}

TEST(gpu_receiver, a_failed_hand_over_of_frames_stops_the_run_with_its_error)
{
  // The frames go to rx_config::on_frames from a thread beside the writer, as many a
  // call as the writer made whole meanwhile; a throw there (a report that cannot be
  // written) ends the run with that error, whether it comes at the first hand-over,
  // at the one that passes half the frames or at the one that holds the last, and
  // nothing is handed over after it.
  WHD_REQUIRE_GPU();
  const bb::memory_capture cap = mixed_packets(200, 4444);
  const tr::memory_source src(cap.samples());
  bb::gpu_config g;
  g.symbols_per_batch = 64; // many chunks
  bb::rx_config cfg;
  bb::memory_sink clean_sink;
  const auto clean = bb::make_gpu_receiver(cfg, g)->run(src, clean_sink);
  const std::size_t total = clean.frames.size();
  ASSERT_EQ(total, 200u);
  for (const std::size_t fail_past : {std::size_t(0), total / 2, total - 1}) {
    std::size_t handed = 0;
    int after_failure = -1; // hand-overs after the failed one
    bb::rx_config c = cfg;
    c.on_frames = [&](std::span<const bb::frame_result> f) {
      if (after_failure >= 0) {
        ++after_failure;
        return;
      }
      handed += f.size();
      if (handed > fail_past) {
        after_failure = 0;
        throw std::runtime_error("the report is full");
      }
    };
    bb::memory_sink sink;
    try {
      bb::make_gpu_receiver(c, g)->run(src, sink);
      ADD_FAILURE() << "failing past frame " << fail_past << ": the run went on";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "the report is full") << "failing past frame " << fail_past;
    }
    EXPECT_EQ(after_failure, 0) << "failing past frame " << fail_past << ": hand-overs after the failed one";
  }
}

TEST(gpu_receiver, a_second_gpu_that_is_not_needed_is_not_started)
{
  WHD_REQUIRE_GPU();
  if (whd::cuda::device_count() < 2) {
    GTEST_SKIP() << "needs 2 CUDA devices, " << whd::cuda::device_count() << " present";
  }
  // The first GPU keeps up whenever it is never waited for: with a start cost no
  // projected wait can pass, the second GPU takes no chunk and holds no buffer, and
  // -v's notes say why.
  const auto info = tr::open_capture(vector_file("impaired_mixed_ci8.sigmf-meta"));
  tr::capture_reader reader(info);
  bb::rx_config cfg;
  bb::gpu_config one;
  one.symbols_per_batch = 5;
  const auto a = receive(*bb::make_gpu_receiver(cfg, one), reader);
  bb::gpu_config two = one;
  two.nof_gpus = 2;
  two.start_cost_seconds = 1e9;
  const auto b = receive(*bb::make_gpu_receiver(cfg, two), reader);
  expect_same_report(b.result, a.result, "lazy second GPU");
  EXPECT_EQ(a.payload, b.payload);
  ASSERT_EQ(b.result.resources.chunks_per_gpu.size(), 2u);
  EXPECT_EQ(b.result.resources.chunks_per_gpu[1], 0u);
  EXPECT_EQ(b.result.resources.device_bytes, a.result.resources.device_bytes);
  bool said_why = false;
  for (const auto& n : b.result.notes) {
    said_why = said_why || n.find("not started") != std::string::npos;
  }
  EXPECT_TRUE(said_why);
}

TEST(gpu_receiver, two_gpus_give_the_bits_and_report_of_one)
{
  WHD_REQUIRE_GPU();
  if (whd::cuda::device_count() < 2) {
    GTEST_SKIP() << "needs 2 CUDA devices, " << whd::cuda::device_count() << " present";
  }
  // Coded frames too: a frame whose chunks went to both GPUs gathers its soft values
  // in one GPU's memory and runs its FEC on the other's stream.
  for (const char* name : {"impaired_mixed_ci8", "header_crc_fail_cf32", "truncated_ci16", "coded_mcs2_ci8", "coded_truncated_mcs2_ci16", "coded_mcs0_cf32"}) {
    const auto info = tr::open_capture(vector_file(std::string(name) + ".sigmf-meta"));
    tr::capture_reader reader(info);
    bb::rx_config cfg;
    bb::gpu_config one;
    one.symbols_per_batch = 5; // many batches
    const auto a = receive(*bb::make_gpu_receiver(cfg, one), reader);
    for (const bb::gpu_spread spread : {bb::gpu_spread::in_turn, bb::gpu_spread::when_busy}) {
      const std::string what = std::string(name) + (spread == bb::gpu_spread::in_turn ? ", in turn" : ", when busy");
      bb::gpu_config two = one;
      two.nof_gpus = 2;
      two.spread = spread; // in turn: batches alternate between the GPUs
      two.start = bb::gpu_start::at_once;
      const auto b = receive(*bb::make_gpu_receiver(cfg, two), reader);
      expect_same_report(b.result, a.result, what);
      EXPECT_EQ(a.payload, b.payload) << what;
      if (spread == bb::gpu_spread::in_turn) {
        ASSERT_EQ(b.result.resources.chunks_per_gpu.size(), 2u) << what;
        EXPECT_GT(b.result.resources.chunks_per_gpu[1], 0u) << what;
      }
    }
    // The second GPU started in the middle of the run (after chunk 3), then chunks in
    // turn: coded frames open across the start go on on both GPUs.
    bb::gpu_config later = one;
    later.nof_gpus = 2;
    later.spread = bb::gpu_spread::in_turn;
    later.start = bb::gpu_start::when_behind;
    later.start_after_chunks = 3;
    const std::string what = std::string(name) + ", second GPU started after chunk 3";
    const auto c = receive(*bb::make_gpu_receiver(cfg, later), reader);
    expect_same_report(c.result, a.result, what);
    EXPECT_EQ(a.payload, c.payload) << what;
    const auto& per = c.result.resources.chunks_per_gpu;
    ASSERT_EQ(per.size(), 2u) << what;
    const uint64_t nof_chunks = per[0] + per[1];
    if (nof_chunks > 4) {
      EXPECT_GT(per[1], 0u) << what;
      EXPECT_GE(per[0], 3u) << what;
    }
  }
}

} // namespace
