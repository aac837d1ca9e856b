/// @file ber_command.cpp
/// `whd-bench ber`: options -> ber_bench_config -> run -> table, JSON, log.
#include "subcommands.hpp"

#include "bench_output.hpp"

#include <whd/rx_bench/ber_bench.hpp>
#include <whd/rx_bench/coded_ber_bench.hpp>
#include <whd/fec/coded_frame.hpp>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <cmath>
#include <iostream>
#include <sstream>

namespace whd::bench_app {

namespace {

/// "a:b:step" (inclusive) or a list "a,b,c" of Eb/N0 values [dB].
std::vector<double> parse_grid(const std::string& s, const std::string& option)
{
  auto number = [&](const std::string& t) {
    std::size_t used = 0;
    double v = 0.0;
    try {
      v = std::stod(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != t.size() || !std::isfinite(v)) {
      throw std::invalid_argument(option + ": '" + t + "' is not a number (give a:b:step or a list a,b,c)");
    }
    return v;
  };
  std::vector<double> out;
  if (s.find(':') != std::string::npos) {
    std::stringstream in(s);
    std::string a, b, st;
    if (!std::getline(in, a, ':') || !std::getline(in, b, ':') || !std::getline(in, st)) {
      throw std::invalid_argument(option + ": '" + s + "' is not a:b:step");
    }
    const double lo = number(a), hi = number(b), step = number(st);
    if (!(step > 0.0) || hi < lo || (hi - lo) / step > 1000.0) {
      throw std::invalid_argument(option + ": '" + s + "' needs a <= b and a positive step (at most 1000 points)");
    }
    for (int i = 0; lo + i * step <= hi + 1e-9; ++i) {
      out.push_back(lo + i * step);
    }
  } else {
    std::stringstream in(s);
    std::string part;
    while (std::getline(in, part, ',')) {
      out.push_back(number(part));
    }
  }
  if (out.empty()) {
    throw std::invalid_argument(option + " gives no point");
  }
  return out;
}

} // namespace

int run_ber(const std::vector<std::string>& args, const std::string& command)
{
  namespace po = boost::program_options;
  rx_bench::ber_bench_config c;
  rx_bench::coded_ber_config cc;
  std::string mods = "qpsk,qam16", qpsk = "3:10:1", qam16 = "7:14:1", links = "f32", json, markdown;
  std::string mcs, channels = "1,4", info_bits = "100000000", genie_errors;
  std::map<int, std::string> coded_grid;
  po::options_description desc(
      "whd-bench ber [options]\n\n"
      "Bit error rate against Eb/N0 on an AWGN channel (one tap, random carrier phase) through the\n"
      "whole receiver: generated captures -> receiver -> payload compared with the truth. The CPU\n"
      "backend and, when a GPU is present, the GPU backend decode the same captures. Each point\n"
      "stops at --errors bit errors (every backend) or --max-bits bits. Reports uncoded Gray theory,\n"
      "the distance from it at BER 1e-3 and 1e-4, and the calibration of the soft output (LLRs) at\n"
      "every point.\n"
      "Eb/N0 -> generator SNR: SNR_dB = Eb/N0_dB + 10 log10(bits per\n"
      "tone) - 10 log10(512/352) (see ber_bench.hpp). There are no timing repeats: each point's\n"
      "statistics come from its error count.\n\n"
      "With --mcs: coded frames (profile 2). For each MCS and channel (AWGN, and multipath of\n"
      "--channels taps), decoded BER and FER against Eb/N0 per information bit: the whole CPU\n"
      "receiver (and the GPU's where a GPU is present), a genie (known channel, float LLRs,\n"
      "full-length float Viterbi + RS), the project's tiled int8 decoder on the genie's LLRs,\n"
      "hard decisions through it, and uncoded theory; the Eb/N0 each needs at BER 1e-4 and\n"
      "1e-5, its distance from the genie and its coding gain over uncoded QPSK.\n\nOptions");
  desc.add_options()("help,h", "show this help")
    ("mods", po::value(&mods)->default_value(mods), "modulations: qpsk, qam16 or both, comma-separated")
    ("ebn0-qpsk", po::value(&qpsk)->default_value(qpsk), "QPSK Eb/N0 points [dB]: a:b:step or a,b,c")
    ("ebn0-qam16", po::value(&qam16)->default_value(qam16), "16-QAM Eb/N0 points [dB]: a:b:step or a,b,c")
    ("errors", po::value(&c.target_errors)->default_value(c.target_errors), "bit errors at which a point stops")
    ("max-bits", po::value(&c.max_bits)->default_value(c.max_bits), "bits compared at which a point stops")
    ("nd", po::value(&c.nd)->default_value(c.nd), "data symbols per frame")
    ("frames", po::value(&c.frames_per_chunk)->default_value(c.frames_per_chunk), "frames per generated capture (chunk)")
    ("cfo-hz", po::value(&c.cfo_Hz)->default_value(c.cfo_Hz), "carrier frequency offset of every capture [Hz]")
    ("seed", po::value(&c.seed)->default_value(c.seed), "master seed")
    ("threads", po::value(&c.cpu_threads)->default_value(0), "CPU backend threads (0: all)")
    ("links", po::value(&links)->default_value(links), "GPU rows, one per link packing named, comma-separated: the GPU receiver now sends the capture as stored and decodes "
     "f32 windows, so half and int8 rows repeat the f32 row (kept for scripts)")
    ("no-llr", "skip the soft output's calibration (LLRs of the CPU and the GPU's f32 link against the truth)")
    ("no-cpu", "skip the CPU backend")
    ("no-gpu", "skip the GPU backend even when a GPU is present")
    ("mcs", po::value(&mcs), "coded frames instead: the MCS to measure, comma-separated (0,1,2,7)")
    ("channels", po::value(&channels)->default_value(channels), "with --mcs: channels by their taps, comma-separated (1: AWGN)")
    ("info-bits", po::value(&info_bits)->default_value(info_bits), "with --mcs: information bits every row of a point holds at least")
    ("channel-taps", po::value(&cc.channel_taps), "with --mcs: the window of taps the receivers project their channel estimate "
                                                  "on, 0..64 (0: plain least squares; default: the receivers' own, 48)")
    ("channel-taps-min", po::value(&cc.channel_taps_min), "with --mcs: the fewest of the window's taps a frame keeps, 1..64 "
                                                          "(each frame chooses in steps of 8; the window's size: every tap; "
                                                          "default: the receivers' own, 24)")
    ("genie-errors", po::value(&genie_errors), "with --mcs: give the genie rows the receiver's estimation errors, drawn: "
                                                "channel, phase or channel,phase (what each costs the code)")
    ("ebn0-mcs0", po::value(&coded_grid[0]), "with --mcs: MCS 0's Eb/N0 points [dB] (a:b:step or a,b,c)")
    ("ebn0-mcs1", po::value(&coded_grid[1]), "with --mcs: MCS 1's Eb/N0 points [dB]")
    ("ebn0-mcs2", po::value(&coded_grid[2]), "with --mcs: MCS 2's Eb/N0 points [dB]")
    ("ebn0-mcs7", po::value(&coded_grid[7]), "with --mcs: MCS 7's Eb/N0 points [dB]");
  add_output_options(desc, json, markdown);
  if (const auto done = parse_subcommand("ber", po::command_line_parser(args).options(desc), desc, [&](const po::variables_map& vm) {
    c.cpu = vm.count("no-cpu") == 0;
    c.gpu = vm.count("no-gpu") == 0;
    c.llr = vm.count("no-llr") == 0;
    c.mods.clear();
    std::stringstream ms(mods);
    for (std::string m; std::getline(ms, m, ',');) {
      const auto mod = profile::parse_modulation(m);
      if (!mod) {
        throw std::invalid_argument("--mods: '" + m + "' is neither qpsk nor qam16");
      }
      c.mods.push_back(*mod);
    }
    c.links = parse_links(links);
    if (c.mods.empty()) {
      throw std::invalid_argument("--mods names no modulation");
    }
    c.ebn0_qpsk_dB = parse_grid(qpsk, "--ebn0-qpsk");
    c.ebn0_qam16_dB = parse_grid(qam16, "--ebn0-qam16");
    if (c.target_errors < 1 || c.max_bits < 1 || c.nd < 1 || c.nd > profile::MAX_ND || c.frames_per_chunk < 1) {
      throw std::invalid_argument("--errors, --max-bits, --nd (up to 1048575) and --frames must be at least 1");
    }
    if (!c.cpu && !c.gpu) {
      throw std::invalid_argument("--no-cpu and --no-gpu together leave nothing to measure");
    }
    if (!mcs.empty()) {
      cc.mcs.clear();
      std::stringstream in(mcs);
      for (std::string m; std::getline(in, m, ',');) {
        const auto v = fec::parse_mcs(m);
        if (!v) {
          throw std::invalid_argument("--mcs: '" + m + "' is not 0, 1, 2 or 7");
        }
        cc.mcs.push_back(*v);
      }
      cc.taps.clear();
      std::stringstream tin(channels);
      for (std::string t; std::getline(tin, t, ',');) {
        const double v = parse_grid(t, "--channels").front();
        if (v < 1 || v > profile::G || v != std::floor(v)) {
          throw std::invalid_argument("--channels: '" + t + "' is not a number of taps 1.." + std::to_string(profile::G));
        }
        cc.taps.push_back(int(v));
      }
      const double bits = parse_grid(info_bits, "--info-bits").front();
      if (!(bits >= 1.0) || bits > 1e12) {
        throw std::invalid_argument("--info-bits must be 1 .. 1e12");
      }
      cc.min_info_bits = uint64_t(bits);
      if (cc.channel_taps != -1 && (cc.channel_taps < 0 || cc.channel_taps > profile::G)) {
        throw std::invalid_argument("--channel-taps must be 0 .. " + std::to_string(profile::G));
      }
      if (!genie_errors.empty()) {
        std::stringstream gin(genie_errors);
        for (std::string t; std::getline(gin, t, ',');) {
          if (t == "channel") {
            cc.genie_errors.channel = true;
          } else if (t == "phase") {
            cc.genie_errors.phase = true;
          } else {
            throw std::invalid_argument("--genie-errors: '" + t + "' is neither channel nor phase");
          }
        }
      }
      if (cc.channel_taps_min != -1 && (cc.channel_taps_min < 1 || cc.channel_taps_min > profile::G)) {
        throw std::invalid_argument("--channel-taps-min must be 1 .. " + std::to_string(profile::G));
      }
      for (const auto& [m, g] : coded_grid) {
        if (!g.empty()) {
          cc.ebn0_dB[m] = parse_grid(g, "--ebn0-mcs" + std::to_string(m));
        }
      }
      cc.nd = c.nd;
      cc.frames_per_chunk = c.frames_per_chunk;
      cc.seed = c.seed;
      cc.cpu_threads = c.cpu_threads;
      cc.rx_cpu = c.cpu;
      cc.rx_gpu = c.gpu;
    }
  })) {
    return *done;
  }
  if (!mcs.empty()) {
    return run_and_report(cc, command, [](const auto& cfg, const auto& progress) { return rx_bench::run_coded_ber_bench(cfg, progress); },
                          json, markdown);
  }
  return run_and_report(c, command, [](const auto& cfg, const auto& progress) { return rx_bench::run_ber_bench(cfg, progress); }, json,
                        markdown);
}

} // namespace whd::bench_app
