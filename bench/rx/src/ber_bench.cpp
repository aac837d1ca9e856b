#include <whd/rx_bench/ber_bench.hpp>

#include "bench_util.hpp"

#include <whd/baseband/generator.hpp>
#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numbers>
#include <sstream>
#include <stdexcept>

namespace whd::rx_bench {

namespace p = profile;
namespace bb = baseband;
namespace tr = transport;

double q_function(double x) { return 0.5 * std::erfc(x / std::numbers::sqrt2); }

double theory_ber(p::modulation mod, double ebn0)
{
  if (mod == p::modulation::qpsk) {
    return q_function(std::sqrt(2.0 * ebn0));
  }
  const double a = std::sqrt(0.8 * ebn0);
  return (3.0 * q_function(a) + 2.0 * q_function(3.0 * a) - q_function(5.0 * a)) / 4.0;
}

double theory_ebn0_dB(p::modulation mod, double ber)
{
  double lo = -10.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (theory_ber(mod, std::pow(10.0, mid / 10.0)) > ber ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double snr_dB_for_ebn0(p::modulation mod, double ebn0_dB)
{
  return ebn0_dB + 10.0 * std::log10(double(p::bits_per_tone(mod))) - 10.0 * std::log10(double(p::N) / double(p::NOF_USED));
}

ber_crossing find_crossing(p::modulation mod, const std::vector<ber_point>& points, double target)
{
  ber_crossing c;
  c.target = target;
  c.theory_ebn0_dB = theory_ebn0_dB(mod, target);
  double lowest = 1.0;
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    const ber_point& a = points[i];
    const ber_point& b = points[i + 1];
    lowest = std::min(lowest, a.errors ? a.ber() : lowest);
    if (a.errors == 0 || b.errors == 0 || !(a.ber() >= target && b.ber() <= target)) {
      continue;
    }
    const double la = std::log10(a.ber()), lb = std::log10(b.ber()), lt = std::log10(target);
    const double w = la == lb ? 0.0 : (lt - la) / (lb - la);
    const double loss_a = a.ebn0_dB - theory_ebn0_dB(mod, a.ber());
    const double loss_b = b.ebn0_dB - theory_ebn0_dB(mod, b.ber());
    c.distance_dB = loss_a + w * (loss_b - loss_a);
    c.ebn0_dB = c.theory_ebn0_dB + *c.distance_dB;
    return c;
  }
  if (!points.empty() && points.back().errors) {
    lowest = std::min(lowest, points.back().ber());
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "not bracketed by two points with errors (BER measured %.3g..%.3g)",
                points.empty() ? 0.0 : points.front().ber(), lowest);
  c.note = buf;
  return c;
}

namespace {

/// A backend under test and its running tallies for the current point.
struct subject {
  std::unique_ptr<bb::receiver> rx;
  std::string backend, link;
  ber_curve curve;
  ber_point acc;
  std::vector<uint8_t> payload; ///< last chunk's payload (for the f32 comparison)
  bb::receive_result result;
  std::unique_ptr<bb::memory_sink> llr; ///< the chunk's f32 LLRs (null: no soft output for this subject)
  std::optional<bb::llr_calibrator> calibrator;
};

/// Bits compared, bit errors and frames missed of one run against the plan.
void tally(const bb::capture_plan& plan, const std::vector<uint8_t>& truth, const bb::receive_result& res,
           const std::vector<uint8_t>& payload, ber_point& acc, const bb::memory_sink* llr, std::optional<bb::llr_calibrator>& cal)
{
  const auto* soft = llr != nullptr ? reinterpret_cast<const float*>(llr->bytes().data()) : nullptr;
  constexpr int64_t TOLERANCE = p::G / 4; // located start vs transmitted start [samples]
  std::size_t truth_pos = 0, next = 0;
  for (const auto& f : plan.frames) {
    const std::size_t bytes = std::size_t(f.nd) * std::size_t(p::bytes_per_symbol(f.mod));
    ++acc.frames_sent;
    while (next < res.frames.size() && int64_t(res.frames[next].start) < int64_t(f.start) - TOLERANCE) {
      ++next; // a frame where none was sent: its bits match nothing
    }
    if (next < res.frames.size() && int64_t(res.frames[next].start) <= int64_t(f.start) + TOLERANCE &&
        res.frames[next].symbols == f.nd && truth_pos + bytes <= truth.size()) {
      const auto& got = res.frames[next];
      acc.errors += bit_differences(std::span<const uint8_t>(payload).subspan(got.payload_offset, bytes),
                                    std::span<const uint8_t>(truth).subspan(truth_pos, bytes));
      acc.bits += uint64_t(bytes) * 8;
      if (soft != nullptr && cal && llr->bytes().size() >= (got.payload_offset + bytes) * 8 * sizeof(float)) {
        cal->add(std::span<const float>(soft + got.payload_offset * 8, bytes * 8), std::span<const uint8_t>(truth).subspan(truth_pos, bytes));
      }
      ++next;
    } else {
      ++acc.frames_missed;
    }
    truth_pos += bytes;
  }
}

} // namespace

ber_bench_result run_ber_bench(const ber_bench_config& cfg, const std::function<void(std::string_view)>& progress)
{
  if (cfg.nd < 1 || cfg.frames_per_chunk < 1 || cfg.target_errors < 1 || cfg.max_bits < 1) {
    throw std::invalid_argument("ber: nd, frames per chunk, target errors and bit cap must be at least 1");
  }
  const auto t_start = steady::now();
  ber_bench_result r;
  r.cfg = cfg;
  r.env = collect_env(cfg.commit, cfg.command, cfg.gpu);

  bb::rx_config rxc;
  rxc.nof_threads = cfg.cpu_threads;
  std::vector<subject> subjects;
  // The CPU and the GPU's f32 link give soft values (as the receiver decodes: the
  // other links only change the old packing's rounding).
  auto soft_config = [&](subject& s, bool soft) {
    bb::rx_config c = rxc;
    if (cfg.llr && soft) {
      s.llr = std::make_unique<bb::memory_sink>();
      c.llr = {s.llr.get(), bb::llr_format::f32, 1.0f};
    }
    return c;
  };
  if (cfg.cpu) {
    subject s{nullptr, "cpu", "-", {}, {}, {}, {}, {}, {}};
    s.rx = bb::make_cpu_receiver(soft_config(s, true));
    subjects.push_back(std::move(s));
  }
  if (r.env.gpu) {
    for (auto link : cfg.links) {
      bb::gpu_config g;
      g.link = link;
      g.symbols_per_batch = std::min<std::size_t>(std::size_t(cfg.nd) * cfg.frames_per_chunk, 1u << 15);
      subject s{nullptr, "gpu", std::string(tr::to_string(link)), {}, {}, {}, {}, {}, {}};
      s.rx = bb::make_gpu_receiver(soft_config(s, link == tr::link_format::f32), g);
      subjects.push_back(std::move(s));
    }
  } else {
    progress(r.env.no_gpu_reason);
  }
  if (subjects.empty()) {
    throw std::invalid_argument("ber: no backend to measure (--no-cpu without a GPU)");
  }
  const subject* f32_ref = nullptr;
  for (const auto& s : subjects) {
    if (s.backend == "gpu" && s.link == "f32") {
      f32_ref = &s;
    }
  }

  for (std::size_t mi = 0; mi < cfg.mods.size(); ++mi) {
    const p::modulation mod = cfg.mods[mi];
    std::vector<double> grid = mod == p::modulation::qpsk ? cfg.ebn0_qpsk_dB : cfg.ebn0_qam16_dB;
    std::sort(grid.begin(), grid.end());
    for (auto& s : subjects) {
      s.curve = ber_curve{mod, s.backend, s.link, {}, {}};
    }
    for (std::size_t pi = 0; pi < grid.size(); ++pi) {
      const double ebn0 = grid[pi];
      const double snr = snr_dB_for_ebn0(mod, ebn0);
      for (auto& s : subjects) {
        s.acc = ber_point{};
        s.acc.ebn0_dB = ebn0;
        s.acc.esn0_dB = ebn0 + 10.0 * std::log10(double(p::bits_per_tone(mod)));
        s.acc.snr_dB = snr;
        s.calibrator.reset();
        if (s.llr) {
          s.calibrator.emplace();
        }
      }
      auto done = [&] {
        return std::all_of(subjects.begin(), subjects.end(),
                           [&](const subject& s) { return s.acc.errors >= cfg.target_errors || s.acc.bits >= cfg.max_bits; });
      };
      for (uint64_t chunk = 0; !done(); ++chunk) {
        bb::capture_config cc;
        cc.mods = {mod};
        cc.nds = {cfg.nd};
        cc.nof_frames = cfg.frames_per_chunk;
        cc.lead_samples = 500;
        cc.gap_samples = 300;
        cc.seed = mix_seed(cfg.seed, mi, pi, chunk);
        cc.impairments.snr_dB = snr;
        cc.impairments.cfo_Hz = cfg.cfo_Hz;
        cc.impairments.random_phase = true;
        bb::memory_capture cap;
        const auto plan = bb::generate_capture(cc, cap);
        const tr::memory_source src(cap.samples());
        for (auto& s : subjects) {
          bb::memory_sink sink;
          if (s.llr) {
            *s.llr = bb::memory_sink{};
          }
          const auto t0 = steady::now();
          s.result = s.rx->run(src, sink);
          s.acc.seconds += seconds_since(t0);
          s.payload = sink.bytes();
          tally(plan, cap.truth(), s.result, s.payload, s.acc, s.llr.get(), s.calibrator);
        }
        if (f32_ref != nullptr) {
          for (auto& s : subjects) {
            if (s.backend == "gpu" && &s != f32_ref) {
              s.acc.bits_differing_from_f32 += bit_differences(s.payload, f32_ref->payload);
            }
          }
        }
      }
      std::string line = std::string(p::to_string(mod)) + " Eb/N0 " + format_value("%.2f", ebn0) + " dB (SNR " + format_value("%.2f", snr) +
                         " dB), theory " + format_value("%.3g", theory_ber(mod, std::pow(10.0, ebn0 / 10.0))) + ":";
      bool any_errors = false;
      for (auto& s : subjects) {
        line += " " + s.curve.label() + " " + format_value("%.3g", s.acc.ber()) + " (" + std::to_string(s.acc.errors) + "/" +
                std::to_string(s.acc.bits) + (s.acc.frames_missed ? ", " + std::to_string(s.acc.frames_missed) + " frames missed" : "") + ")";
        any_errors = any_errors || s.acc.errors > 0;
        if (s.calibrator) {
          s.acc.llr = s.calibrator->result();
          line += " [LLR slope " + format_value("%.3f", s.acc.llr->slope) + "]";
        }
        s.curve.points.push_back(s.acc);
      }
      progress(line);
      if (!any_errors) {
        break; // higher Eb/N0 gives no errors either within the bit cap
      }
    }
    for (auto& s : subjects) {
      for (double t : cfg.targets) {
        s.curve.crossings.push_back(find_crossing(mod, s.curve.points, t));
      }
      r.curves.push_back(s.curve);
    }
  }
  // Link packing against the f32 link, at each target BER.
  for (const auto& ref : r.curves) {
    if (ref.backend != "gpu" || ref.link != "f32") {
      continue;
    }
    for (const auto& c : r.curves) {
      if (c.backend != "gpu" || c.link == "f32" || c.mod != ref.mod) {
        continue;
      }
      for (std::size_t t = 0; t < c.crossings.size(); ++t) {
        link_delta d{c.mod, c.link, c.crossings[t].target, std::nullopt};
        if (c.crossings[t].ebn0_dB && ref.crossings[t].ebn0_dB) {
          d.delta_dB = *c.crossings[t].ebn0_dB - *ref.crossings[t].ebn0_dB;
        }
        r.link_deltas.push_back(d);
      }
    }
  }
  r.seconds = seconds_since(t_start);
  return r;
}

namespace {

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

} // namespace

std::string to_json(const ber_bench_result& r)
{
  nlohmann::json j = to_json(r.env);
  j["benchmark"] = "ber";
  j["seconds"] = r.seconds;
  const auto& c = r.cfg;
  j["config"] = {{"target_errors", c.target_errors}, {"max_bits", c.max_bits}, {"nd", c.nd}, {"frames_per_chunk", c.frames_per_chunk},
                 {"cfo_hz", c.cfo_Hz}, {"seed", c.seed}, {"channel", "AWGN, 1 tap, random carrier phase"},
                 {"capture_samples", "cf32 in memory (the link packing is the only quantisation)"}};
  j["ebn0_mapping"] = "SNR_dB = EbN0_dB + 10 log10(bits per tone) - 10 log10(512/352); Es/N0 per data tone = SNR * 512/352";
  for (const auto& cv : r.curves) {
    nlohmann::json o{{"mod", p::to_string(cv.mod)}, {"backend", cv.backend}, {"link", cv.link}, {"label", cv.label()}};
    for (const auto& pt : cv.points) {
      nlohmann::json q{{"ebn0_db", pt.ebn0_dB},
                       {"esn0_db", pt.esn0_dB},
                       {"snr_db", pt.snr_dB},
                       {"bits", pt.bits},
                       {"errors", pt.errors},
                       {"ber", pt.ber()},
                       {"theory_ber", theory_ber(cv.mod, std::pow(10.0, pt.ebn0_dB / 10.0))},
                       {"frames_sent", pt.frames_sent},
                       {"frames_missed", pt.frames_missed},
                       {"receiver_s", pt.seconds}};
      if (pt.errors) {
        q["loss_db"] = pt.ebn0_dB - theory_ebn0_dB(cv.mod, pt.ber());
      }
      if (cv.backend == "gpu" && cv.link != "f32") {
        q["bits_differing_from_f32"] = pt.bits_differing_from_f32;
      }
      if (pt.llr) {
        nlohmann::json bins = nlohmann::json::array();
        for (const auto& b : pt.llr->bins) {
          bins.push_back({{"mean_llr", b.mean_llr}, {"empirical", b.empirical}, {"n0", b.n0}, {"n1", b.n1}});
        }
        q["llr_calibration"] = {{"slope", pt.llr->slope}, {"bits", pt.llr->bits}, {"bins", bins}};
      }
      o["points"].push_back(q);
    }
    for (const auto& x : cv.crossings) {
      nlohmann::json q{{"target_ber", x.target}, {"theory_ebn0_db", x.theory_ebn0_dB}, {"ebn0_db", opt(x.ebn0_dB)},
                       {"distance_db", opt(x.distance_dB)}};
      if (!x.note.empty()) {
        q["note"] = x.note;
      }
      o["crossings"].push_back(q);
    }
    j["curves"].push_back(o);
  }
  j["link_deltas_vs_f32"] = nlohmann::json::array();
  for (const auto& d : r.link_deltas) {
    j["link_deltas_vs_f32"].push_back({{"mod", p::to_string(d.mod)}, {"link", d.link}, {"target_ber", d.target}, {"delta_db", opt(d.delta_dB)}});
  }
  return j.dump(2);
}

std::string to_markdown(const ber_bench_result& r)
{
  std::ostringstream o;
  char buf[256];
  o << "# whd-bench ber\n\n" << to_markdown(r.env);
  o << "- channel: AWGN, one tap, random carrier phase, CFO " << r.cfg.cfo_Hz << " Hz; " << r.cfg.frames_per_chunk << " frames of "
    << r.cfg.nd << " data symbols per generated capture (cf32, in memory)\n";
  o << "- each point runs until every backend has " << r.cfg.target_errors << " bit errors or " << r.cfg.max_bits
    << " bits; all backends decode the same captures\n";
  o << "- Eb/N0 to the generator's SNR: SNR_dB = Eb/N0_dB + 10 log10(B) - 10 log10(512/352) (B bits per tone; Es/N0 per data tone = SNR x 512/352)\n";
  o << "- theory: uncoded Gray, QPSK Q(sqrt(2 Eb/N0)), 16-QAM (3Q(a) + 2Q(3a) - Q(5a))/4 with a = sqrt(0.8 Eb/N0)\n";
  std::snprintf(buf, sizeof buf, "- wall time %.1f s\n", r.seconds);
  o << buf;
  for (p::modulation mod : r.cfg.mods) {
    std::vector<const ber_curve*> cs;
    for (const auto& cv : r.curves) {
      if (cv.mod == mod) {
        cs.push_back(&cv);
      }
    }
    if (cs.empty()) {
      continue;
    }
    o << "\n## " << p::to_string(mod) << "\n\n| Eb/N0 dB | SNR dB | theory |";
    for (const auto* cv : cs) {
      o << " " << cv->label() << " BER (errors/bits) |";
    }
    o << "\n|---:|---:|---:|";
    for (std::size_t i = 0; i < cs.size(); ++i) {
      o << "---:|";
    }
    o << "\n";
    for (std::size_t i = 0; i < cs[0]->points.size(); ++i) {
      const auto& pt = cs[0]->points[i];
      std::snprintf(buf, sizeof buf, "| %.2f | %.2f | %.3g |", pt.ebn0_dB, pt.snr_dB, theory_ber(mod, std::pow(10.0, pt.ebn0_dB / 10.0)));
      o << buf;
      for (const auto* cv : cs) {
        const auto& q = cv->points[i];
        std::snprintf(buf, sizeof buf, " %.3g (%llu/%llu)", q.ber(), (unsigned long long)q.errors, (unsigned long long)q.bits);
        o << buf;
        if (q.frames_missed) {
          o << ", " << q.frames_missed << " frames missed";
        }
        o << " |";
      }
      o << "\n";
    }
    o << "\nDistance from theory (Eb/N0 the receiver needs minus theory's, interpolated):\n\n| backend |";
    for (const auto& x : cs[0]->crossings) {
      std::snprintf(buf, sizeof buf, " at %.0e (theory %.2f dB) |", x.target, x.theory_ebn0_dB);
      o << buf;
    }
    o << "\n|---|";
    for (std::size_t i = 0; i < cs[0]->crossings.size(); ++i) {
      o << "---:|";
    }
    o << "\n";
    for (const auto* cv : cs) {
      o << "| " << cv->label() << " |";
      for (const auto& x : cv->crossings) {
        if (x.distance_dB) {
          std::snprintf(buf, sizeof buf, " %+.2f dB (%.2f dB) |", *x.distance_dB, *x.ebn0_dB);
        } else {
          std::snprintf(buf, sizeof buf, " - (%s) |", x.note.c_str());
        }
        o << buf;
      }
      o << "\n";
    }
  }
  if (r.cfg.llr) {
    o << "\n## Soft output: calibration of the LLRs\n\n"
         "The f32 LLRs of every compared frame, binned by 0.5 over [-12, 12]; in each bin with at least 20 zeros and\n"
         "20 ones, the empirical ln(#0/#1) of the true bits against the bin's mean LLR. Slope: weighted least-squares\n"
         "line through the origin (1: calibrated; the target is within 10 %). Points without populated bins (no\n"
         "errors) are left out.\n\n| modulation | backend | Eb/N0 dB | BER | bins | slope |\n|---|---|---:|---:|---:|---:|\n";
    for (const auto& cv : r.curves) {
      for (const auto& pt : cv.points) {
        if (pt.llr && !pt.llr->bins.empty()) {
          std::snprintf(buf, sizeof buf, "| %s | %s | %.2f | %.3g | %zu | %.3f |\n", p::to_string(cv.mod), cv.label().c_str(), pt.ebn0_dB,
                        pt.ber(), pt.llr->bins.size(), pt.llr->slope);
          o << buf;
        }
      }
    }
  }
  if (!r.link_deltas.empty()) {
    o << "\n## Link packing against the f32 link (same captures)\n\n| modulation | link | target BER | Eb/N0 - f32's |\n|---|---|---:|---:|\n";
    for (const auto& d : r.link_deltas) {
      if (d.delta_dB) {
        std::snprintf(buf, sizeof buf, "| %s | %s | %.0e | %+.3f dB |\n", p::to_string(d.mod), d.link.c_str(), d.target, *d.delta_dB);
      } else {
        std::snprintf(buf, sizeof buf, "| %s | %s | %.0e | - (not bracketed) |\n", p::to_string(d.mod), d.link.c_str(), d.target);
      }
      o << buf;
    }
    o << "\nDecisions that differ from the f32 link's, over every point:";
    for (const auto& cv : r.curves) {
      if (cv.backend == "gpu" && cv.link != "f32") {
        uint64_t diff = 0, bits = 0;
        for (const auto& pt : cv.points) {
          diff += pt.bits_differing_from_f32;
          bits += pt.bits;
        }
        std::snprintf(buf, sizeof buf, " %s %s %llu of %llu bits;", p::to_string(cv.mod), cv.link.c_str(), (unsigned long long)diff,
                      (unsigned long long)bits);
        o << buf;
      }
    }
    o << "\n";
  } else if (!r.env.gpu) {
    o << "\n" << r.env.no_gpu_reason << ".\n";
  }
  return o.str();
}

} // namespace whd::rx_bench
