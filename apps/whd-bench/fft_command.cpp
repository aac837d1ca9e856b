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
  fft::bench::fft_bench_config c;
  std::string batches = "10-20", cache, json, markdown;
  po::options_description desc("whd-bench fft [options]");
  desc.add_options()("help,h", "show this help")(
      "tune", po::bool_switch(&c.tune), "time every variant first, keep the fastest per input type in the tune cache")(
      "batches", po::value(&batches)->default_value(batches),
      "log2 of the batch sizes: a range 10-20 or a list 10,16,20")(
      "repeats", po::value(&c.repeats)->default_value(c.repeats), "timed samples per measurement (median reported)")(
      "warmup", po::value(&c.warmup)->default_value(c.warmup), "untimed launches before each measurement")(
      "sample-ms", po::value(&c.sample_ms)->default_value(c.sample_ms), "length of one timed sample [ms]")(
      "tune-batch", po::value(&c.tune_log2_batch)->default_value(c.tune_log2_batch), "log2 of the batch the tuner times")(
      "per-scale", po::value(&c.nof_per_scale)->default_value(c.nof_per_scale), "int8 input: transforms per scale")(
      "seed", po::value(&c.seed)->default_value(c.seed), "seed of the random inputs")(
      "cache", po::value(&cache), "tune cache file (default: $WHD_FFT_TUNE_CACHE or ~/.cache/whd-rx/fft-tune.json)");
  add_output_options(desc, json, markdown);

  if (const auto done = parse_subcommand("fft", po::command_line_parser(args).options(desc), desc, [&](const po::variables_map&) {
    c.log2_batches = parse_batches(batches);
    for (int k : c.log2_batches) {
      if (k < 0 || k > 24) {
        throw std::invalid_argument("batch 2^" + std::to_string(k) + " is out of range (0..24)");
      }
    }
    if (c.log2_batches.empty() || c.repeats < 1 || c.warmup < 0 || c.sample_ms <= 0.0 || c.nof_per_scale < 1 ||
        c.tune_log2_batch < 0 || c.tune_log2_batch > 24) {
      throw std::invalid_argument("need batches, --repeats >= 1, --warmup >= 0, --sample-ms > 0, --per-scale >= 1");
    }
  })) {
    return *done;
  }
  c.tune_cache = cache.empty() ? fft::tune_cache_path() : std::filesystem::path(cache);
  spdlog::default_logger()->clone("whd-bench")->info("fft: batches {}, repeats {}, warmup {}, sample {} ms, tune {}, cache {}, seed {}",
                                                     batches, c.repeats, c.warmup, c.sample_ms, c.tune, c.tune_cache.string(), c.seed);
  return run_and_report(c, command, [](const auto& cfg, const auto& progress) { return fft::bench::run_fft_bench(cfg, progress); }, json,
                        markdown);
}

} // namespace whd::bench_app
