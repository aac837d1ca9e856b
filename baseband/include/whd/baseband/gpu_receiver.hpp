/// @file gpu_receiver.hpp
/// The GPU backend: frames are located as the CPU reference locates them
/// (frame_locator), and the data symbols of every frame cross the link packed
/// (profile §7: only the N post-guard samples of each symbol) to be derotated,
/// transformed by the project's 512-point FFT, pilot-corrected, equalised,
/// demapped and packed into payload bytes on the device, in one fused kernel.
#pragma once

#include <whd/baseband/receiver.hpp>
#include <whd/fft/variant.hpp>
#include <whd/transport/link_pack.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace whd::baseband {

/// Set-up of the GPU backend.
struct gpu_config {
  /// Link form; nullopt: transport::auto_link_format of the capture's datatype.
  std::optional<transport::link_format> link;
  /// Data symbols per batch (one H2D copy, one kernel, one D2H copy).
  /// 8192 keeps each copy in long enough (8.5 MB: 98 % of the link's rate in
  /// whd-bench pipeline's copies-only row) while pinning only ~11 MB per batch,
  /// which start-up pays for in page-locking time.
  std::size_t symbols_per_batch = 1u << 13;
  /// Batches in flight per GPU (each with its own stream and pinned buffers).
  int nof_streams = 4;
  /// First CUDA device ordinal.
  int device = 0;
  /// GPUs used: devices [device, device + nof_gpus); batches go to them in turn
  /// and their payload is written in capture order.
  int nof_gpus = 1;
  /// Host threads packing samples for the link (0: all hardware threads).
  unsigned pack_threads = 0;
  /// The FFT exchange of the fused kernel (the tune cache's choice for the link's
  /// input type; see fft/tune_cache.hpp).
  fft::exchange fft_exchange = fft::default_variant(fft::input_type::ci8).exch;
  /// Receives a line for the log when set-up had to adapt: device or pinned memory
  /// too short for symbols_per_batch at start, so batches were halved until the
  /// buffers fit (receive_result::resources says what was used).
  std::function<void(const std::string&)> notice;
};

/// The GPU backend. Throws whd::cuda::cuda_error (naming the call) when no device is
/// usable or an allocation fails even at the smallest batch (64 symbols), std::invalid_argument when fewer than
/// device + nof_gpus devices are present.
/// The sink is written from a writer thread of the receiver (one thread, in order).
std::unique_ptr<receiver> make_gpu_receiver(const rx_config& cfg, const gpu_config& gcfg = {});

} // namespace whd::baseband
