#include <whd/rx_bench/ber_bench.hpp>
#include <whd/rx_bench/coded_ber_bench.hpp>

#include "bench_util.hpp"

#include <whd/baseband/demap.hpp>
#include <whd/baseband/generator.hpp>
#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/impairments.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/baseband/tone_math.hpp>
#include <whd/fec/coded_rx.hpp>
#include <whd/fec/coded_tx.hpp>
#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdio>
#include <future>
#include <mutex>
#include <numbers>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace whd::rx_bench {

namespace p = profile;
namespace bb = baseband;
namespace tr = transport;

std::vector<double> default_coded_grid(int mcs)
{
  // From about BER 1e-2 down past 1e-6 of the whole receiver, in 0.5 dB steps.
  const double lo = mcs == 0 ? 0.5 : mcs == 1 ? 2.0 : mcs == 2 ? 4.5 : 6.5;
  std::vector<double> g;
  for (int i = 0; i < 9; ++i) {
    g.push_back(lo + 0.5 * i);
  }
  return g;
}

namespace {

void add(coded_tally& t, std::span<const uint8_t> got, std::span<const uint8_t> want, uint32_t rs_failed)
{
  const uint64_t e = bit_differences(got, want);
  t.bits += want.size() * 8;
  t.errors += e;
  t.frames += 1;
  t.frame_errors += e > 0 ? 1 : 0;
  t.rs_failed += rs_failed;
}

void merge(coded_tally& into, const coded_tally& t)
{
  into.bits += t.bits;
  into.errors += t.errors;
  into.frames += t.frames;
  into.frame_errors += t.frame_errors;
  into.rs_failed += t.rs_failed;
  into.seconds += t.seconds;
}

/// The genie rows of one frame: its coded bits on each data tone through the known
/// channel H (flat, or the taps the whole receiver's capture of the same chunk has),
/// float LLRs with the true noise; with `errors`, equalised and weighted instead by an
/// estimate as the receiver's errs (coded_ber_config::genie_errors).
void genie_frame(const fec::frame_geometry& g, int taps, uint64_t chunk_seed, double es_n0, uint64_t seed, genie_error_set errors,
                 coded_tally& genie, coded_tally& tiles, coded_tally& hard)
{
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> info(g.info_bytes);
  for (auto& b : info) {
    b = uint8_t(rng());
  }
  const std::vector<uint8_t> tx = fec::encode_frame(g, info);
  std::array<std::complex<double>, p::NOF_DATA> H;
  H.fill(1.0);
  double power = 1.0;
  if (taps > 1) {
    const auto h = bb::multipath_taps(taps, 3.0, bb::derive_seeds(chunk_seed).channel);
    for (int d = 0; d < p::NOF_DATA; ++d) {
      std::complex<double> s = 0.0;
      for (std::size_t l = 0; l < h.size(); ++l) {
        s += std::complex<double>(h[l]) * std::polar(1.0, -2.0 * std::numbers::pi * double(p::DATA_K[std::size_t(d)]) * double(l) / p::N);
      }
      H[std::size_t(d)] = s;
    }
    power = bb::used_tone_power_gain(h);
  }
  const double n0 = power / es_n0; // the generator's SNR: the received power over the noise's
  std::normal_distribution<double> noise(0.0, std::sqrt(n0 / 2.0));
  const auto mod = fec::modulation_of_mcs(g.mcs);
  const int B = g.bits_per_tone;
  std::vector<float> soft(g.coded_bits());
  // The receiver's channel estimate error: the two-symbol LS estimate's noise (n0 / 2 a
  // tone) projected on the fewest taps the receiver keeps (what a flat channel keeps),
  // i.e. that many coefficients of variance n0 / 2 on the projection's orthonormal
  // basis. Its pilots' phase error, a symbol at a time: the phase of NOF_PILOTS tones'
  // sum, of variance 1 / (2 NOF_PILOTS Es/N0) on a flat channel.
  std::array<std::complex<double>, p::NOF_DATA> Hest = H;
  if (errors.channel) {
    static const bb::rx_config rc;
    static const bb::channel_smoother sm(rc.timing_backoff - rc.channel_taps_early, rc.channel_taps_min);
    const auto& qb = sm.basis();
    std::vector<std::complex<double>> c(std::size_t(sm.nof_taps()));
    for (auto& v : c) {
      v = std::complex<double>(noise(rng), noise(rng)) * std::sqrt(0.5);
    }
    for (int d = 0; d < p::NOF_DATA; ++d) {
      const auto u = std::size_t(p::DATA_USED[std::size_t(d)]);
      std::complex<double> e = 0.0;
      for (std::size_t l = 0; l < c.size(); ++l) {
        e += qb[u * c.size() + l] * c[l];
      }
      Hest[std::size_t(d)] += e;
    }
  }
  std::normal_distribution<double> phase(0.0, std::sqrt(1.0 / (2.0 * p::NOF_PILOTS * es_n0)));
  for (uint64_t m = 0; m < g.nd; ++m) {
    const std::complex<double> rot = errors.phase ? std::polar(1.0, phase(rng)) : std::complex<double>(1.0);
    for (int d = 0; d < p::NOF_DATA; ++d) {
      const uint64_t t0 = m * uint64_t(g.ncbps) + uint64_t(d * B);
      unsigned idx = 0;
      for (int b = 0; b < B; ++b) {
        idx = (idx << 1) | ((tx[(t0 + uint64_t(b)) / 8] >> (7 - (t0 + uint64_t(b)) % 8)) & 1u);
      }
      const std::complex<double> hd = H[std::size_t(d)];
      const std::complex<double> y = hd * std::complex<double>(bb::constellation_point(mod, idx)) + std::complex<double>(noise(rng), noise(rng));
      const std::complex<double> he = Hest[std::size_t(d)];
      const std::complex<double> z = y * rot / he;
      const auto w = float(std::norm(he) / n0);
      if (mod == p::modulation::qpsk) {
        bb::llr_qpsk(float(z.real()), float(z.imag()), w, soft.data() + t0);
      } else {
        bb::llr_qam16(float(z.real()), float(z.imag()), w, soft.data() + t0);
      }
    }
  }
  std::vector<uint8_t> out(g.info_bytes);
  std::vector<int8_t> q(soft.size());
  auto t = steady::now();
  const fec::rs_stats rg = fec::decode_frame_float(g, soft, out);
  genie.seconds += seconds_since(t);
  add(genie, out, info, rg.failed);
  for (std::size_t i = 0; i < soft.size(); ++i) {
    q[i] = bb::llr_to_int8(soft[i], fec::LLR_SCALE);
  }
  t = steady::now();
  const fec::rs_stats rt = fec::decode_frame(g, q, out);
  tiles.seconds += seconds_since(t);
  add(tiles, out, info, rt.failed);
  for (std::size_t i = 0; i < soft.size(); ++i) {
    q[i] = soft[i] > 0.0f ? int8_t(1) : soft[i] < 0.0f ? int8_t(-1) : int8_t(0);
  }
  t = steady::now();
  const fec::rs_stats rh = fec::decode_frame(g, q, out);
  hard.seconds += seconds_since(t);
  add(hard, out, info, rh.failed);
}

/// The information bytes a receiver wrote for each frame of the plan, against the truth.
void tally_rx(const bb::capture_plan& plan, const std::vector<uint8_t>& truth, const bb::receive_result& res,
              const std::vector<uint8_t>& payload, coded_tally& t)
{
  constexpr int64_t TOLERANCE = p::G / 4;
  std::size_t truth_pos = 0, next = 0;
  for (const auto& f : plan.frames) {
    const std::size_t bytes = f.payload_bytes;
    while (next < res.frames.size() && int64_t(res.frames[next].start) < int64_t(f.start) - TOLERANCE) {
      ++next;
    }
    const auto want = std::span<const uint8_t>(truth).subspan(truth_pos, bytes);
    if (next < res.frames.size() && int64_t(res.frames[next].start) <= int64_t(f.start) + TOLERANCE &&
        res.frames[next].payload_bytes == bytes) {
      const auto& got = res.frames[next];
      add(t, std::span<const uint8_t>(payload).subspan(got.payload_offset, bytes), want, got.rs_failed);
      ++next;
    } else {
      // A frame missed (its header lost): all of its bits count as compared and wrong
      // half the time would understate it; counted as a frame error, its bits as errors.
      t.bits += bytes * 8;
      t.errors += bytes * 4;
      t.frames += 1;
      t.frame_errors += 1;
    }
    truth_pos += bytes;
  }
}

std::optional<double> crossing(const std::vector<coded_point>& pts, const std::string& row, double target)
{
  for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
    const auto a = pts[i].rows.find(row), b = pts[i + 1].rows.find(row);
    if (a == pts[i].rows.end() || b == pts[i + 1].rows.end() || a->second.errors == 0) {
      continue;
    }
    const double ba = a->second.ber(), bbr = b->second.ber();
    if (!(ba >= target && bbr <= target)) {
      continue;
    }
    if (b->second.errors == 0) {
      return std::nullopt; // the next point has no error: not bracketed with a measured BER
    }
    const double la = std::log10(ba), lb = std::log10(bbr), lt = std::log10(target);
    const double w = la == lb ? 0.0 : (lt - la) / (lb - la);
    return pts[i].ebn0_dB + w * (pts[i + 1].ebn0_dB - pts[i].ebn0_dB);
  }
  return std::nullopt;
}

} // namespace

coded_ber_result run_coded_ber_bench(const coded_ber_config& cfg, const std::function<void(std::string_view)>& progress)
{
  if (cfg.nd < 1 || cfg.frames_per_chunk < 1 || cfg.min_info_bits < 1 || cfg.mcs.empty() || cfg.taps.empty()) {
    throw std::invalid_argument("ber --mcs: nd, frames, bits, MCS list and channel list must not be empty or 0");
  }
  const auto t_start = steady::now();
  coded_ber_result r;
  r.cfg = cfg;
  r.env = collect_env(cfg.commit, cfg.command, cfg.rx_gpu);
  const unsigned threads = cfg.cpu_threads ? cfg.cpu_threads : std::max(1u, std::thread::hardware_concurrency());
  bb::rx_config rxc;
  rxc.nof_threads = threads;
  if (cfg.channel_taps >= 0) {
    rxc.channel_taps = cfg.channel_taps;
  }
  if (cfg.channel_taps_min >= 0) {
    rxc.channel_taps_min = cfg.channel_taps_min;
  }
  r.cfg.channel_taps = rxc.channel_taps;
  r.cfg.channel_taps_min = std::min(rxc.channel_taps_min, rxc.channel_taps);
  std::unique_ptr<bb::receiver> cpu_rx = cfg.rx_cpu ? bb::make_cpu_receiver(rxc) : nullptr;
  std::unique_ptr<bb::receiver> gpu_rx;
  if (cfg.rx_gpu && r.env.gpu) {
    bb::gpu_config gc;
    gpu_rx = bb::make_gpu_receiver(rxc, gc);
  } else if (cfg.rx_gpu) {
    progress(r.env.no_gpu_reason);
  }

  for (int mcs : cfg.mcs) {
    const fec::frame_geometry g = fec::geometry(mcs, cfg.nd);
    const double rate = 8.0 * double(g.info_bytes) / double(g.coded_bits());
    const auto mod = fec::modulation_of_mcs(mcs);
    const auto it = cfg.ebn0_dB.find(mcs);
    const std::vector<double> grid = it != cfg.ebn0_dB.end() ? it->second : default_coded_grid(mcs);
    for (int taps : cfg.taps) {
      coded_curve cv;
      cv.mcs = mcs;
      cv.taps = taps;
      for (std::size_t pi = 0; pi < grid.size(); ++pi) {
        coded_point pt;
        pt.ebn0_dB = grid[pi];
        pt.rate = rate;
        const double es_n0_dB = pt.ebn0_dB + 10.0 * std::log10(double(g.bits_per_tone) * rate);
        pt.snr_dB = es_n0_dB - 10.0 * std::log10(double(p::N) / double(p::NOF_USED));
        pt.theory_uncoded = theory_ber(mod, std::pow(10.0, pt.ebn0_dB / 10.0));
        const uint64_t frame_bits = g.info_bytes * 8;
        // The seed of chunk c's capture: the genie takes its channel from it too.
        const auto chunk_seed = [&](std::size_t point, uint64_t c) {
          return mix_seed(cfg.seed ^ 0x5bd1e995u, uint64_t(mcs) * 16 + uint64_t(taps), point, c);
        };
        const uint64_t nof_frames = (cfg.min_info_bits + frame_bits - 1) / frame_bits;
        // The genie's rows: frames spread over the threads.
        {
          coded_tally genie, tiles, hard;
          std::mutex m;
          std::atomic<uint64_t> next{0};
          std::vector<std::thread> pool;
          for (unsigned th = 0; th < threads; ++th) {
            pool.emplace_back([&] {
              coded_tally a, b, c;
              for (uint64_t f; (f = next.fetch_add(1)) < nof_frames;) {
                genie_frame(g, taps, chunk_seed(pi, f / cfg.frames_per_chunk), std::pow(10.0, es_n0_dB / 10.0),
                            mix_seed(cfg.seed, uint64_t(mcs) * 16 + uint64_t(taps), pi, f), cfg.genie_errors, a, b, c);
              }
              std::lock_guard lk(m);
              merge(genie, a);
              merge(tiles, b);
              merge(hard, c);
            });
          }
          for (auto& t : pool) {
            t.join();
          }
          pt.rows["genie"] = genie;
          pt.rows["tiles"] = tiles;
          pt.rows["hard"] = hard;
        }
        // The whole receivers: captures generated in parallel, a batch at a time.
        if (cpu_rx || gpu_rx) {
          coded_tally cpu_t, gpu_t;
          const uint64_t chunks = (nof_frames + cfg.frames_per_chunk - 1) / cfg.frames_per_chunk;
          for (uint64_t c0 = 0; c0 < chunks; c0 += threads) {
            const uint64_t n = std::min<uint64_t>(threads, chunks - c0);
            std::vector<std::future<std::pair<bb::capture_plan, bb::memory_capture>>> made;
            for (uint64_t c = c0; c < c0 + n; ++c) {
              made.push_back(std::async(std::launch::async, [&, c] {
                bb::capture_config cc;
                cc.mcs = {mcs};
                cc.nds = {cfg.nd};
                cc.nof_frames = cfg.frames_per_chunk;
                cc.lead_samples = 500;
                cc.gap_samples = 300;
                cc.seed = chunk_seed(pi, c);
                cc.impairments.snr_dB = pt.snr_dB;
                cc.impairments.nof_taps = taps;
                cc.impairments.random_phase = true;
                bb::memory_capture cap;
                auto plan = bb::generate_capture(cc, cap);
                return std::make_pair(std::move(plan), std::move(cap));
              }));
            }
            for (auto& fut : made) {
              const auto [plan, cap] = fut.get();
              const tr::memory_source src(cap.samples());
              for (auto [rx, tally] : {std::pair{cpu_rx.get(), &cpu_t}, std::pair{gpu_rx.get(), &gpu_t}}) {
                if (rx == nullptr) {
                  continue;
                }
                bb::memory_sink sink;
                const auto t0 = steady::now();
                const bb::receive_result res = rx->run(src, sink);
                tally->seconds += seconds_since(t0);
                tally_rx(plan, cap.truth(), res, sink.bytes(), *tally);
              }
            }
          }
          if (cpu_rx) {
            pt.rows["rx cpu"] = cpu_t;
          }
          if (gpu_rx) {
            pt.rows["rx gpu"] = gpu_t;
          }
        }
        std::string line = "MCS " + std::to_string(mcs) + (taps > 1 ? ", " + std::to_string(taps) + " taps" : ", AWGN") + ", Eb/N0 " +
                           format_value("%.2f", pt.ebn0_dB) + " dB (SNR " + format_value("%.2f", pt.snr_dB) + " dB):";
        for (const auto& [name, t] : pt.rows) {
          line += " " + name + " " + format_value("%.3g", t.ber()) + " (" + std::to_string(t.errors) + "/" + std::to_string(t.bits) + ")";
        }
        progress(line);
        cv.points.push_back(std::move(pt));
      }
      for (const auto& [name, t] : cv.points.front().rows) {
        (void)t;
        for (double target : cfg.targets) {
          cv.crossings[name].push_back(crossing(cv.points, name, target));
        }
      }
      r.curves.push_back(std::move(cv));
    }
  }
  r.seconds = seconds_since(t_start);
  return r;
}

namespace {

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

/// Uncoded QPSK's Eb/N0 at `ber`: the reference of the coding gains.
double uncoded_qpsk_dB(double ber) { return theory_ebn0_dB(p::modulation::qpsk, ber); }

} // namespace

std::string to_json(const coded_ber_result& r)
{
  nlohmann::json j = to_json(r.env);
  j["benchmark"] = "ber --mcs";
  j["seconds"] = r.seconds;
  j["config"] = {{"min_info_bits", r.cfg.min_info_bits}, {"nd", r.cfg.nd},          {"frames_per_chunk", r.cfg.frames_per_chunk},
                 {"seed", r.cfg.seed},                   {"channel_taps", r.cfg.channel_taps},
                 {"channel_taps_min", r.cfg.channel_taps_min},
                 {"genie_errors", {{"channel", r.cfg.genie_errors.channel}, {"phase", r.cfg.genie_errors.phase}}}};
  j["ebn0_mapping"] = "Es/N0 per data tone = Eb/N0 * B * R, R = 8 L / (Nd Ncbps); SNR_dB = Es/N0_dB - 10 log10(512/352)";
  for (const auto& cv : r.curves) {
    nlohmann::json o{{"mcs", cv.mcs}, {"taps", cv.taps}};
    for (const auto& pt : cv.points) {
      nlohmann::json q{{"ebn0_db", pt.ebn0_dB}, {"snr_db", pt.snr_dB}, {"rate", pt.rate}, {"theory_uncoded_ber", pt.theory_uncoded}};
      for (const auto& [name, t] : pt.rows) {
        q["rows"][name] = {{"bits", t.bits},           {"errors", t.errors},       {"ber", t.ber()},
                           {"frames", t.frames},       {"frame_errors", t.frame_errors}, {"fer", t.fer()},
                           {"rs_failed", t.rs_failed}, {"seconds", t.seconds}};
      }
      o["points"].push_back(q);
    }
    for (const auto& [name, xs] : cv.crossings) {
      for (std::size_t i = 0; i < xs.size(); ++i) {
        o["crossings"][name].push_back({{"target_ber", r.cfg.targets[i]}, {"ebn0_db", opt(xs[i])}});
      }
    }
    j["curves"].push_back(o);
  }
  return j.dump(2);
}

std::string to_markdown(const coded_ber_result& r)
{
  std::ostringstream o;
  char buf[320];
  o << "# whd-bench ber --mcs\n\n" << to_markdown(r.env);
  o << "- rows: rx cpu / rx gpu = the whole receiver on generated captures (channel estimated); genie = known channel, float LLRs, "
       "full-length float Viterbi, RS; tiles = the genie's LLRs through the project's int8 tiled decoder; hard = its hard "
       "decisions through the same decoder\n";
  o << "- Eb/N0 per information bit: Es/N0 per data tone = Eb/N0 x B x R, R = 8 L / (Nd Ncbps) (RS, tail and pad included); every "
       "row of a point holds at least " << r.cfg.min_info_bits << " information bits; frames of Nd = " << r.cfg.nd << "\n"
    << "- the receivers' channel estimate projected on " << r.cfg.channel_taps_min << " to " << r.cfg.channel_taps
    << " taps, chosen per frame (0: plain least squares)\n";
  if (r.cfg.genie_errors.channel || r.cfg.genie_errors.phase) {
    o << "- the genie's (and tiles' and hard's) LLRs carry estimation errors drawn as the receiver's:"
      << (r.cfg.genie_errors.channel ? " channel estimate (" + std::to_string(bb::rx_config{}.channel_taps_min) + " taps)" : "") << (r.cfg.genie_errors.phase ? " pilot phase per symbol" : "")
      << "\n";
  }
  std::snprintf(buf, sizeof buf, "- wall time %.1f s\n", r.seconds);
  o << buf;
  for (const auto& cv : r.curves) {
    o << "\n## MCS " << cv.mcs << ", " << (cv.taps > 1 ? std::to_string(cv.taps) + "-tap channel" : std::string("AWGN")) << "\n\n";
    std::vector<std::string> names;
    for (const auto& [name, t] : cv.points.front().rows) {
      (void)t;
      names.push_back(name);
    }
    o << "| Eb/N0 dB | SNR dB | uncoded theory |";
    for (const auto& n : names) {
      o << " " << n << " BER (FER) |";
    }
    o << "\n|---:|---:|---:|";
    for (std::size_t i = 0; i < names.size(); ++i) {
      o << "---:|";
    }
    o << "\n";
    for (const auto& pt : cv.points) {
      std::snprintf(buf, sizeof buf, "| %.2f | %.2f | %.3g |", pt.ebn0_dB, pt.snr_dB, pt.theory_uncoded);
      o << buf;
      for (const auto& n : names) {
        const auto& t = pt.rows.at(n);
        std::snprintf(buf, sizeof buf, " %.3g (%.3g) |", t.ber(), t.fer());
        o << buf;
      }
      o << "\n";
    }
    o << "\nEb/N0 at the target BER, and against the genie, hard decisions and uncoded QPSK:\n\n"
         "| row | target | Eb/N0 dB | - genie dB | hard - row dB | coding gain over uncoded QPSK dB |\n|---|---:|---:|---:|---:|---:|\n";
    for (const auto& n : names) {
      for (std::size_t i = 0; i < r.cfg.targets.size(); ++i) {
        const auto x = cv.crossings.at(n)[i];
        const auto ge = cv.crossings.at("genie")[i];
        const auto hd = cv.crossings.at("hard")[i];
        std::string a = x ? format_value("%.2f", *x) : "-", b = x && ge ? format_value("%+.2f", *x - *ge) : "-",
                    c = x && hd ? format_value("%+.2f", *hd - *x) : "-",
                    d = x ? format_value("%.2f", uncoded_qpsk_dB(r.cfg.targets[i]) - *x) : "-";
        std::snprintf(buf, sizeof buf, "| %s | %.0e | %s | %s | %s | %s |\n", n.c_str(), r.cfg.targets[i], a.c_str(), b.c_str(), c.c_str(),
                      d.c_str());
        o << buf;
      }
    }
  }
  return o.str();
}

} // namespace whd::rx_bench
