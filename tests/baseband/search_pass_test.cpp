// The frame search's pass over the crossings (candidate windows at the edges of runs
// and every L along them, each window's first maximum) against the definition of
// sync.hpp written as one loop over the whole capture: a window opens at c where c
// crosses and either c - 1 does not (or c = 0), or c is a multiple of L and all of
// [c - L, c] cross. The crossings and metrics are those of the host's own block scan
// over the grid of blocks, so the pass is what is judged. Runs open in one block and
// close blocks later, one covers the first position searched, one the last; the
// windows are asked over ranges that start and end inside runs and blocks, on one
// thread and on several, and the union of ranges that tile the capture must be the
// whole capture's windows.
#include <whd/baseband/sync.hpp>
#include <whd/transport/capture.hpp>

#include "block_scan.hpp"
#include "false_alarm_sources.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;

constexpr uint64_t L = p::SYMBOL_LEN;
constexpr std::size_t BLOCK = bb::candidate_search::BLOCK;

/// Noise with DC and tone stretches, which cross at every position they cover.
std::vector<cf32> capture_with_runs()
{
  const uint64_t n = 7 * BLOCK + 12345;
  std::vector<cf32> r(n);
  for (uint64_t i = 0; i < n; ++i) {
    r[i] = whd::test::gaussian_noise(77, i) * 0.05f;
    const bool dc = (i < 40000) || (i >= 100000 && i < 2 * BLOCK + 30000) || (i >= 300000 && i < 300100);
    const bool tone = (i >= 4 * BLOCK - 5000 && i < 6 * BLOCK + 777) || i >= n - 3000;
    if (dc) {
      r[i] += cf32(0.8f, -0.3f);
    }
    if (tone) {
      r[i] += whd::test::tone(0.0123, i);
    }
  }
  return r;
}

struct scanned {
  std::vector<double> m;
  std::vector<uint8_t> cross;
};

/// M and the crossings of every position, block by block on the grid, as the
/// search's in-order scan makes them.
scanned scan_all(const std::vector<cf32>& r, float threshold)
{
  const uint64_t npos = bb::candidate_search::nof_positions(r.size());
  scanned s{std::vector<double>(npos), std::vector<uint8_t>(npos)};
  bb::block_scan scan(BLOCK);
  for (uint64_t b = 0; b < npos; b += BLOCK) {
    const auto nof = std::size_t(std::min<uint64_t>(BLOCK, npos - b));
    std::copy_n(r.begin() + std::ptrdiff_t(b), bb::block_scan::nof_samples(nof), scan.samples().begin());
    scan.in_order(nof, threshold, s.m.data() + b, s.cross.data() + b);
  }
  return s;
}

/// The definition's windows opening in [lo, hi), and each one's first maximum.
std::vector<std::pair<uint64_t, uint64_t>> defined_windows(const scanned& s, uint64_t lo, uint64_t hi)
{
  const uint64_t npos = s.cross.size();
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (uint64_t c = lo; c < std::min(hi, npos); ++c) {
    if (s.cross[c] == 0) {
      continue;
    }
    bool opens = c == 0 || s.cross[c - 1] == 0;
    if (!opens && c % L == 0 && c >= L) {
      opens = std::all_of(s.cross.begin() + std::ptrdiff_t(c - L), s.cross.begin() + std::ptrdiff_t(c + 1),
                          [](uint8_t x) { return x != 0; });
    }
    if (opens) {
      const auto first = s.m.begin() + std::ptrdiff_t(c);
      const auto last = s.m.begin() + std::ptrdiff_t(std::min(c + L, npos));
      out.emplace_back(c, uint64_t(std::max_element(first, last) - s.m.begin()));
    }
  }
  return out;
}

void expect_windows(const std::vector<bb::detection>& got, const std::vector<std::pair<uint64_t, uint64_t>>& want,
                    const scanned& s, const std::string& what)
{
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].window, want[i].first) << what << ", window " << i;
    ASSERT_EQ(got[i].coarse, want[i].second) << what << ", window " << i;
    const float m = float(s.m[want[i].second]);
    ASSERT_EQ(std::memcmp(&got[i].metric, &m, sizeof m), 0) << what << ", window " << i;
  }
}

TEST(search_pass, windows_are_the_definitions_over_runs_across_blocks_wherever_the_search_starts)
{
  const auto samples = capture_with_runs();
  const scanned s = scan_all(samples, bb::rx_config{}.detect_threshold);
  const uint64_t npos = s.cross.size();
  const auto all = defined_windows(s, 0, npos);
  // The runs give windows along them, not only at their edges.
  ASSERT_GT(all.size(), 2 * BLOCK / L) << "windows every L along the long runs";
  const whd::transport::memory_source src{std::vector<cf32>(samples)};
  const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, npos},                             // the whole capture: a run open at position 0
      {100000 + 10, 2 * BLOCK + 20000},      // starts and ends inside a run that crosses a block edge
      {BLOCK, 3 * BLOCK},                    // block edges, a run open at the first position
      {4 * BLOCK - 5000 + 3 * L, npos},      // inside the tone's run, to the last position
      {300050, 300051},                      // one position inside a short run
      {2 * BLOCK + 29999, 4 * BLOCK - 4999}, // a run's last position to a run's first
  };
  for (unsigned threads : {1u, 5u}) {
    bb::rx_config rc;
    rc.nof_threads = threads;
    bb::candidate_search search(rc);
    for (const auto& [lo, hi] : ranges) {
      std::string what = "[";
      what += std::to_string(lo);
      what += ", ";
      what += std::to_string(hi);
      what += "), ";
      what += std::to_string(threads);
      what += " threads";
      expect_windows(search.find(src, lo, hi), defined_windows(s, lo, hi), s, what);
    }
    // Ranges that tile the capture, of a length that is no multiple of L or BLOCK.
    std::vector<bb::detection> tiled;
    for (uint64_t lo = 0; lo < npos; lo += 100003) {
      const auto part = search.find(src, lo, lo + 100003);
      tiled.insert(tiled.end(), part.begin(), part.end());
    }
    std::string what = "ranges of 100003 positions, ";
    what += std::to_string(threads);
    what += " threads";
    expect_windows(tiled, all, s, what);
  }
}

} // namespace
