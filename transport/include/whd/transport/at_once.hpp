/// @file at_once.hpp
/// A short piece of work split n ways and run at once: once (run_at_once: the
/// page-locked pages made, the GPU receiver's chunk slots made, blocks of a report
/// formatted), or again and again on threads kept for it (crew: a payload file's
/// large writes, one a chunk).
#pragma once

#include <pthread.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace whd::transport {
/// Names the calling thread (what top -H, perf and gdb show), cut to the 15
/// characters Linux keeps; a name that cannot be set leaves the old one.
inline void name_this_thread(const char* name) noexcept
{
  char cut[16] = {};
  for (std::size_t i = 0; i + 1 < sizeof cut && name[i] != '\0'; ++i) {
    cut[i] = name[i];
  }
  (void)pthread_setname_np(pthread_self(), cut);
}


/// Runs fn(0) .. fn(n - 1) at once and returns when all have: fn(0) on the calling
/// thread, each other on a thread of its own, or on the calling thread in turn when
/// no thread can be had (so that the work is done either way). An exception from fn
/// on a thread of its own ends the process, as from any thread; on the calling
/// thread it propagates once the others are done.
template <class Fn>
void run_at_once(std::size_t n, Fn&& fn)
{
  std::vector<std::jthread> helpers;
  helpers.reserve(n > 0 ? n - 1 : 0);
  for (std::size_t k = 1; k < n; ++k) {
    try {
      helpers.emplace_back([&fn, k] { fn(k); });
    } catch (const std::system_error&) {
      fn(k); // no thread to be had: done here
    }
  }
  if (n > 0) {
    fn(std::size_t(0));
  }
}

/// Threads kept for work that comes again and again: run(fn) runs fn(0) on the calling
/// thread and fn(1) .. fn(parts() - 1) on the crew's threads, at once, and returns when
/// all have, without starting a thread each time (a few tens of microseconds each,
/// on the caller's path). `start` runs once on each thread as it begins (to lower its
/// priority, say). Parts whose thread could not be had run on the calling thread after
/// its own. An exception from any part comes out of run, the first one, once all are
/// done. One run at a time.
class crew {
public:
  explicit crew(std::size_t parts, std::function<void()> start = {}) : parts_(parts > 0 ? parts : 1)
  {
    for (std::size_t k = 1; k < parts_; ++k) {
      try {
        threads_.emplace_back([this, k, start] {
          if (start) {
            start();
          }
          loop(k);
        });
      } catch (const std::system_error&) {
        break; // the rest run on the calling thread
      }
    }
  }
  ~crew()
  {
    {
      std::lock_guard lk(m_);
      quit_ = true;
    }
    cv_.notify_all();
  }
  crew(const crew&) = delete;
  crew& operator=(const crew&) = delete;

  /// How many ways each run is split.
  std::size_t parts() const noexcept { return parts_; }

  template <class Fn>
  void run(Fn&& fn)
  {
    const std::function<void(std::size_t)> f = std::forward<Fn>(fn);
    {
      std::lock_guard lk(m_);
      fn_ = &f;
      pending_ = threads_.size();
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    capture([&] { f(0); });
    for (std::size_t k = threads_.size() + 1; k < parts_; ++k) {
      capture([&] { f(k); });
    }
    std::unique_lock lk(m_);
    done_cv_.wait(lk, [this] { return pending_ == 0; });
    fn_ = nullptr;
    if (error_) {
      std::rethrow_exception(std::exchange(error_, nullptr));
    }
  }

private:
  template <class Part>
  void capture(Part&& part)
  {
    try {
      part();
    } catch (...) {
      std::lock_guard lk(m_);
      if (!error_) {
        error_ = std::current_exception();
      }
    }
  }
  void loop(std::size_t k)
  {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(std::size_t)>* f = nullptr;
      {
        std::unique_lock lk(m_);
        cv_.wait(lk, [&] { return quit_ || generation_ != seen; });
        if (quit_) {
          return;
        }
        seen = generation_;
        f = fn_;
      }
      capture([&] { (*f)(k); });
      std::lock_guard lk(m_);
      if (--pending_ == 0) {
        done_cv_.notify_all();
      }
    }
  }

  std::size_t parts_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(std::size_t)>* fn_ = nullptr;
  uint64_t generation_ = 0;
  std::size_t pending_ = 0;
  bool quit_ = false;
  std::exception_ptr error_;
  std::vector<std::jthread> threads_; ///< last: joined first, while the rest still stands
};

} // namespace whd::transport
