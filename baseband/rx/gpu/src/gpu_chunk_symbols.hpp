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
  /// A coded frame (profile 2): its geometry, whether its FEC runs (not when it is
  /// truncated: it writes no payload), and once it goes on past its first chunk, the
  /// span its soft values gather in.
  bool coded = false;
  bool fec = false;
  fec::frame_geometry geo;
  std::shared_ptr<coded_span> span;
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
  /// are dropped. A coded frame's symbols take no payload bytes; their soft values
  /// go to the frame's streams (in the chunk's d_coded_streams when the frame ends in
  /// it, else in a span from `spans`), and the chunk runs the FEC of each frame that
  /// ends in it (s.coded_ends), its L bytes in the payload where the frame ends.
  void list(chunk_slot& s, coded_span_cache& spans);

private:
  /// The coded frame o's symbols [first, last) of the chunk (at least one): where
  /// their soft values go (null when its FEC does not run), and its FEC when it ends
  /// here.
  static int8_t* list_coded(chunk_slot& s, open_frame& o, std::size_t first, std::size_t last, coded_span_cache& spans);

  std::vector<open_frame> open_;
};

} // namespace whd::baseband::gpu
