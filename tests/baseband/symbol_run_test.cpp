// The GPU receiver's listing of a frame's symbols in a chunk (gpu_symbol_run.hpp), as
// arithmetic, against its rule applied symbol by symbol: symbol m is listed where m is
// one of the frame's, its window lies in the chunk, and so does its next neighbour's
// (or it is the frame's last); the listing goes on from the frame's next symbol while
// that holds. Checked on positions around every edge the rule has.
#include "gpu_symbol_run.hpp"

#include <whd/baseband/profile.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

namespace {

namespace p = whd::profile;
using whd::baseband::gpu::listed_run_end;

constexpr uint64_t L = p::SYMBOL_LEN;

uint64_t run_end_by_rule(uint64_t fft0, uint64_t next, uint64_t frame_end, uint64_t chunk_end)
{
  auto fits = [&](uint64_t m) { return fft0 + m * L + p::N <= chunk_end; };
  auto listed = [&](uint64_t m) { return m < frame_end && fits(m) && (m + 1 == frame_end || fits(m + 1)); };
  uint64_t m = next;
  while (listed(m)) {
    ++m;
  }
  return m;
}

TEST(symbol_run, equals_the_rule_symbol_by_symbol)
{
  std::mt19937_64 rng(17);
  uint64_t runs = 0, whole = 0, none = 0;
  for (int i = 0; i < 200000; ++i) {
    const uint64_t fft0 = rng() % 4000000;
    const uint64_t symbols = 1 + rng() % 300;
    const uint64_t frame_end = p::FIRST_DATA_SYMBOL + symbols;
    const uint64_t next = p::FIRST_DATA_SYMBOL + rng() % symbols;
    // The chunk's end near a window's end of the frame: within a few samples of it,
    // before the frame, or past its last window.
    const uint64_t m = next + rng() % (symbols + 3);
    const uint64_t edge = fft0 + m * L + p::N;
    const uint64_t chunk_end = edge + (rng() % 7) - 3 - ((rng() % 5 == 0) ? (m + 2) * L : 0);
    const uint64_t want = run_end_by_rule(fft0, next, frame_end, chunk_end);
    ASSERT_EQ(listed_run_end(fft0, next, frame_end, chunk_end), want)
        << "fft0 " << fft0 << " next " << next << " frame_end " << frame_end << " chunk_end " << chunk_end;
    runs += want > next ? 1 : 0;
    whole += want == frame_end ? 1 : 0;
    none += want == next ? 1 : 0;
  }
  // The cases reach every outcome: the frame's end, a run cut by the chunk, nothing.
  EXPECT_GT(whole, 1000u);
  EXPECT_GT(runs - whole, 1000u);
  EXPECT_GT(none, 1000u);
}

} // namespace
