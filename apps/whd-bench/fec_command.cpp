/// @file fec_command.cpp
/// `whd-bench fec`: options -> fec_bench_config -> run -> table, JSON, log.
#include "subcommands.hpp"

#include "bench_output.hpp"

#include <whd/baseband/profile.hpp>
#include <whd/rx_bench/fec_bench.hpp>

#include <boost/program_options.hpp>

namespace whd::bench_app {

int run_fec(const std::vector<std::string>& args, const std::string& command)
{
  namespace po = boost::program_options;
  rx_bench::fec_bench_config c;
  std::string json, markdown;
  po::options_description desc(
      "whd-bench fec [options]\n\n"
      "The FEC of coded frames alone (profile 2: depuncturing, Viterbi, un-parsing, RS), on\n"
      "the same frames: the GPU's device-resident (soft values on the device to information\n"
      "bytes on the device), per stage, and the CPU's over all host threads; medians.\n\nOptions");
  desc.add_options()("help,h", "show this help")
    ("mcs", po::value(&c.mcs)->default_value(c.mcs), "MCS of the frames (0, 1, 2, 7)")
    ("nd", po::value(&c.nd)->default_value(c.nd), "data symbols per frame")
    ("frames", po::value(&c.frames)->default_value(c.frames), "frames per run")
    ("flip", po::value(&c.flip)->default_value(c.flip), "fraction of soft values turned against their bit")
    ("repeats", po::value(&c.repeats)->default_value(c.repeats), "timed runs (median reported)")
    ("threads", po::value(&c.cpu_threads)->default_value(0), "CPU threads (0: all)")
    ("gpus", po::value(&c.gpus)->default_value(c.gpus), "N > 1: also the same frames split over N GPUs, against one GPU timed alike")
    ("seed", po::value(&c.seed)->default_value(c.seed), "seed");
  add_output_options(desc, json, markdown);
  if (const auto done = parse_subcommand("fec", po::command_line_parser(args).options(desc), desc, [&](const po::variables_map&) {
        if (c.frames < 1 || c.repeats < 1 || c.nd < 1 || c.nd > whd::profile::MAX_ND || !(c.flip >= 0.0 && c.flip <= 1.0)) {
          throw std::invalid_argument("--frames, --repeats and --nd (up to 1048575) must be at least 1, --flip within 0..1");
        }
        if (c.gpus < 1) {
          throw std::invalid_argument("--gpus must be at least 1");
        }
        if (c.mcs != 0 && c.mcs != 1 && c.mcs != 2 && c.mcs != 7) {
          throw std::invalid_argument("--mcs must be 0, 1, 2 or 7");
        }
      })) {
    return *done;
  }
  return run_and_report(c, command, [](const auto& cfg, const auto& progress) { return rx_bench::run_fec_bench(cfg, progress); }, json,
                        markdown);
}

} // namespace whd::bench_app
