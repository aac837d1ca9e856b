/// @file fft512.hpp
/// The 512-point transform of the receiver: its size and the batched host API.
/// Host-only header (no CUDA headers), so plain C++ code can use the size; the stream
/// is CUDA's `cudaStream_t` (= `CUstream_st*`), declared here without CUDA.
///
/// Every call enqueues one kernel on `stream` and returns: no allocation, no
/// synchronisation. Forward, unnormalised, as FFTW: Y[b] = sum_n x[n] e^{-2 pi i b n/512},
/// transform f reading d_in[512 f .. 512 f + 511] and writing d_out likewise.
/// Accuracy (tests/fft): relative L2 error against a float64 DFT of the input values
/// below 1e-6 for all input types (half and int8 inputs are converted exactly, or to
/// within one rounding for the int8 scale, before the transform).
#pragma once

#include <whd/fft/variant.hpp>
#include <whd/transport/sample_types.hpp>

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace whd::fft {

/// Transform size. The profile (baseband/profile.hpp) asserts it equals its N.
inline constexpr int N = 512;
/// log2(N): the number of radix-2 stages.
inline constexpr int LOG2_N = 9;
static_assert((1 << LOG2_N) == N);
static_assert(N == THREADS_PER_TRANSFORM * VALUES_PER_THREAD);

/// CUDA stream handle (the same type as cudaStream_t).
using stream_handle = CUstream_st*;

/// Half-precision complex sample ("LittleFloat"): IEEE binary16 bit patterns of I and
/// Q, the memory layout and alignment of CUDA's __half2 (x = I, y = Q).
struct alignas(4) cf16 {
  std::uint16_t i;
  std::uint16_t q;
};
static_assert(sizeof(cf16) == 4);

/// Largest batch one call takes.
inline constexpr std::size_t MAX_BATCH = std::size_t{1} << 31;

/// Launch options of fft512_variant.
struct launch_options {
  /// Cap on the persistent grid of pipelined variants (0: as many blocks as fit on the
  /// device at once). Tests use a small cap to make every block loop. Ignored by plain
  /// variants.
  int max_blocks = 0;
};

/// Forward transforms of `count` complex float vectors, with the default variant for
/// cf32 (default_variant). d_in and d_out are device pointers, aligned to their
/// element type (as cudaMalloc's are); they may not overlap.
/// @param[in]  d_in   count*512 samples
/// @param[out] d_out  count*512 bins
/// @throws std::invalid_argument for null pointers or count > MAX_BATCH;
///         whd::cuda::cuda_error when the launch fails
void fft512(const cf32* d_in, cf32* d_out, std::size_t count, stream_handle stream);
/// Forward transforms of half-precision input (see cf16).
void fft512(const cf16* d_in, cf32* d_out, std::size_t count, stream_handle stream);
/// Forward transforms of int8 input ("TinyFixed"): sample values are
/// d_scale[f / nof_per_scale] * (i, q) for transform f.
/// @param[in] d_scale  ceil(count / nof_per_scale) floats (device)
/// @param[in] nof_per_scale  transforms sharing one scale (>= 1), e.g. the symbols of a block
void fft512(const ci8* d_in, const float* d_scale, std::size_t nof_per_scale, cf32* d_out, std::size_t count,
            stream_handle stream);

/// The same, with a named variant (all variants compute the same function).
/// @throws std::invalid_argument also for a variant not in all_variants()
void fft512_variant(const variant& v, const cf32* d_in, cf32* d_out, std::size_t count, stream_handle stream,
                    launch_options options = {});
/// Named variant, half-precision input.
void fft512_variant(const variant& v, const cf16* d_in, cf32* d_out, std::size_t count, stream_handle stream,
                    launch_options options = {});
/// Named variant, int8 input with scales.
void fft512_variant(const variant& v, const ci8* d_in, const float* d_scale, std::size_t nof_per_scale,
                    cf32* d_out, std::size_t count, stream_handle stream, launch_options options = {});

} // namespace whd::fft
