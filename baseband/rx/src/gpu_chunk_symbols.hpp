/// @file gpu_chunk_symbols.hpp
/// Which data symbols a chunk's decode holds: the frames the walk has taken and
/// not finished, their symbols whose windows lie in the chunk, in order, and the
/// parameters of frames that go on into later chunks, kept on the host. Internal
/// to the receive chain.
#pragma once

#include "gpu_chunk.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace whd::baseband::gpu {

/// A frame taken by the walk whose data symbols are not all decoded yet.
struct open_frame {
  uint64_t fft0 = 0;      ///< first sample of preamble symbol 0's FFT window
  uint64_t next = 0;      ///< next symbol m to decode (>= FIRST_DATA_SYMBOL)
  uint64_t end = 0;       ///< FIRST_DATA_SYMBOL + symbols
  std::size_t result = 0; ///< index in receive_result::frames
  std::size_t bytes_per_symbol = 0;
  uint32_t params = 0;        ///< its decode parameters in the current chunk's table
  /// The parameters, kept on the host while it goes on into later chunks (null until
  /// then: 9 kB, and a capture of short packets opens a frame every few microseconds).
  std::unique_ptr<frame_params> carried;
};

class open_frames {
public:
  void clear() { open_.clear(); }
  bool empty() const noexcept { return open_.empty(); }
  void add(open_frame&& o) { open_.push_back(std::move(o)); }
  /// The result index of the first open frame (the frames stay in result order).
  std::size_t first_result() const noexcept { return open_.front().result; }

  /// Lists into `s` (h_offsets, h_desc, h_out_offsets, out_bytes, segments, count,
  /// h_carry, nof_carried) the data symbols of the open frames whose windows lie in
  /// the chunk, in order, up to its capacity; a frame that goes on past the chunk has
  /// its parameters copied to the host once (from the chunk's locate table) and
  /// carried into later chunks' tables after their own candidates. Finished frames
  /// are dropped.
  void list(chunk_slot& s);

private:
  std::vector<open_frame> open_;
};

} // namespace whd::baseband::gpu
