/// @file traffic_command.cpp
/// `whd-bench traffic`: options -> traffic_bench_config -> run -> table, JSON, log.
#include "subcommands.hpp"

#include "bench_output.hpp"

#include <whd/rx_bench/traffic_bench.hpp>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <system_error>

namespace whd::bench_app {

namespace {

std::vector<std::string> split_list(const std::string& s)
{
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    out.push_back(item);
  }
  return out;
}

/// whd-rx beside this executable (an installed or bundled bin/), else where the
/// build tree puts it (apps/whd-rx/ beside apps/whd-bench/); empty when neither is.
std::filesystem::path default_rx()
{
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return {};
  }
  for (const auto& p : {self.parent_path() / "whd-rx", self.parent_path().parent_path() / "whd-rx" / "whd-rx"}) {
    if (std::filesystem::is_regular_file(p, ec)) {
      return p;
    }
  }
  return {};
}

} // namespace

int run_traffic(const std::vector<std::string>& args, const std::string& command)
{
  namespace po = boost::program_options;
  rx_bench::traffic_bench_config c;
  std::string shapes = "long,packets,tiny,bursty", types = "ci8,cf32", backends, links = "f32", dir = c.dir.string(),
              payload_dir = c.payload_dir.string(), rx, json, markdown;
  po::options_description desc(
      "whd-bench traffic [options]\n\n"
      "The traffic shapes users record, decoded as users run whd-rx, side by side per backend.\n\n"
      "Shapes (SNR 30 dB, seed 7; 777 samples between frames unless said):\n"
      "  long     16 x 65536 16-QAM data symbols, 4 taps, CFO 300 kHz, random phase\n"
      "  packets  20000 x 52, QPSK and 16-QAM alternating, 4 taps, CFO 300 kHz, random phase\n"
      "  tiny     100000 x 4 16-QAM\n"
      "  bursty   2000 x 200 16-QAM, 200000 samples of noise between frames\n"
      "each as every --types, made with the generator (as whd-tx makes them) into --dir as\n"
      "NAME-TYPE.sigmf-meta/-data with .truth and .frames.json, and reused by later runs (delete\n"
      "them to make them anew; --scale other than 1 names them NAME-sSCALE-TYPE).\n\n"
      "Regions:\n"
      "  gpu, cpu  the whole whd-rx process, `whd-rx CAPTURE --backend B -q -o PAYLOAD --report FILE`,\n"
      "            timed from outside (steady clock, spawn to exit): process start, CUDA context,\n"
      "            capture read, frame search, decode, payload written to --payload-dir. Beside it\n"
      "            the median run's own split from its report: setup (process start to the\n"
      "            first samples handed to the backend) and decode (the rest); and the payload\n"
      "            against NAME.truth.\n"
      "  liquid    located frames only: the plain liquid-dsp chain (guard skip + fft_execute +\n"
      "            modemcf_demodulate per data tone; no CFO, channel or pilots, so its bits are\n"
      "            not the payload) in this process on all threads, over the frames located\n"
      "            beforehand (location not timed; they are checked against the CPU backend's):\n"
      "            no frame search, no process, payload to memory. A floor, not a receiver.\n"
      "Per row: the median over --repeats runs (min..max), x real time by air time (capture\n"
      "samples / 2.538 GS/s over the time) and ns per data symbol (the time over the data symbols\n"
      "decoded). Per capture: whether the GPU's frames and payload equal the CPU's (the CPU\n"
      "backend is the reference; a cf32 capture once per --links form, integer ones crossing as\n"
      "stored). Exit status 1 when a run failed or the GPU differed over an unpacked link (f32 or\n"
      "stored; half and int8 may move bits near a decision, shown as counts).\n\nOptions");
  desc.add_options()("help,h", "show this help")
    ("shapes", po::value(&shapes)->default_value(shapes), "shapes to run, comma-separated: long, packets, tiny, bursty")
    ("types", po::value(&types)->default_value(types), "sample types of the captures, comma-separated: ci8, ci16, cf32")
    ("backends", po::value(&backends), "comma-separated: gpu, cpu, liquid (default: gpu when a GPU is present, cpu, liquid)")
    ("links", po::value(&links)->default_value(links), "GPU link forms for cf32 captures, comma-separated: f32, half, int8 (whd-rx --link)")
    ("repeats", po::value(&c.repeats)->default_value(c.repeats), "runs of each backend on each capture (median reported)")
    ("scale", po::value(&c.scale)->default_value(c.scale), "frame counts times this (at least one frame): 0.01 for a quick look")
    ("dir", po::value(&dir)->default_value(dir), "where the captures are made and kept (in memory by default, as in the page cache)")
    ("payload-dir", po::value(&payload_dir)->default_value(payload_dir),
     "where each whd-rx run writes its payload, report and stderr (removed after each capture)")
    ("rx", po::value(&rx), "the whd-rx binary (default: the one beside whd-bench, or the build tree's apps/whd-rx/whd-rx)");
  add_output_options(desc, json, markdown);
  if (const auto done = parse_subcommand("traffic", po::command_line_parser(args).options(desc), desc, [&](const po::variables_map&) {
    c.shapes = split_list(shapes);
    for (const auto& s : c.shapes) {
      if (!rx_bench::find_traffic_shape(s)) {
        throw std::invalid_argument("--shapes: '" + s + "' is not long, packets, tiny or bursty");
      }
    }
    c.types.clear();
    for (const auto& t : split_list(types)) {
      const auto d = parse_datatype(t);
      if (!d) {
        throw std::invalid_argument("--types: '" + t + "' is not ci8, ci16 or cf32");
      }
      c.types.push_back(*d);
    }
    if (!backends.empty()) {
      c.backends.emplace();
      for (const auto& b : split_list(backends)) {
        const auto k = rx_bench::parse_traffic_backend(b);
        if (!k) {
          throw std::invalid_argument("--backends: '" + b + "' is not gpu, cpu or liquid");
        }
        c.backends->push_back(*k);
      }
    }
    c.links = parse_links(links);
    if (c.shapes.empty() || c.types.empty() || (c.backends && c.backends->empty())) {
      throw std::invalid_argument("--shapes, --types and --backends need at least one entry each");
    }
    if (c.repeats < 1 || !(c.scale > 0.0) || !std::isfinite(c.scale)) {
      throw std::invalid_argument("--repeats must be at least 1 and --scale a positive number");
    }
  })) {
    return *done;
  }
  c.dir = dir;
  c.payload_dir = payload_dir;
  c.rx = rx.empty() ? default_rx() : std::filesystem::path(rx);
  bool problems = false;
  const int status = run_and_report(c, command, [&](const auto& cfg, const auto& progress) {
    auto r = rx_bench::run_traffic_bench(cfg, progress);
    problems = r.nof_problems() > 0;
    return r;
  }, json, markdown);
  if (status == EXIT_OK && problems) {
    spdlog::default_logger()->clone("whd-bench")->error("a run failed or the GPU's decode differed from the CPU's (see the report above)");
    return EXIT_RUNTIME;
  }
  return status;
}

} // namespace whd::bench_app
