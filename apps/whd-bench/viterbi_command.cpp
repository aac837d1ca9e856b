/// @file viterbi_command.cpp
/// `whd-bench viterbi`: options -> viterbi_bench_config -> run -> table, JSON, log.
#include "subcommands.hpp"

#include "bench_output.hpp"

#include <whd/rx_bench/viterbi_bench.hpp>

#include <boost/program_options.hpp>

namespace whd::bench_app {

int run_viterbi(const std::vector<std::string>& args, const std::string& command)
{
  namespace po = boost::program_options;
  rx_bench::viterbi_bench_config c;
  std::string json, markdown;
  po::options_description desc(
      "whd-bench viterbi [options]\n\n"
      "The CPU soft Viterbi of coded frames (K=7, tiles as viterbi.hpp defines them; each of its\n"
      "vector forms the host has, AVX-512 and AVX2) against libfec's viterbi27 on one thread,\n"
      "rate 1/2 (and ours at 1/3), in decoded bits per second, on the same noisy streams;\n"
      "medians over repeated runs.\n\nOptions");
  desc.add_options()("help,h", "show this help")
    ("bits", po::value(&c.stream_bits)->default_value(c.stream_bits), "trellis steps per stream")
    ("streams", po::value(&c.streams)->default_value(c.streams), "streams per timed run")
    ("repeats", po::value(&c.repeats)->default_value(c.repeats), "timed runs (median reported)")
    ("ebn0", po::value(&c.ebn0_dB)->default_value(c.ebn0_dB), "Eb/N0 of the streams [dB]")
    ("seed", po::value(&c.seed)->default_value(c.seed), "seed");
  add_output_options(desc, json, markdown);
  if (const auto done = parse_subcommand("viterbi", po::command_line_parser(args).options(desc), desc, [&](const po::variables_map&) {
        if (c.stream_bits < 64 || c.streams < 1 || c.repeats < 1) {
          throw std::invalid_argument("--bits must be at least 64, --streams and --repeats at least 1");
        }
      })) {
    return *done;
  }
  return run_and_report(c, command, [](const auto& cfg, const auto& progress) { return rx_bench::run_viterbi_bench(cfg, progress); }, json,
                        markdown);
}

} // namespace whd::bench_app
