/// @file gpu_receiver.hpp
/// The GPU backend: frames are located as the CPU reference locates them
/// (frame_locator), and the data symbols of every frame cross the link packed
/// (profile §7: only the N post-guard samples of each symbol) to be derotated,
/// transformed by the project's 512-point FFT, pilot-corrected, equalised,
/// demapped and packed into payload bytes on the device, in one fused kernel.
#pragma once

#include <whd/baseband/receiver.hpp>
#include <whd/transport/link_pack.hpp>

#include <cstddef>
#include <memory>
#include <optional>

namespace whd::baseband {

/// Set-up of the GPU backend.
struct gpu_config {
  /// Link form; nullopt: transport::auto_link_format of the capture's datatype.
  std::optional<transport::link_format> link;
  /// Data symbols per batch (one H2D copy, one kernel, one D2H copy).
  std::size_t symbols_per_batch = 1u << 15;
  /// Batches in flight (each with its own stream and pinned buffers).
  int nof_streams = 3;
  /// CUDA device ordinal.
  int device = 0;
};

/// The GPU backend. Throws whd::cuda::cuda_error (naming the call) when no device is
/// usable or an allocation fails.
std::unique_ptr<receiver> make_gpu_receiver(const rx_config& cfg, const gpu_config& gcfg = {});

} // namespace whd::baseband
