#include <whd/baseband/receiver_factory.hpp>

#include <whd/baseband/gpu_receiver.hpp>
#include <whd/fft/tune_cache.hpp>
#include <whd/transport/cuda.hpp>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace whd::baseband {

std::optional<backend_kind> parse_backend(std::string_view s) { return parse_name(BACKEND_NAMES, s); }

std::optional<int> parse_gpu_count(std::string_view s)
{
  if (s == "all") {
    return 0;
  }
  int n = 0;
  const auto* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, n);
  if (s.empty() || r.ec != std::errc{} || r.ptr != end || n <= 0) {
    return std::nullopt;
  }
  return n;
}

made_receiver make_receiver(const receiver_request& req, const rx_config& cfg, datatype capture_type, const notice_fn& notice,
                            const choice_fn& chosen)
{
  made_receiver out;
  auto& choice = out.choice;
  // Narrowed, the process sees the devices it uses alone: device, device + 1, ... are
  // its 0, 1, ...; a device past those present ends the list there.
  const bool narrowed = req.narrowed && req.backend != backend_kind::cpu && req.nof_gpus > 0;
  const int first = narrowed ? 0 : req.device;
  const int gpus = req.backend == backend_kind::cpu ? 0 : whd::cuda::device_count();
  if (narrowed && gpus == 0 && req.device > 0) {
    throw std::runtime_error("--device " + std::to_string(req.device) + ": no CUDA device " + std::to_string(req.device) +
                             " present (devices count from 0), or use --backend cpu");
  }
  if (req.backend == backend_kind::gpu && gpus == 0) {
    throw std::runtime_error("--backend gpu: " + whd::cuda::no_device_reason() + "; use --backend cpu (or auto, which falls back to it)");
  }
  if (gpus > 0) {
    gpu_config g;
    g.symbols_per_batch = req.batch;
    if (req.streams > 0) {
      g.nof_streams = req.streams;
    }
    g.device = first;
    g.pack_threads = req.threads;
    g.notice = notice;
    if (first >= gpus) {
      throw std::runtime_error("--device " + std::to_string(req.device) + ": only " + std::to_string(gpus) + " CUDA device(s) present");
    }
    const int from = gpus - first; // present from the first device on
    if (req.nof_gpus > from) {
      const std::string asked = !req.gpus_text.empty() ? req.gpus_text : std::to_string(req.nof_gpus);
      throw std::runtime_error("--gpus " + asked + ": only " + std::to_string(from) + " CUDA device(s) present from device " +
                               std::to_string(req.device) + " on; ask for at most " + std::to_string(from) + ", or 'all'");
    }
    g.nof_gpus = req.nof_gpus <= 0 ? from : req.nof_gpus;
    // Integer captures cross as stored; cf32 as f32 unless half or int8 is asked for
    // (auto keeps f32: the CPU backend's bits, which packing may move near ties).
    // The device decodes f32 windows gathered from the chunk either way, so the FFT's
    // exchange is the tune cache's choice for cf32 input.
    const bool packs = capture_type == datatype::cf32_le;
    if (req.link && *req.link != transport::link_format::f32 && !packs && notice) {
      notice("--link " + std::string(transport::to_string(*req.link)) + ": " + std::string(whd::to_string(capture_type)) +
             " samples cross as stored, exactly; --link applies to cf32 captures");
    }
    const auto link = packs ? req.link.value_or(transport::link_format::f32) : transport::link_format::f32;
    g.link = link;
    const auto tuned = whd::fft::load_tuned_choice();
    g.fft_exchange = tuned[whd::fft::input_type::cf32].exch;
    choice.backend = "gpu";
    choice.nof_gpus = g.nof_gpus;
    choice.device = req.device;
    choice.link = link;
    choice.fft_exchange = g.fft_exchange;
    choice.fft_source = tuned.source;
    if (chosen) {
      chosen(choice);
    }
    out.rx = make_gpu_receiver(cfg, g);
    return out;
  }
  choice.backend = "cpu";
  if (req.backend == backend_kind::automatic) {
    choice.reason = whd::cuda::no_device_reason();
  }
  if (chosen) {
    chosen(choice);
  }
  out.rx = make_cpu_receiver(cfg);
  return out;
}

} // namespace whd::baseband
