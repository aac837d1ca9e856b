// The room the receivers reserve for a capture's frames after its first chunk or
// region (frame_locator.hpp): the first part's frame density over the whole capture,
// a quarter more, never more than frames of the least length could fill (a frame and
// the next are at least its preamble and header apart, less the half guard the walk
// resumes before its end), nothing when nothing is left to judge; and reserving it
// keeps the frames listed so far as they are.
#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/profile.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;

/// The most frames `total` positions hold: each frame takes its preamble and header
/// (3 symbols) less G/2 before the walk looks for the next.
uint64_t most_frames(uint64_t total) { return total / (3 * uint64_t(p::N + p::G) - p::G / 2) + 1; }

TEST(frames_reserve, scales_the_first_part_density_to_the_capture_with_a_quarter_more)
{
  const uint64_t total = 40'000'000'000ull; // about 16 s of air
  for (const uint64_t searched : {1'000'000ull, 4'194'304ull, 123'456'789ull}) {
    for (const uint64_t seen : {1ull, 17ull, 400ull, 2'000ull}) {
      const double expected = double(seen) * double(total) / double(searched);
      const uint64_t want = bb::frames_to_reserve(seen, searched, total);
      if (expected * 1.25 + 1 < double(most_frames(total))) {
        EXPECT_GE(double(want), expected * 1.25) << seen << " in " << searched;
        EXPECT_LE(double(want), expected * 1.25 + 2) << seen << " in " << searched;
      }
      EXPECT_LE(want, most_frames(total)) << seen << " in " << searched;
    }
  }
}

TEST(frames_reserve, never_more_than_the_capture_could_hold)
{
  // More frames seen than the first part could hold (a miscount) still asks for no
  // more than the densest capture has.
  for (const uint64_t total : {10'000'000ull, 20'000'000'000ull}) {
    const uint64_t searched = total / 10;
    EXPECT_EQ(bb::frames_to_reserve(searched, searched, total), most_frames(total));
    EXPECT_LE(bb::frames_to_reserve(most_frames(searched), searched, total), most_frames(total));
  }
  // A count no capture can hold, over the largest capture: still the bound.
  const uint64_t largest = ~uint64_t(0);
  EXPECT_EQ(bb::frames_to_reserve(largest, 1, largest), most_frames(largest));
}

TEST(frames_reserve, nothing_when_there_is_nothing_to_judge)
{
  EXPECT_EQ(bb::frames_to_reserve(0, 1'000'000, 100'000'000), 0u);       // no frame seen yet
  EXPECT_EQ(bb::frames_to_reserve(50, 100'000'000, 100'000'000), 0u);    // the whole capture searched
  EXPECT_EQ(bb::frames_to_reserve(50, 200'000'000, 100'000'000), 0u);    // past its end
  EXPECT_EQ(bb::frames_to_reserve(50, 0, 100'000'000), 0u);              // nothing searched
}

TEST(frames_reserve, keeps_the_frames_listed_and_never_shrinks)
{
  std::vector<bb::frame_result> frames(100);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    frames[i].start = 1000 * i;
    frames[i].nd = uint32_t(i);
    if (i % 7 == 0) {
      frames[i].bad_symbols.push_back({uint32_t(i), 1});
    }
  }
  const std::vector<bb::frame_result> before = frames;
  const uint64_t total = 1'000'000'000, searched = 10'000'000;
  bb::reserve_frames(frames, searched, total);
  EXPECT_GE(frames.capacity(), bb::frames_to_reserve(100, searched, total));
  ASSERT_EQ(frames.size(), before.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(frames[i].start, before[i].start);
    EXPECT_EQ(frames[i].nd, before[i].nd);
    EXPECT_EQ(frames[i].bad_symbols.size(), before[i].bad_symbols.size());
  }
  // Already room: left as it is.
  const std::size_t capacity = frames.capacity();
  bb::reserve_frames(frames, total - 1, total);
  EXPECT_EQ(frames.capacity(), capacity);
}

} // namespace
