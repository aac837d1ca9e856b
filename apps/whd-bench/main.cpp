/// @file main.cpp
/// whd-bench: one tool, one subcommand per measured part of the receiver.
#include "subcommands.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct subcommand {
  std::string_view name;
  std::string_view help;
  int (*run)(const std::vector<std::string>& args, const std::string& command);
};

constexpr subcommand SUBCOMMANDS[] = {
    {"fft", "512-point FFT: ours vs cuFFT, copy ceiling, --tune", whd::bench_app::run_fft},
    {"pipeline", "GPU chain regions (device, pinned host, file) vs a cuFFT chain", whd::bench_app::run_pipeline},
    {"cpu", "CPU backend (all threads, one) vs the plain liquid-dsp chain", whd::bench_app::run_cpu},
    {"ber", "BER vs Eb/N0 (AWGN) per backend and link packing, against theory; coded frames with --mcs", whd::bench_app::run_ber},
    {"viterbi", "the CPU soft Viterbi of coded frames against libfec's viterbi27, per core", whd::bench_app::run_viterbi},
    {"fec", "the FEC of coded frames alone: GPU device-resident per stage, and the CPU's", whd::bench_app::run_fec},
    {"compare", "one capture through every backend and link: bits agree, speed-ups", whd::bench_app::run_compare},
    {"traffic", "traffic shapes through the whole whd-rx process per backend, GPU = CPU", whd::bench_app::run_traffic},
};

void usage(std::FILE* to)
{
  std::fprintf(to, "usage: whd-bench <subcommand> [options]   (whd-bench <subcommand> --help)\n\nsubcommands:\n");
  for (const auto& s : SUBCOMMANDS) {
    std::fprintf(to, "  %-10.*s %.*s\n", static_cast<int>(s.name.size()), s.name.data(), static_cast<int>(s.help.size()),
                 s.help.data());
  }
}

} // namespace

int main(int argc, char** argv)
{
  if (argc < 2) {
    usage(stderr);
    return whd::bench_app::EXIT_USAGE;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(stdout);
    return whd::bench_app::EXIT_OK;
  }
  std::string command = "whd-bench";
  for (int i = 1; i < argc; ++i) {
    command += ' ';
    command += argv[i];
  }
  for (const auto& s : SUBCOMMANDS) {
    if (s.name == name) {
      return s.run(std::vector<std::string>(argv + 2, argv + argc), command);
    }
  }
  std::fprintf(stderr, "whd-bench: unknown subcommand '%s'\n", argv[1]);
  usage(stderr);
  return whd::bench_app::EXIT_USAGE;
}
