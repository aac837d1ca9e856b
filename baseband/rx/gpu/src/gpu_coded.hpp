/// @file gpu_coded.hpp
/// Coded frames (profile 2) in the GPU receiver: where a coded frame's soft values
/// gather on the device (the fused kernel demultiplexes them there), the frames whose
/// FEC a chunk runs, and the buffers of the frames that go on past their first chunk.
/// Internal to the receive chain.
#pragma once

#include <whd/fec/coded_frame.hpp>
#include <whd/transport/cuda.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace whd::baseband::gpu {

/// A coded frame whose symbols lie in more than one chunk: its soft values, its
/// information bytes on the device and, for the writer, on the host. Made when the
/// frame is seen to go on past its first chunk; back to the cache once written.
struct coded_span {
  int device = 0;
  cuda::device_buffer<int8_t> d_streams;
  cuda::device_buffer<uint8_t> d_info;
  cuda::pinned_buffer<uint8_t> h_info;
};

/// Spans, kept for reuse: a capture of long coded frames makes one or two, not one a frame.
class coded_span_cache {
public:
  /// A span on `device` holding at least these sizes.
  std::shared_ptr<coded_span> take(int device, std::size_t stream_bytes, std::size_t info_bytes);
  /// Back for reuse (after the writer wrote its frame).
  void give(std::shared_ptr<coded_span> s);
  /// Bytes held on devices and pinned (resources).
  std::size_t device_bytes() const;

private:
  mutable std::mutex m_;
  std::vector<std::shared_ptr<coded_span>> free_;
  std::size_t device_bytes_ = 0;
};

/// A coded frame whose last symbol a chunk decodes: its FEC runs in that chunk.
struct coded_end {
  std::size_t result = 0;          ///< index in receive_result::frames
  fec::frame_geometry g;
  int8_t* d_streams = nullptr;     ///< its 8 Ce soft values (device)
  uint8_t* d_info = nullptr;       ///< where its L bytes go (device): the chunk's d_out, or its span's
  std::size_t out_at = 0;          ///< its first byte in the chunk's payload (h_out order)
  std::shared_ptr<coded_span> span; ///< a frame that began in an earlier chunk (or goes on: null here)
};

} // namespace whd::baseband::gpu
