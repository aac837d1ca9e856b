/// @file gpu_fec_kernels.hpp
/// What gpu_coded_decoder hands its kernels (private to whd::fec_gpu): the per-frame
/// descriptor, uploaded per run, and the launchers.
#pragma once

#include <whd/fec/coded_frame.hpp>
#include <whd/fec/coded_rx.hpp>
#include <whd/fec/gpu_coded_decoder.hpp>
#include <whd/fec/viterbi.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace whd::fec::gpu {

/// Threads per block of the Viterbi kernel.
inline constexpr int VITERBI_THREADS = 128;
/// Threads per block of the RS kernel.
inline constexpr int RS_THREADS = 128;
/// Steps of a tile whose decisions are kept: those from its first output bit on (the
/// acquisition's are not traced back).
inline constexpr uint64_t DEC_STEPS = MAX_TILE + DEPTH;
/// Punctured output in a pattern table.
inline constexpr unsigned PUNCTURED = 0xF;

/// One frame of a run, as the kernels read it. descs[n] (n frames) is a sentinel
/// holding only the totals in item_first and word_first.
struct frame_desc {
  const int8_t* streams;  ///< 8 ce soft values
  uint8_t* decoded;       ///< 8 q bytes (scratch)
  uint8_t* info;          ///< info_bytes bytes
  uint64_t ce, nin, q;
  uint64_t codewords, last_k;
  /// Where step r of a period finds output w (0 X, 1 Y, 2 Z): nibble 3 r + w holds the
  /// index within the period's pout values, or PUNCTURED.
  uint64_t pattern;
  uint32_t pin_log2, pout;
  uint64_t item_first; ///< first Viterbi item (tile pair) of the frame
  uint64_t word_first; ///< first RS codeword of the frame
};

/// The nibble table of `p` (frame_desc::pattern).
uint64_t pattern_table(const puncture_pattern& p);

/// Enqueues the Viterbi over `items` tile pairs (tile k of encoders p and p + 4, for
/// the 4 p of each frame) on `grid` blocks, each thread reusing its decisions slot.
void launch_viterbi(const frame_desc* d_descs, int nof_frames, uint64_t items, unsigned grid, uint4* dec, viterbi_form form,
                    cudaStream_t stream);
/// Enqueues un-parsing and RS over `words` codewords, counts to d_rs.
void launch_rs(const frame_desc* d_descs, int nof_frames, uint64_t words, rs_stats* d_rs, cudaStream_t stream);
/// Whether a form's Viterbi kernel decodes frames of puncturing pattern `p` (the relu
/// forms know the MCS's rates at compile time).
bool viterbi_form_handles(viterbi_form form, const puncture_pattern& p);
/// Blocks of a form's Viterbi kernel one SM holds at once.
int viterbi_blocks_per_sm(viterbi_form form);

/// The device RS decoder on single codewords, for tests: codeword i (n[i] = k + 8
/// bytes, at words + 224 i) decoded in place, rs_decode's return value to result[i].
void launch_rs_words(uint8_t* d_words, const int* d_lengths, int* d_result, int count, cudaStream_t stream);

} // namespace whd::fec::gpu
