/// @file receiver_factory.hpp
/// One place that turns what a user asked for (backend, link, GPUs, device,
/// batch, threads) into a receiver: whd-rx and the Python module whdrx both call
/// make_receiver, so that they resolve `auto`, the GPU count and the FFT variant
/// of the tune cache the same way, and only print or return what was chosen.
#pragma once

#include <whd/transport/enum_names.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/baseband/rx_types.hpp>
#include <whd/fft/variant.hpp>
#include <whd/transport/link_pack.hpp>
#include <whd/transport/sample_types.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace whd::baseband {

/// Where the chain runs: `automatic` takes the GPU when a CUDA device is present.
enum class backend_kind : uint8_t { automatic, cpu, gpu };

inline constexpr enum_names<backend_kind, 3> BACKEND_NAMES{
    {{backend_kind::automatic, "auto"}, {backend_kind::cpu, "cpu"}, {backend_kind::gpu, "gpu"}}};

/// "auto", "cpu" or "gpu" (the command-line spelling); nullopt for anything else.
std::optional<backend_kind> parse_backend(std::string_view s);

/// The GPU count asked for: "all" (0) or a positive number; nullopt for anything else.
std::optional<int> parse_gpu_count(std::string_view s);

/// What the user asked for (whd-rx's --backend, --link, --gpus, --device, --batch, -j).
struct receiver_request {
  backend_kind backend = backend_kind::automatic;
  /// GPU link form; nullopt: transport::auto_link_format of the capture's datatype.
  std::optional<transport::link_format> link;
  /// GPUs to spread batches over, from `device` on; 0: every device present from it.
  int nof_gpus = 1;
  /// First CUDA device ordinal.
  int device = 0;
  /// GPU data symbols per batch (0: gpu_config's default, 32 MiB of link samples).
  std::size_t batch = 0;
  /// Host threads (CPU workers, GPU link packing); 0: all hardware threads.
  unsigned threads = 0;
  /// GPU chunks in flight per GPU; 0: gpu_config's default.
  int streams = 0;
  /// The GPU count as the user wrote it ("2", "all"), for the messages; empty:
  /// written from nof_gpus.
  std::string gpus_text;
  /// The process sees only devices [device, device + nof_gpus) of the host, as its
  /// 0 .. nof_gpus - 1 (cuda::show_only_devices, called before its first CUDA use, as
  /// whd-rx does), so that the driver starts those alone; messages still name them as
  /// the host numbers them.
  bool narrowed = false;
};

/// What make_receiver took and why, for the log (whd-rx) or the result (whdrx).
struct receiver_choice {
  std::string backend;        ///< "cpu" or "gpu"
  /// Why the CPU was taken when `auto` was asked for (no CUDA device: its reason); empty otherwise.
  std::string reason;
  int nof_gpus = 0;           ///< GPUs used (0 on the CPU)
  int device = 0;             ///< first device (GPU only)
  transport::link_format link = transport::link_format::f32; ///< link form (GPU only)
  fft::exchange fft_exchange = fft::exchange::smem;          ///< FFT exchange of the fused kernel (GPU only)
  std::string fft_source;     ///< where the exchange came from (the tune cache or its default; GPU only)
};

/// A receiver and what was chosen for it.
struct made_receiver {
  std::unique_ptr<receiver> rx;
  receiver_choice choice;
};

/// Lines for the log when the request had to adapt (fewer GPUs present than asked
/// for; GPU memory short of the batch at start).
using notice_fn = std::function<void(const std::string&)>;

/// Told what was chosen once it is decided, before the backend is set up (so that a
/// log names the choice before any notice or error of the set-up).
using choice_fn = std::function<void(const receiver_choice&)>;

/// Resolve `req` for a capture of `capture_type` and build the receiver.
/// The CPU backend gets `cfg` as it is; the GPU backend also gets the link, batch,
/// device, GPU count ("all": every device present from `device` on) and the FFT exchange the tune cache
/// (whd-bench fft --tune) names for the link's input type. `notice` gets the lines
/// a log should warn with; `chosen` gets the choice before the backend is set up.
/// @throws std::runtime_error when `gpu` is asked for and no device is usable, or
///   `device` is not present, or fewer than nof_gpus devices are present from it on
///   (the message says what to use instead);
///   whd::cuda::cuda_error when the GPU backend cannot be set up
made_receiver make_receiver(const receiver_request& req, const rx_config& cfg, datatype capture_type,
                            const notice_fn& notice = {}, const choice_fn& chosen = {});

} // namespace whd::baseband
