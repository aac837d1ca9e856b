// host_pool: every part of a run exactly once, over the caller and the kept threads,
// run after run; parts of uneven cost spread over whichever thread is free; an
// exception from a part comes out once every part has run.
#include "host_pool.hpp"

#include <gtest/gtest.h>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using whd::baseband::host_pool;

TEST(host_pool, every_part_runs_once_run_after_run)
{
  for (const unsigned threads : {0u, 1u, 3u, 8u}) {
    host_pool pool(threads);
    EXPECT_EQ(pool.size(), threads ? threads : 1u);
    for (const unsigned parts : {0u, 1u, 2u, 5u, 64u}) {
      for (int run = 0; run < 3; ++run) {
        std::vector<std::atomic<int>> runs(parts);
        pool.run(parts, [&](unsigned p, unsigned n) {
          EXPECT_EQ(n, parts);
          runs[p].fetch_add(1);
        });
        for (unsigned p = 0; p < parts; ++p) {
          EXPECT_EQ(runs[p].load(), 1) << threads << " threads, part " << p << " of " << parts << ", run " << run;
        }
      }
    }
  }
}

TEST(host_pool, a_slow_part_does_not_hold_the_others)
{
  // Part 0 waits until every other part has run: that returns only if the other
  // parts are taken by threads other than the one that holds part 0.
  constexpr unsigned PARTS = 40;
  host_pool pool(4);
  std::atomic<unsigned> done{0};
  std::atomic<bool> waited_out{false};
  pool.run(PARTS, [&](unsigned p, unsigned) {
    if (p == 0) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (done.load() < PARTS - 1 && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::yield();
      }
      waited_out = done.load() < PARTS - 1;
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    done.fetch_add(1);
  });
  EXPECT_EQ(done.load(), PARTS);
  EXPECT_FALSE(waited_out.load()) << "the other parts waited for part 0";
}

TEST(host_pool, an_exception_comes_out_after_every_part_has_run)
{
  host_pool pool(4);
  for (int run = 0; run < 3; ++run) {
    std::vector<std::atomic<int>> runs(32);
    try {
      pool.run(32, [&](unsigned p, unsigned) {
        runs[p].fetch_add(1);
        if (p % 3 == 1) {
          throw std::runtime_error("part " + std::to_string(p));
        }
      });
      ADD_FAILURE() << "no exception came out";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("part ", 0), 0u);
    }
    for (unsigned p = 0; p < 32; ++p) {
      EXPECT_EQ(runs[p].load(), 1) << "part " << p << ", run " << run;
    }
  }
  // The pool is still whole after the exceptions.
  std::atomic<int> total{0};
  pool.run(10, [&](unsigned, unsigned) { total.fetch_add(1); });
  EXPECT_EQ(total.load(), 10);
}

// A named pool's kept threads carry its name, cut to the 15 characters Linux keeps
// (what top -H, perf and gdb show); the caller, which runs a part too, keeps its own.
TEST(host_pool, kept_threads_carry_the_pools_name_and_the_caller_its_own)
{
  char before[16] = {};
  ASSERT_EQ(pthread_getname_np(pthread_self(), before, sizeof before), 0);
  const pthread_t caller = pthread_self();
  const std::string long_name = "whd-test-pool-with-a-long-name";
  host_pool pool(4, long_name.c_str());
  std::mutex m;
  std::vector<std::string> kept, on_caller;
  std::atomic<int> arrived{0};
  pool.run(4, [&](unsigned, unsigned) {
    // Each part waits (a while at most) for the others, so that each holds a thread.
    arrived.fetch_add(1);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (arrived.load() < 4 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    std::lock_guard lk(m);
    (pthread_equal(pthread_self(), caller) ? on_caller : kept).emplace_back(name);
  });
  ASSERT_EQ(kept.size(), 3u);
  for (const auto& name : kept) {
    EXPECT_EQ(name, long_name.substr(0, 15));
  }
  ASSERT_EQ(on_caller.size(), 1u);
  EXPECT_EQ(on_caller[0], before);
}

} // namespace
