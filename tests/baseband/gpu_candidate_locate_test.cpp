// The GPU candidate locator (baseband/rx/gpu/src/gpu_locate.hpp) against the host's
// steps on the same detections (candidate_locator::examine): status, start, fft0, header
// fields and non-finite counts exactly; CFO, SNR and the channel inverse to rounding
// (the two sides' 512-point FFTs are different float code, liquid-dsp's and the
// project's device transform); the fused kernel's parameters as make_frame_params
// makes them from the host's result; candidates whose windows leave the chunk
// reported as needs_more and the others as on the whole capture.
#include "gpu_locate.hpp"
#include "gpu_symbol_decoder.hpp"

#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/generator.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/transport/capture.hpp>
#include <whd/transport/cuda.hpp>

#include "gpu_guard.hpp"
#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <vector_functions.h>

namespace {

namespace bb = whd::baseband;
namespace gpu = whd::baseband::gpu;
namespace p = whd::profile;
namespace cu = whd::cuda;
using whd::cf32;

constexpr uint64_t L = p::SYMBOL_LEN;
constexpr uint64_t HEAD = 2 * L + p::N; // the three FFT windows from fft0

// Tolerances: the CFO comes from the same double sums on both sides (only atan2
// differs, by ulps); SNR and 1/H carry the float FFTs' difference (some 1e-6 relative).
constexpr double CFO_TOL_CPS = 1e-9;
constexpr double SNR_TOL_DB = 0.01;
/// Below this the SNR is a difference of nearly equal terms (noise candidates), and
/// its dB value is not stable to rounding: both sides must then be as low.
constexpr double SNR_FLOOR_DB = -30.0;
constexpr double INV_REL_L2 = 1e-4;
constexpr float ROT_TOL = 1e-6f;

/// Candidates at every crossing of the capture (each a window of the search opened
/// there): many per frame, off the plateau's peak too.
std::vector<bb::detection> all_detections(const whd::transport::sample_source& src, const bb::rx_config& rc)
{
  const auto grid = whd::test::all_detections(src, rc.nof_threads);
  std::vector<bb::detection> out;
  for (const auto& g : grid) {
    // The search's candidate, then one more a little later in its window (another coarse point).
    out.push_back(g);
    bb::detection later = g;
    later.coarse = g.coarse + 3;
    out.push_back(later);
  }
  return out;
}

/// The host's locator with the smoother rx_config asks for.
struct host_locator {
  explicit host_locator(const bb::rx_config& rc) : smoother(bb::make_channel_smoother(rc)), loc(rc, smoother.get()) {}
  bb::located_detection locate(const whd::transport::sample_source& src, const bb::detection& d) { return loc.examine(src, d); }
  std::unique_ptr<bb::channel_smoother> smoother;
  bb::candidate_locator loc;
};

/// What the device said about a batch of candidates.
struct gpu_result {
  std::vector<gpu::located_candidate> located;
  std::vector<gpu::frame_params> params;
};

/// Uploads samples [first, first + nof) of `x` and the detections as candidates, runs
/// the locator with a device count of `count` and copies every slot back.
gpu_result run_gpu(gpu::candidate_locator& loc, std::span<const cf32> x, uint64_t first, std::size_t nof,
                   const std::vector<bb::detection>& dets, uint32_t count)
{
  std::vector<float2> chunk(nof);
  for (std::size_t i = 0; i < nof; ++i) {
    chunk[i] = make_float2(x[first + i].real(), x[first + i].imag());
  }
  std::vector<gpu::sync_candidate> cands;
  for (const auto& d : dets) {
    cands.push_back({d.window, d.coarse, d.cfo_cps, d.metric});
  }
  cu::device_buffer<float2> d_x(std::max<std::size_t>(nof, 1));
  cu::device_buffer<gpu::sync_candidate> d_c(std::max<std::size_t>(cands.size(), 1));
  cu::device_buffer<uint32_t> d_n(1);
  cu::stream st;
  WHD_CUDA_CHECK(cudaMemcpyAsync(d_x.data(), chunk.data(), nof * sizeof(float2), cudaMemcpyHostToDevice, st.get()));
  WHD_CUDA_CHECK(cudaMemcpyAsync(d_c.data(), cands.data(), cands.size() * sizeof(gpu::sync_candidate), cudaMemcpyHostToDevice, st.get()));
  WHD_CUDA_CHECK(cudaMemcpyAsync(d_n.data(), &count, sizeof count, cudaMemcpyHostToDevice, st.get()));
  loc.run(d_x.data(), first, nof, x.size(), d_c.data(), d_n.data(), st.get());
  gpu_result r;
  r.located.resize(loc.max_candidates());
  r.params.resize(loc.max_candidates());
  WHD_CUDA_CHECK(cudaMemcpyAsync(r.located.data(), loc.d_located(), r.located.size() * sizeof(gpu::located_candidate),
                                 cudaMemcpyDeviceToHost, st.get()));
  WHD_CUDA_CHECK(cudaMemcpyAsync(r.params.data(), loc.d_frame_params(), r.params.size() * sizeof(gpu::frame_params),
                                 cudaMemcpyDeviceToHost, st.get()));
  st.synchronize();
  return r;
}

/// Tallies of one comparison, for the test's own verdict on its coverage.
struct tally {
  std::size_t ok = 0, rejected = 0, no_sync = 0, cut_off = 0;
  double worst_inv = 0.0, worst_snr_dB = 0.0, worst_cfo = 0.0;
};

/// Candidate `what`: the device's result and parameters against the host's.
void expect_agree(const bb::located_detection& c, const gpu::located_candidate& g, const gpu::frame_params& fp,
                  const std::string& what, tally& t)
{
  ASSERT_EQ(int(g.status), int(c.what)) << what; // one enum on both sides
  if (c.what == bb::locate_outcome::no_sync) {
    ++t.no_sync;
    return;
  }
  EXPECT_EQ(g.start, c.sync.start) << what;
  EXPECT_EQ(g.fft0, c.sync.fft0) << what;
  if (c.what == bb::locate_outcome::cut_off) {
    ++t.cut_off;
    return;
  }
  const double dcfo = std::abs(g.cfo_cps - c.sync.cfo_cps);
  t.worst_cfo = std::max(t.worst_cfo, dcfo);
  EXPECT_LE(dcfo, CFO_TOL_CPS) << what << ": cfo " << g.cfo_cps << " against " << c.sync.cfo_cps;
  EXPECT_EQ(g.bad_samples, c.bad_samples) << what;
  EXPECT_EQ(int(g.header), int(c.header)) << what;
  if (c.channel.snr_dB > SNR_FLOOR_DB) {
    const double dsnr = std::abs(g.snr_dB - c.channel.snr_dB);
    t.worst_snr_dB = std::max(t.worst_snr_dB, dsnr);
    EXPECT_LE(dsnr, SNR_TOL_DB) << what << ": snr " << g.snr_dB << " dB against " << c.channel.snr_dB;
  } else {
    EXPECT_LE(g.snr_dB, SNR_FLOOR_DB + 1.0) << what << ": snr " << g.snr_dB << " dB against " << c.channel.snr_dB;
  }
  if (c.what == bb::locate_outcome::rejected) {
    ++t.rejected;
    return;
  }
  ++t.ok;
  EXPECT_EQ(int(g.mod), int(p::modulation_of_mode(c.fields.mod_field))) << what;
  EXPECT_EQ(int(g.mode), int(c.fields.mod_field)) << what;
  EXPECT_EQ(g.nd, c.fields.nd) << what;
  EXPECT_EQ(g.seq, c.fields.seq) << what;
  // The parameters make_frame_params makes from the host's located frame.
  bb::located_frame f;
  f.sync = c.sync;
  f.channel = std::make_shared<const bb::channel_estimate>(c.channel);
  f.info.mod = p::modulation_of_mode(c.fields.mod_field);
  const gpu::frame_params want = gpu::make_frame_params(f);
  EXPECT_EQ(fp.mod, want.mod) << what;
  // The soft values' scale: the same taps kept (one step of 8 moves it by 1 %), the
  // same sums to rounding.
  EXPECT_NEAR(fp.llr_inv_noise, want.llr_inv_noise, 1e-3 * want.llr_inv_noise) << what << ": taps kept on the host " << c.channel.taps;
  EXPECT_EQ(fp.window_offset, want.window_offset) << what;
  EXPECT_LE(std::abs(fp.cfo_cps - want.cfo_cps), CFO_TOL_CPS) << what;
  // 1/H on the data tones by bin, relative L2, and zero on every other bin.
  double err = 0.0, ref = 0.0, worst = 0.0;
  int worst_bin = -1;
  for (int b = 0; b < p::N; ++b) {
    const double dre = double(fp.inv[b].x) - want.inv[b].x, dim = double(fp.inv[b].y) - want.inv[b].y;
    err += dre * dre + dim * dim;
    ref += double(want.inv[b].x) * want.inv[b].x + double(want.inv[b].y) * want.inv[b].y;
    if (dre * dre + dim * dim > worst) {
      worst = dre * dre + dim * dim;
      worst_bin = b;
    }
    if (want.inv[b].x == 0.0f && want.inv[b].y == 0.0f) {
      EXPECT_TRUE(fp.inv[b].x == 0.0f && fp.inv[b].y == 0.0f) << what << ", bin " << b << " is not a data tone";
    }
    const int hb = gpu::held_lane(b % 64) + 64 * (b / 64);
    EXPECT_TRUE(fp.inv_held[b].x == fp.inv[hb].x && fp.inv_held[b].y == fp.inv[hb].y) << what << ", inv_held slot " << b;
  }
  const double rel = std::sqrt(err / ref);
  t.worst_inv = std::max(t.worst_inv, rel);
  EXPECT_LE(rel, INV_REL_L2) << what << ": 1/H relative L2 error, worst at bin " << worst_bin;
  double herr = 0.0, href = 0.0;
  for (int i = 0; i < p::NOF_PILOTS; ++i) {
    herr += std::norm(std::complex<double>(fp.hconj_re[i] - want.hconj_re[i], fp.hconj_im[i] - want.hconj_im[i]));
    href += std::norm(std::complex<double>(want.hconj_re[i], want.hconj_im[i]));
  }
  EXPECT_LE(std::sqrt(herr / href), INV_REL_L2) << what << ": conj(H) on the pilots";
  for (int k = 0; k < 64; ++k) {
    EXPECT_NEAR(fp.rot_re[k], want.rot_re[k], ROT_TOL) << what << ", rot " << k;
    EXPECT_NEAR(fp.rot_im[k], want.rot_im[k], ROT_TOL) << what << ", rot " << k;
  }
  EXPECT_NEAR(fp.step_re, want.step_re, ROT_TOL) << what;
  EXPECT_NEAR(fp.step_im, want.step_im, ROT_TOL) << what;
}

/// Locates every detection of `x` on both sides (the whole capture as one chunk) and
/// compares them; returns the tallies.
tally compare_all(const std::vector<cf32>& x, const bb::rx_config& rc, const std::string& what)
{
  const whd::transport::memory_source src{std::vector<cf32>(x)};
  const auto dets = all_detections(src, rc);
  tally t;
  if (dets.empty()) {
    ADD_FAILURE() << what << ": no detection";
    return t;
  }
  host_locator host(rc);
  gpu::candidate_locator dev(rc, dets.size());
  const auto g = run_gpu(dev, x, 0, x.size(), dets, uint32_t(dets.size()));
  for (std::size_t i = 0; i < dets.size(); ++i) {
    const auto c = host.locate(src, dets[i]);
    expect_agree(c, g.located[i], g.params[i], what + ", detection " + std::to_string(i) + " at " + std::to_string(dets[i].coarse), t);
  }
  std::cout << what << ": " << dets.size() << " detections, " << t.ok << " ok, " << t.rejected << " rejected, " << t.no_sync
            << " no sync, " << t.cut_off << " cut off; worst |dcfo| " << t.worst_cfo << " cycles/sample, |dsnr| "
            << t.worst_snr_dB << " dB, 1/H rel L2 " << t.worst_inv << "\n";
  return t;
}

bb::capture_config base_config(uint64_t seed)
{
  bb::capture_config cfg;
  cfg.mods = {p::modulation::qam16, p::modulation::qpsk};
  cfg.nds = {5, 3, 8};
  cfg.nof_frames = 4;
  cfg.lead_samples = 900;
  cfg.gap_samples = 1500;
  cfg.seed = seed;
  cfg.impairments.random_phase = true;
  return cfg;
}

struct grid_point {
  double snr_dB;
  double cfo_Hz;
  int taps;
};

TEST(gpu_candidate_locate, agrees_with_the_host_over_snr_cfo_and_multipath)
{
  WHD_REQUIRE_GPU();
  const grid_point grid[] = {
      {30.0, 0.0, 1}, {30.0, 1.7e6, 1}, {12.0, -1.1e6, 1}, {30.0, 6.0e5, 8}, {10.0, -2.0e6, 12}, {20.0, 1.3e6, 24},
  };
  bb::rx_config rc;
  rc.nof_threads = 2;
  uint64_t seed = 4100;
  for (const auto& gp : grid) {
    auto cfg = base_config(++seed);
    cfg.impairments.snr_dB = gp.snr_dB;
    cfg.impairments.cfo_Hz = gp.cfo_Hz;
    cfg.impairments.nof_taps = gp.taps;
    cfg.corrupt_header_frames = {2}; // a header failure in every capture
    bb::memory_capture cap;
    bb::generate_capture(cfg, cap);
    const std::string what = "seed " + std::to_string(seed) + ", " + std::to_string(gp.snr_dB) + " dB, " +
                             std::to_string(gp.cfo_Hz) + " Hz, " + std::to_string(gp.taps) + " taps";
    const tally t = compare_all(cap.samples(), rc, what);
    // Each capture holds 3 intact frames and one corrupted header, each seen by several detections.
    EXPECT_GE(t.ok, 3u) << what;
    EXPECT_GE(t.rejected, 1u) << what;
  }
}

TEST(gpu_candidate_locate, plain_least_squares_and_another_backoff)
{
  WHD_REQUIRE_GPU();
  bb::rx_config rc;
  rc.nof_threads = 2;
  rc.channel_taps = 0; // no smoother
  rc.timing_backoff = 3;
  auto cfg = base_config(4200);
  cfg.impairments.snr_dB = 18.0;
  cfg.impairments.cfo_Hz = 9e5;
  cfg.impairments.nof_taps = 4;
  bb::memory_capture cap;
  bb::generate_capture(cfg, cap);
  const tally t = compare_all(cap.samples(), rc, "seed 4200, plain LS, backoff 3");
  EXPECT_GE(t.ok, 4u);
}

TEST(gpu_candidate_locate, the_end_of_the_capture_as_the_host_sees_it)
{
  WHD_REQUIRE_GPU();
  bb::rx_config rc;
  rc.nof_threads = 2;
  // The last frame cut inside its second preamble symbol (the fine-CFO window is not
  // whole: no sync), inside its header (cut off: the host's search ends), and inside
  // its data (a frame, truncated later by the walk).
  const uint64_t cuts_into_frame[] = {L + 520, 2 * L + 200, 3 * L + 40, 4 * L + 100};
  bool saw_cut_off = false;
  for (const uint64_t into : cuts_into_frame) {
    auto cfg = base_config(4300 + into);
    cfg.nof_frames = 2;
    cfg.nds = {4};
    cfg.impairments.snr_dB = 25.0;
    cfg.impairments.cfo_Hz = -7e5;
    cfg.tail_samples = 0;
    const uint64_t frame_len = (3 + 4) * L;
    cfg.cut_samples = frame_len - into;
    bb::memory_capture cap;
    bb::generate_capture(cfg, cap);
    const tally t = compare_all(cap.samples(), rc, "seed " + std::to_string(4300 + into) + ", last frame cut " + std::to_string(into) +
                                                       " samples in");
    saw_cut_off = saw_cut_off || t.cut_off > 0;
    EXPECT_GE(t.ok, 1u);
  }
  EXPECT_TRUE(saw_cut_off) << "no candidate was cut off: the test no longer covers the end of the capture";
}

TEST(gpu_candidate_locate, non_finite_samples_are_counted_in_the_windows_and_taken_as_zero)
{
  WHD_REQUIRE_GPU();
  bb::rx_config rc;
  rc.nof_threads = 2;
  auto cfg = base_config(4400);
  cfg.impairments.snr_dB = 30.0;
  cfg.impairments.cfo_Hz = 1.2e6;
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  auto x = cap.samples();
  constexpr float NAN_F = std::numeric_limits<float>::quiet_NaN();
  constexpr float INF_F = std::numeric_limits<float>::infinity();
  const uint64_t off = uint64_t(p::G - rc.timing_backoff); // the FFT window in a flat channel
  const auto& fr = plan.frames;
  ASSERT_GE(fr.size(), 3u);
  x[fr[0].start + off + 17] = cf32(NAN_F, 0.0f);                 // preamble window 0
  x[fr[0].start + L + off + 400] = cf32(0.0f, -INF_F);           // preamble window 1
  x[fr[0].start + 2 * L + off + 3] = cf32(INF_F, NAN_F);         // header window
  x[fr[0].start + L + 10] = cf32(NAN_F, NAN_F);                  // guard of symbol 1: not counted
  x[fr[1].start - 20] = cf32(NAN_F, 1.0f);                       // the lag window only
  for (uint64_t k = 0; k < 40; ++k) {
    x[fr[2].start + 2 * L + off + 100 + k] = cf32(NAN_F, NAN_F); // a burst in the header window
  }
  const tally t = compare_all(x, rc, "seed 4400, NaN and Inf");
  EXPECT_GE(t.ok + t.rejected, 3u);
}

TEST(gpu_candidate_locate, candidates_outside_the_chunk_need_more_and_the_others_agree)
{
  WHD_REQUIRE_GPU();
  bb::rx_config rc;
  rc.nof_threads = 2;
  auto cfg = base_config(4500);
  cfg.impairments.snr_dB = 25.0;
  cfg.impairments.cfo_Hz = 5e5;
  cfg.impairments.nof_taps = 6;
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  const auto& x = cap.samples();
  const whd::transport::memory_source src{std::vector<cf32>(x)};
  const auto dets = all_detections(src, rc);
  ASSERT_FALSE(dets.empty());
  gpu::candidate_locator dev(rc, dets.size());
  const auto whole = run_gpu(dev, x, 0, x.size(), dets, uint32_t(dets.size()));
  // A chunk from inside frame 0's first preamble symbol to inside frame 2's header.
  const auto& fr = plan.frames;
  ASSERT_GE(fr.size(), 3u);
  const uint64_t first = fr[0].start + 200;
  const uint64_t end = fr[2].start + 2 * L + 300;
  const auto part = run_gpu(dev, x, first, std::size_t(end - first), dets, uint32_t(dets.size()));
  std::size_t needs_more = 0, same = 0;
  for (std::size_t i = 0; i < dets.size(); ++i) {
    const auto& w = whole.located[i];
    const auto& g = part.located[i];
    const std::string what = "detection " + std::to_string(i) + " at " + std::to_string(dets[i].coarse);
    // What the candidate reads, from the whole run: the lag window, and the header
    // windows once it has got past fine timing.
    const uint64_t centre = dets[i].coarse + p::G;
    const uint64_t lag0 = centre > 2 * p::G ? centre - 2 * p::G : 0;
    const uint64_t lag_end = centre + 2 * p::G + p::N;
    const bool lags_inside = lag0 >= first && lag_end <= end;
    const bool past_timing = w.status == bb::locate_outcome::accepted || w.status == bb::locate_outcome::rejected;
    const bool head_inside = w.fft0 >= first && w.fft0 + HEAD <= end;
    const bool fits = dets[i].coarse >= first + dev.lookback() && dets[i].coarse + dev.lookahead() <= end;
    if (g.status == bb::locate_outcome::needs_more) {
      ++needs_more;
      EXPECT_FALSE(fits) << what << ": inside lookback/lookahead, yet needs more";
      EXPECT_TRUE(!lags_inside || (past_timing && !head_inside)) << what << ": everything it reads is in the chunk";
      continue;
    }
    ++same;
    EXPECT_TRUE(lags_inside && (!past_timing || head_inside)) << what << ": located although it reads outside the chunk";
    ASSERT_EQ(int(g.status), int(w.status)) << what;
    EXPECT_EQ(g.start, w.start) << what;
    EXPECT_EQ(g.fft0, w.fft0) << what;
    if (past_timing) {
      // The same kernel on the same samples: the same bits.
      EXPECT_EQ(g.cfo_cps, w.cfo_cps) << what;
      EXPECT_EQ(g.snr_dB, w.snr_dB) << what;
      EXPECT_EQ(g.bad_samples, w.bad_samples) << what;
      EXPECT_EQ(int(g.header), int(w.header)) << what;
      EXPECT_EQ(g.nd, w.nd) << what;
    }
  }
  std::cout << "chunk [" << first << ", " << end << "): " << needs_more << " need more, " << same << " located\n";
  // The chunk cuts frame 0's preamble and frame 2's header: both ends are exercised.
  std::size_t late = 0, early = 0;
  for (std::size_t i = 0; i < dets.size(); ++i) {
    if (part.located[i].status == bb::locate_outcome::needs_more) {
      (dets[i].coarse > fr[1].start ? late : early) += 1;
    }
  }
  EXPECT_GT(early, 0u) << "no candidate needs samples before the chunk";
  EXPECT_GT(late, 0u) << "no candidate needs samples after the chunk";
  EXPECT_GT(same, 0u);
}

TEST(gpu_candidate_locate, the_device_count_bounds_the_slots_written)
{
  WHD_REQUIRE_GPU();
  bb::rx_config rc;
  rc.nof_threads = 2;
  auto cfg = base_config(4600);
  cfg.impairments.snr_dB = 30.0;
  bb::memory_capture cap;
  bb::generate_capture(cfg, cap);
  const auto& x = cap.samples();
  const whd::transport::memory_source src{std::vector<cf32>(x)};
  const auto dets = all_detections(src, rc);
  ASSERT_GE(dets.size(), 4u);
  gpu::candidate_locator dev(rc, dets.size());
  const auto a = run_gpu(dev, x, 0, x.size(), dets, uint32_t(dets.size()));
  // The same slots with the candidates in reverse order and a count of k: slots below
  // k hold the reversed candidates' results, the others the first run's.
  const std::vector<bb::detection> rev(dets.rbegin(), dets.rend());
  const std::size_t k = dets.size() / 2;
  const auto b = run_gpu(dev, x, 0, x.size(), rev, uint32_t(k));
  const std::size_t n = dets.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto& want = i < k ? a.located[n - 1 - i] : a.located[i];
    EXPECT_EQ(int(b.located[i].status), int(want.status)) << "slot " << i;
    EXPECT_EQ(b.located[i].start, want.start) << "slot " << i;
    EXPECT_EQ(b.located[i].fft0, want.fft0) << "slot " << i;
    EXPECT_EQ(b.located[i].cfo_cps, want.cfo_cps) << "slot " << i;
  }
  // A count above the capacity locates max_candidates() and no more.
  gpu::candidate_locator small(rc, 3);
  const auto s = run_gpu(small, x, 0, x.size(), dets, uint32_t(n + 100));
  ASSERT_EQ(s.located.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(int(s.located[i].status), int(a.located[i].status)) << "slot " << i;
    EXPECT_EQ(s.located[i].fft0, a.located[i].fft0) << "slot " << i;
  }
}

TEST(gpu_candidate_locate, bad_arguments_throw)
{
  WHD_REQUIRE_GPU();
  const bb::rx_config rc;
  EXPECT_THROW(gpu::candidate_locator(rc, 0), std::invalid_argument);
  bb::rx_config bad = rc;
  bad.channel_taps = p::NOF_USED; // beyond the smoother's range
  EXPECT_THROW(gpu::candidate_locator(bad, 4), std::invalid_argument);
  gpu::candidate_locator loc(rc, 4);
  cu::device_buffer<float2> d_x(16);
  cu::device_buffer<gpu::sync_candidate> d_c(4);
  cu::device_buffer<uint32_t> d_n(1);
  EXPECT_THROW(loc.run(d_x.data(), 10, 16, 20, d_c.data(), d_n.data(), nullptr), std::invalid_argument);
  EXPECT_THROW(loc.run(d_x.data(), 0, 16, 20, nullptr, d_n.data(), nullptr), std::invalid_argument);
  EXPECT_THROW(loc.run(d_x.data(), 0, 16, 20, d_c.data(), nullptr, nullptr), std::invalid_argument);
}

} // namespace
