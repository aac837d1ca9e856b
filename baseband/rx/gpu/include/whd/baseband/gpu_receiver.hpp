/// @file gpu_receiver.hpp
/// The GPU backend: the capture crosses the link once, as stored (ci8 and ci16 as
/// integers, cf32 as f32 or packed as gpu_config::link says), in chunks. On the
/// device each chunk is searched for candidates (gpu_search.hpp), every candidate
/// is located at once: fine timing, CFO, channel estimate, header (gpu_locate.hpp),
/// and the data symbols of the frames
/// the host's walk takes are gathered from the same chunk and derotated, transformed
/// by the project's 512-point FFT, pilot-corrected, equalised, demapped and packed
/// into payload bytes in one fused kernel. The host reads the file, walks the
/// candidates in order (frame_locator.hpp's frame_walk), lists the symbols and writes
/// the payload: no per-frame signal work.
#pragma once

#include <whd/baseband/receiver.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/fft/variant.hpp>
#include <whd/transport/link_pack.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace whd::baseband {


/// How chunks go to the GPUs when there are several.
enum class gpu_spread : uint8_t {
  /// The first GPU takes every chunk while it keeps up; a chunk goes to the next GPU
  /// only when every chunk in flight on those before is still on its GPU. Where the
  /// host is the bound (reading, the walk, the payload), the run is one GPU's.
  when_busy,
  /// Chunk k to GPU k mod N, whatever the load (the tests: every GPU takes chunks).
  in_turn,
};

/// When the GPUs after the first start (their contexts, peer access and chunk slots).
enum class gpu_start : uint8_t {
  /// When the first GPU falls behind: once the reader's wait for chunks still on it,
  /// projected over the rest of the capture, exceeds what starting another GPU costs
  /// (gpu_config::start_cost_seconds). They start on a thread of their own while the
  /// first decodes, and take chunks once ready. Where the host is the bound they never
  /// start, and the run costs what one GPU's does.
  when_behind,
  /// All of them with the receiver (their contexts side by side).
  at_once,
};

/// Set-up of the GPU backend.
struct gpu_config {
  /// How a cf32 capture crosses the link: f32 (as stored; nullopt means f32), or
  /// packed by the reading threads into half (4 bytes a sample) or int8 with a scale
  /// per 1024 samples (2 bytes; transport::pack_cf32_run) and unpacked on the device.
  /// Packed, the bits may differ from the CPU backend's where quantisation moves a
  /// value across a decision (near ties for half). Integer captures (ci8, ci16)
  /// always cross as stored, which loses nothing and is smaller.
  std::optional<transport::link_format> link;
  /// Chunk size in data symbols' worth of samples (SYMBOLS x 576 positions searched
  /// per chunk); 0: 2^24 positions.
  std::size_t symbols_per_batch = 0;
  /// Chunks in flight per GPU (each with its own stream, pinned and device buffers):
  /// while one is walked on the host, the next ones are read, searched and located.
  /// A capture of fewer chunks gets as many buffers as it has chunks.
  int nof_streams = 4;
  /// First CUDA device ordinal.
  int device = 0;
  /// GPUs used: devices [device, device + nof_gpus); batches go to them as `spread`
  /// says and their payload is written in capture order.
  int nof_gpus = 1;
  gpu_spread spread = gpu_spread::when_busy;
  gpu_start start = gpu_start::when_behind;
  /// when_behind: the seconds a start of another GPU costs the host (its context,
  /// peer access and chunk slots: 0.3-0.4 s measured on a host of two H100s), the bar
  /// the projected wait for the first GPU must pass.
  double start_cost_seconds = 0.5;
  /// when_behind: start the further GPUs after this many chunks were handed out
  /// whatever the wait, the reader waiting for them (the tests: a start at a known
  /// chunk); 0: by the wait alone.
  std::size_t start_after_chunks = 0;
  /// Host threads reading chunks into pinned memory (0: all hardware threads).
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

/// A block filter for the CPU search (candidate_search::set_block_filter) on CUDA
/// device `device`: long silences of ci8 and ci16 captures cleared on the GPU. For integer samples every window sum
/// is an exact integer on the device as on the host, so P, R1 and R2 are the
/// host's; a block is cleared when every position's |P|^2 is at most half the
/// threshold times R1 R2, a factor of two beyond any rounding of the products, so
/// detections are exactly the host scan's. Throws whd::cuda::cuda_error.
std::unique_ptr<block_filter> make_gpu_block_filter(int device, float threshold);

} // namespace whd::baseband
