/// @file host_pool.hpp
/// A small persistent pool of host threads for data-parallel loops (link
/// packing), so that a batch does not pay for creating threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace whd::baseband {

class host_pool {
public:
  /// `nof_threads` workers including the caller (so nof_threads - 1 are spawned).
  explicit host_pool(unsigned nof_threads) : nof_(nof_threads ? nof_threads : 1)
  {
    for (unsigned i = 1; i < nof_; ++i) {
      workers_.emplace_back([this, i] { loop(i); });
    }
  }
  ~host_pool()
  {
    {
      std::lock_guard lk(m_);
      quit_ = true;
    }
    cv_.notify_all();
  }
  host_pool(const host_pool&) = delete;
  host_pool& operator=(const host_pool&) = delete;

  unsigned size() const noexcept { return nof_; }

  /// Run fn(part, nof_parts) for part = 0..nof_parts-1 over the workers and the
  /// caller; returns when all are done; rethrows the first exception.
  void run(unsigned nof_parts, const std::function<void(unsigned, unsigned)>& fn)
  {
    if (nof_parts <= 1 || nof_ == 1) {
      for (unsigned p = 0; p < nof_parts; ++p) {
        fn(p, nof_parts);
      }
      return;
    }
    {
      std::lock_guard lk(m_);
      fn_ = &fn;
      parts_ = nof_parts;
      next_ = 0;
      pending_ = nof_parts;
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    work();
    std::unique_lock lk(m_);
    done_cv_.wait(lk, [this] { return pending_ == 0; });
    fn_ = nullptr;
    if (error_) {
      std::rethrow_exception(error_);
    }
  }

private:
  void loop(unsigned)
  {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lk(m_);
        cv_.wait(lk, [&] { return quit_ || generation_ != seen; });
        if (quit_) {
          return;
        }
        seen = generation_;
      }
      work();
    }
  }
  /// Take parts until none is left.
  void work()
  {
    for (;;) {
      unsigned part;
      const std::function<void(unsigned, unsigned)>* fn;
      unsigned parts;
      {
        std::lock_guard lk(m_);
        if (fn_ == nullptr || next_ >= parts_) {
          return;
        }
        part = next_++;
        fn = fn_;
        parts = parts_;
      }
      try {
        (*fn)(part, parts);
      } catch (...) {
        std::lock_guard lk(m_);
        if (!error_) {
          error_ = std::current_exception();
        }
      }
      std::lock_guard lk(m_);
      if (--pending_ == 0) {
        done_cv_.notify_all();
      }
    }
  }

  unsigned nof_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(unsigned, unsigned)>* fn_ = nullptr;
  unsigned parts_ = 0, next_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool quit_ = false;
  std::exception_ptr error_;
  std::vector<std::jthread> workers_;
};

} // namespace whd::baseband
