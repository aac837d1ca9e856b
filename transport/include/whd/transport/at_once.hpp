/// @file at_once.hpp
/// A short piece of work split n ways and run at once: the page-locked pages made,
/// the GPU receiver's chunk slots made, a large write copied into a mapping, blocks
/// of a report formatted.
#pragma once

#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace whd::transport {

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

} // namespace whd::transport
