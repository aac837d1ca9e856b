/// @file rx_test_util.hpp
/// Helpers of the receiver validation tests: a scratch folder per test, one run
/// of the CPU receiver, and the verdict on its result against what the capture
/// generator planned and sent (frame records and payload truth), which is
/// independent of the receive chain.
#pragma once

#include <whd/baseband/generator.hpp>
#include <whd/baseband/modulator.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/transport/capture.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

namespace whd::test {

/// The loopback grids' parameters (a modulation by a sample type) and their test names,
/// e.g. qpsk_ci8.
inline auto mod_x_datatype_values()
{
  return ::testing::Combine(::testing::Values(whd::profile::modulation::qpsk, whd::profile::modulation::qam16),
                            ::testing::Values(whd::datatype::cf32_le, whd::datatype::ci16_le, whd::datatype::ci8));
}
inline std::string mod_x_datatype_name(const ::testing::TestParamInfo<std::tuple<whd::profile::modulation, whd::datatype>>& info)
{
  return std::string(whd::profile::to_string(std::get<0>(info.param))) + "_" + std::string(whd::to_string(std::get<1>(info.param)));
}

/// A fresh empty folder under the system's temporary folder (mkdtemp, so tests
/// running at once never share one), removed with its contents at scope exit.
class temp_dir {
public:
  explicit temp_dir(const std::string& tag)
  {
    std::string name = (std::filesystem::temp_directory_path() / ("whd-rx-" + tag + "-XXXXXX")).string();
    if (::mkdtemp(name.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary folder like " + name);
    }
    path_ = name;
  }
  ~temp_dir()
  {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }

private:
  std::filesystem::path path_;
};

/// Every candidate of a source (candidate_search over all of it, in regions of
/// `region` positions so that region edges are exercised), with `threads` scanning
/// blocks in parallel and an optional block filter.
inline std::vector<whd::baseband::detection> all_detections(const whd::transport::sample_source& src, unsigned threads,
                                                           whd::baseband::block_filter* filter = nullptr,
                                                           uint64_t region = uint64_t(1) << 21)
{
  whd::baseband::rx_config rc;
  rc.nof_threads = threads;
  whd::baseband::candidate_search search(rc);
  search.set_block_filter(filter);
  std::vector<whd::baseband::detection> out;
  const uint64_t npos = whd::baseband::candidate_search::nof_positions(src.size());
  for (uint64_t lo = 0; lo < npos; lo += region) {
    const auto part = search.find(src, lo, lo + region);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

inline void expect_same_detections(const std::vector<whd::baseband::detection>& got, const std::vector<whd::baseband::detection>& want,
                                   const std::string& what)
{
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].window, want[i].window) << what << ", detection " << i;
    EXPECT_EQ(got[i].coarse, want[i].coarse) << what << ", detection " << i;
    EXPECT_EQ(std::memcmp(&got[i].metric, &want[i].metric, sizeof(float)), 0) << what << ", detection " << i;
    EXPECT_EQ(std::memcmp(&got[i].cfo_cps, &want[i].cfo_cps, sizeof(double)), 0) << what << ", detection " << i;
  }
}

/// What one receiver run produced.
struct rx_output {
  whd::baseband::receive_result result;
  std::vector<uint8_t> payload;
};

/// Runs a receiver over a whole source, the payload into memory.
inline rx_output run_receiver(whd::baseband::receiver& rx, const whd::transport::sample_source& src)
{
  whd::baseband::memory_sink sink;
  rx_output out;
  out.result = rx.run(src, sink);
  out.payload = sink.bytes();
  return out;
}

/// What a receiver hands to rx_config::on_frames (set it to fn()), and whether
/// every frame's payload had reached the sink when it was handed over (`written`:
/// the sink's bytes so far, read on the thread that hands the frames over).
struct frames_recorder {
  explicit frames_recorder(std::function<uint64_t()> w = {}) : written(std::move(w)) {}

  std::function<uint64_t()> written;
  std::vector<whd::baseband::frame_result> frames;
  bool payload_first = true;

  whd::baseband::frames_fn fn()
  {
    return [this](std::span<const whd::baseband::frame_result> f) {
      for (const auto& x : f) {
        payload_first = payload_first && (!written || written() >= x.payload_offset + x.payload_bytes);
      }
      frames.insert(frames.end(), f.begin(), f.end());
    };
  }
};

/// Runs the CPU receiver over a whole source.
inline rx_output run_cpu_receiver(const whd::transport::sample_source& src, const whd::baseband::rx_config& cfg)
{
  auto rx = whd::baseband::make_cpu_receiver(cfg);
  return run_receiver(*rx, src);
}

/// Two runs of a receiver on one source agree exactly: the same frames (every field,
/// CFO and SNR bit for bit, bad samples and the symbols that held them), the same
/// header failures, the same payload bytes. Failures are reported under `what`.
inline void expect_identical(const rx_output& a, const rx_output& b, const std::string& what)
{
  const auto& x = a.result;
  const auto& y = b.result;
  EXPECT_EQ(x.nof_samples, y.nof_samples) << what;
  EXPECT_EQ(x.interrupted, y.interrupted) << what;
  EXPECT_EQ(x.data_symbols, y.data_symbols) << what;
  EXPECT_EQ(x.payload_bytes, y.payload_bytes) << what;
  ASSERT_EQ(x.frames.size(), y.frames.size()) << what;
  for (std::size_t i = 0; i < x.frames.size(); ++i) {
    const auto &f = x.frames[i], &g = y.frames[i];
    const std::string at = what + ", frame " + std::to_string(i);
    EXPECT_EQ(f.start, g.start) << at;
    EXPECT_EQ(f.mod, g.mod) << at;
    EXPECT_EQ(f.nd, g.nd) << at;
    EXPECT_EQ(f.seq, g.seq) << at;
    EXPECT_EQ(f.symbols, g.symbols) << at;
    EXPECT_EQ(f.truncated, g.truncated) << at;
    EXPECT_EQ(f.cfo_Hz, g.cfo_Hz) << at; // exactly: the same arithmetic in the same order
    EXPECT_EQ(f.snr_dB, g.snr_dB) << at;
    EXPECT_EQ(f.payload_offset, g.payload_offset) << at;
    EXPECT_EQ(f.payload_bytes, g.payload_bytes) << at;
    EXPECT_EQ(f.bad_samples, g.bad_samples) << at;
    EXPECT_EQ(f.bad_symbols.size(), g.bad_symbols.size()) << at;
    for (std::size_t k = 0; k < std::min(f.bad_symbols.size(), g.bad_symbols.size()); ++k) {
      EXPECT_EQ(f.bad_symbols[k].first, g.bad_symbols[k].first) << at << ", bad run " << k;
      EXPECT_EQ(f.bad_symbols[k].count, g.bad_symbols[k].count) << at << ", bad run " << k;
    }
  }
  ASSERT_EQ(x.header_failures.size(), y.header_failures.size()) << what;
  for (std::size_t i = 0; i < x.header_failures.size(); ++i) {
    EXPECT_EQ(x.header_failures[i].start, y.header_failures[i].start) << what;
    EXPECT_EQ(x.header_failures[i].reason, y.header_failures[i].reason) << what;
    EXPECT_EQ(x.header_failures[i].bad_samples, y.header_failures[i].bad_samples) << what;
  }
  ASSERT_EQ(a.payload.size(), b.payload.size()) << what;
  std::size_t differ = 0, first = a.payload.size();
  for (std::size_t i = 0; i < a.payload.size(); ++i) {
    if (a.payload[i] != b.payload[i]) {
      first = std::min(first, i);
      ++differ;
    }
  }
  EXPECT_EQ(differ, 0u) << what << ": payload bytes differ, the first at " << first;
}

/// The frames a run handed over are its result's frames, each once, in order, as
/// they are in the result (every field: a frame is handed over only once whole),
/// each after its payload.
inline void expect_handed_over(const frames_recorder& rec, const whd::baseband::receive_result& res, const std::string& what)
{
  rx_output a, b;
  a.result = res;
  b.result = res;
  b.result.frames = rec.frames;
  expect_identical(a, b, what + ", the frames handed over");
  EXPECT_TRUE(rec.payload_first) << what << ": a frame was handed over before its payload reached the sink";
}

/// f32 soft values as written by a receiver (rx_config::llr, llr_format::f32).
inline std::vector<float> as_floats(const std::vector<uint8_t>& b)
{
  std::vector<float> f(b.size() / 4);
  if (!f.empty()) { // memcpy's pointers must not be null, even for no bytes
    std::memcpy(f.data(), b.data(), f.size() * 4);
  }
  return f;
}

/// The samples quantised as a ci8 capture holds them: integers within +-127 at
/// about -12 dBFS RMS.
inline void quantise_like_ci8(std::vector<whd::cf32>& samples)
{
  double e = 0.0;
  for (const auto& v : samples) {
    e += std::norm(v);
  }
  const float scale = float(127.0 / 4.0 / std::sqrt(e / double(samples.size())));
  for (auto& v : samples) {
    v = {std::clamp(std::round(v.real() * scale), -127.0f, 127.0f), std::clamp(std::round(v.imag() * scale), -127.0f, 127.0f)};
  }
}

/// Bit errors against the truth, the bits compared, and the errors per data tone
/// d = 0..335 (the tone that carried the bit, profile §4).
struct bit_count {
  uint64_t errors = 0;
  uint64_t bits = 0;
  std::array<uint64_t, whd::profile::NOF_DATA> per_tone{};
  bit_count& operator+=(const bit_count& o)
  {
    errors += o.errors;
    bits += o.bits;
    for (std::size_t d = 0; d < per_tone.size(); ++d) {
      per_tone[d] += o.per_tone[d];
    }
    return *this;
  }
  double ber() const { return bits ? double(errors) / double(bits) : 0.0; }
};

/// Whole data symbols of a listed frame inside the capture, from the plan alone.
inline uint32_t symbols_present(const whd::baseband::frame_record& r)
{
  namespace p = whd::profile;
  if (r.samples_present >= whd::baseband::frame_samples(r.nd)) {
    return r.nd;
  }
  const uint64_t whole = r.samples_present / p::SYMBOL_LEN;
  return uint32_t(whole > uint64_t(p::FIRST_DATA_SYMBOL) ? whole - p::FIRST_DATA_SYMBOL : 0);
}

/// Judges a receiver run against the generator's plan and truth (the payload bytes
/// of the listed frames with intact headers, whole frames, in order):
/// - exactly the listed intact frames are reported, in order, with their mod, nd
///   and seq; `start` within [start - max_early, start + max_late] of the
///   transmitted start (a multipath channel delays the energy by a few samples);
///   symbols, truncation, payload offset and size as the plan implies;
/// - exactly the listed corrupted headers are reported as failures;
/// - each frame's payload is the truth of its symbols present, bit by bit.
/// Reported frames are matched to transmitted ones by start, so a missed or an
/// extra frame is named as such and the others are still compared. Failures are
/// reported under `what`. The returned count holds the bit errors of the matched
/// frames (all of them when the receiver found exactly the frames sent).
inline bit_count check_against_plan(const whd::baseband::capture_plan& plan, std::span<const uint8_t> truth,
                                    const rx_output& out, const std::string& what, int64_t max_early = 2,
                                    int64_t max_late = 4)
{
  namespace p = whd::profile;
  const auto& res = out.result;
  EXPECT_EQ(res.nof_samples, plan.nof_samples) << what;
  auto near = [&](uint64_t located, uint64_t sent) {
    return int64_t(located) >= int64_t(sent) - max_early && int64_t(located) <= int64_t(sent) + max_late;
  };
  bit_count count;
  std::size_t truth_pos = 0, next_frame = 0, next_failure = 0;
  uint64_t expected_bytes = 0;
  for (const auto& r : plan.frames) {
    const std::string at = what + ", frame " + std::to_string(r.index) + " sent at " + std::to_string(r.start);
    if (!r.header_ok) {
      while (next_failure < res.header_failures.size() && !near(res.header_failures[next_failure].start, r.start) &&
             res.header_failures[next_failure].start < r.start) {
        ADD_FAILURE() << what << ": a header failure reported at " << res.header_failures[next_failure].start
                      << " where no corrupted header was sent";
        ++next_failure;
      }
      if (next_failure < res.header_failures.size() && near(res.header_failures[next_failure].start, r.start)) {
        ++next_failure;
      } else {
        ADD_FAILURE() << at << ": its corrupted header is not reported";
      }
      continue;
    }
    const auto bps = std::size_t(p::bytes_per_symbol(r.mod));
    const uint32_t present = symbols_present(r);
    if (truth_pos + std::size_t(r.nd) * bps > truth.size()) {
      ADD_FAILURE() << at << ": the truth is shorter than the plan's frames";
      return count;
    }
    const auto frame_truth = truth.subspan(truth_pos, present * bps);
    truth_pos += std::size_t(r.nd) * bps;
    expected_bytes += present * bps;
    while (next_frame < res.frames.size() && !near(res.frames[next_frame].start, r.start) &&
           res.frames[next_frame].start < r.start) {
      const auto& x = res.frames[next_frame];
      ADD_FAILURE() << what << ": a frame reported at " << x.start << " (" << p::to_string(x.mod) << ", nd " << x.nd
                    << ", seq " << int(x.seq) << ") where none was sent";
      ++next_frame;
    }
    if (next_frame >= res.frames.size() || !near(res.frames[next_frame].start, r.start)) {
      ADD_FAILURE() << at << " (" << p::to_string(r.mod) << ", nd " << r.nd << ", seq " << int(r.seq)
                    << "): not found";
      continue;
    }
    const auto& f = res.frames[next_frame++];
    EXPECT_EQ(f.mod, r.mod) << at;
    EXPECT_EQ(f.nd, r.nd) << at;
    EXPECT_EQ(f.seq, r.seq) << at;
    EXPECT_EQ(f.symbols, present) << at;
    EXPECT_EQ(f.truncated, present < r.nd) << at;
    EXPECT_EQ(f.payload_bytes, uint64_t(f.symbols) * bps) << at;
    if (f.mod != r.mod || f.payload_offset + f.payload_bytes > out.payload.size()) {
      ADD_FAILURE() << at << ": its payload cannot be compared";
      continue;
    }
    // Bit errors, each assigned to its data tone: within a symbol, bit j (MSB
    // first) rides on tone j / B (§4).
    const auto got = std::span(out.payload).subspan(f.payload_offset, std::min<std::size_t>(f.payload_bytes, frame_truth.size()));
    count.bits += uint64_t(got.size()) * 8;
    const auto bits_per_tone = std::size_t(p::bits_per_tone(f.mod));
    for (std::size_t i = 0; i < got.size(); ++i) {
      const unsigned x = unsigned(got[i] ^ frame_truth[i]);
      for (unsigned b = 0; b < 8; ++b) {
        if (x & (0x80u >> b)) {
          ++count.errors;
          ++count.per_tone[(i % bps * 8 + b) / bits_per_tone];
        }
      }
    }
  }
  for (; next_frame < res.frames.size(); ++next_frame) {
    ADD_FAILURE() << what << ": a frame reported at " << res.frames[next_frame].start << " where none was sent";
  }
  for (; next_failure < res.header_failures.size(); ++next_failure) {
    ADD_FAILURE() << what << ": a header failure reported at " << res.header_failures[next_failure].start
                  << " where no corrupted header was sent";
  }
  EXPECT_EQ(truth_pos, truth.size()) << what << ": the truth holds more than the plan's frames";
  uint64_t offset = 0;
  for (const auto& f : res.frames) {
    EXPECT_EQ(f.payload_offset, offset) << what << ": frame at " << f.start;
    offset += f.payload_bytes;
  }
  EXPECT_EQ(res.payload_bytes, offset) << what;
  EXPECT_EQ(out.payload.size(), offset) << what << ": payload bytes written / bytes the frames report";
  EXPECT_EQ(out.payload.size(), expected_bytes) << what << ": payload bytes written / bytes of the frames sent";
  return count;
}

} // namespace whd::test
