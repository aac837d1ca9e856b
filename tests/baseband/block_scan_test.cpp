// The frame search's scan of integer samples (block_scan::integer: window sums from
// chunk sums, runs cleared by a bound) against the metric itself, position by
// position, and against the in-order scan that cf32 captures use. The reference sums
// every window exactly in 64-bit integers and takes M with the expression of
// sync.hpp: where the integer scan does not clear a position its M must be that M
// bit for bit, where it clears one M must not cross, and its crossings must be
// exactly the reference's. Signals: full-scale noise and extremes of ci16 and ci8,
// tones, DC, zeros, bursts, a repetition whose metric hovers around the threshold,
// and packet captures of the generator (taps, CFO, low and high SNR); thresholds
// from 0 to 0.9, negative (nothing cleared) and next to metrics near 0.4.
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/transport/capture.hpp>

#include "block_scan.hpp"
#include "false_alarm_sources.hpp"
#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace tr = whd::transport;
namespace p = whd::profile;
using whd::cf32;

constexpr std::size_t L = p::SYMBOL_LEN;
constexpr std::size_t W = p::N;
constexpr std::size_t BLOCK = bb::candidate_search::BLOCK;

/// Integer samples held in memory and stored as `type` (ci8 or ci16): the search
/// takes the integer scan for them, as for a capture file of that type.
class integer_source final : public tr::sample_source {
public:
  integer_source(std::vector<cf32> samples, whd::datatype type) : samples_(std::move(samples)), type_(type) {}
  uint64_t size() const override { return samples_.size(); }
  whd::datatype type() const override { return type_; }
  std::size_t read(uint64_t first, std::span<cf32> out) const override
  {
    const std::size_t n = first >= samples_.size() ? 0 : std::min<std::size_t>(out.size(), samples_.size() - std::size_t(first));
    std::copy_n(samples_.begin() + std::ptrdiff_t(first), n, out.begin());
    return n;
  }
  std::size_t read_raw(uint64_t first, std::span<std::byte> out) const override
  {
    const std::size_t bytes = whd::bytes_per_sample(type_);
    const std::size_t n = first >= samples_.size() ? 0 : std::min<std::size_t>(out.size() / bytes, samples_.size() - std::size_t(first));
    for (std::size_t i = 0; i < n; ++i) {
      const cf32 v = samples_[std::size_t(first) + i];
      if (type_ == whd::datatype::ci8) {
        const int8_t iq[2] = {int8_t(v.real()), int8_t(v.imag())};
        std::memcpy(out.data() + i * bytes, iq, bytes);
      } else {
        const int16_t iq[2] = {int16_t(v.real()), int16_t(v.imag())};
        std::memcpy(out.data() + i * bytes, iq, bytes);
      }
    }
    return n;
  }
  void release(uint64_t, uint64_t) const override {}

private:
  std::vector<cf32> samples_;
  whd::datatype type_;
};

/// M of positions [0, nof_pos) of integer samples r: every window summed exactly in
/// int64 (slid one sample at a time), M as sync.hpp defines it.
std::vector<double> exact_metrics(std::span<const cf32> r, std::size_t nof_pos)
{
  const auto at = [&](std::size_t i) { return std::pair<int64_t, int64_t>{int64_t(r[i].real()), int64_t(r[i].imag())}; };
  int64_t pre = 0, pim = 0, r1 = 0, r2 = 0;
  for (std::size_t i = 0; i < W; ++i) {
    const auto [ar, ai] = at(i);
    const auto [br, bi] = at(i + L);
    pre += ar * br + ai * bi;
    pim += ar * bi - ai * br;
    r1 += ar * ar + ai * ai;
    r2 += br * br + bi * bi;
  }
  std::vector<double> m(nof_pos);
  for (std::size_t n = 0; n < nof_pos; ++n) {
    const double dre = double(pre), dim = double(pim);
    const double den = double(r1) * double(r2);
    m[n] = den > 0.0 ? (dre * dre + dim * dim) / den : 0.0;
    if (n + 1 == nof_pos) {
      break;
    }
    const auto [ar, ai] = at(n);
    const auto [br, bi] = at(n + L);
    const auto [cr, ci] = at(n + W);
    const auto [dr, di] = at(n + W + L);
    pre += (cr * dr + ci * di) - (ar * br + ai * bi);
    pim += (cr * di - ci * dr) - (ar * bi - ai * br);
    r1 += (cr * cr + ci * ci) - (ar * ar + ai * ai);
    r2 += (dr * dr + di * di) - (br * br + bi * bi);
  }
  return m;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// What a scan did with the positions of one case.
struct scan_counts {
  std::size_t cleared = 0;  ///< stored 0 where M is not 0
  std::size_t computed = 0; ///< stored M itself
  std::size_t crossings = 0;
};

/// Scans nof_pos positions of `r` both ways and judges every position against the
/// exact metric (see the file's comment); the first wrong position is reported.
scan_counts expect_exact_scan(std::span<const cf32> r, whd::datatype type, std::size_t nof_pos, float threshold, const std::string& what)
{
  const std::size_t nof = bb::block_scan::nof_samples(nof_pos);
  EXPECT_GE(r.size(), nof) << what;
  bb::block_scan scan(BLOCK);
  std::vector<double> m_int(nof_pos), m_ord(nof_pos);
  std::vector<uint8_t> c_int(nof_pos), c_ord(nof_pos);
  std::copy_n(r.begin(), nof, scan.samples().begin());
  scan.integer(type, nof_pos, threshold, m_int.data(), c_int.data());
  std::copy_n(r.begin(), nof, scan.samples().begin());
  scan.in_order(nof_pos, threshold, m_ord.data(), c_ord.data());
  const std::vector<double> m = exact_metrics(r, nof_pos);
  scan_counts counts;
  std::size_t wrong = 0, first_wrong = 0;
  for (std::size_t n = 0; n < nof_pos; ++n) {
    const bool cross = m[n] > double(threshold);
    const bool ok = c_int[n] == (cross ? 1 : 0) && c_ord[n] == c_int[n] && (same_bits(m_int[n], m[n]) || (!cross && m_int[n] == 0.0)) &&
                    (!cross || same_bits(m_ord[n], m[n]));
    if (!ok && wrong++ == 0) {
      first_wrong = n;
    }
    counts.crossings += cross ? 1 : 0;
    if (m_int[n] == 0.0 && m[n] != 0.0) {
      ++counts.cleared;
    } else {
      ++counts.computed;
    }
  }
  EXPECT_EQ(wrong, 0u) << what << ", threshold " << threshold << ", " << nof_pos << " positions: first wrong position " << first_wrong
                       << ": M " << m[first_wrong] << ", integer scan " << m_int[first_wrong] << " (" << int(c_int[first_wrong])
                       << "), in-order scan " << m_ord[first_wrong] << " (" << int(c_ord[first_wrong]) << ")";
  if (threshold < 0.0f) {
    EXPECT_EQ(counts.cleared, 0u) << what << ": a negative threshold clears nothing";
  }
  return counts;
}

/// Uniform integers of [lo, hi] from the hash of (seed, index).
int uniform(uint64_t seed, uint64_t index, int lo, int hi)
{
  return lo + int(whd::test::splitmix64(seed ^ (index * 0x9E3779B97F4A7C15ull)) % uint64_t(hi - lo + 1));
}

float round_clamp(double x, double full) { return float(std::clamp(std::round(x), -full - 1.0, full)); }

struct signal {
  std::string name;
  whd::datatype type;
  std::vector<cf32> samples;
  bool noise = false;           ///< noise alone: most runs are expected cleared at 0.4
  bool near_threshold = false;  ///< metrics on both sides of 0.4
  bool near_bound = false;      ///< at 0.9, runs on both sides of the bound that clears them
};

/// The synthetic signals, nof samples each.
std::vector<signal> synthetic_signals(std::size_t nof, uint64_t seed)
{
  std::vector<signal> out;
  const auto make = [&](std::string name, whd::datatype type, const std::function<cf32(std::size_t)>& f) {
    signal s{std::move(name), type, std::vector<cf32>(nof)};
    s.noise = s.name.find(" noise") != std::string::npos;
    for (std::size_t i = 0; i < nof; ++i) {
      s.samples[i] = f(i);
    }
    out.push_back(std::move(s));
  };
  for (const auto type : {whd::datatype::ci16_le, whd::datatype::ci8}) {
    const bool i16 = type == whd::datatype::ci16_le;
    const int lo = i16 ? -32768 : -128, hi = i16 ? 32767 : 127;
    const double full = hi;
    const std::string t = i16 ? "ci16 " : "ci8 ";
    make(t + "full-scale uniform noise", type,
         [&](std::size_t i) { return cf32(float(uniform(seed, 2 * i, lo, hi)), float(uniform(seed, 2 * i + 1, lo, hi))); });
    make(t + "extremes", type, [&](std::size_t i) {
      return cf32(float(uniform(seed + 1, 2 * i, 0, 1) ? hi : lo), float(uniform(seed + 1, 2 * i + 1, 0, 1) ? hi : lo));
    });
    make(t + "most negative", type, [&](std::size_t) { return cf32(float(lo), float(lo)); });
    make(t + "Gaussian noise at -12 dBFS", type, [&](std::size_t i) {
      const cf32 g = whd::test::gaussian_noise(seed + 2, i);
      return cf32(round_clamp(g.real() * full / 4, full), round_clamp(g.imag() * full / 4, full));
    });
    make(t + "noise of +-1", type, [&](std::size_t i) { return cf32(float(uniform(seed + 3, 2 * i, -1, 1)), float(uniform(seed + 3, 2 * i + 1, -1, 1))); });
    for (const double f : {0.013, 1.0 / double(L), 0.5}) {
      make(t + "tone at " + std::to_string(f) + " cycles/sample", type, [&](std::size_t i) {
        const cf32 v = whd::test::tone(f, i);
        return cf32(round_clamp(v.real() * full, full), round_clamp(v.imag() * full, full));
      });
    }
    make(t + "DC", type, [&](std::size_t) { return cf32(float(hi), float(lo + 1)); });
    make(t + "zeros", type, [&](std::size_t) { return cf32{}; });
    make(t + "zeros with impulses", type, [&](std::size_t i) { return uniform(seed + 4, i, 0, 2999) == 0 ? cf32(float(lo), float(hi)) : cf32{}; });
    // Silences (zeros or +-1) and full-scale bursts of 100 to 3000 samples: windows
    // whose energies step, down to bounds of 0.
    {
      std::vector<uint8_t> loud(nof);
      for (std::size_t i = 0, k = 0; i < nof; ++k) {
        const auto len = std::size_t(uniform(seed + 5, k, 100, 3000));
        std::fill_n(loud.begin() + std::ptrdiff_t(i), std::min(len, nof - i), uint8_t(k % 2));
        i += len;
      }
      make(t + "bursts", type, [&](std::size_t i) {
        const int a = loud[i] ? lo : (i % 3 == 0 ? -1 : 0), b = loud[i] ? hi : (i % 5 == 0 ? 1 : 0);
        return cf32(float(uniform(seed + 6, 2 * i, a, b)), float(uniform(seed + 6, 2 * i + 1, a, b)));
      });
    }
    // A pattern repeated every L samples (M = 1) under noise of 0.58 times its power:
    // M ~ (1 / 1.58)^2 = 0.4, crossing the default threshold back and forth.
    for (const double noise_to_pattern : {0.58, 0.45, 0.75, 2.0}) {
      make(t + "repetition at " + std::to_string(noise_to_pattern) + " of its power added", type, [&](std::size_t i) {
        const double a = full / 6.0;
        const cf32 s = whd::test::gaussian_noise(seed + 7, i % L), n = whd::test::gaussian_noise(seed + 8, i);
        const double g = std::sqrt(noise_to_pattern);
        return cf32(round_clamp(a * (s.real() + g * n.real()), full), round_clamp(a * (s.imag() + g * n.imag()), full));
      });
      out.back().near_threshold = noise_to_pattern == 0.58;
      out.back().near_bound = noise_to_pattern == 2.0; // M ~ 1/9
    }
    make(t + "repetition", type, [&](std::size_t i) { return cf32(float(uniform(seed + 9, 2 * (i % L), lo, hi)), float(uniform(seed + 9, 2 * (i % L) + 1, lo, hi))); });
  }
  return out;
}

/// Thresholds tried on every signal: the default, 0, low, high, and negative.
constexpr float THRESHOLDS[] = {0.4f, 0.0f, 0.05f, 0.2f, 0.9f, -1.0f};

TEST(block_scan, integer_scan_gives_the_exact_metric_wherever_it_does_not_clear)
{
  const uint64_t seed = 4242;
  std::cout << "seed " << seed << "\n";
  const auto signals = synthetic_signals(bb::block_scan::nof_samples(BLOCK), seed);
  for (const auto& s : signals) {
    scan_counts at_default, at_high;
    for (const float thr : THRESHOLDS) {
      const auto c = expect_exact_scan(s.samples, s.type, BLOCK, thr, s.name);
      if (s.type == whd::datatype::ci8) { // ci8 values are ci16 ones too: the other chunk sums
        expect_exact_scan(s.samples, whd::datatype::ci16_le, BLOCK, thr, s.name + " as ci16");
      }
      if (thr == 0.4f) {
        at_default = c;
      }
      if (thr == 0.9f) {
        at_high = c;
      }
    }
    // Thresholds next to metrics around 0.4 (the closest from either side).
    const auto m = exact_metrics(s.samples, BLOCK);
    double below = 0.0, above = 1.0;
    for (const double v : m) {
      if (v <= 0.4) {
        below = std::max(below, v);
      } else {
        above = std::min(above, v);
      }
    }
    for (const double v : {below, above}) {
      const float f = float(v);
      for (const float thr : {std::nextafter(f, 0.0f), f, std::nextafter(f, 1.0f)}) {
        expect_exact_scan(s.samples, s.type, BLOCK, thr, s.name + " (threshold next to a metric)");
      }
    }
    std::cout << s.name << ": at 0.4, " << at_default.crossings << " crossings, " << at_default.cleared << " positions cleared, "
              << at_default.computed << " computed\n";
    if (s.noise) {
      EXPECT_GT(at_default.cleared, BLOCK / 2) << s.name << ": noise has runs to clear";
    }
    if (s.near_threshold) {
      EXPECT_GT(at_default.crossings, BLOCK / 4) << s.name << ": crossings to compare";
      EXPECT_GT(at_default.computed, at_default.crossings + BLOCK / 4) << s.name << ": positions computed that do not cross";
    }
    if (s.near_bound) {
      std::cout << s.name << ": at 0.9, " << at_high.cleared << " positions cleared, " << at_high.computed << " computed\n";
      EXPECT_GT(at_high.cleared, BLOCK / 8) << s.name << ": runs cleared at 0.9";
      EXPECT_GT(at_high.computed, BLOCK / 8) << s.name << ": runs the bound leaves at 0.9";
    }
  }
}

TEST(block_scan, short_blocks_read_no_sample_past_their_windows)
{
  // The integer scan reads whole chunks past the block's last window (zeros): the
  // samples after it in the buffer must not change the result. Blocks of a few
  // positions (the end of a capture), with the buffer past them full scale.
  const uint64_t seed = 77;
  std::cout << "seed " << seed << "\n";
  const auto signals = synthetic_signals(bb::block_scan::nof_samples(BLOCK), seed);
  for (const auto& s : signals) {
    if (s.name.find("uniform") == std::string::npos && !s.near_threshold) {
      continue;
    }
    for (const std::size_t nof_pos : {std::size_t(1), std::size_t(2), std::size_t(63), std::size_t(64), std::size_t(65), std::size_t(1000),
                                      BLOCK - 1}) {
      for (const float thr : THRESHOLDS) {
        expect_exact_scan(s.samples, s.type, nof_pos, thr, s.name);
      }
    }
  }
}

/// Every candidate of a source at `threshold` (regions as all_detections).
std::vector<bb::detection> detections_at(const tr::sample_source& src, float threshold, unsigned threads)
{
  bb::rx_config rc;
  rc.nof_threads = threads;
  rc.detect_threshold = threshold;
  bb::candidate_search search(rc);
  std::vector<bb::detection> out;
  const uint64_t npos = bb::candidate_search::nof_positions(src.size());
  const uint64_t region = uint64_t(1) << 18; // not a multiple of L: regions cut runs
  for (uint64_t lo = 0; lo < npos; lo += region) {
    const auto part = search.find(src, lo, lo + region);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

TEST(block_scan, integer_sources_detect_as_their_floats_do)
{
  // Three blocks and a bit of each signal, detected as an integer source and as the
  // same samples in a cf32 source (the in-order scan): the same candidates.
  const uint64_t seed = 9001;
  std::cout << "seed " << seed << "\n";
  const auto signals = synthetic_signals(3 * BLOCK + 5000, seed);
  for (const auto& s : signals) {
    const integer_source ints(s.samples, s.type);
    const tr::memory_source floats(s.samples);
    for (const float thr : {0.4f, 0.05f, 0.9f}) {
      const auto want = detections_at(floats, thr, 1);
      const std::string what = s.name + ", threshold " + std::to_string(thr);
      whd::test::expect_same_detections(detections_at(ints, thr, 2), want, what);
    }
  }
}

TEST(block_scan, generator_captures_scan_exactly)
{
  // Packets (few data symbols, short gaps) through 4 taps with CFO and a random phase,
  // at low SNR (metrics near the threshold) and high, ci8 (small and full gain) and
  // ci16: every block position by position, and the candidates against the floats'.
  whd::test::temp_dir dir("block-scan");
  int cases = 0;
  for (const auto type : {whd::datatype::ci8, whd::datatype::ci16_le}) {
    for (const double snr : {2.5, 30.0}) {
      for (const double gain : {0.05, 1.0}) {
        bb::capture_config cfg;
        cfg.mods = {p::modulation::qpsk, p::modulation::qam16};
        cfg.nds = {2, 7};
        cfg.nof_frames = 24;
        cfg.lead_samples = 3001;
        cfg.gap_samples = 777;
        cfg.seed = 900 + uint64_t(cases);
        cfg.impairments.snr_dB = snr;
        cfg.impairments.cfo_Hz = 1.3e6;
        cfg.impairments.nof_taps = 4;
        cfg.impairments.gain = gain;
        cfg.impairments.random_phase = true;
        bb::output_config out;
        out.base = dir.path() / ("cap" + std::to_string(cases));
        out.type = type;
        const auto written = bb::write_capture(cfg, out);
        const tr::capture_reader file(tr::open_capture(written.meta_path));
        std::vector<cf32> samples(file.size());
        ASSERT_EQ(file.read(0, samples), samples.size());
        std::string what(whd::to_string(type));
        what += ", SNR " + std::to_string(snr) + " dB, gain " + std::to_string(gain) + ", seed " + std::to_string(cfg.seed);
        const uint64_t npos = bb::candidate_search::nof_positions(samples.size());
        scan_counts total;
        for (uint64_t base = 0; base < npos; base += BLOCK) {
          const auto nof_pos = std::size_t(std::min<uint64_t>(BLOCK, npos - base));
          const auto c = expect_exact_scan(std::span<const cf32>(samples).subspan(std::size_t(base)), type, nof_pos, 0.4f, what);
          total.cleared += c.cleared;
          total.computed += c.computed;
          total.crossings += c.crossings;
        }
        std::cout << what << ": " << total.crossings << " crossings, " << total.cleared << " positions cleared, " << total.computed
                  << " computed\n";
        EXPECT_GT(total.crossings, 0u) << what << ": crossings to compare";
        const tr::memory_source floats(std::move(samples));
        whd::test::expect_same_detections(detections_at(file, 0.4f, 2), detections_at(floats, 0.4f, 1), what);
        ++cases;
      }
    }
  }
}

// Two blocks of float samples scanned side by side (what the search does for cf32
// captures) give each block's M and crossings bit for bit as its own scan does:
// blocks of equal and unequal lengths (either one the shorter), noise with a
// repetition of period L that crosses, and non-finite samples in one block.
TEST(block_scan, two_float_blocks_side_by_side_give_each_blocks_own_scan)
{
  const auto make = [](std::size_t nof_pos, uint64_t seed, bool bad) {
    std::vector<cf32> r(bb::block_scan::nof_samples(nof_pos));
    for (std::size_t i = 0; i < r.size(); ++i) {
      const double u = double(uniform(seed, 2 * i, -1000000, 1000000)) * 1e-6;
      const double v = double(uniform(seed, 2 * i + 1, -1000000, 1000000)) * 1e-6;
      r[i] = cf32(float(u * 0.7), float(v * 0.7));
    }
    // A stretch repeating with period L, as a preamble does, so that positions cross.
    const std::size_t at = r.size() / 3;
    for (std::size_t i = at + L; i < std::min(r.size(), at + 6 * L); ++i) {
      r[i] = r[i - L] * 1.5f;
    }
    if (bad) {
      r[r.size() / 2] = cf32(std::numeric_limits<float>::quiet_NaN(), 0.0f);
      r[r.size() / 2 + 7] = cf32(0.0f, std::numeric_limits<float>::infinity());
    }
    return r;
  };
  const std::pair<std::size_t, std::size_t> lengths[] = {{BLOCK, BLOCK}, {BLOCK, 1000}, {17, BLOCK}, {5000, 4999}};
  std::size_t crossings = 0;
  for (const auto& [na, nb] : lengths) {
    for (const bool bad : {false, true}) {
      const auto ra = make(na, 11 + na, bad);
      const auto rb = make(nb, 29 + nb, false);
      bb::block_scan single(BLOCK), a(BLOCK), b(BLOCK);
      std::vector<double> m1a(na), m1b(nb), m2a(na), m2b(nb);
      std::vector<uint8_t> c1a(na), c1b(nb), c2a(na), c2b(nb);
      std::copy(ra.begin(), ra.end(), single.samples().begin());
      single.in_order(na, 0.4f, m1a.data(), c1a.data());
      std::copy(rb.begin(), rb.end(), single.samples().begin());
      single.in_order(nb, 0.4f, m1b.data(), c1b.data());
      std::copy(ra.begin(), ra.end(), a.samples().begin());
      std::copy(rb.begin(), rb.end(), b.samples().begin());
      bb::block_scan::in_order(a, na, m2a.data(), c2a.data(), b, nb, m2b.data(), c2b.data(), 0.4f);
      const std::string what = std::to_string(na) + " and " + std::to_string(nb) + " positions" + (bad ? ", non-finite samples" : "");
      for (std::size_t n = 0; n < na; ++n) {
        ASSERT_TRUE(same_bits(m1a[n], m2a[n]) && c1a[n] == c2a[n]) << what << ": first block, position " << n;
        ASSERT_TRUE(std::isfinite(m2a[n])) << what << ": position " << n;
        crossings += c2a[n];
      }
      for (std::size_t n = 0; n < nb; ++n) {
        ASSERT_TRUE(same_bits(m1b[n], m2b[n]) && c1b[n] == c2b[n]) << what << ": second block, position " << n;
        crossings += c2b[n];
      }
    }
  }
  EXPECT_GT(crossings, 0u) << "crossings to compare";
}

} // namespace
