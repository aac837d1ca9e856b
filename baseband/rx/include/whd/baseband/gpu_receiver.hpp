/// @file gpu_receiver.hpp
/// The GPU backend: frames are located as the CPU reference locates them
/// (frame_locator), and the data symbols of every frame cross the link packed
/// (profile §7: only the N post-guard samples of each symbol) to be derotated,
/// transformed by the project's 512-point FFT, pilot-corrected, equalised,
/// demapped and packed into payload bytes on the device, in one fused kernel.
#pragma once

#include <whd/baseband/receiver.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/fft/variant.hpp>
#include <whd/transport/link_pack.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace whd::baseband {

/// Link samples per batch when gpu_config::symbols_per_batch is 0 (32 MiB).
inline constexpr std::size_t AUTO_BATCH_LINK_BYTES = std::size_t(32) << 20;

/// Set-up of the GPU backend.
struct gpu_config {
  /// Link form; nullopt: transport::auto_link_format of the capture's datatype.
  std::optional<transport::link_format> link;
  /// Data symbols per batch (one H2D copy, one kernel, one D2H copy); 0: as many
  /// as fill AUTO_BATCH_LINK_BYTES of link samples (32768 over int8, 16384 over
  /// half, 8192 over f32). A batch is packed by all host threads at once, so its
  /// size sets how often they meet: on the H100 machine end to end went from 58
  /// to 42 ns/symbol between 8192 and 32768 int8 symbols, and no further at 65536
  /// (bench/results/e2e-h100-2026-11-23.md).
  std::size_t symbols_per_batch = 0;
  /// Chunks in flight per GPU (each with its own stream, pinned and device buffers):
  /// while one is walked on the host, the next ones are read, searched and located.
  int nof_streams = 4;
  /// First CUDA device ordinal.
  int device = 0;
  /// GPUs used: devices [device, device + nof_gpus); batches go to them in turn
  /// and their payload is written in capture order.
  int nof_gpus = 1;
  /// Host threads packing samples for the link (0: all hardware threads).
  unsigned pack_threads = 0;
  /// Long silences of ci8 and ci16 captures are first searched on the device
  /// (make_gpu_block_filter); the frames found are the same either way.
  bool search_on_gpu = true;
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

/// The detector's block filter on CUDA device `device` (the GPU backend gives one
/// to its search for ci8 and ci16 captures). For integer samples every window sum
/// is an exact integer on the device as on the host, so P, R1 and R2 are the
/// host's; a block is cleared when every position's |P|^2 is at most half the
/// threshold times R1 R2, a factor of two beyond any rounding of the products, so
/// detections are exactly the host scan's. Throws whd::cuda::cuda_error.
std::unique_ptr<block_filter> make_gpu_block_filter(int device, float threshold);

} // namespace whd::baseband
