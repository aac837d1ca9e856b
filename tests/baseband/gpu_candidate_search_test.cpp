// The GPU candidate search (baseband/rx/gpu/src/gpu_search.hpp) against the definition,
// written here again from its words in float64 with direct window sums (no prefix
// sums, no tiles): integer captures give the same candidates bit for bit (window,
// coarse, metric; CFO within 1e-12 cycles/sample, the device's atan2 being within
// 2 ulp of the host's); cf32 captures the same windows and coarse, the metric within
// 1e-9 relative. Captures come from the project's transmitter (several frames,
// QPSK and 16-QAM, noise, CFO, multipath), quantised to ci8 and ci16, and from
// synthetic signals (a tone and a DC offset: long runs of crossings, grid candidates
// up to the end of the capture; zeros and noise: none). A capture searched as many
// chunks, each in a buffer of exactly its size, gives exactly the candidates of one
// chunk. Seeds are fixed and printed.
//
// This file is built with -ffp-contract=off (tests/baseband/CMakeLists.txt): the
// reference's metric is the IEEE expression without fused multiply-add, as the
// device's.
#include "gpu_search.hpp"

#include <whd/baseband/generator.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/baseband/rx_types.hpp>
#include <whd/transport/cuda.hpp>

#include "gpu_guard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <numbers>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace gs = whd::baseband::gpu;
namespace p = whd::profile;
namespace cu = whd::cuda;
using whd::cf32;

constexpr uint64_t L = p::SYMBOL_LEN;
constexpr uint64_t W = p::N;
const float THRESHOLD = bb::rx_config{}.detect_threshold;

uint64_t nof_positions(uint64_t total) { return total >= L + W ? total - L - W + 1 : 0; }

// ---------------------------------------------------------------- the reference

/// The definition (gpu_search.hpp), directly: every window sum from its N terms.
std::vector<gs::sync_candidate> reference(std::span<const cf32> in, float threshold)
{
  std::vector<cf32> r(in.begin(), in.end());
  for (cf32& v : r) {
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) {
      v = cf32{};
    }
  }
  const uint64_t npos = nof_positions(r.size());
  std::vector<double> m(npos), pre(npos), pim(npos);
  for (uint64_t n = 0; n < npos; ++n) {
    double s_re = 0.0, s_im = 0.0, r1 = 0.0, r2 = 0.0;
    for (uint64_t i = 0; i < W; ++i) {
      const double ar = r[n + i].real(), ai = r[n + i].imag();
      const double br = r[n + i + L].real(), bi = r[n + i + L].imag();
      s_re += ar * br + ai * bi;
      s_im += ar * bi - ai * br;
      r1 += ar * ar + ai * ai;
      r2 += br * br + bi * bi;
    }
    const double den = r1 * r2;
    m[n] = den > 0.0 ? (s_re * s_re + s_im * s_im) / den : 0.0;
    pre[n] = s_re;
    pim[n] = s_im;
  }
  const auto crossing = [&](uint64_t n) { return m[n] > double(threshold); };
  std::vector<gs::sync_candidate> out;
  for (uint64_t c = 0; c < npos; ++c) {
    if (!crossing(c)) {
      continue;
    }
    bool is_candidate = c == 0 || !crossing(c - 1);
    if (!is_candidate && c % L == 0 && c >= L) {
      is_candidate = true;
      for (uint64_t k = c - L; k <= c; ++k) {
        is_candidate = is_candidate && crossing(k);
      }
    }
    if (!is_candidate) {
      continue;
    }
    uint64_t best = c;
    for (uint64_t k = c; k < std::min(c + L, npos); ++k) {
      if (m[k] > m[best]) {
        best = k;
      }
    }
    out.push_back({c, best, std::atan2(pim[best], pre[best]) / (2.0 * std::numbers::pi * double(L)), float(m[best])});
  }
  return out;
}

// ---------------------------------------------------------------- captures

/// A capture of the project's transmitter: frames of QPSK and 16-QAM through noise,
/// CFO and three taps.
std::vector<cf32> transmitted(double snr_dB, uint64_t seed, std::vector<bb::frame_record>* frames = nullptr)
{
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
  cfg.nds = {3, 6};
  cfg.nof_frames = 5;
  cfg.lead_samples = 2501;
  cfg.gap_samples = 7003;
  cfg.tail_samples = 1709;
  cfg.seed = seed;
  cfg.impairments.snr_dB = snr_dB;
  cfg.impairments.cfo_Hz = 0.6e6;
  cfg.impairments.nof_taps = 3;
  bb::memory_capture cap;
  bb::generate_capture(cfg, cap);
  if (frames != nullptr) {
    *frames = cap.frames();
  }
  std::cout << "capture: seed " << seed << ", SNR " << snr_dB << " dB, " << cap.samples().size() << " samples\n";
  return cap.samples();
}

/// Samples rounded to integers of RMS `rms`, clipped to +-full (what a ci8 or ci16
/// capture holds), as the integers and as cf32 of those integers.
template <typename T>
std::vector<T> quantise(std::span<const cf32> x, double rms, double full, std::vector<cf32>& as_float)
{
  double power = 0.0;
  for (const cf32& v : x) {
    power += std::norm(v);
  }
  const double scale = rms / std::sqrt(power / double(x.size()));
  std::vector<T> q(2 * x.size());
  as_float.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double re = std::clamp(std::round(x[i].real() * scale), -full - 1.0, full);
    const double im = std::clamp(std::round(x[i].imag() * scale), -full - 1.0, full);
    q[2 * i] = static_cast<T>(re);
    q[2 * i + 1] = static_cast<T>(im);
    as_float[i] = cf32(float(re), float(im));
  }
  return q;
}

// ---------------------------------------------------------------- device runs

/// A capture on the device as float2, converted there from its stored form.
class device_capture {
public:
  /// `raw` holds `nof` samples of `type` as stored.
  device_capture(std::span<const std::byte> raw, whd::datatype type, std::size_t nof)
      : raw_(raw.size()), x_(nof), bad_(1)
  {
    WHD_CUDA_CHECK(cudaMemcpy(raw_.data(), raw.data(), raw.size(), cudaMemcpyHostToDevice));
    WHD_CUDA_CHECK(cudaMemset(bad_.data(), 0, sizeof(unsigned long long)));
    gs::convert_to_float2(raw_.data(), type, nof, x_.data(), bad_.data(), nullptr);
    WHD_CUDA_CHECK(cudaMemcpy(&nof_non_finite_, bad_.data(), sizeof nof_non_finite_, cudaMemcpyDeviceToHost));
  }
  template <typename T>
  static device_capture of(const std::vector<T>& v, whd::datatype type)
  {
    const auto bytes = std::as_bytes(std::span<const T>(v));
    return device_capture(bytes, type, bytes.size() / whd::bytes_per_sample(type));
  }
  const float2* data() const noexcept { return x_.data(); }
  std::size_t size() const noexcept { return x_.size(); }
  unsigned long long nof_non_finite() const noexcept { return nof_non_finite_; }

private:
  cu::device_buffer<std::byte> raw_;
  cu::device_buffer<float2> x_;
  cu::device_buffer<unsigned long long> bad_;
  unsigned long long nof_non_finite_ = 0;
};

struct search_output {
  gs::search_count count{};
  std::vector<gs::sync_candidate> found;
};

/// One run over [first, first + nof) of the capture at d_x (capture index 0), its
/// results copied back.
search_output run_once(gs::candidate_search& s, const float2* d_chunk, uint64_t first, std::size_t nof, uint64_t total,
                       uint64_t lo, uint64_t hi, cu::stream& st)
{
  s.run(d_chunk, first, nof, total, lo, hi, st.get());
  gs::search_results_host h(s.max_candidates());
  s.copy_results(h, st.get());
  st.synchronize();
  search_output out;
  out.count = h.count[0];
  const auto f = h.found();
  out.found.assign(f.begin(), f.end());
  return out;
}

/// The whole capture as one chunk.
search_output run_whole(gs::candidate_search& s, const device_capture& x, cu::stream& st)
{
  return run_once(s, x.data(), 0, x.size(), x.size(), 0, nof_positions(x.size()), st);
}

/// The capture searched `step` window starts at a time, each chunk copied into a
/// buffer of exactly its samples (so that a read past it is a fault, not a pass).
std::vector<gs::sync_candidate> run_chunked(gs::candidate_search& s, const device_capture& x, uint64_t step, cu::stream& st)
{
  const uint64_t total = x.size(), npos = nof_positions(total);
  std::vector<gs::sync_candidate> all;
  for (uint64_t lo = 0; lo < npos; lo += step) {
    const uint64_t hi = std::min(lo + step, npos);
    const uint64_t first = lo >= L + 1 ? lo - (L + 1) : 0;
    const uint64_t end = std::min(total, hi + 2 * L + W);
    cu::device_buffer<float2> chunk(end - first);
    WHD_CUDA_CHECK(cudaMemcpyAsync(chunk.data(), x.data() + first, chunk.size_bytes(), cudaMemcpyDeviceToDevice, st.get()));
    const auto got = run_once(s, chunk.data(), first, chunk.size(), total, lo, hi, st);
    EXPECT_EQ(got.count.overflow, 0u);
    all.insert(all.end(), got.found.begin(), got.found.end());
  }
  return all;
}

// ---------------------------------------------------------------- verdicts

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// The same candidates: windows and coarse equal; metric bit for bit (exact) or within
/// 1e-9 relative; CFO within 1e-12 cycles/sample. Reports the first mismatches.
void expect_same(const std::vector<gs::sync_candidate>& got, const std::vector<gs::sync_candidate>& want, bool exact,
                 const std::string& what)
{
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  double worst_metric = 0.0, worst_cfo = 0.0;
  for (std::size_t i = 0; i < got.size() && reported < 10; ++i) {
    const auto &g = got[i], &w = want[i];
    const double rel = std::abs(double(g.metric) - double(w.metric)) / std::max(double(w.metric), 1e-300);
    const double dcfo = std::abs(g.cfo_cps - w.cfo_cps);
    worst_metric = std::max(worst_metric, rel);
    worst_cfo = std::max(worst_cfo, dcfo);
    const bool metric_ok = exact ? same_bits(g.metric, w.metric) : rel <= 1e-9;
    if (g.window != w.window || g.coarse != w.coarse || !metric_ok || !(dcfo <= 1e-12)) {
      ADD_FAILURE() << what << ", candidate " << i << ": got window " << g.window << " coarse " << g.coarse << " metric "
                    << g.metric << " cfo " << g.cfo_cps << "; want " << w.window << " " << w.coarse << " " << w.metric
                    << " " << w.cfo_cps;
      ++reported;
    }
  }
  std::cout << what << ": " << got.size() << " candidates, worst metric error " << worst_metric << " (relative), worst cfo error "
            << worst_cfo << " cycles/sample\n";
}

constexpr std::size_t MAX_CHUNK = std::size_t(1) << 20;
constexpr std::size_t MAX_CANDIDATES = 4096;

// ---------------------------------------------------------------- tests

TEST(gpu_candidate_search, integer_captures_of_the_transmitter_give_the_definition_bit_for_bit)
{
  WHD_REQUIRE_GPU();
  gs::candidate_search search(MAX_CHUNK, MAX_CANDIDATES, THRESHOLD);
  cu::stream st;
  // 3 dB puts the preamble's metric near the threshold: many edges, decided by the
  // last bits of M.
  for (const double snr : {20.0, 3.0}) {
    std::vector<bb::frame_record> frames;
    const auto x = transmitted(snr, 4100 + uint64_t(snr), &frames);
    std::vector<cf32> as_float;
    const auto q8 = quantise<int8_t>(x, 24.0, 127.0, as_float);
    const auto want8 = reference(as_float, THRESHOLD);
    const auto d8 = device_capture::of(q8, whd::datatype::ci8);
    const auto got8 = run_whole(search, d8, st);
    EXPECT_EQ(got8.count.overflow, 0u);
    EXPECT_EQ(got8.count.nof_found, want8.size());
    expect_same(got8.found, want8, true, "ci8, SNR " + std::to_string(snr) + " dB");

    const auto q16 = quantise<int16_t>(x, 3000.0, 32767.0, as_float);
    const auto want16 = reference(as_float, THRESHOLD);
    const auto d16 = device_capture::of(q16, whd::datatype::ci16_le);
    expect_same(run_whole(search, d16, st).found, want16, true, "ci16, SNR " + std::to_string(snr) + " dB");

    if (snr >= 20.0) {
      // Independent of the definition: every frame sent has a candidate whose coarse
      // point lies on its preamble's plateau (guard start .. G later, plus the taps).
      for (const auto& f : frames) {
        const bool seen = std::any_of(want8.begin(), want8.end(), [&](const gs::sync_candidate& c) {
          return c.coarse >= f.start && c.coarse <= f.start + p::G + 8;
        });
        EXPECT_TRUE(seen) << "frame at " << f.start << " has no candidate on its preamble";
      }
    }
  }
}

TEST(gpu_candidate_search, cf32_captures_give_the_same_windows_and_coarse_points)
{
  WHD_REQUIRE_GPU();
  gs::candidate_search search(MAX_CHUNK, MAX_CANDIDATES, THRESHOLD);
  cu::stream st;
  std::vector<bb::frame_record> frames;
  auto x = transmitted(15.0, 4200, &frames);
  // Non-finite samples, in a gap and inside a frame's data: converted to 0.
  x[frames[1].start - 40] = cf32(std::numeric_limits<float>::quiet_NaN(), 0.0f);
  x[frames[2].start + 4 * L + 10] = cf32(0.0f, -std::numeric_limits<float>::infinity());
  const auto want = reference(x, THRESHOLD);
  const auto d = device_capture::of(x, whd::datatype::cf32_le);
  EXPECT_EQ(d.nof_non_finite(), 2u);
  const auto got = run_whole(search, d, st);
  EXPECT_EQ(got.count.nof_found, want.size());
  expect_same(got.found, want, false, "cf32, SNR 15 dB");
}

TEST(gpu_candidate_search, a_tone_and_a_dc_offset_give_one_candidate_per_symbol)
{
  WHD_REQUIRE_GPU();
  gs::candidate_search search(MAX_CHUNK, MAX_CANDIDATES, THRESHOLD);
  cu::stream st;
  // A tone of f cycles per sample as ci16 integers: M near 1 everywhere.
  constexpr double F = 0.01234;
  constexpr std::size_t TOTAL = 40 * L + 333;
  std::vector<int16_t> tone(2 * TOTAL);
  std::vector<cf32> tone_f(TOTAL);
  for (std::size_t i = 0; i < TOTAL; ++i) {
    const double ph = 2.0 * std::numbers::pi * std::remainder(F * double(i), 1.0);
    tone[2 * i] = int16_t(std::lround(1000.0 * std::cos(ph)));
    tone[2 * i + 1] = int16_t(std::lround(1000.0 * std::sin(ph)));
    tone_f[i] = cf32(tone[2 * i], tone[2 * i + 1]);
  }
  const uint64_t npos = nof_positions(TOTAL);
  std::vector<uint64_t> grid; // 0 (an edge), then every symbol
  for (uint64_t c = 0; c < npos; c += L) {
    grid.push_back(c);
  }
  const auto tone_want = reference(tone_f, THRESHOLD);
  const auto tone_got = run_whole(search, device_capture::of(tone, whd::datatype::ci16_le), st);
  expect_same(tone_got.found, tone_want, true, "tone");
  ASSERT_EQ(tone_got.found.size(), grid.size());
  // arg P = 2 pi f L, wrapped into one cycle per symbol.
  const double cfo = std::remainder(F * double(L), 1.0) / double(L);
  for (std::size_t i = 0; i < grid.size(); ++i) {
    EXPECT_EQ(tone_got.found[i].window, grid[i]);
    EXPECT_NEAR(tone_got.found[i].cfo_cps, cfo, 1e-6) << "candidate " << i;
  }

  // A DC offset as ci8, interrupted by a silence of 3 symbols. Where the two windows
  // hold the offset M is exactly 1 (a tie: coarse = window); where one window holds n
  // offset samples and the silence, M = n / N, a crossing for n > threshold x N. So the
  // first run of crossings ends where window 2 holds that many offset samples before the
  // silence, the second starts (an edge) where window 1 holds as many after it, and M
  // reaches 1 at the end of the silence.
  std::vector<int8_t> dc(2 * TOTAL);
  std::vector<cf32> dc_f(TOTAL);
  constexpr std::size_t QUIET_LO = 20 * L + 600, QUIET_HI = QUIET_LO + 3 * L;
  for (std::size_t i = 0; i < TOTAL; ++i) {
    const bool quiet = i >= QUIET_LO && i < QUIET_HI;
    dc[2 * i] = static_cast<int8_t>(quiet ? 0 : 5);
    dc[2 * i + 1] = static_cast<int8_t>(quiet ? 0 : -3);
    dc_f[i] = cf32(dc[2 * i], dc[2 * i + 1]);
  }
  const auto dc_want = reference(dc_f, THRESHOLD);
  const auto dc_got = run_whole(search, device_capture::of(dc, whd::datatype::ci8), st);
  expect_same(dc_got.found, dc_want, true, "DC offset");
  // The fewest offset samples n of a window for M = n / N to cross the threshold.
  const auto cross_n = uint64_t(std::floor(double(THRESHOLD) * double(W))) + 1;
  const uint64_t RUN1_LAST = QUIET_LO - L - cross_n, RUN2_FIRST = QUIET_HI - W + cross_n;
  // The last grid point of the first run has both windows in the offset (M = 1).
  ASSERT_LE((RUN1_LAST / L) * L + L + W, QUIET_LO);
  std::vector<uint64_t> dc_windows;
  for (uint64_t c = 0; c < npos; ++c) {
    const bool on_grid = c % L == 0 && c >= L;
    if (c == 0 || c == RUN2_FIRST || (on_grid && c <= RUN1_LAST) || (on_grid && c >= RUN2_FIRST + L)) {
      dc_windows.push_back(c);
    }
  }
  ASSERT_EQ(dc_got.found.size(), dc_windows.size());
  for (std::size_t i = 0; i < dc_windows.size(); ++i) {
    EXPECT_EQ(dc_got.found[i].window, dc_windows[i]) << "candidate " << i;
    EXPECT_EQ(dc_got.found[i].coarse, dc_windows[i] == RUN2_FIRST ? QUIET_HI : dc_windows[i]) << "candidate " << i;
    EXPECT_EQ(dc_got.found[i].metric, 1.0f) << "candidate " << i;
    EXPECT_EQ(dc_got.found[i].cfo_cps, 0.0) << "candidate " << i;
  }
}

TEST(gpu_candidate_search, chunks_with_overlapping_halos_give_the_candidates_of_one_chunk)
{
  WHD_REQUIRE_GPU();
  gs::candidate_search search(MAX_CHUNK, MAX_CANDIDATES, THRESHOLD);
  cu::stream st;
  std::vector<cf32> as_float;
  const auto q8 = quantise<int8_t>(transmitted(3.0, 4300), 24.0, 127.0, as_float);
  const auto d8 = device_capture::of(q8, whd::datatype::ci8);
  const auto whole = run_whole(search, d8, st).found;
  ASSERT_GT(whole.size(), 5u);
  // A DC offset: grid candidates on chunk boundaries (steps of whole symbols).
  std::vector<int8_t> dc(2 * (30 * L + 7), 9);
  const auto d_dc = device_capture::of(dc, whd::datatype::ci8);
  const auto dc_whole = run_whole(search, d_dc, st).found;
  ASSERT_EQ(dc_whole.size(), 29u);
  // Steps not a multiple of 32 (words of the crossing mask), whole symbols, and
  // shorter than a word.
  for (const uint64_t step : {uint64_t(7777), uint64_t(2 * L), uint64_t(L + 1), uint64_t(29)}) {
    expect_same(run_chunked(search, d8, step, st), whole, true, "ci8 in steps of " + std::to_string(step));
    expect_same(run_chunked(search, d_dc, step, st), dc_whole, true, "DC in steps of " + std::to_string(step));
  }
}

TEST(gpu_candidate_search, zeros_and_noise_give_none)
{
  WHD_REQUIRE_GPU();
  gs::candidate_search search(MAX_CHUNK, MAX_CANDIDATES, THRESHOLD);
  cu::stream st;
  const std::vector<int8_t> zeros(2 * 100000, 0);
  const auto z = run_whole(search, device_capture::of(zeros, whd::datatype::ci8), st);
  EXPECT_EQ(z.count.nof_found, 0u);
  EXPECT_EQ(z.count.overflow, 0u);
  constexpr uint64_t SEED = 4400;
  std::cout << "noise seed " << SEED << "\n";
  std::mt19937_64 rng(SEED);
  std::normal_distribution<double> g(0.0, 20.0);
  std::vector<int8_t> noise(2 * 200000);
  std::vector<cf32> noise_f(noise.size() / 2);
  for (std::size_t i = 0; i < noise.size(); ++i) {
    noise[i] = int8_t(std::clamp(std::round(g(rng)), -128.0, 127.0));
  }
  for (std::size_t i = 0; i < noise_f.size(); ++i) {
    noise_f[i] = cf32(noise[2 * i], noise[2 * i + 1]);
  }
  ASSERT_TRUE(reference(noise_f, THRESHOLD).empty());
  const auto n = run_whole(search, device_capture::of(noise, whd::datatype::ci8), st);
  EXPECT_EQ(n.count.nof_found, 0u);
  EXPECT_EQ(n.count.nof_candidates, 0u);
}

TEST(gpu_candidate_search, more_candidates_than_room_are_counted_and_flagged)
{
  WHD_REQUIRE_GPU();
  cu::stream st;
  std::vector<int8_t> dc(2 * (12 * L), 7);
  std::vector<cf32> dc_f(dc.size() / 2, cf32(7.0f, 7.0f));
  const auto want = reference(dc_f, THRESHOLD);
  ASSERT_EQ(want.size(), 11u);
  const auto d = device_capture::of(dc, whd::datatype::ci8);
  gs::candidate_search small(MAX_CHUNK, 3, THRESHOLD);
  const auto got = run_whole(small, d, st);
  EXPECT_EQ(got.count.nof_candidates, 3u);
  EXPECT_EQ(got.count.overflow, 1u);
  EXPECT_EQ(got.count.nof_found, want.size());
  expect_same(got.found, std::vector<gs::sync_candidate>(want.begin(), want.begin() + 3), true, "the first three");
  gs::candidate_search exact(MAX_CHUNK, want.size(), THRESHOLD);
  const auto all = run_whole(exact, d, st);
  EXPECT_EQ(all.count.overflow, 0u);
  expect_same(all.found, want, true, "room for all");
}

TEST(gpu_candidate_search, bad_ranges_are_refused_and_an_empty_one_finds_nothing)
{
  WHD_REQUIRE_GPU();
  cu::stream st;
  constexpr uint64_t TOTAL = 20 * L;
  const std::vector<int8_t> dc(2 * TOTAL, 5);
  const auto d = device_capture::of(dc, whd::datatype::ci8);
  const uint64_t npos = nof_positions(TOTAL);
  gs::candidate_search s(TOTAL, 16, THRESHOLD);
  const auto run = [&](uint64_t first, uint64_t nof, uint64_t lo, uint64_t hi) {
    s.run(d.data() + first, first, nof, TOTAL, lo, hi, st.get());
  };
  EXPECT_THROW(run(0, TOTAL, 0, npos + 1), std::invalid_argument);             // past the last position
  EXPECT_THROW(run(0, TOTAL, 10, 9), std::invalid_argument);                   // reversed
  EXPECT_THROW(run(5 * L, TOTAL - 5 * L, 6 * L, 7 * L), std::invalid_argument); // starts too late
  EXPECT_THROW(run(1, TOTAL - 1, L, 2 * L), std::invalid_argument);            // must start at 0
  EXPECT_THROW(run(0, 4 * L + W - 1, 0, 2 * L), std::invalid_argument);        // ends too early
  EXPECT_THROW(gs::candidate_search(TOTAL - 1, 16, THRESHOLD).run(d.data(), 0, TOTAL, TOTAL, 0, 1, st.get()),
               std::invalid_argument); // longer than max_chunk_samples
  EXPECT_NO_THROW(run(0, 4 * L + W, 0, 2 * L));
  EXPECT_NO_THROW(run(2 * L - 1 - L - 1, TOTAL - (L - 2), 2 * L - 1, npos)); // the latest first allowed
  const auto empty = run_once(s, d.data(), 0, TOTAL, TOTAL, 3 * L, 3 * L, st);
  EXPECT_EQ(empty.count.nof_found, 0u);
  EXPECT_EQ(empty.count.nof_candidates, 0u);
  // A capture shorter than two windows has no position.
  const std::vector<int8_t> short_capture(2 * (L + W - 1), 5);
  const auto d_short = device_capture::of(short_capture, whd::datatype::ci8);
  const auto none = run_once(s, d_short.data(), 0, d_short.size(), d_short.size(), 0, 0, st);
  EXPECT_EQ(none.count.nof_found, 0u);
}

} // namespace

namespace {

TEST(gpu_unpack_link_run, device_unpacks_every_packed_sample_as_the_host_reference_does)
{
  WHD_REQUIRE_GPU();
  namespace tr = whd::transport;
  // Blocks at several levels, a last block cut short, and marks in three blocks.
  const std::size_t n = 5 * tr::RUN_SCALE_BLOCK + 333;
  std::mt19937 g(9);
  std::normal_distribution<float> u(0.0f, 1.0f);
  const float levels[] = {1.0f, 1e-20f, 1e5f, 3e30f, 0.01f, 40.0f};
  std::vector<cf32> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float level = levels[i / tr::RUN_SCALE_BLOCK];
    x[i] = {level * u(g), level * u(g)};
  }
  x[17] = {std::numeric_limits<float>::quiet_NaN(), 0.0f};
  x[2 * tr::RUN_SCALE_BLOCK + 5] = {1.0f, std::numeric_limits<float>::infinity()};
  x[n - 1] = {-std::numeric_limits<float>::infinity(), 2.0f};
  for (const auto fmt : {tr::link_format::half, tr::link_format::int8}) {
    std::vector<std::byte> packed(n * tr::link_bytes_per_sample(fmt));
    std::vector<float> scales(tr::run_scales(n));
    tr::pack_cf32_run(x, fmt, packed, scales);
    cu::device_buffer<std::byte> d_link(packed.size());
    cu::device_buffer<float> d_scales(scales.size());
    cu::device_buffer<float2> d_stored(n), d_zeroed(n);
    WHD_CUDA_CHECK(cudaMemcpy(d_link.data(), packed.data(), packed.size(), cudaMemcpyHostToDevice));
    WHD_CUDA_CHECK(cudaMemcpy(d_scales.data(), scales.data(), scales.size() * sizeof(float), cudaMemcpyHostToDevice));
    gs::unpack_link_run(d_link.data(), d_scales.data(), fmt, n, d_stored.data(), d_zeroed.data(), nullptr);
    std::vector<float2> stored(n), zeroed(n);
    WHD_CUDA_CHECK(cudaMemcpy(stored.data(), d_stored.data(), n * sizeof(float2), cudaMemcpyDeviceToHost));
    WHD_CUDA_CHECK(cudaMemcpy(zeroed.data(), d_zeroed.data(), n * sizeof(float2), cudaMemcpyDeviceToHost));
    std::size_t marks = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const cf32 want = tr::unpack_run_sample(fmt, packed, i, scales[i / tr::RUN_SCALE_BLOCK]);
      const std::string what = std::string(tr::to_string(fmt)) + " sample " + std::to_string(i);
      if (std::isnan(want.real())) {
        ++marks;
        ASSERT_TRUE(std::isnan(stored[i].x) && std::isnan(stored[i].y)) << what;
        ASSERT_TRUE(zeroed[i].x == 0.0f && zeroed[i].y == 0.0f && !std::signbit(zeroed[i].x)) << what;
        continue;
      }
      ASSERT_EQ(std::bit_cast<uint64_t>(stored[i]), std::bit_cast<uint64_t>(want)) << what;
      ASSERT_EQ(std::bit_cast<uint64_t>(zeroed[i]), std::bit_cast<uint64_t>(want)) << what;
    }
    EXPECT_EQ(marks, 3u) << tr::to_string(fmt);
  }
  // f32 is no packing: nothing to unpack.
  cu::device_buffer<std::byte> b(8);
  cu::device_buffer<float> sc(1);
  cu::device_buffer<float2> o(1), z(1);
  EXPECT_THROW(gs::unpack_link_run(b.data(), sc.data(), tr::link_format::f32, 1, o.data(), z.data(), nullptr), std::invalid_argument);
}

} // namespace
