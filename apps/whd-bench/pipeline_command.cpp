/// @file pipeline_command.cpp
/// `whd-bench pipeline`: options -> pipeline_bench_config -> run -> table, JSON, log.
#include "bench_output.hpp"
#include "subcommands.hpp"

#include <whd/rx_bench/pipeline_bench.hpp>

#include <boost/program_options.hpp>

#include <algorithm>
#include <iostream>

namespace whd::bench_app {

int run_pipeline(const std::vector<std::string>& args, const std::string& command)
{
  namespace po = boost::program_options;
  rx_bench::pipeline_bench_config c;
  std::string capture = c.capture.string(), payload, json, markdown;
  po::options_description desc(
      "whd-bench pipeline [options]\n\n"
      "Times the GPU receive chain on a 16-QAM ci8 capture (made with the generator if missing):\n"
      "  device-resident  packed samples on the GPU -> payload bits on the GPU\n"
      "  pipeline         packed samples in pinned host memory -> bits in pinned host memory\n"
      "  end-to-end       capture file (page cache) -> payload file, the whole whd-rx chain\n"
      "the first two for the int8, half and f32 links (the end-to-end one sends the capture as\n"
      "stored), beside a cuFFT-based chain (unpack, cuFFT C2C, demap), the CPU backend, and the\n"
      "copy ceilings, all in one run. Bits are checked against the CPU.\n\nOptions");
  desc.add_options()("help,h", "show this help")
    ("capture", po::value(&capture)->default_value(capture), "capture base path (BASE.sigmf-meta); generated when missing")
    ("payload", po::value(&payload), "where the end-to-end region writes the payload (default: BASE.payload)")
    ("frames", po::value(&c.nof_frames)->default_value(c.nof_frames), "frames of a generated capture")
    ("nd", po::value(&c.nd)->default_value(c.nd), "data symbols per generated frame")
    ("snr-db", po::value(&c.snr_dB)->default_value(c.snr_dB), "SNR of a generated capture [dB]")
    ("cfo-hz", po::value(&c.cfo_Hz)->default_value(c.cfo_Hz), "CFO of a generated capture [Hz]")
    ("taps", po::value(&c.taps)->default_value(c.taps), "multipath taps of a generated capture")
    ("batch", po::value(&c.symbols_per_batch)->default_value(c.symbols_per_batch), "data symbols per batch")
    ("streams", po::value(&c.nof_streams)->default_value(c.nof_streams), "batches in flight per GPU")
    ("gpus", po::value(&c.nof_gpus)->default_value(c.nof_gpus), "also measure pipeline and end-to-end over this many GPUs")
    ("repeats", po::value(&c.repeats)->default_value(c.repeats), "timed repeats per region (median reported)")
    ("no-end-to-end", "skip the end-to-end region")
    ("e2e-batch", po::value(&c.e2e_batches)->multitoken()->value_name("SYMBOLS..."),
     "symbols per batch of the end-to-end region, one row each (default: whd-rx's)")
    ("e2e-threads", po::value(&c.e2e_threads)->multitoken()->value_name("N..."),
     "host threads (whd-rx -j) of the end-to-end region, a row each on 1 and --gpus GPUs (default: every core)")
    ("cpu-threads", po::value(&c.cpu_threads)->default_value(0), "CPU backend threads (0: all)");
  add_output_options(desc, json, markdown);
  if (const auto done = parse_subcommand("pipeline", po::command_line_parser(args).options(desc), desc, [&](const po::variables_map& vm) {
    c.end_to_end = vm.count("no-end-to-end") == 0;
    if (std::find(c.e2e_batches.begin(), c.e2e_batches.end(), std::size_t(0)) != c.e2e_batches.end()) {
      throw std::invalid_argument("--e2e-batch must be at least 1");
    }
    if (std::find(c.e2e_threads.begin(), c.e2e_threads.end(), 0u) != c.e2e_threads.end()) {
      throw std::invalid_argument("--e2e-threads must be at least 1");
    }
    if (c.nof_frames < 1 || c.nd < 1 || c.symbols_per_batch < 1 || c.nof_streams < 1 || c.repeats < 1 || c.taps < 1) {
      throw std::invalid_argument("--frames, --nd, --batch, --streams, --repeats and --taps must be at least 1");
    }
  })) {
    return *done;
  }
  c.capture = capture;
  c.payload = payload;
  return run_and_report(c, command, [](const auto& cfg, const auto& progress) { return rx_bench::run_pipeline_bench(cfg, progress); }, json,
                        markdown);
}

} // namespace whd::bench_app
