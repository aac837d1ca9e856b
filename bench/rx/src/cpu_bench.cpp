#include <whd/rx_bench/cpu_bench.hpp>

#include "bench_util.hpp"
#include "plain_liquid_chain.hpp"

#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace whd::rx_bench {

namespace {

namespace p = profile;
namespace bb = baseband;
namespace tr = transport;

} // namespace

cpu_bench_result run_cpu_bench(const cpu_bench_config& cfg, const std::function<void(std::string_view)>& progress)
{
  cpu_bench_result r;
  r.env = collect_env(cfg.commit, cfg.command);
  const unsigned all = cfg.threads ? cfg.threads : r.env.host_threads;

  // ---- the capture: given, or generated into a scratch folder
  std::optional<scratch_dir> scratch;
  std::filesystem::path path = cfg.capture;
  std::vector<uint8_t> truth;
  if (path.empty()) {
    scratch.emplace("cpu");
    const uint64_t nof_frames = (std::max<uint64_t>(cfg.symbols, 1) + cfg.nd - 1) / cfg.nd;
    const auto t0 = steady::now();
    const auto summary = write_impaired_capture({.mod = cfg.mod, .nd = cfg.nd, .nof_frames = nof_frames, .seed = cfg.seed,
                                                 .snr_dB = cfg.snr_dB, .cfo_Hz = cfg.cfo_Hz, .taps = cfg.taps},
                                                scratch->path() / "cpu-bench", cfg.type, "whd-bench cpu capture");
    path = summary.meta_path;
    truth = read_bytes(summary.truth_path);
    r.capture = "generated: " + std::to_string(nof_frames) + " frames x " + std::to_string(cfg.nd) + " " + p::to_string(cfg.mod) +
                " symbols, SNR " + format_value("%.1f", cfg.snr_dB) + " dB, CFO " + format_value("%.0f", cfg.cfo_Hz) + " Hz, " +
                std::to_string(cfg.taps) + " taps, seed " + std::to_string(cfg.seed);
    progress("generated " + r.capture + " in " + format_value("%.2f", seconds_since(t0)) + " s");
  } else {
    r.capture = path.string();
  }
  const auto info = tr::open_capture(path);
  const tr::capture_reader reader(info);
  r.datatype = std::string(to_string(info.type));

  // ---- frames located once: the plain chain decodes exactly these symbols
  bb::rx_config rxc;
  rxc.sample_rate_sps = info.sample_rate_sps.value_or(p::SAMPLE_RATE_SPS);
  {
    const auto t0 = steady::now();
    const auto frames = locate_all(reader, rxc);
    r.locate_s = seconds_since(t0);
    r.frames = frames.size();
    const plain_liquid_chain chain(frames);
    r.data_symbols = chain.nof_symbols();
    r.bits_per_symbol = chain.bits_per_symbol();
    if (r.data_symbols == 0) {
      throw std::runtime_error("the capture holds no decodable data symbol: nothing to time");
    }
    progress(std::to_string(r.frames) + " frames, " + std::to_string(r.data_symbols) + " data symbols located in " +
             format_value("%.3f", r.locate_s) + " s");

    // ---- the four measurements, interleaved repeat by repeat so drift hits them alike
    struct subject {
      std::string chain;
      unsigned threads;
      std::unique_ptr<bb::receiver> rx; // null: the plain chain
      std::vector<double> t;
    };
    std::vector<subject> subjects;
    for (unsigned threads : {all, 1u}) {
      bb::rx_config c = rxc;
      c.nof_threads = threads;
      subjects.push_back({"whd cpu", threads, bb::make_cpu_receiver(c), {}});
      subjects.push_back({"plain liquid-dsp", threads, nullptr, {}});
      if (all == 1) {
        break;
      }
    }
    buffer_sink sink(std::size_t(chain.payload_bytes()));
    std::vector<uint8_t> plain_out(std::size_t(chain.payload_bytes()));
    for (int rep = -std::max(cfg.warmup, 0); rep < std::max(cfg.repeats, 1); ++rep) {
      for (auto& s : subjects) {
        const auto t_run = steady::now();
        if (s.rx) {
          sink.clear();
          const auto res = s.rx->run(reader, sink);
          if (res.data_symbols != r.data_symbols) {
            throw std::runtime_error("the CPU backend decoded " + std::to_string(res.data_symbols) + " data symbols, the locator found " +
                                     std::to_string(r.data_symbols));
          }
        } else {
          chain.run(reader, s.threads, plain_out);
        }
        const double dt = seconds_since(t_run);
        if (rep >= 0) {
          s.t.push_back(dt);
        }
      }
    }
    if (!truth.empty()) {
      r.truth_checked = true;
      r.truth_bits = uint64_t(std::min(sink.bytes().size(), truth.size())) * 8;
      r.truth_bit_errors = bit_differences(sink.bytes(), truth);
    }
    for (auto& s : subjects) {
      cpu_bench_row row{s.chain, s.threads, summarise(s.t), 0.0};
      row.ns_per_symbol = row.time.median_s * 1e9 / double(r.data_symbols);
      progress(row.chain + ", " + std::to_string(row.threads) + " thread(s): " + format_value("%.1f", row.ns_per_symbol) + " ns/symbol");
      r.rows.push_back(row);
    }
    for (std::size_t i = 0; i + 1 < r.rows.size(); i += 2) {
      r.speedup.emplace_back(r.rows[i].threads, r.rows[i + 1].ns_per_symbol / r.rows[i].ns_per_symbol);
    }
  }
  return r;
}

std::string to_json(const cpu_bench_result& r)
{
  nlohmann::json j = to_json(r.env);
  j["benchmark"] = "cpu";
  j["capture"] = {{"source", r.capture}, {"datatype", r.datatype}, {"frames", r.frames}, {"data_symbols", r.data_symbols},
                  {"bits_per_symbol", r.bits_per_symbol}};
  j["locate_s"] = r.locate_s;
  j["region"] = "capture in page cache -> payload bytes in memory (ours: location included; plain: located symbols only)";
  for (const auto& row : r.rows) {
    nlohmann::json o = throughput_json(row.time, r.data_symbols, r.bits_per_symbol);
    o["chain"] = row.chain;
    o["threads"] = row.threads;
    j["rows"].push_back(o);
  }
  for (const auto& [threads, s] : r.speedup) {
    j["speedup_vs_plain"].push_back({{"threads", threads}, {"ours_over_plain", s}});
  }
  if (r.truth_checked) {
    j["truth"] = {{"bits", r.truth_bits}, {"bit_errors", r.truth_bit_errors}};
  }
  return j.dump(2);
}

std::string to_markdown(const cpu_bench_result& r)
{
  std::ostringstream o;
  char buf[256];
  o << "# whd-bench cpu\n\n" << to_markdown(r.env);
  o << "- capture: " << r.capture << " (" << r.datatype << "); " << r.frames << " frames, " << r.data_symbols << " data symbols\n";
  if (r.truth_checked) {
    o << "- ours against the capture's truth: " << r.truth_bit_errors << " bit errors in " << r.truth_bits << " bits\n";
  }
  o << "\nns/symbol: median of " << (r.rows.empty() ? 0 : r.rows[0].time.repeats)
    << " repeats (spread min..max), capture in the page cache, payload bytes to memory. Ours is the whole\n"
       "CPU backend (frame location included); the plain liquid-dsp chain is guard skip + fft_execute +\n"
       "modemcf_demodulate per data tone over the symbols located beforehand (location: "
    << r.locate_s << " s, not counted).\nx real time = 226.95 ns / (ns per symbol); raw Gbps = " << r.bits_per_symbol
    << " bits per symbol / (ns per symbol).\n\n";
  o << "| chain | threads | ns/symbol | spread | x real time | raw Gbps |\n|---|---:|---:|---|---:|---:|\n";
  for (const auto& row : r.rows) {
    const double n = double(r.data_symbols);
    std::snprintf(buf, sizeof buf, "| %s | %u | %.1f | %.1f..%.1f | %.4f | %.3f |\n", row.chain.c_str(), row.threads, row.ns_per_symbol,
                  row.time.min_s * 1e9 / n, row.time.max_s * 1e9 / n, p::SYMBOL_PERIOD_NS / row.ns_per_symbol,
                  double(r.bits_per_symbol) / row.ns_per_symbol);
    o << buf;
  }
  o << "\n";
  for (const auto& [threads, s] : r.speedup) {
    std::snprintf(buf, sizeof buf, "- %u thread(s): ours takes %.3fx the plain chain's time per symbol (ours is %.2fx %s)\n", threads,
                  1.0 / s, s >= 1.0 ? s : 1.0 / s, s >= 1.0 ? "faster" : "slower");
    o << buf;
  }
  return o.str();
}

} // namespace whd::rx_bench
