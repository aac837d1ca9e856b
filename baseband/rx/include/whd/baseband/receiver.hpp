/// @file receiver.hpp
/// The receive chain behind one interface: the CPU reference (liquid-dsp) and
/// the GPU backend make the same decisions and report alike.
#pragma once

#include <whd/baseband/rx_types.hpp>
#include <whd/transport/capture.hpp>

#include <memory>
#include <string_view>

namespace whd::baseband {

/// A whole-capture receiver: finds every frame, writes payload bytes in capture
/// order to the sink, and reports frames and header failures.
class receiver {
public:
  virtual ~receiver() = default;
  /// "cpu" or "gpu".
  virtual std::string_view backend() const noexcept = 0;
  /// Decode the whole source. Data outcomes are in the result; only set-up and
  /// I/O failures throw.
  virtual receive_result run(const transport::sample_source& src, payload_sink& sink, const progress_fn& progress = {}) = 0;
};

/// The CPU backend: liquid-dsp FFT, frames' data symbols spread over threads;
/// the result is identical for any thread count.
std::unique_ptr<receiver> make_cpu_receiver(const rx_config& cfg);

} // namespace whd::baseband
