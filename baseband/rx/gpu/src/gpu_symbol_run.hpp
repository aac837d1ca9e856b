/// @file gpu_symbol_run.hpp
/// Which of an open frame's data symbols a chunk lists (open_frames::list), as
/// arithmetic on the frame's and the chunk's positions: no CUDA, so that the CPU tests
/// check it against the rule symbol by symbol. Internal to the receive chain.
#pragma once

#include <whd/baseband/profile.hpp>

#include <algorithm>
#include <cstdint>

namespace whd::baseband::gpu {

/// The end of the run [next, end) of a frame's symbols that a chunk whose samples end
/// at `chunk_end` lists, capacity aside, where symbol m's window begins at
/// fft0 + m SYMBOL_LEN and the frame's symbols end at `frame_end`. A symbol is listed
/// where its window lies in the chunk and so does its next neighbour's (for its
/// derotation), or where it is the frame's last. Windows further on end further on, so
/// the symbols listed from `next` are a run.
constexpr uint64_t listed_run_end(uint64_t fft0, uint64_t next, uint64_t frame_end, uint64_t chunk_end)
{
  constexpr uint64_t L = profile::SYMBOL_LEN;
  // Symbols m < fit_end have their windows in the chunk.
  const uint64_t fit_end = chunk_end >= fft0 + profile::N ? (chunk_end - profile::N - fft0) / L + 1 : 0;
  // Up to the frame's end where its last window fits, else up to the last symbol whose
  // next neighbour's window fits.
  return std::max(next, frame_end <= fit_end ? frame_end : fit_end == 0 ? uint64_t(0) : fit_end - 1);
}

} // namespace whd::baseband::gpu
