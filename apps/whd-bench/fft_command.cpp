/// @file fft_command.cpp
/// `whd-bench fft`: options -> fft_bench_config -> run -> table, JSON, log.
#include "bench_output.hpp"
#include "subcommands.hpp"

#include <whd/fft/tune_cache.hpp>
#include <whd/fft_bench/fft_bench.hpp>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <charconv>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>

namespace whd::bench_app {

namespace {

namespace po = boost::program_options;

/// The options as given, before validation.
struct fft_options {
  bool tune = false;
  std::string json;
  std::string markdown;
  std::string batches = "10-20";
  int repeats = 21;
  int warmup = 3;
  double sample_ms = 2.0;
  int tune_batch = 16;
  std::size_t per_scale = 1;
  std::uint64_t seed = 1;
  std::string cache;
};

/// A whole decimal number, or throws naming `what`.
int parse_int(std::string_view text, const std::string& what)
{
  int v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size()) {
    throw std::invalid_argument("--batches: '" + what + "' is not a number, a range a-b or a list a,b");
  }
  return v;
}

/// "10-20" or "10,12,16": log2 of the batch sizes.
std::vector<int> parse_batches(const std::string& s)
{
  std::vector<int> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, ',')) {
    const auto dash = part.find('-');
    const std::string_view p(part);
    const int lo = parse_int(p.substr(0, dash), part);
    const int hi = dash == std::string::npos ? lo : parse_int(p.substr(dash + 1), part);
    for (int k = lo; k <= hi; ++k) {
      out.push_back(k);
    }
  }
  return out;
}

} // namespace

int run_fft(const std::vector<std::string>& args, const std::string& command)
{
  fft_options o;
  po::options_description desc("whd-bench fft [options]");
  desc.add_options()("help,h", "show this help")(
      "tune", po::bool_switch(&o.tune), "time every variant first, keep the fastest per input type in the tune cache")(
      "batches", po::value(&o.batches)->default_value(o.batches),
      "log2 of the batch sizes: a range 10-20 or a list 10,16,20")(
      "repeats", po::value(&o.repeats)->default_value(o.repeats), "timed samples per measurement (median reported)")(
      "warmup", po::value(&o.warmup)->default_value(o.warmup), "untimed launches before each measurement")(
      "sample-ms", po::value(&o.sample_ms)->default_value(o.sample_ms), "length of one timed sample [ms]")(
      "tune-batch", po::value(&o.tune_batch)->default_value(o.tune_batch), "log2 of the batch the tuner times")(
      "per-scale", po::value(&o.per_scale)->default_value(o.per_scale), "int8 input: transforms per scale")(
      "seed", po::value(&o.seed)->default_value(o.seed), "seed of the random inputs")(
      "cache", po::value(&o.cache), "tune cache file (default: $WHD_FFT_TUNE_CACHE or ~/.cache/whd-rx/fft-tune.json)");
  add_output_options(desc, o.json, o.markdown);

  fft::bench::fft_bench_config c;
  if (const auto done = parse_subcommand("fft", po::command_line_parser(args).options(desc), desc, [&](const po::variables_map&) {
    c.log2_batches = parse_batches(o.batches);
    for (int k : c.log2_batches) {
      if (k < 0 || k > 24) {
        throw std::invalid_argument("batch 2^" + std::to_string(k) + " is out of range (0..24)");
      }
    }
    if (c.log2_batches.empty() || o.repeats < 1 || o.warmup < 0 || o.sample_ms <= 0.0 || o.per_scale < 1 ||
        o.tune_batch < 0 || o.tune_batch > 24) {
      throw std::invalid_argument("need batches, --repeats >= 1, --warmup >= 0, --sample-ms > 0, --per-scale >= 1");
    }
  })) {
    return *done;
  }
  c.tune = o.tune;
  c.repeats = o.repeats;
  c.warmup = o.warmup;
  c.sample_ms = o.sample_ms;
  c.tune_log2_batch = o.tune_batch;
  c.nof_per_scale = o.per_scale;
  c.seed = o.seed;
  c.tune_cache = o.cache.empty() ? fft::tune_cache_path() : std::filesystem::path(o.cache);
  spdlog::default_logger()->clone("whd-bench")->info("fft: batches {}, repeats {}, warmup {}, sample {} ms, tune {}, cache {}, seed {}",
                                                     o.batches, c.repeats, c.warmup, c.sample_ms, c.tune, c.tune_cache.string(), c.seed);
  return run_and_report(c, command, [](const auto& cfg, const auto& progress) { return fft::bench::run_fft_bench(cfg, progress); }, o.json,
                        o.markdown);
}

} // namespace whd::bench_app
