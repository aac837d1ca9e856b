/// @file cpu_command.cpp
/// `whd-bench cpu`: options -> cpu_bench_config -> run -> table, JSON, log.
#include "subcommands.hpp"

#include "bench_output.hpp"

#include <whd/rx_bench/cpu_bench.hpp>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <iostream>

namespace whd::bench_app {

int run_cpu(const std::vector<std::string>& args, const std::string& command)
{
  namespace po = boost::program_options;
  rx_bench::cpu_bench_config c;
  std::string capture, mod = "qam16", type = "ci8", json, markdown;
  po::options_description desc(
      "whd-bench cpu [options]\n\n"
      "Times the CPU backend (whole receiver: location, CFO, channel estimate, pilots, equalisation,\n"
      "demapping) on all threads and on one, against the plain liquid-dsp chain (guard skip +\n"
      "fft_execute + modemcf_demodulate per data tone, no CFO, pilots or equalisation) over the same\n"
      "located symbols, in the same run. The capture is generated in a temporary folder unless\n"
      "--capture names one. Reports ns/symbol (median of repeats, spread), x real time, raw Gbps and\n"
      "the ratio ours/plain.\n\nOptions");
  desc.add_options()("help,h", "show this help")
    ("capture", po::value(&capture), "an existing capture (SigMF or raw) instead of a generated one")
    ("symbols", po::value(&c.symbols)->default_value(c.symbols), "data symbols of the generated capture (whole frames)")
    ("nd", po::value(&c.nd)->default_value(c.nd), "data symbols per generated frame")
    ("mod", po::value(&mod)->default_value(mod), "modulation of the generated capture: qpsk or qam16")
    ("datatype", po::value(&type)->default_value(type), "sample format of the generated capture: cf32_le, ci16_le or ci8")
    ("snr-db", po::value(&c.snr_dB)->default_value(c.snr_dB), "SNR of the generated capture [dB]")
    ("cfo-hz", po::value(&c.cfo_Hz)->default_value(c.cfo_Hz), "CFO of the generated capture [Hz]")
    ("taps", po::value(&c.taps)->default_value(c.taps), "multipath taps of the generated capture")
    ("seed", po::value(&c.seed)->default_value(c.seed), "seed of the generated capture")
    ("threads", po::value(&c.threads)->default_value(0), "threads of the 'all threads' rows (0: all hardware threads)")
    ("warmup", po::value(&c.warmup)->default_value(c.warmup), "untimed runs of each chain first")
    ("repeats", po::value(&c.repeats)->default_value(c.repeats), "timed runs of each chain (median reported)");
  add_output_options(desc, json, markdown);
  if (const auto done = parse_subcommand("cpu", po::command_line_parser(args).options(desc), desc, [&](const po::variables_map&) {
    const auto m = profile::parse_modulation(mod);
    if (!m) {
      throw std::invalid_argument("--mod must be qpsk or qam16, not '" + mod + "'");
    }
    c.mod = *m;
    const auto t = parse_datatype(type);
    if (!t) {
      throw std::invalid_argument("--datatype must be cf32_le, ci16_le or ci8, not '" + type + "'");
    }
    c.type = *t;
    if (c.symbols < 1 || c.nd < 1 || c.nd > profile::MAX_ND || c.repeats < 1 || c.warmup < 0 || c.taps < 1) {
      throw std::invalid_argument("--symbols, --nd (up to 1048575), --repeats and --taps must be at least 1, --warmup at least 0");
    }
  })) {
    return *done;
  }
  c.capture = capture;
  return run_and_report(c, command, [](const auto& cfg, const auto& progress) { return rx_bench::run_cpu_bench(cfg, progress); }, json,
                        markdown);
}

} // namespace whd::bench_app
