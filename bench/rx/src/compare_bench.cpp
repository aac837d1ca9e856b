#include <whd/rx_bench/compare_bench.hpp>

#include "bench_util.hpp"
#include "plain_liquid_chain.hpp"

#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace whd::rx_bench {

namespace {

namespace p = profile;
namespace bb = baseband;
namespace tr = transport;

struct backend_subject {
  std::string name;
  bool gpu = false;
  tr::link_format link = tr::link_format::f32;
  std::vector<double> t;
  std::filesystem::path out;
};

} // namespace

compare_bench_result run_compare_bench(const compare_bench_config& cfg, const std::function<void(std::string_view)>& progress)
{
  compare_bench_result r;
  r.env = collect_env(cfg.commit, cfg.command, cfg.gpu);
  const unsigned threads = cfg.threads ? cfg.threads : r.env.host_threads;
  const auto info = tr::open_capture(cfg.capture);
  r.capture = cfg.capture.string();
  r.datatype = std::string(to_string(info.type));
  r.samples = info.nof_samples;

  // Truth: given, or NAME.truth beside a SigMF/raw capture.
  std::vector<uint8_t> truth;
  {
    std::filesystem::path tp;
    if (cfg.truth) {
      tp = *cfg.truth;
    } else {
      auto base = info.data_path;
      tp = base.replace_extension(".truth");
    }
    if (std::filesystem::exists(tp)) {
      truth = read_bytes(tp);
      r.truth = tp.string();
    } else if (cfg.truth) {
      throw std::runtime_error("truth file " + tp.string() + " does not exist");
    }
  }

  bb::rx_config rxc;
  rxc.nof_threads = threads;
  rxc.sample_rate_sps = info.sample_rate_sps.value_or(p::SAMPLE_RATE_SPS);
  const tr::capture_reader reader(info);
  const auto frames = locate_all(reader, rxc);
  const plain_liquid_chain chain(frames);
  r.frames = frames.size();
  r.data_symbols = chain.nof_symbols();
  r.payload_bytes = chain.payload_bytes();
  r.bits_per_symbol = chain.bits_per_symbol();
  if (r.data_symbols == 0) {
    throw std::runtime_error("no decodable data symbol in " + r.capture + ": nothing to compare");
  }
  progress(std::to_string(r.frames) + " frames, " + std::to_string(r.data_symbols) + " data symbols in " + r.capture);

  scratch_dir scratch("compare");
  std::vector<backend_subject> subjects;
  subjects.push_back({"cpu", false, tr::link_format::f32, {}, scratch.path() / "cpu.payload"});
  if (r.env.gpu && info.type != datatype::cf32_le) {
    // Integer captures cross as stored whatever the link: one row.
    progress("the GPU backend sends " + r.datatype + " samples as stored: one GPU row, not one per link");
    subjects.push_back({"gpu " + r.datatype, true, tr::link_format::f32, {}, scratch.path() / "gpu.payload"});
  } else if (r.env.gpu) {
    for (auto link : cfg.links) {
      const std::string name = "gpu " + std::string(tr::to_string(link));
      subjects.push_back({name, true, link, {}, scratch.path() / (std::string("gpu-") + std::string(tr::to_string(link)) + ".payload")});
    }
  } else {
    progress(r.env.no_gpu_reason);
  }
  std::vector<uint8_t> plain_out(std::size_t(chain.payload_bytes()));
  std::vector<double> plain_all, plain_one;

  for (int rep = -std::max(cfg.warmup, 0); rep < std::max(cfg.repeats, 1); ++rep) {
    for (auto& s : subjects) {
      const auto t0 = steady::now();
      {
        const auto in = tr::open_capture(cfg.capture);
        const tr::capture_reader rd(in);
        std::unique_ptr<bb::receiver> rx;
        if (s.gpu) {
          bb::gpu_config g;
          g.link = s.link;
          g.symbols_per_batch = cfg.gpu_batch;
          rx = bb::make_gpu_receiver(rxc, g);
        } else {
          rx = bb::make_cpu_receiver(rxc);
        }
        bb::payload_file_sink sink(s.out.string());
        const auto res = rx->run(rd, sink);
        sink.close();
        if (res.data_symbols != r.data_symbols) {
          throw std::runtime_error(s.name + " decoded " + std::to_string(res.data_symbols) + " data symbols, the locator found " +
                                   std::to_string(r.data_symbols));
        }
      }
      if (rep >= 0) {
        s.t.push_back(seconds_since(t0));
      }
    }
    for (int one = 0; one < (cfg.plain_one_thread && threads != 1 ? 2 : 1); ++one) {
      const auto t0 = steady::now();
      chain.run(reader, one ? 1u : threads, plain_out);
      if (rep >= 0) {
        (one ? plain_one : plain_all).push_back(seconds_since(t0));
      }
    }
  }

  const double n = double(r.data_symbols);
  compare_row plain{"plain liquid-dsp", "located symbols", threads, summarise(plain_all), 0.0, 1.0, std::nullopt};
  plain.ns_per_symbol = plain.time.median_s * 1e9 / n;
  std::vector<std::vector<uint8_t>> payloads;
  for (const auto& s : subjects) {
    compare_row row{s.name, "end-to-end", threads, summarise(s.t), 0.0, 0.0, std::nullopt};
    row.ns_per_symbol = row.time.median_s * 1e9 / n;
    row.speedup_vs_plain = plain.ns_per_symbol / row.ns_per_symbol;
    payloads.push_back(read_bytes(s.out));
    if (!truth.empty()) {
      row.truth_bit_errors = bit_differences(payloads.back(), truth);
    }
    r.rows.push_back(row);
    progress(row.name + ": " + std::to_string(row.ns_per_symbol) + " ns/symbol end to end");
  }
  r.rows.push_back(plain);
  if (!plain_one.empty()) {
    compare_row one{"plain liquid-dsp", "located symbols", 1, summarise(plain_one), 0.0, 0.0, std::nullopt};
    one.ns_per_symbol = one.time.median_s * 1e9 / n;
    one.speedup_vs_plain = plain.ns_per_symbol / one.ns_per_symbol;
    r.rows.push_back(one);
  }
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    for (std::size_t k = i + 1; k < subjects.size(); ++k) {
      r.pairs.push_back({subjects[i].name, subjects[k].name, uint64_t(std::min(payloads[i].size(), payloads[k].size())) * 8,
                         bit_differences(payloads[i], payloads[k])});
    }
  }
  return r;
}

std::string to_json(const compare_bench_result& r)
{
  nlohmann::json j = to_json(r.env);
  j["benchmark"] = "compare";
  j["capture"] = {{"path", r.capture}, {"datatype", r.datatype}, {"samples", r.samples}, {"frames", r.frames},
                  {"data_symbols", r.data_symbols}, {"payload_bytes", r.payload_bytes}, {"bits_per_symbol", r.bits_per_symbol},
                  {"truth", r.truth.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.truth)}};
  for (const auto& row : r.rows) {
    nlohmann::json o = throughput_json(row.time, r.data_symbols, r.bits_per_symbol);
    o["name"] = row.name;
    o["region"] = row.region;
    o["threads"] = row.threads;
    o["speedup_vs_plain"] = row.speedup_vs_plain;
    if (row.truth_bit_errors) {
      o["truth_bit_errors"] = *row.truth_bit_errors;
    }
    j["rows"].push_back(o);
  }
  j["pairs"] = nlohmann::json::array();
  bool agree = true;
  for (const auto& pr : r.pairs) {
    j["pairs"].push_back({{"a", pr.a}, {"b", pr.b}, {"bits_compared", pr.bits_compared}, {"bit_differences", pr.differences}});
    agree = agree && pr.differences == 0;
  }
  j["all_bits_agree"] = agree;
  return j.dump(2);
}

std::string to_markdown(const compare_bench_result& r)
{
  std::ostringstream o;
  char buf[256];
  o << "# whd-bench compare\n\n" << to_markdown(r.env);
  o << "- capture: `" << r.capture << "` (" << r.datatype << ", " << r.samples << " samples): " << r.frames << " frames, " << r.data_symbols
    << " data symbols, " << r.payload_bytes << " payload bytes";
  o << (r.truth.empty() ? std::string("; no truth file") : "; truth `" + r.truth + "`") << "\n";
  o << "\nns/symbol: median of " << (r.rows.empty() ? 0 : r.rows[0].time.repeats)
    << " repeats (spread min..max). Backends: end to end, capture file opened to payload file written (profile §8).\n"
       "Plain liquid-dsp chain: guard skip + fft_execute + modemcf_demodulate per data tone over the frames located once\n"
       "beforehand (location not counted, no CFO, pilots or equalisation). Speed-up = plain chain's ns/symbol (all threads)\n"
       "over the row's.\n\n";
  o << "| backend | region | threads | ns/symbol | spread | x real time | raw Gbps | speed-up vs plain | bit errors vs truth |\n"
       "|---|---|---:|---:|---|---:|---:|---:|---:|\n";
  for (const auto& row : r.rows) {
    const double n = double(r.data_symbols);
    std::snprintf(buf, sizeof buf, "| %s | %s | %u | %.2f | %.2f..%.2f | %.3f | %.3f | %.2f | %s |\n", row.name.c_str(), row.region.c_str(),
                  row.threads, row.ns_per_symbol, row.time.min_s * 1e9 / n, row.time.max_s * 1e9 / n, p::SYMBOL_PERIOD_NS / row.ns_per_symbol,
                  double(r.bits_per_symbol) / row.ns_per_symbol, row.speedup_vs_plain,
                  row.truth_bit_errors ? std::to_string(*row.truth_bit_errors).c_str() : "-");
    o << buf;
  }
  o << "\nPayload bits, pair by pair:\n\n| a | b | bits compared | differences |\n|---|---|---:|---:|\n";
  for (const auto& pr : r.pairs) {
    std::snprintf(buf, sizeof buf, "| %s | %s | %llu | %llu |\n", pr.a.c_str(), pr.b.c_str(), (unsigned long long)pr.bits_compared,
                  (unsigned long long)pr.differences);
    o << buf;
  }
  if (!r.env.gpu) {
    o << "\n" << r.env.no_gpu_reason << ".\n";
  }
  return o.str();
}

} // namespace whd::rx_bench
