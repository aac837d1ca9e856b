/// @file gpu_coded_decoder.hpp
/// The FEC of profile 2's coded frames (§2.2 - §2.4) on the device, as one
/// device-resident stage: demultiplexed int8 soft values on the device in, each frame's
/// L information bytes and its RS counts on the device out. Bit for bit the CPU's
/// coded_decoder (viterbi.hpp's definition of the tiled soft Viterbi, un-parsing,
/// reed_solomon.hpp's rs_decode).
#pragma once

#include <whd/fec/coded_frame.hpp>
#include <whd/fec/coded_rx.hpp>
#include <whd/transport/cuda.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace whd::fec {

/// What one run of a gpu_coded_decoder may hold at most; all its memory is sized
/// from these once, in the constructor.
struct gpu_coded_capacity {
  std::size_t max_frames = 64;        ///< frames per run
  uint64_t max_coded_bits = 1u << 26; ///< sum over the frames of Nd Ncbps (= g.coded_bits())
  uint64_t max_tiles = 1u << 17;      ///< sum over the frames of 8 nof_tiles(g.nin)
  uint64_t max_codewords = 1u << 16;  ///< sum over the frames of g.codewords
};

/// One frame of a run. Device pointers; the soft values must be complete before the
/// run's stream reaches the decoder's work (stream order or an event the caller waits on).
struct gpu_coded_frame {
  frame_geometry g;                   ///< geometry(mcs, nd)
  const int8_t* d_streams = nullptr;  ///< [in] 8 g.ce soft values: encoder e's at [e ce, (e + 1) ce),
                                      ///< each in its punctured order (demultiplex_symbols' layout)
  uint8_t* d_info = nullptr;          ///< [out] g.info_bytes bytes
};

/// Forms of the Viterbi kernel, all giving the same bits: the add-compare-select by
/// Hopper's DPX add-max (__viaddmax_u16x2) or by an add then a 16-bit-pair max, built
/// for 2 blocks of 128 threads an SM (no register spills) or 3 (more threads, a few
/// spills); and "relu": DPX add-max, both decisions of a butterfly by DPX add-min-relu
/// from one metric difference, packed by shift-adds, depuncturing by a compile-time
/// pattern and a 4-instruction traceback step (gpu_viterbi_relu.cuh), for 3 or 2 blocks,
/// and with the decisions packed by a tree of shift-adds rather than a chain; and relu
/// for 2 blocks with the soft values read a word (4 values) at a time (the default).
/// The relu forms know the MCS's code rates (1/3, 2/3, 4/5); a run with a frame of
/// another puncturing takes "plain, 3 blocks".
enum class viterbi_form : uint8_t { dpx_2, dpx_3, plain_2, plain_3, relu_3, relu_2, relu_tree_3, relu_words_2 };
inline constexpr viterbi_form VITERBI_FORMS[] = {viterbi_form::dpx_2,  viterbi_form::dpx_3,  viterbi_form::plain_2,
                                                 viterbi_form::plain_3, viterbi_form::relu_3, viterbi_form::relu_2,
                                                 viterbi_form::relu_tree_3, viterbi_form::relu_words_2};
inline constexpr int NOF_VITERBI_FORMS = int(sizeof(VITERBI_FORMS) / sizeof(VITERBI_FORMS[0]));
constexpr const char* to_string(viterbi_form f)
{
  switch (f) {
  case viterbi_form::dpx_2: return "dpx, 2 blocks/SM";
  case viterbi_form::dpx_3: return "dpx, 3 blocks/SM";
  case viterbi_form::plain_2: return "plain, 2 blocks/SM";
  case viterbi_form::plain_3: return "plain, 3 blocks/SM";
  case viterbi_form::relu_3: return "relu, 3 blocks/SM";
  case viterbi_form::relu_2: return "relu, 2 blocks/SM";
  case viterbi_form::relu_tree_3: return "relu tree-packed, 3 blocks/SM";
  case viterbi_form::relu_words_2: return "relu word loads, 2 blocks/SM";
  }
  return "?";
}

/// Decodes batches of coded frames on the device (a thread per pair of Viterbi tiles,
/// a thread per RS codeword; see gpu_fec_kernels.cu). Not thread-safe: one run at a
/// time per object (its descriptors and scratch are reused by the next run).
class gpu_coded_decoder {
public:
  /// Allocates the descriptors (pinned and device), the Viterbi's decisions (for the
  /// default form's threads) and the decoded bytes for runs up to `cap` on the current device.
  /// @throws cuda::cuda_error when the memory cannot be had, std::invalid_argument for a zero capacity
  explicit gpu_coded_decoder(const gpu_coded_capacity& cap);

  /// Enqueues on `stream` the decoding of `frames`: Viterbi (every frame's 8 streams),
  /// un-parsing and RS; each frame's information bytes to its d_info, its RS counts to
  /// d_rs[i] ({bytes corrected, codewords failed}; zeroed by the run). Only enqueues
  /// (no allocation, no wait on the device, except for the previous run's descriptor
  /// upload, normally long complete). The caller synchronises `stream` before reading
  /// the outputs.
  /// @param frames [in] up to cap.max_frames frames, within the capacity's sums
  /// @param d_rs [out] device array of frames.size() rs_stats
  /// @param stream the stream the work goes on
  /// @param viterbi_done optional event recorded between the Viterbi and the RS kernels (timing)
  /// @throws std::length_error past the capacity, std::invalid_argument for a null pointer
  void run(std::span<const gpu_coded_frame> frames, rs_stats* d_rs, cuda::stream_ref stream,
           cudaEvent_t viterbi_done = nullptr);

  /// Selects the Viterbi kernel's form (the same bits; for benchmarks and tests). A form
  /// that holds more threads at once than the decisions' scratch has slots for grows it
  /// (not while a run is in flight).
  /// @throws cuda::cuda_error when the memory cannot be had
  void use_form(viterbi_form f);
  viterbi_form form() const noexcept { return form_; }

  /// Device memory the decoder holds, bytes.
  std::size_t device_bytes() const noexcept;
  /// Tile pairs one Viterbi launch decodes at once (its decisions' scratch).
  uint64_t resident_pairs() const noexcept { return slots_; }

private:
  gpu_coded_capacity cap_;
  uint64_t slots_ = 0;                        ///< threads with a decisions slot (whole warps)
  unsigned viterbi_blocks_[NOF_VITERBI_FORMS] = {}; ///< per form: blocks of its launch (grid-stride)
  viterbi_form form_ = viterbi_form::relu_words_2; // the fastest at MCS 0, 1, 2 and 7 (bench/results/fec-gpu-h200-2026-11-29.raw.md)
  cuda::device_buffer<uint4> dec_;            ///< decisions: [warp][step][lane], 4 words a step
  cuda::device_buffer<uint8_t> decoded_;      ///< every frame's 8 Q decoded bytes, encoder-major
  cuda::pinned_buffer<std::byte> h_desc_;     ///< frame descriptors (gpu_fec_kernels.hpp), + 1 sentinel
  cuda::device_buffer<std::byte> d_desc_;
  cuda::event uploaded_{false};               ///< the last run's descriptor upload
  bool upload_pending_ = false;
};

} // namespace whd::fec
