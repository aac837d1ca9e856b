/// @file compare_command.cpp
/// `whd-bench compare CAPTURE`: options -> compare_bench_config -> run -> table, JSON, log.
#include "subcommands.hpp"

#include "bench_output.hpp"

#include <whd/rx_bench/compare_bench.hpp>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <iostream>
#include <sstream>

namespace whd::bench_app {

int run_compare(const std::vector<std::string>& args, const std::string& command)
{
  namespace po = boost::program_options;
  rx_bench::compare_bench_config c;
  std::string capture, truth, links = "f32,half,int8", json, markdown;
  po::options_description desc(
      "whd-bench compare CAPTURE [options]\n\n"
      "Decodes one capture with every backend and link packing available (cpu; gpu with f32, half,\n"
      "int8 for a cf32 capture, one gpu row for ci8 and ci16, which cross as stored), each timed end to end (capture file opened -> payload file written), counts the payload\n"
      "bits that differ between each pair (and against NAME.truth when it lies beside the capture),\n"
      "and gives each one's speed-up over the plain liquid-dsp chain (guard skip + fft_execute +\n"
      "modemcf_demodulate per data tone) timed in the same run. Without a GPU the GPU rows are\n"
      "skipped with the reason.\n\nOptions");
  desc.add_options()("help,h", "show this help")
    ("truth", po::value(&truth), "payload truth file (default: NAME.truth beside the capture, if present)")
    ("threads", po::value(&c.threads)->default_value(0), "CPU threads of the CPU backend and the plain chain (0: all)")
    ("links", po::value(&links)->default_value(links), "GPU link packings, comma-separated")
    ("batch", po::value(&c.gpu_batch)->default_value(c.gpu_batch), "GPU data symbols per batch")
    ("no-gpu", "skip the GPU backend even when a GPU is present")
    ("no-plain-one-thread", "time the plain chain on all threads only (one thread is slow on large captures)")
    ("warmup", po::value(&c.warmup)->default_value(c.warmup), "untimed runs of each backend first")
    ("repeats", po::value(&c.repeats)->default_value(c.repeats), "timed runs of each backend (median reported)");
  add_output_options(desc, json, markdown);
  po::options_description hidden;
  hidden.add_options()("capture", po::value(&capture));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("capture", 1);
  if (const auto done = parse_subcommand("compare", po::command_line_parser(args).options(all).positional(pos), desc, [&](const po::variables_map& vm) {
    if (capture.empty()) {
      throw std::invalid_argument("no capture given");
    }
    c.gpu = vm.count("no-gpu") == 0;
    c.plain_one_thread = vm.count("no-plain-one-thread") == 0;
    c.links = parse_links(links);
    if (c.repeats < 1 || c.warmup < 0 || c.gpu_batch < 1) {
      throw std::invalid_argument("--repeats and --batch must be at least 1, --warmup at least 0");
    }
  })) {
    return *done;
  }
  c.capture = capture;
  if (!truth.empty()) {
    c.truth = truth;
  }
  return run_and_report(c, command, [](const auto& cfg, const auto& progress) { return rx_bench::run_compare_bench(cfg, progress); }, json,
                        markdown);
}

} // namespace whd::bench_app
