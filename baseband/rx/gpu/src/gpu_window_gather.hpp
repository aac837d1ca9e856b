/// @file gpu_window_gather.hpp
/// The data symbols' FFT windows, gathered from a chunk of the capture that is
/// already on the device into the contiguous f32 windows the fused kernel reads
/// (internal to the receive chain). The capture crosses the link once, as stored;
/// this copy runs at device bandwidth (8 bytes a sample each way), a small part of
/// what the chunk's own crossing of the link takes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace whd::baseband::gpu {

/// Enqueue on `stream`: window s (s < count) is the profile::N samples at
/// x + offsets[s]; it is written to win + s * N. When `bad` is not null, samples
/// whose I or Q is NaN or infinite are written as 0 and bad[s] counts them (cf32
/// chunks, read as stored); else they are copied as they are (integer chunks hold
/// none). No allocation, no sync.
void launch_gather_windows(const float2* x, const uint32_t* offsets, std::size_t count, float2* win, uint32_t* bad,
                           cudaStream_t stream);

/// Enqueue on `stream`: x[0, n) = value (the unit scales of f32 windows).
void launch_fill(float* x, std::size_t n, float value, cudaStream_t stream);

} // namespace whd::baseband::gpu
