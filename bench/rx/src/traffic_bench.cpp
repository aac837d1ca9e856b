#include <whd/rx_bench/traffic_bench.hpp>

#include "bench_util.hpp"
#include "plain_liquid_chain.hpp"
#include "timed_process.hpp"

#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/report.hpp>
#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <map>
#include <numeric>
#include <span>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

namespace whd::rx_bench {

namespace {

namespace p = profile;
namespace bb = baseband;
namespace tr = transport;
using json = nlohmann::json;

/// What identifies a frame of the report: two decodes agree when every frame's do.
struct frame_key {
  uint64_t start = 0;
  std::string mod;
  uint64_t nd = 0, seq = 0, symbols = 0;
  bool truncated = false;
  friend bool operator==(const frame_key&, const frame_key&) = default;
};

/// A shape scaled: at least one frame.
traffic_shape scaled(traffic_shape s, double scale)
{
  s.nof_frames = std::max<uint64_t>(1, uint64_t(std::llround(double(s.nof_frames) * scale)));
  return s;
}

/// Where a shape's capture lives: NAME-TYPE as whd-tx made it for the script this
/// replaced, so that its captures are reused; NAME-sSCALE-TYPE when scaled.
std::filesystem::path capture_base(const std::filesystem::path& dir, const std::string& name, double scale, datatype t)
{
  std::string stem = name;
  if (scale != 1.0) {
    stem += "-s" + format_value("%g", scale);
  }
  return dir / (stem + "-" + std::string(to_string(t)));
}

/// Generates the shape `s` as `t` at `base` (NAME.sigmf-meta, -data, .truth,
/// .frames.json). It writes under a temporary name and moves the files into place,
/// the meta last, so that a meta present means a whole capture.
void make_capture(const traffic_shape& s, datatype t, const std::filesystem::path& base)
{
  bb::capture_config cc;
  cc.mods = s.mods;
  cc.mcs = s.mcs;
  cc.nds = {s.nd};
  cc.nof_frames = s.nof_frames;
  cc.gap_samples = s.gap_samples;
  cc.seed = TRAFFIC_SEED;
  cc.impairments.snr_dB = TRAFFIC_SNR_DB;
  cc.impairments.cfo_Hz = s.cfo_Hz;
  cc.impairments.nof_taps = s.taps;
  cc.impairments.random_phase = s.random_phase;
  bb::output_config oc;
  oc.base = base.string() + ".partial-" + std::to_string(::getpid());
  oc.type = t;
  oc.description = "whd-bench traffic shape " + s.name + ": " + describe(s) + ", SNR " + format_value("%g", TRAFFIC_SNR_DB) +
                   " dB, seed " + std::to_string(TRAFFIC_SEED);
  const auto summary = bb::write_capture(cc, oc);
  std::filesystem::rename(summary.truth_path, base.string() + ".truth");
  std::filesystem::rename(summary.frames_path, base.string() + ".frames.json");
  std::filesystem::rename(summary.data_path, base.string() + ".sigmf-data");
  std::filesystem::rename(summary.meta_path, base.string() + ".sigmf-meta");
}

/// Whether two files hold the same bytes.
bool same_bytes(const std::filesystem::path& a, const std::filesystem::path& b)
{
  std::error_code ea, eb;
  if (std::filesystem::file_size(a, ea) != std::filesystem::file_size(b, eb) || ea || eb) {
    return false;
  }
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  constexpr std::size_t BLOCK = std::size_t(1) << 20;
  std::vector<char> xa(BLOCK), xb(BLOCK);
  while (fa && fb) {
    fa.read(xa.data(), std::streamsize(BLOCK));
    fb.read(xb.data(), std::streamsize(BLOCK));
    if (fa.gcount() != fb.gcount() || !std::equal(xa.begin(), xa.begin() + fa.gcount(), xb.begin())) {
      return false;
    }
  }
  return fa.eof() && fb.eof();
}

/// Bit errors of a payload file against a truth file (or another payload), plus 8 per
/// byte either lacks.
uint64_t truth_bit_errors(const std::filesystem::path& payload, const std::filesystem::path& truth)
{
  bb::truth_checker check(truth);
  std::ifstream f(payload, std::ios::binary);
  if (!f) {
    throw std::runtime_error("cannot read " + payload.string());
  }
  std::vector<char> block(std::size_t(1) << 20);
  while (f) {
    f.read(block.data(), std::streamsize(block.size()));
    check.write(std::span(reinterpret_cast<const uint8_t*>(block.data()), std::size_t(f.gcount())));
  }
  const auto c = check.result();
  return c.bit_errors + c.missing_bits;
}

/// The files of one whd-rx run of this process, removed at scope exit.
struct run_files {
  std::filesystem::path payload, report, err;
  run_files(const std::filesystem::path& dir, const std::string& subject)
  {
    const std::string stem = "whd-traffic-" + std::to_string(::getpid()) + "-" + subject;
    payload = dir / (stem + ".payload");
    report = dir / (stem + ".json");
    err = dir / (stem + ".stderr");
  }
  ~run_files()
  {
    std::error_code ec;
    for (const auto* f : {&payload, &report, &err}) {
      std::filesystem::remove(*f, ec);
    }
  }
  run_files(const run_files&) = delete;
  run_files& operator=(const run_files&) = delete;
};

/// Runs whd-rx `repeats` times on the capture; fills the row (or its error) and the
/// frames of the last run.
void run_process_row(const traffic_bench_config& cfg, const traffic_capture& cap, const std::filesystem::path& truth,
                     const run_files& files, traffic_row& row, std::vector<frame_key>& frames)
{
  // The report's split of each run (none where whd-rx could not read its start time).
  struct split {
    double setup_s, decode_s, wall_s;
  };
  std::vector<double> wall;
  std::vector<std::optional<split>> splits;
  for (int rep = 0; rep < cfg.repeats; ++rep) {
    std::vector<std::string> args{cap.path, "--backend", std::string(to_string(row.backend)), "-q", "-o", files.payload.string(), "--report",
                                  files.report.string()};
    if (row.link == "f32" || row.link == "half" || row.link == "int8") {
      args.insert(args.end(), {"--link", row.link});
    }
    const auto out = run_timed(cfg.rx, args, files.err);
    if (!out.ok()) {
      row.error = "whd-rx " + out.describe();
      return;
    }
    std::ifstream rf(files.report);
    const json rep_j = json::parse(rf, nullptr, false);
    if (rep_j.is_discarded() || !rep_j.contains("timing") || !rep_j.contains("frames")) {
      row.error = "whd-rx wrote no readable report to " + files.report.string();
      return;
    }
    const json& t = rep_j["timing"];
    wall.push_back(out.seconds);
    splits.emplace_back();
    if (t.contains("setup_seconds")) {
      splits.back() = split{t["setup_seconds"].get<double>(), t["decode_seconds"].get<double>(), t["wall_seconds"].get<double>()};
    }
    row.data_symbols = t["data_symbols"].get<uint64_t>();
    row.payload_bytes = rep_j["payload_bytes"].get<uint64_t>();
    row.header_failures = rep_j["header_failures"].size();
    frames.clear();
    for (const auto& f : rep_j["frames"]) {
      frames.push_back({f["start"].get<uint64_t>(), f["mod"].get<std::string>(), f["nd"].get<uint64_t>(), f["seq"].get<uint64_t>(),
                        f["symbols"].get<uint64_t>(), f["truncated"].get<bool>()});
    }
    row.frames = frames.size();
  }
  row.time = summarise(wall);
  // The split of the median run (the one summarise takes), so that its parts add up.
  std::vector<std::size_t> order(wall.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return wall[a] < wall[b]; });
  if (const auto& m = splits[order[order.size() / 2]]) {
    row.report_setup_s = m->setup_s;
    row.report_decode_s = m->decode_s;
    row.report_wall_s = m->wall_s;
  }
  if (std::filesystem::exists(truth)) {
    row.truth_bit_errors = truth_bit_errors(files.payload, truth);
  }
}

/// The plain liquid-dsp chain over the capture's frames, located first (untimed).
void run_liquid_row(const traffic_bench_config& cfg, const traffic_capture& cap, unsigned threads, traffic_row& row,
                    std::vector<frame_key>& frames)
{
  const auto info = tr::open_capture(cap.path);
  const tr::capture_reader reader(info);
  bb::rx_config rxc;
  rxc.sample_rate_sps = info.sample_rate_sps.value_or(p::SAMPLE_RATE_SPS);
  const auto t0 = steady::now();
  const auto located = locate_all(reader, rxc);
  row.locate_s = seconds_since(t0);
  const plain_liquid_chain chain(located);
  row.frames = located.size();
  row.data_symbols = chain.nof_symbols();
  row.payload_bytes = chain.payload_bytes();
  row.threads = threads;
  for (const auto& f : located) {
    frames.push_back({f.info.start, p::to_string(f.info.mod), f.info.nd, f.info.seq, f.info.symbols, f.info.truncated});
  }
  if (row.data_symbols == 0) {
    row.error = "no data symbol located: nothing to time";
    return;
  }
  std::vector<uint8_t> out(std::size_t(chain.payload_bytes()));
  std::vector<double> t;
  for (int rep = 0; rep < cfg.repeats; ++rep) {
    const auto t_run = steady::now();
    chain.run(reader, threads, out);
    t.push_back(seconds_since(t_run));
  }
  row.time = summarise(t);
}

/// The shape's data symbols as sent.
uint64_t symbols_sent(const traffic_shape& s) { return s.nof_frames * s.nd; }

void check_config(const traffic_bench_config& cfg)
{
  if (cfg.shapes.empty() || cfg.types.empty()) {
    throw std::invalid_argument("no shape or no sample type to measure");
  }
  for (const auto& s : cfg.shapes) {
    if (!find_traffic_shape(s)) {
      throw std::invalid_argument("unknown shape '" + s + "' (long, packets, tiny or bursty)");
    }
  }
  if (cfg.repeats < 1) {
    throw std::invalid_argument("repeats must be at least 1");
  }
  if (!std::isfinite(cfg.scale) || cfg.scale <= 0.0) {
    throw std::invalid_argument("scale must be a positive number");
  }
  if (cfg.backends && cfg.backends->empty()) {
    throw std::invalid_argument("no backend to run");
  }
  if (cfg.links.empty()) {
    throw std::invalid_argument("no GPU link form for cf32 captures");
  }
}

} // namespace

const std::vector<traffic_shape>& traffic_shapes()
{
  using m = p::modulation;
  static const std::vector<traffic_shape> shapes{
      // Long frames: a few bulk transfers, the data symbols' decode dominates.
      {"long", {m::qam16}, 16, 65536, 4, 3e5, true, 777},
      // Packets: many short frames of both modulations; the per-frame work dominates.
      {"packets", {m::qpsk, m::qam16}, 20000, 52, 4, 3e5, true, 777},
      // Tiny frames: almost only preambles and headers.
      {"tiny", {m::qam16}, 100000, 4, 1, 0.0, false, 777},
      // Bursts apart: most of the capture is noise between frames; the search dominates.
      {"bursty", {m::qam16}, 2000, 200, 1, 0.0, false, 200000},
      // Coded (profile 2): the long frames at MCS 2, and the packets alternating MCS 1
      // and 2, so that each sits beside its uncoded shape.
      {"long-mcs2", {m::qam16}, 16, 65536, 4, 3e5, true, 777, {2}},
      {"packets-mcs12", {m::qpsk, m::qam16}, 20000, 52, 4, 3e5, true, 777, {1, 2}},
  };
  return shapes;
}

std::optional<traffic_shape> find_traffic_shape(std::string_view name)
{
  for (const auto& s : traffic_shapes()) {
    if (s.name == name) {
      return s;
    }
  }
  return std::nullopt;
}

std::string describe(const traffic_shape& s)
{
  std::string d = std::to_string(s.nof_frames) + " x " + std::to_string(s.nd) + " ";
  for (std::size_t i = 0; i < s.mods.size(); ++i) {
    if (i > 0) {
      d += ',';
    }
    d += p::to_string(s.mods[i]);
  }
  if (s.taps > 1) {
    d += ", " + std::to_string(s.taps) + " taps";
  }
  if (s.cfo_Hz != 0.0) {
    d += ", CFO " + format_value("%g", s.cfo_Hz / 1e3) + " kHz";
  }
  if (s.random_phase) {
    d += ", random phase";
  }
  d += ", gap " + std::to_string(s.gap_samples);
  if (!s.mcs.empty()) {
    d += ", MCS";
    for (std::size_t i = 0; i < s.mcs.size(); ++i) {
      d += (i > 0 ? "," : " ") + std::to_string(s.mcs[i]);
    }
  }
  return d;
}

std::string_view to_string(traffic_backend b)
{
  switch (b) {
  case traffic_backend::gpu: return "gpu";
  case traffic_backend::cpu: return "cpu";
  case traffic_backend::liquid: return "liquid";
  }
  return "?";
}

std::optional<traffic_backend> parse_traffic_backend(std::string_view s)
{
  for (auto b : {traffic_backend::gpu, traffic_backend::cpu, traffic_backend::liquid}) {
    if (s == to_string(b)) {
      return b;
    }
  }
  return std::nullopt;
}

uint64_t traffic_bench_result::nof_problems() const
{
  uint64_t n = 0;
  for (const auto& r : rows) {
    n += !r.error.empty() || (r.frames_match_cpu && !*r.frames_match_cpu) ? 1 : 0;
  }
  for (const auto& a : agreement) {
    n += (a.same_frames && a.same_payload) || a.packed() ? 0 : 1;
  }
  return n;
}

traffic_bench_result run_traffic_bench(const traffic_bench_config& cfg, const std::function<void(std::string_view)>& progress)
{
  check_config(cfg);
  traffic_bench_result r;
  r.env = collect_env(cfg.commit, cfg.command);
  r.dir = cfg.dir.string();
  r.payload_dir = cfg.payload_dir.string();
  r.rx = cfg.rx.string();
  r.repeats = cfg.repeats;
  r.scale = cfg.scale;
  r.links = cfg.links;
  if (cfg.backends) {
    r.backends = *cfg.backends;
  } else {
    if (r.env.gpu) {
      r.backends.push_back(traffic_backend::gpu);
    }
    r.backends.push_back(traffic_backend::cpu);
    r.backends.push_back(traffic_backend::liquid);
  }
  const bool processes = std::any_of(r.backends.begin(), r.backends.end(), [](auto b) { return b != traffic_backend::liquid; });
  if (processes && cfg.rx.empty()) {
    throw std::runtime_error("no whd-rx found beside whd-bench; give its path with --rx");
  }
  if (processes && ::access(cfg.rx.c_str(), X_OK) != 0) {
    throw std::runtime_error("no executable whd-rx at '" + cfg.rx.string() + "'; give its path with --rx");
  }
  std::filesystem::create_directories(cfg.dir);
  std::filesystem::create_directories(cfg.payload_dir);

  // ---- the captures: the missing ones made in parallel, each on its own thread
  std::vector<traffic_shape> made_shapes;
  std::vector<datatype> made_types;
  for (const auto& name : cfg.shapes) {
    const auto s = scaled(*find_traffic_shape(name), cfg.scale);
    for (const auto t : cfg.types) {
      const auto base = capture_base(cfg.dir, s.name, cfg.scale, t);
      traffic_capture c;
      c.shape = s.name;
      c.datatype = std::string(to_string(t));
      c.path = base.string() + ".sigmf-meta";
      c.description = describe(s);
      c.frames_sent = s.nof_frames;
      c.data_symbols_sent = symbols_sent(s);
      c.made = !std::filesystem::exists(c.path);
      if (c.made) {
        made_shapes.push_back(s);
        made_types.push_back(t);
        progress("making " + c.path + " (" + c.description + ")");
      }
      r.captures.push_back(c);
    }
  }
  {
    std::vector<std::exception_ptr> errors(made_shapes.size());
    std::vector<double> seconds(made_shapes.size());
    {
      std::vector<std::jthread> makers;
      for (std::size_t i = 0; i < made_shapes.size(); ++i) {
        makers.emplace_back([&, i] {
          try {
            const auto t0 = steady::now();
            make_capture(made_shapes[i], made_types[i], capture_base(cfg.dir, made_shapes[i].name, cfg.scale, made_types[i]));
            seconds[i] = seconds_since(t0);
          } catch (...) {
            errors[i] = std::current_exception();
          }
        });
      }
    }
    for (const auto& e : errors) {
      if (e) {
        std::rethrow_exception(e);
      }
    }
    std::size_t i = 0;
    for (auto& c : r.captures) {
      if (c.made) {
        c.make_s = seconds[i++];
      }
    }
  }
  for (auto& c : r.captures) {
    const auto info = tr::open_capture(c.path);
    c.samples = info.nof_samples;
    c.air_s = double(info.nof_samples) / info.sample_rate_sps.value_or(p::SAMPLE_RATE_SPS);
    if (c.made) {
      progress("made " + c.path + " in " + format_value("%.2f", c.make_s) + " s");
    }
  }

  // ---- each capture through each backend (the GPU once per link for cf32)
  for (const auto& cap : r.captures) {
    struct subject {
      traffic_backend backend;
      std::string link;
      std::string name() const { return std::string(to_string(backend)) + (link.empty() ? "" : "-" + link); }
    };
    std::vector<subject> subjects;
    for (const auto b : r.backends) {
      if (b != traffic_backend::gpu) {
        subjects.push_back({b, {}});
      } else if (cap.datatype != to_string(datatype::cf32_le)) {
        subjects.push_back({b, "stored"});
      } else {
        for (const auto l : cfg.links) {
          subjects.push_back({b, std::string(transport::to_string(l))});
        }
      }
    }
    std::map<std::string, std::vector<frame_key>> frames;
    std::map<std::string, std::unique_ptr<run_files>> files;
    const std::string truth = cap.path.substr(0, cap.path.size() - std::string(".sigmf-meta").size()) + ".truth";
    const std::size_t first_row = r.rows.size();
    for (const auto& sub : subjects) {
      traffic_row row;
      row.shape = cap.shape;
      row.datatype = cap.datatype;
      row.backend = sub.backend;
      row.link = sub.link;
      const std::string name = sub.name();
      if (sub.backend == traffic_backend::liquid && find_traffic_shape(cap.shape) && !find_traffic_shape(cap.shape)->mcs.empty()) {
        row.error = "the plain liquid-dsp chain decodes no coded frame";
      } else if (sub.backend == traffic_backend::liquid) {
        run_liquid_row(cfg, cap, r.env.host_threads, row, frames[name]);
      } else {
        files[name] = std::make_unique<run_files>(cfg.payload_dir, name);
        run_process_row(cfg, cap, truth, *files[name], row, frames[name]);
      }
      const std::string what = cap.shape + " " + cap.datatype + " " + name;
      if (row.error.empty()) {
        row.x_realtime_air = cap.air_s / row.time.median_s;
        row.ns_per_data_symbol = row.data_symbols ? row.time.median_s * 1e9 / double(row.data_symbols) : 0.0;
        progress(what + ": " + format_value("%.3f", row.time.median_s) + " s, " + format_value("%.3f", row.x_realtime_air) +
                 "x real time (air), " + format_value("%.1f", row.ns_per_data_symbol) + " ns/data symbol");
      } else {
        progress(what + " FAILED: " + row.error);
      }
      r.rows.push_back(std::move(row));
    }
    // Rows of this capture that ran: each GPU row against the CPU, the plain chain's frames against the CPU's.
    const auto ran = [&](const subject& sub) {
      return std::any_of(r.rows.begin() + std::ptrdiff_t(first_row), r.rows.end(), [&](const traffic_row& x) {
        return x.backend == sub.backend && x.link == sub.link && x.error.empty();
      });
    };
    const subject cpu{traffic_backend::cpu, {}};
    if (!ran(cpu)) {
      continue;
    }
    const auto& fc = frames[cpu.name()];
    for (auto it = r.rows.begin() + std::ptrdiff_t(first_row); it != r.rows.end(); ++it) {
      if (it->backend == traffic_backend::liquid) {
        it->frames_match_cpu = frames[subject{traffic_backend::liquid, {}}.name()] == fc;
      }
    }
    for (const auto& sub : subjects) {
      if (sub.backend != traffic_backend::gpu || !ran(sub)) {
        continue;
      }
      const auto& fg = frames[sub.name()];
      traffic_agreement a;
      a.shape = cap.shape;
      a.datatype = cap.datatype;
      a.link = sub.link;
      a.frames_gpu = fg.size();
      a.frames_cpu = fc.size();
      a.same_frames = fg == fc;
      const std::size_t n = std::min(fg.size(), fc.size());
      a.differing_frames = uint64_t(std::max(fg.size(), fc.size()) - n);
      for (std::size_t i = 0; i < n; ++i) {
        a.differing_frames += fg[i] == fc[i] ? 0 : 1;
      }
      a.same_payload = same_bytes(files[sub.name()]->payload, files[cpu.name()]->payload);
      a.differing_bits = a.same_payload ? 0 : truth_bit_errors(files[sub.name()]->payload, files[cpu.name()]->payload);
      progress(cap.shape + " " + cap.datatype + " (" + sub.link + "): GPU = CPU frames " + (a.same_frames ? "yes" : "NO") + ", payload " +
               (a.same_payload ? "yes" : "NO, " + std::to_string(a.differing_bits) + " bits differ"));
      r.agreement.push_back(a);
    }
  }
  return r;
}

std::string to_json(const traffic_bench_result& r)
{
  json j = to_json(r.env);
  j["benchmark"] = "traffic";
  j["dir"] = r.dir;
  j["payload_dir"] = r.payload_dir;
  j["rx"] = r.rx;
  j["repeats"] = r.repeats;
  j["scale"] = r.scale;
  j["snr_db"] = TRAFFIC_SNR_DB;
  j["seed"] = TRAFFIC_SEED;
  j["regions"] = {
      {"gpu", "the whole whd-rx process (--backend gpu -q -o PAYLOAD --report FILE), timed from outside: spawn to exit"},
      {"cpu", "the whole whd-rx process (--backend cpu -q -o PAYLOAD --report FILE), timed from outside: spawn to exit"},
      {"liquid", "located frames only: the plain liquid-dsp chain in-process over the frames located beforehand (no frame search, "
                 "no process, payload to memory)"},
      {"x_realtime_air", "capture samples / sample rate over the median time"},
      {"ns_per_data_symbol", "the median time over the data symbols decoded"},
      {"report", "whd-rx's own timing of the median run: setup_s process start to the first samples handed to the backend, "
                 "decode_s the rest, wall_s their sum"}};
  j["backends"] = json::array();
  for (const auto b : r.backends) {
    j["backends"].push_back(to_string(b));
  }
  j["links"] = json::array();
  for (const auto l : r.links) {
    j["links"].push_back(transport::to_string(l));
  }
  j["captures"] = json::array();
  for (const auto& c : r.captures) {
    j["captures"].push_back({{"shape", c.shape},
                             {"datatype", c.datatype},
                             {"path", c.path},
                             {"description", c.description},
                             {"frames_sent", c.frames_sent},
                             {"data_symbols_sent", c.data_symbols_sent},
                             {"samples", c.samples},
                             {"air_s", c.air_s},
                             {"made", c.made},
                             {"make_s", c.made ? json(c.make_s) : json(nullptr)}});
  }
  j["rows"] = json::array();
  for (const auto& row : r.rows) {
    json o{{"shape", row.shape}, {"datatype", row.datatype}, {"backend", to_string(row.backend)},
           {"region", row.backend == traffic_backend::liquid ? "located frames only" : "whole process"}};
    if (!row.link.empty()) {
      o["link"] = row.link;
    }
    if (!row.error.empty()) {
      o["error"] = row.error;
      j["rows"].push_back(o);
      continue;
    }
    o["time_s"] = {{"median", row.time.median_s}, {"min", row.time.min_s}, {"max", row.time.max_s}, {"repeats", row.time.repeats}};
    o["x_realtime_air"] = row.x_realtime_air;
    o["ns_per_data_symbol"] = row.ns_per_data_symbol;
    o["frames"] = row.frames;
    o["data_symbols"] = row.data_symbols;
    o["payload_bytes"] = row.payload_bytes;
    if (row.backend == traffic_backend::liquid) {
      o["threads"] = row.threads;
      o["locate_s"] = row.locate_s;
      o["frames_match_cpu"] = row.frames_match_cpu ? json(*row.frames_match_cpu) : json(nullptr);
    } else {
      o["header_failures"] = row.header_failures;
      o["report"] = {{"setup_s", row.report_setup_s ? json(*row.report_setup_s) : json(nullptr)},
                     {"decode_s", row.report_decode_s ? json(*row.report_decode_s) : json(nullptr)},
                     {"wall_s", row.report_wall_s ? json(*row.report_wall_s) : json(nullptr)}};
      o["truth_bit_errors"] = row.truth_bit_errors ? json(*row.truth_bit_errors) : json(nullptr);
    }
    j["rows"].push_back(o);
  }
  j["gpu_vs_cpu"] = json::array();
  for (const auto& a : r.agreement) {
    j["gpu_vs_cpu"].push_back({{"shape", a.shape},
                               {"datatype", a.datatype},
                               {"link", a.link},
                               {"differing_bits", a.differing_bits},
                               {"frames_gpu", a.frames_gpu},
                               {"frames_cpu", a.frames_cpu},
                               {"differing_frames", a.differing_frames},
                               {"same_frames", a.same_frames},
                               {"same_payload", a.same_payload}});
  }
  j["problems"] = r.nof_problems();
  return j.dump(2);
}

std::string to_markdown(const traffic_bench_result& r)
{
  std::ostringstream o;
  char buf[512];
  o << "# whd-bench traffic\n\n" << to_markdown(r.env);
  o << "- captures in " << r.dir << " (SNR " << TRAFFIC_SNR_DB << " dB, seed " << TRAFFIC_SEED << ", frame counts x" << r.scale
    << "); whd-rx " << r.rx << ", payload to " << r.payload_dir << "; median of " << r.repeats << " run(s)\n\n";
  o << "Regions. **gpu, cpu**: the whole whd-rx process (`whd-rx CAPTURE --backend B -q -o PAYLOAD --report FILE`),\n"
       "timed from outside, spawn to exit; setup and decode are the median run's report's own split (process\n"
       "start to the first samples handed to the backend; the rest). **liquid**: located frames only: the plain liquid-dsp\n"
       "chain (guard skip + fft_execute + modemcf_demodulate per data tone; no CFO, channel or pilots) in this\n"
       "process over the frames located beforehand (not timed): no frame search, no process, payload to memory.\n"
       "x real time (air) = capture samples / 2.538 GS/s over the time; ns / data symbol = the time over the\n"
       "data symbols decoded.\n\n";
  o << "| shape | type | capture | air [ms] | made |\n|---|---|---|---:|---|\n";
  for (const auto& c : r.captures) {
    std::snprintf(buf, sizeof buf, "| %s | %s | %s | %.2f | %s |\n", c.shape.c_str(), c.datatype.c_str(), c.description.c_str(),
                  c.air_s * 1e3, c.made ? format_value("%.1f s", c.make_s).c_str() : "reused");
    o << buf;
  }
  o << "\n| shape | type | backend | region | frames | data symbols | time [s] | min..max [s] | x real time (air) | ns / data "
       "symbol | report: setup / decode [s] | payload = truth |\n|---|---|---|---|---:|---:|---:|---|---:|---:|---|---|\n";
  for (const auto& row : r.rows) {
    const std::string b = std::string(to_string(row.backend)) + (row.link.empty() ? "" : " (" + row.link + ")");
    const bool liquid = row.backend == traffic_backend::liquid;
    if (!row.error.empty()) {
      o << "| " << row.shape << " | " << row.datatype << " | " << b << " | " << (liquid ? "located frames" : "whole process")
        << " | failed | | | | | | | |\n";
      continue;
    }
    std::string split = "-", truth = "-";
    if (row.report_setup_s) {
      split = format_value("%.3f", *row.report_setup_s) + " / " + format_value("%.3f", *row.report_decode_s);
    }
    if (row.truth_bit_errors) {
      truth = *row.truth_bit_errors == 0 ? "yes" : std::to_string(*row.truth_bit_errors) + " bits differ";
    }
    const std::string region = liquid ? "located frames, " + std::to_string(row.threads) + " threads" : "whole process";
    if (liquid) {
      truth = "(not the payload)";
    }
    std::snprintf(buf, sizeof buf, "| %s | %s | %s | %s | %llu | %llu | %.4f | %.4f..%.4f | %.3g | %.1f | %s | %s |\n",
                  row.shape.c_str(), row.datatype.c_str(), b.c_str(), region.c_str(),
                  static_cast<unsigned long long>(row.frames), static_cast<unsigned long long>(row.data_symbols), row.time.median_s,
                  row.time.min_s, row.time.max_s, row.x_realtime_air, row.ns_per_data_symbol, split.c_str(), truth.c_str());
    o << buf;
  }
  if (!r.agreement.empty()) {
    o << "\nGPU = CPU (the CPU backend is the reference; frames: start, mod, nd, seq, symbols, truncated; a packed link,\n"
         "half or int8, may move bits near a decision):\n\n"
         "| shape | type | GPU link | GPU frames | CPU frames | differing frames | same frames | same payload |\n"
         "|---|---|---|---:|---:|---:|---|---|\n";
    for (const auto& a : r.agreement) {
      const std::string payload = a.same_payload ? "yes" : (a.packed() ? "" : "**no**, ") + std::to_string(a.differing_bits) + " bits differ";
      o << "| " << a.shape << " | " << a.datatype << " | " << a.link << " | " << a.frames_gpu << " | " << a.frames_cpu << " | "
        << a.differing_frames << " | " << (a.same_frames ? "yes" : (a.packed() ? "no" : "**no**")) << " | " << payload << " |\n";
    }
  }
  bool notes = false;
  for (const auto& row : r.rows) {
    if (!row.error.empty() || (row.frames_match_cpu && !*row.frames_match_cpu)) {
      o << (notes ? "" : "\n") << "- " << row.shape << " " << row.datatype << " " << to_string(row.backend) << (row.link.empty() ? "" : " " + row.link) << ": "
        << (row.error.empty() ? "its located frames differ from the CPU backend's" : "failed: " + row.error) << "\n";
      notes = true;
    }
  }
  return o.str();
}

} // namespace whd::rx_bench
