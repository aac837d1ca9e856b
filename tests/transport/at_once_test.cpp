// run_at_once: every part runs exactly once, part 0 on the calling thread, the
// others on threads of their own, all done when it returns.
#include <whd/transport/at_once.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

namespace tr = whd::transport;

TEST(run_at_once, every_part_runs_once_and_part_zero_on_the_calling_thread)
{
  for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(32)}) {
    std::vector<std::atomic<int>> runs(n);
    std::vector<std::thread::id> where(n);
    tr::run_at_once(n, [&](std::size_t k) {
      runs[k].fetch_add(1);
      where[k] = std::this_thread::get_id();
    });
    for (std::size_t k = 0; k < n; ++k) {
      EXPECT_EQ(runs[k].load(), 1) << "n " << n << ", part " << k;
      EXPECT_EQ(where[k] == std::this_thread::get_id(), k == 0) << "n " << n << ", part " << k;
    }
  }
}

TEST(run_at_once, the_parts_run_at_the_same_time)
{
  // Each part waits until all have started: this returns only if they overlap.
  constexpr std::size_t N = 4;
  std::atomic<std::size_t> started{0};
  tr::run_at_once(N, [&](std::size_t) {
    started.fetch_add(1);
    while (started.load() < N) {
      std::this_thread::yield();
    }
  });
  EXPECT_EQ(started.load(), N);
}

TEST(run_at_once, an_exception_on_the_calling_thread_comes_out_once_the_others_are_done)
{
  std::atomic<int> others{0};
  EXPECT_THROW(tr::run_at_once(3,
                               [&](std::size_t k) {
                                 if (k == 0) {
                                   throw std::runtime_error("part 0");
                                 }
                                 std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                 others.fetch_add(1);
                               }),
               std::runtime_error);
  EXPECT_EQ(others.load(), 2);
}

} // namespace
