/// @file bench_kernels.hpp
/// Helper kernels of the benchmark (internal): random inputs, the conversions that
/// feed cuFFT for half and int8 input, and the copy kernels of the ceiling.
#pragma once

#include <whd/fft/fft512.hpp>

#include <cstddef>
#include <cstdint>

namespace whd::fft::bench::detail {

/// Uniform random samples in [-1, 1) (I and Q), from a counter-based hash of (seed, index).
void fill_cf32(cf32* d_out, std::size_t n, std::uint64_t seed, stream_handle s);
/// The same, rounded to half precision.
void fill_cf16(cf16* d_out, std::size_t n, std::uint64_t seed, stream_handle s);
/// Uniform random int8 pairs in [-127, 127].
void fill_ci8(ci8* d_out, std::size_t n, std::uint64_t seed, stream_handle s);
/// Uniform random scales in [0.5, 2) / 127.
void fill_scales(float* d_out, std::size_t n, std::uint64_t seed, stream_handle s);

/// cf16 -> cf32, n samples (n even).
void convert_cf16(const cf16* d_in, cf32* d_out, std::size_t n, stream_handle s);
/// ci8 * scale -> cf32, n samples (n even), one scale per `per_scale` samples (even).
void convert_ci8(const ci8* d_in, const float* d_scale, std::size_t per_scale, cf32* d_out, std::size_t n,
                 stream_handle s);

/// Copy n samples, each thread 8 samples of 8 bytes at a stride of its block (the
/// FFT's access pattern); n a multiple of 2048.
void copy8(const cf32* d_in, cf32* d_out, std::size_t n, stream_handle s);
/// Copy n samples with 16-byte accesses, each thread 4 of them; n a multiple of 2048.
void copy16(const cf32* d_in, cf32* d_out, std::size_t n, stream_handle s);

} // namespace whd::fft::bench::detail
