/// @file gpu_symbol_decoder.hpp
/// The fused data-symbol kernel and its host launcher (internal to baseband).
#pragma once

#include <whd/baseband/frame_locator.hpp>
#include <whd/fec/coded_frame.hpp>
#include <whd/fec/viterbi.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/fft/variant.hpp>
#include <whd/transport/cuda.hpp>
#include <whd/transport/link_pack.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace whd::baseband::gpu {

/// The output lane of thread t of the shuffle-exchange transform
/// (fft512_algo<stockham, shfl, *>::out_lane): its two octal digits swapped.
constexpr int held_lane(int t) { return (t >> 3) + 8 * (t & 7); }

/// Per-frame parameters the device needs to decode its data symbols.
struct frame_params {
  double cfo_cps;       ///< CFO [cycles/sample]
  double window_offset; ///< first FFT window of the frame minus its start [samples]
  int32_t mod;          ///< profile::modulation
  float llr_inv_noise;  ///< channel_estimate::llr_inv_noise: the soft values' scale
  /// 1/H by FFT bin: on data tones, 0 elsewhere. By bin rather than by data tone,
  /// so that a thread of the fused kernel reads the bins it holds from one base.
  float2 inv[profile::N];
  /// The same 1/H in the order the shuffle-exchange transform leaves the bins in its
  /// threads: [64 j + t] is bin held_lane(t) + 64 j, so that a warp's reads of one
  /// slot are consecutive (by bin they span 16 sectors).
  float2 inv_held[profile::N];
  float hconj_re[profile::NOF_PILOTS]; ///< conj(H) on pilots
  float hconj_im[profile::NOF_PILOTS];
  /// e^{-j 2 pi cfo t} for t = 0..63 and e^{-j 2 pi cfo 64}, from double: thread t
  /// of the fused kernel derotates x[t + 64 j] by rot_t step^j (the window's own
  /// phase is left to the pilots' common-phase rotation).
  float rot_re[64];
  float rot_im[64];
  float step_re, step_im;
};

/// A coded frame's symbol in a batch (profile 2): where its soft values go.
struct coded_target {
  int8_t* streams = nullptr; ///< the frame's 8 Ce demultiplexed soft values (device); null: uncoded
  uint64_t ce = 0;           ///< coded bits per encoder of the frame
  uint32_t m = 0;            ///< data symbol number (0: the frame's first; the kernel sets it per symbol)
  uint32_t unused = 0;
};

/// One data symbol of a batch: which frame, which symbol m of it.
struct symbol_desc {
  uint32_t frame; ///< index into the batch's frame_params
  uint32_t m;     ///< symbol number in its frame (>= FIRST_DATA_SYMBOL), HALO added for a halo symbol
  /// m's flag for a halo symbol: a neighbour of the batch's symbols whose own decode is
  /// another batch's (demap.hpp's PHASE_NEIGHBOURS): only its derotation is made.
  static constexpr uint32_t HALO = 1u << 31;
  __host__ __device__ uint32_t number() const noexcept { return m & ~HALO; }
  __host__ __device__ bool halo() const noexcept { return (m & HALO) != 0; }
};

/// Output stride per symbol: the larger modulation's bytes (QPSK uses the first 84).
inline constexpr std::size_t OUT_STRIDE = profile::MAX_BYTES_PER_SYMBOL;
static_assert(OUT_STRIDE % 4 == 0, "the fused kernel stores 32-bit words");

/// Soft values a symbol's slot holds at most: 16-QAM's bits (QPSK uses the first 672).
inline constexpr std::size_t LLR_STRIDE = profile::MAX_BITS_PER_SYMBOL;

/// Device pointers of one batch.
struct batch_view {
  const void* samples;        ///< count * N samples in the link form
  const float* scales;        ///< count
  const symbol_desc* symbols; ///< count
  const frame_params* frames;
  uint8_t* out;               ///< count * OUT_STRIDE bytes at most, 4-byte aligned
  std::size_t count;
  /// Soft output (f32 link form only; null: none): values of llr_form in payload
  /// order, symbol i's bits_per_symbol values from byte llr_offsets[i] (packed: a
  /// QPSK symbol takes half of a 16-QAM one), or from i * LLR_STRIDE values when
  /// llr_offsets is null.
  void* llr = nullptr;
  const uint32_t* llr_offsets = nullptr;
  llr_format llr_form = llr_format::int8;
  float llr_scale = 1.0f; ///< int8's round(LLR x scale)
  /// Symbol i's payload starts at byte out_offsets[i] of out (packed: a QPSK symbol
  /// takes half of a 16-QAM one; each a multiple of 4), or at i * OUT_STRIDE when
  /// null.
  const uint32_t* out_offsets = nullptr;
  /// Coded frames (f32 form only; null: none in the batch): the target of frame f
  /// (symbol_desc::frame; its m unused), where the soft values of its symbols go
  /// (their hard bits go nowhere: the frame's payload is the FEC's); null streams for
  /// an uncoded frame.
  const coded_target* coded = nullptr;
  /// Scratch of count entries (required): every symbol's own derotation, made by a first
  /// pass, which the decode averages over each symbol's neighbours in the batch (the
  /// entries next to it of its frame, m - 1 and m + 1).
  float2* rots = nullptr;
};

/// Where a batch's inputs lie in one block of memory (pinned, and its copy on the
/// device): samples, scales, symbol descriptors, frame parameters, each on a
/// 256-byte boundary, so that a full batch crosses the link in one copy. (Copied
/// apart, the small copies ran far below the link's rate, with gaps between them.)
struct input_layout {
  input_layout(std::size_t symbols, std::size_t max_frames, std::size_t bytes_per_window)
      : scales(align(symbols * bytes_per_window)), desc(align(scales + symbols * sizeof(float))),
        frames(align(desc + symbols * sizeof(symbol_desc))), bytes(frames + max_frames * sizeof(frame_params))
  {
  }
  static constexpr std::size_t align(std::size_t n) { return (n + 255) / 256 * 256; }
  /// The batch of `count` symbols whose block starts at `in`.
  batch_view view(const std::byte* in, uint8_t* out, std::size_t count) const
  {
    return {in, reinterpret_cast<const float*>(in + scales), reinterpret_cast<const symbol_desc*>(in + desc),
            reinterpret_cast<const frame_params*>(in + frames), out, count};
  }
  /// Copies in a batch of `count` of `capacity` symbols and `nof_frames` frames
  /// (host block `in` to device block `dev`): a full batch in one copy, a short one
  /// without the samples it does not hold.
  void copy_in(std::byte* dev, const std::byte* in, std::size_t count, std::size_t capacity, std::size_t bytes_per_window,
               std::size_t nof_frames, cudaStream_t stream) const
  {
    const std::size_t used_end = frames + nof_frames * sizeof(frame_params);
    if (count == capacity) {
      WHD_CUDA_CHECK(cudaMemcpyAsync(dev, in, used_end, cudaMemcpyHostToDevice, stream));
      return;
    }
    WHD_CUDA_CHECK(cudaMemcpyAsync(dev, in, count * bytes_per_window, cudaMemcpyHostToDevice, stream));
    WHD_CUDA_CHECK(cudaMemcpyAsync(dev + scales, in + scales, used_end - scales, cudaMemcpyHostToDevice, stream));
  }
  std::size_t scales, desc, frames, bytes; ///< offsets of each part (samples at 0), and the total
};

/// The device parameters of a located frame.
frame_params make_frame_params(const located_frame& f);

/// Fused kernel of one link form (defined in gpu_symbol_kernels_<form>.cu).
template <transport::link_format FMT>
void launch_decode_form(fft::exchange exch, const batch_view& b, cudaStream_t stream);

/// Enqueue the fused kernel for a batch on `stream` (no allocation, no sync);
/// `exch` picks the FFT's exchange (the tune cache's choice).
inline void launch_decode(transport::link_format fmt, const batch_view& b, cudaStream_t stream,
                          fft::exchange exch = fft::default_variant(fft::input_type::ci8).exch)
{
  if (b.count == 0) {
    return;
  }
  if (b.rots == nullptr) {
    throw std::invalid_argument("launch_decode: the batch needs its derotations' scratch (batch_view::rots)");
  }
  if ((b.llr != nullptr || b.coded != nullptr) && fmt != transport::link_format::f32) {
    throw std::invalid_argument("the fused kernel gives soft values from f32 windows only");
  }
  switch (fmt) {
  case transport::link_format::f32: launch_decode_form<transport::link_format::f32>(exch, b, stream); break;
  case transport::link_format::half: launch_decode_form<transport::link_format::half>(exch, b, stream); break;
  case transport::link_format::int8: launch_decode_form<transport::link_format::int8>(exch, b, stream); break;
  }
}

} // namespace whd::baseband::gpu
