/// @file host_pool.hpp
/// Threads kept for data-parallel loops (reading a chunk, link packing, the CPU
/// backend's frames and symbols), so that a batch does not pay for starting threads:
/// a transport::crew whose threads take parts from a shared counter, so that parts
/// of uneven cost spread over whichever thread is free.
#pragma once

#include <whd/transport/at_once.hpp>

#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <string>

namespace whd::baseband {

class host_pool {
public:
  /// `nof_threads` workers including the caller (so nof_threads - 1 are kept), the
  /// kept ones named `name` when one is given (the caller keeps its own).
  explicit host_pool(unsigned nof_threads, const char* name = nullptr)
      : crew_(nof_threads ? nof_threads : 1, [kept = std::string(name != nullptr ? name : "")] {
          // A copy: the threads may start after the constructor has returned.
          if (!kept.empty()) {
            transport::name_this_thread(kept.c_str());
          }
        })
  {
  }

  unsigned size() const noexcept { return unsigned(crew_.parts()); }

  /// Run fn(part, nof_parts) for part = 0..nof_parts-1 over the workers and the
  /// caller, each part once; returns when all are done, then rethrows the first
  /// exception (a part that throws does not keep the others from running).
  void run(unsigned nof_parts, const std::function<void(unsigned, unsigned)>& fn)
  {
    if (nof_parts <= 1 || size() == 1) {
      for (unsigned p = 0; p < nof_parts; ++p) {
        fn(p, nof_parts);
      }
      return;
    }
    std::atomic<unsigned> next{0};
    std::mutex m;
    std::exception_ptr error;
    crew_.run([&](std::size_t) {
      for (unsigned p; (p = next.fetch_add(1, std::memory_order_relaxed)) < nof_parts;) {
        try {
          fn(p, nof_parts);
        } catch (...) {
          std::lock_guard lk(m);
          if (!error) {
            error = std::current_exception();
          }
        }
      }
    });
    if (error) {
      std::rethrow_exception(error);
    }
  }

private:
  transport::crew crew_;
};

} // namespace whd::baseband
