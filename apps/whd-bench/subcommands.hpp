/// @file subcommands.hpp
/// whd-bench's subcommands. Adding one is a function here and a line in main.cpp's table.
#pragma once

#include <string>
#include <vector>

namespace whd::bench_app {

/// Exit codes: 0 success or --help, 1 runtime error, 2 usage error.
inline constexpr int EXIT_OK = 0;
inline constexpr int EXIT_RUNTIME = 1;
inline constexpr int EXIT_USAGE = 2;

/// The commit this binary was built from, as results name it ("-dirty" when the
/// tracked files differed from it; "unknown" outside a git checkout).
const char* git_commit();

/// `whd-bench fft ...`: our 512-point FFT against cuFFT, optional tuning.
/// @param args the arguments after the subcommand name; `command` the whole command line
int run_fft(const std::vector<std::string>& args, const std::string& command);

/// `whd-bench pipeline ...`: the GPU chain's regions against a cuFFT-based chain.
int run_pipeline(const std::vector<std::string>& args, const std::string& command);

/// `whd-bench cpu ...`: the CPU backend against the plain liquid-dsp chain.
int run_cpu(const std::vector<std::string>& args, const std::string& command);

/// `whd-bench ber ...`: BER vs Eb/N0 per backend and link packing, against theory.
int run_ber(const std::vector<std::string>& args, const std::string& command);

/// `whd-bench compare CAPTURE ...`: one capture through every backend; bits and speed-ups.
int run_compare(const std::vector<std::string>& args, const std::string& command);

/// `whd-bench traffic ...`: the traffic shapes through the whole whd-rx process per backend.
int run_traffic(const std::vector<std::string>& args, const std::string& command);
/// `whd-bench viterbi ...`: the CPU soft Viterbi against libfec's viterbi27, per core.
int run_viterbi(const std::vector<std::string>& args, const std::string& command);
/// `whd-bench fec ...`: the FEC alone, GPU device-resident per stage beside the CPU's.
int run_fec(const std::vector<std::string>& args, const std::string& command);

} // namespace whd::bench_app
