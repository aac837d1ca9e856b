#include <whd/rx_bench/viterbi_bench.hpp>

#include "bench_util.hpp"

#include <whd/fec/coded_tx.hpp>
#include <whd/fec/viterbi.hpp>

extern "C" {
#include <fec.h>
}

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>

namespace whd::rx_bench {

namespace {

struct stream {
  std::vector<uint8_t> u;       ///< input bits, the tail's 6 zeros included
  std::vector<float> llr;       ///< per mother output (X, Y, Z), punctured ones 0
};

/// A stream at `rate` (1/2: Z not sent; 1/3: all three), BPSK over AWGN at Eb/N0.
stream make_stream(uint64_t nin, fec::code_rate rate, double ebn0_dB, std::mt19937_64& rng)
{
  stream s;
  s.u.assign(nin, 0);
  for (uint64_t n = 0; n + fec::TAIL_BITS < nin; ++n) {
    s.u[n] = uint8_t(rng() & 1u);
  }
  const int outputs = rate == fec::code_rate::r1_3 ? 3 : 2;
  const double r = 1.0 / outputs;
  const double sigma = std::sqrt(1.0 / (2.0 * r * std::pow(10.0, ebn0_dB / 10.0)));
  std::normal_distribution<double> noise(0.0, sigma);
  s.llr.assign(3 * nin, 0.0f);
  unsigned reg = 0;
  for (uint64_t n = 0; n < nin; ++n) {
    const unsigned rr = (unsigned(s.u[n]) << 6) | reg;
    reg = rr >> 1;
    const unsigned code = fec::output_code(rr);
    for (int j = 0; j < outputs; ++j) {
      const double x = ((code >> (2 - j)) & 1u) ? -1.0 : 1.0;
      s.llr[3 * n + uint64_t(j)] = float(2.0 * (x + noise(rng)) / (sigma * sigma));
    }
  }
  return s;
}

uint64_t errors_of(const std::vector<uint8_t>& packed, const std::vector<uint8_t>& u, uint64_t nbits)
{
  uint64_t e = 0;
  for (uint64_t n = 0; n < nbits; ++n) {
    e += ((packed[n / 8] >> (7 - n % 8)) & 1u) != u[n] ? 1 : 0;
  }
  return e;
}

/// Times `run` (the decode alone); `errors` counts the bits the warm-up run got wrong.
template <typename F, typename E>
viterbi_row time_rows(const viterbi_bench_config& cfg, std::string decoder, std::string rate, uint64_t bits, F&& run, E&& errors)
{
  viterbi_row row;
  row.decoder = std::move(decoder);
  row.rate = std::move(rate);
  row.bits = bits;
  run(); // warm-up
  row.bit_errors = errors();
  std::vector<double> t;
  for (unsigned i = 0; i < cfg.repeats; ++i) {
    const auto t0 = steady::now();
    run();
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  row.median_s = t[t.size() / 2];
  row.min_s = t.front();
  row.max_s = t.back();
  return row;
}

} // namespace

viterbi_bench_result run_viterbi_bench(const viterbi_bench_config& cfg, const std::function<void(std::string_view)>& progress)
{
  if (cfg.stream_bits < 64 || cfg.streams < 1 || cfg.repeats < 1) {
    throw std::invalid_argument("viterbi: at least 64 bits a stream, 1 stream and 1 repeat");
  }
  viterbi_bench_result r;
  r.cfg = cfg;
  r.env = collect_env(cfg.commit, cfg.command, false);
  r.vectorised = fec::viterbi_vectorised();
  std::mt19937_64 rng(cfg.seed);
  const uint64_t nin = cfg.stream_bits;
  const uint64_t nbits = nin - fec::TAIL_BITS;
  for (const auto rate : {fec::code_rate::r1_2, fec::code_rate::r1_3}) {
    std::vector<stream> ss;
    for (unsigned i = 0; i < cfg.streams; ++i) {
      ss.push_back(make_stream(nin, rate, cfg.ebn0_dB, rng));
    }
    // Ours: int8 soft values (LLR_SCALE), every tile of every stream, one thread.
    std::vector<std::vector<int8_t>> soft(ss.size());
    std::vector<std::vector<uint8_t>> out(ss.size(), std::vector<uint8_t>((nin + 7) / 8));
    std::vector<fec::tile_job> jobs;
    for (std::size_t i = 0; i < ss.size(); ++i) {
      soft[i].resize(ss[i].llr.size());
      for (std::size_t k = 0; k < soft[i].size(); ++k) {
        const float v = std::rint(ss[i].llr[k] * fec::LLR_SCALE);
        soft[i][k] = int8_t(std::clamp(v, -127.0f, 127.0f));
      }
      for (uint64_t k = 0; k < fec::nof_tiles(nin); ++k) {
        jobs.push_back({soft[i].data(), nin, k, nbits, out[i].data()});
      }
    }
    for (const auto isa : {fec::viterbi_isa::avx512, fec::viterbi_isa::avx2}) {
      if (!fec::viterbi_isa_available(isa)) {
        continue;
      }
      r.rows.push_back(time_rows(cfg, std::string("whd-rx (") + fec::to_string(isa) + ")", fec::to_string(rate), nbits * ss.size(),
                                 [&] { fec::decode_tiles(jobs, isa); },
                                 [&] {
                                   uint64_t e = 0;
                                   for (std::size_t i = 0; i < ss.size(); ++i) {
                                     e += errors_of(out[i], ss[i].u, nbits);
                                   }
                                   return e;
                                 }));
      progress(r.rows.back().decoder + " rate " + r.rows.back().rate + ": " + format_value("%.1f", r.rows.back().mbps()) + " Mb/s");
    }
    if (rate != fec::code_rate::r1_2) {
      continue;
    }
    // libfec's viterbi27: offset-binary symbols (0 a sure 0, 255 a sure 1), its
    // generators given as it shifts (newest bit lowest): 0133 and 0171 reversed.
    int polys[2] = {0x6d, 0x4f};
    set_viterbi27_polynomial(polys);
    std::vector<std::vector<uint8_t>> syms(ss.size());
    for (std::size_t i = 0; i < ss.size(); ++i) {
      syms[i].resize(2 * nin);
      for (uint64_t n = 0; n < nin; ++n) {
        for (int j = 0; j < 2; ++j) {
          const float v = 128.0f - ss[i].llr[3 * n + uint64_t(j)] * 8.0f;
          syms[i][2 * n + uint64_t(j)] = uint8_t(std::clamp(std::rint(v), 0.0f, 255.0f));
        }
      }
    }
    void* vp = create_viterbi27(int(nbits));
    if (vp == nullptr) {
      throw std::runtime_error("libfec: create_viterbi27 failed");
    }
    std::vector<std::vector<uint8_t>> data(ss.size(), std::vector<uint8_t>((nbits + 7) / 8));
    r.rows.push_back(time_rows(
        cfg, "libfec viterbi27", fec::to_string(rate), nbits * ss.size(),
        [&] {
          for (std::size_t i = 0; i < ss.size(); ++i) {
            init_viterbi27(vp, 0);
            update_viterbi27_blk(vp, syms[i].data(), int(nin));
            chainback_viterbi27(vp, data[i].data(), unsigned(nbits), 0);
          }
        },
        [&] {
          uint64_t e = 0;
          for (std::size_t i = 0; i < ss.size(); ++i) {
            e += errors_of(data[i], ss[i].u, nbits);
          }
          return e;
        }));
    delete_viterbi27(vp);
    progress(r.rows.back().decoder + " rate " + r.rows.back().rate + ": " + format_value("%.1f", r.rows.back().mbps()) + " Mb/s");
  }
  return r;
}

std::string to_json(const viterbi_bench_result& r)
{
  nlohmann::json j = to_json(r.env);
  j["benchmark"] = "viterbi";
  j["config"] = {{"stream_bits", r.cfg.stream_bits}, {"streams", r.cfg.streams}, {"repeats", r.cfg.repeats}, {"ebn0_db", r.cfg.ebn0_dB}};
  j["vectorised"] = r.vectorised;
  for (const auto& row : r.rows) {
    j["rows"].push_back({{"decoder", row.decoder}, {"rate", row.rate}, {"bits", row.bits}, {"median_s", row.median_s}, {"min_s", row.min_s},
                         {"max_s", row.max_s}, {"mbps", row.mbps()}, {"bit_errors", row.bit_errors}});
  }
  return j.dump(2);
}

std::string to_markdown(const viterbi_bench_result& r)
{
  std::ostringstream o;
  char buf[256];
  o << "# whd-bench viterbi\n\n" << to_markdown(r.env);
  o << "- one thread; " << r.cfg.streams << " streams of " << r.cfg.stream_bits << " trellis steps, BPSK over AWGN at Eb/N0 "
    << r.cfg.ebn0_dB << " dB; median of " << r.cfg.repeats << " timed runs after one warm-up\n";
  o << "- whd-rx: tiles of " << fec::TILE << " bits (" << fec::TILE_LONG << " in streams of " << fec::LONG_STREAM
    << " steps or more) with " << fec::ACQUIRE << " + " << fec::DEPTH << " steps around them (viterbi.hpp), int8 soft values; libfec: viterbi27, whole stream, 8-bit offset-binary symbols\n\n";
  o << "| decoder | rate | Mb/s decoded (median) | run s (min / median / max) | bit errors |\n|---|---|---:|---|---:|\n";
  for (const auto& row : r.rows) {
    std::snprintf(buf, sizeof buf, "| %s | %s | %.1f | %.4f / %.4f / %.4f | %llu |\n", row.decoder.c_str(), row.rate.c_str(), row.mbps(),
                  row.min_s, row.median_s, row.max_s, (unsigned long long)row.bit_errors);
    o << buf;
  }
  return o.str();
}

} // namespace whd::rx_bench
