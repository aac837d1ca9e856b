/// @file stage_timer.hpp
/// Wall time of a scope added to an accumulator: the stage times both receivers
/// report (receive_result::stage_seconds, listed by `whd-rx -v`). Internal to the
/// receive chain.
#pragma once

#include <chrono>

namespace whd::baseband {

/// Adds the time of a scope to an accumulator.
class stage_timer {
public:
  using steady = std::chrono::steady_clock;

  explicit stage_timer(double& acc) : acc_(acc), t0_(steady::now()) {}
  ~stage_timer() { acc_ += std::chrono::duration<double>(steady::now() - t0_).count(); }
  stage_timer(const stage_timer&) = delete;
  stage_timer& operator=(const stage_timer&) = delete;

private:
  double& acc_;
  steady::time_point t0_;
};

} // namespace whd::baseband
