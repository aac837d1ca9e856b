// run_at_once: every part runs exactly once, part 0 on the calling thread, the
// others on threads of their own, all done when it returns. crew: the same, run after
// run, on threads kept between runs.
#include <whd/transport/at_once.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

namespace tr = whd::transport;

/// Runs `run(fn)`, whose parts each wait, up to `patience`, for all `n` parts to have
/// started, and returns how many parts saw all n started. Parts that overlap all see
/// n; parts run one after another see fewer (the first waits its patience out and
/// goes on), so a runner that stops running them at once fails the test within a
/// few patiences instead of hanging it.
template <class Runner>
std::size_t parts_that_saw_all_started(std::size_t n, Runner&& run, std::chrono::milliseconds patience = std::chrono::seconds(10))
{
  std::atomic<std::size_t> started{0};
  std::atomic<std::size_t> saw_all{0};
  run([&](std::size_t) {
    started.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (started.load() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    if (started.load() >= n) {
      saw_all.fetch_add(1);
    }
  });
  return saw_all.load();
}

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
  constexpr std::size_t N = 4;
  EXPECT_EQ(parts_that_saw_all_started(N, [](auto&& fn) { tr::run_at_once(N, fn); }), N)
      << "a part ran without the others running beside it";
}

TEST(run_at_once, the_overlap_check_tells_parts_run_one_after_another)
{
  // The check above on a runner that runs the parts in turn: it must not pass.
  constexpr std::size_t N = 3;
  const auto serial = [](auto&& fn) {
    for (std::size_t k = 0; k < N; ++k) {
      fn(k);
    }
  };
  EXPECT_EQ(parts_that_saw_all_started(N, serial, std::chrono::milliseconds(20)), 1u) << "only the last part sees all started";
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

TEST(crew, every_part_runs_once_a_run_on_threads_kept_between_runs)
{
  for (const std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(8)}) {
    std::atomic<int> started{0};
    tr::crew c(n, [&] { started.fetch_add(1); });
    EXPECT_EQ(c.parts(), n);
    std::set<std::thread::id> threads;
    for (int r = 0; r < 50; ++r) {
      std::vector<std::atomic<int>> runs(n);
      std::vector<std::thread::id> where(n);
      c.run([&](std::size_t k) {
        runs[k].fetch_add(1);
        where[k] = std::this_thread::get_id();
      });
      for (std::size_t k = 0; k < n; ++k) {
        EXPECT_EQ(runs[k].load(), 1) << "n " << n << ", run " << r << ", part " << k;
        EXPECT_EQ(where[k] == std::this_thread::get_id(), k == 0) << "n " << n << ", part " << k;
        threads.insert(where[k]);
      }
    }
    EXPECT_EQ(threads.size(), n) << "50 runs on the same " << n - 1 << " thread(s) and the caller";
    EXPECT_EQ(started.load(), int(n) - 1) << "start runs once on each thread of the crew, never on the caller";
  }
}

TEST(crew, the_parts_of_a_run_run_at_the_same_time)
{
  constexpr std::size_t N = 4;
  tr::crew c(N);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(parts_that_saw_all_started(N, [&](auto&& fn) { c.run(fn); }), N)
        << "run " << r << ": a part ran without the others running beside it";
  }
}

TEST(crew, an_exception_from_any_part_comes_out_once_all_are_done_and_the_crew_goes_on)
{
  tr::crew c(3);
  for (const std::size_t thrower : {std::size_t(0), std::size_t(2)}) {
    std::atomic<int> others{0};
    EXPECT_THROW(c.run([&](std::size_t k) {
      if (k == thrower) {
        throw std::runtime_error("part");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      others.fetch_add(1);
    }),
                 std::runtime_error)
        << "part " << thrower;
    EXPECT_EQ(others.load(), 2) << "part " << thrower;
  }
  std::atomic<int> runs{0};
  c.run([&](std::size_t) { runs.fetch_add(1); });
  EXPECT_EQ(runs.load(), 3) << "a run after a failed one";
}

} // namespace
