// whd-tx: write WHD-HRP captures (profiles 1 and 2) for tests and users.
// Option parsing, wiring and logging only; the transmitter lives in baseband/.
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/fec/coded_frame.hpp>
#include <whd/transport/capture.hpp>

#include <boost/program_options.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <exception>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace po = boost::program_options;
namespace bb = whd::baseband;
namespace wp = whd::profile;

namespace {

constexpr int EXIT_RUNTIME = 1; // a file could not be read or written
constexpr int EXIT_USAGE = 2;   // the command line is wrong

/// The command line, as typed (numbers that must not be negative stay text until
/// validated: Program_options would wrap "-1" into a huge unsigned).
struct options {
  std::string output;
  std::string datatype = "cf32_le";
  bool raw = false;
  std::string mods = "qpsk";
  std::string mcs;
  std::string frames = "2";
  std::string nds = "8";
  std::string payload;
  std::string seed = "1";
  std::optional<double> snr_dB;
  double cfo_Hz = 0.0;
  std::string taps = "1";
  double tap_decay_dB = 3.0;
  double gain = 1.0;
  std::optional<double> phase_rad;
  bool random_phase = false;
  std::string lead = "1000";
  std::string gap = "777";
  std::string tail;
  std::string corrupt;
  std::string cut = "0";
  std::string first_seq = "0";
  double sample_rate_sps = wp::SAMPLE_RATE_SPS;
  std::string description;
  std::string threads = "0";
  bool quiet = false;
  bool verbose = false;
};

const char* const DESCRIPTION = R"(whd-tx - write WirelessHD HRP captures (WHD-HRP profiles 1 and 2)

Usage: whd-tx -o BASE [options]

Writes frames exactly as the profile defines them (two preamble symbols, a
header with CRC-16, pilots, QPSK or 16-QAM data; 576 samples per symbol at
2.538 GS/s), uncoded (profile 1) or coded with --mcs (profile 2: RS(224,216),
eight K=7 convolutional encoders, puncturing, interleaving, whitening), with
optional impairments, and beside the capture the sidecars of
../shared/vectors/:
  BASE.sigmf-data + BASE.sigmf-meta   the samples (or BASE.cf32/.ci16/.ci8 with --raw)
  BASE.truth        payload bytes of every listed frame with an intact header, in order
                    (a coded frame's L information bytes)
  BASE.frames.json  one object per listed frame: start, nd, mod, seq, header_ok
                    (coded frames add mcs and payload_bytes, L)

Layout in samples: lead, frame 0, gap, frame 1, ..., last frame, tail; then the
last --cut samples are dropped. A frame is listed when its preamble and header
are whole in the file; a frame cut later keeps its whole payload in BASE.truth.

Impairments, applied in this order: multipath channel, carrier frequency offset
(phase continuous from sample 0), gain and phase, then noise over the whole
capture. SNR is the mean signal power over the frames (after channel and gain)
against the noise power over the whole band, as in ../shared/vectors/README.md;
with --frames 0 the reference is the power frames would have. Every random draw
is seeded from --seed; the derived seeds are logged. Frames are made on --threads
threads, each frame's payload and each sample's noise from a stream of its own,
so the files do not depend on the number of threads.

Integer outputs (ci16_le, ci8) are scaled so that the standard deviation of I
(and of Q) over the frames, signal plus noise, sits at full scale / 7: nothing
clips in practice; clipped samples would be counted and reported.

Exit status: 0 written, 1 a file could not be read or written, 2 the command
line is wrong.

Options)";

std::optional<uint64_t> parse_u64(const std::string& s)
{
  uint64_t v = 0;
  const auto* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  if (s.empty() || r.ec != std::errc{} || r.ptr != end) {
    return std::nullopt;
  }
  return v;
}

std::vector<std::string> split_list(const std::string& s)
{
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, ',')) {
    out.push_back(item);
  }
  return out;
}

/// Parsed and validated options, ready to become the generator's configuration.
struct validated {
  bb::capture_config capture;
  bb::output_config output;
};

/// Checks the options; on a problem returns it as a message saying what to do.
std::optional<validated> validate(const options& o, std::string& problem)
{
  validated v;
  auto& c = v.capture;
  auto& imp = c.impairments;
  auto count = [&problem](const std::string& text, const char* name, uint64_t& out) {
    if (!problem.empty()) {
      return;
    }
    if (const auto n = parse_u64(text)) {
      out = *n;
    } else {
      problem = std::string(name) + " takes a whole number >= 0, not '" + text + "'";
    }
  };
  auto finite = [&problem](double x, const char* name) {
    if (problem.empty() && !std::isfinite(x)) {
      problem = std::string(name) + " must be a finite number";
    }
  };

  if (o.output.empty()) {
    problem = "no output given: say where to write with -o BASE (BASE without extension)";
    return std::nullopt;
  }
  v.output.base = o.output;
  v.output.raw = o.raw;
  if (const auto t = whd::parse_datatype(o.datatype)) {
    v.output.type = *t;
  } else {
    problem = "--datatype must be cf32_le, ci16_le or ci8, not '" + o.datatype + "'";
    return std::nullopt;
  }
  c.mods.clear();
  for (const auto& m : split_list(o.mods)) {
    if (const auto mod = wp::parse_modulation(m)) {
      c.mods.push_back(*mod);
    } else {
      problem = "--mod takes qpsk, qam16 or a comma-separated list of them (cycled over the frames), not '" + o.mods +
                "'";
      return std::nullopt;
    }
  }
  if (c.mods.empty()) {
    problem = "--mod needs at least one modulation";
    return std::nullopt;
  }
  c.mcs.clear();
  for (const auto& m : split_list(o.mcs)) {
    if (m == "none") {
      c.mcs.push_back(wp::NO_MCS);
    } else if (const auto n = whd::fec::parse_mcs(m)) {
      c.mcs.push_back(*n);
    } else {
      problem = "--mcs takes 0, 1, 2, 7 or none (uncoded), or a comma-separated list of them cycled over the frames, not '" +
                o.mcs + "'";
      return std::nullopt;
    }
  }
  c.nds.clear();
  for (const auto& s : split_list(o.nds)) {
    const auto n = parse_u64(s);
    if (!n || *n < 1 || *n > wp::MAX_ND) {
      problem = "--nd takes numbers of data symbols 1.." + std::to_string(wp::MAX_ND) +
                " (or a comma-separated list, cycled over the frames), not '" + o.nds + "'";
      return std::nullopt;
    }
    c.nds.push_back(static_cast<uint32_t>(*n));
  }
  if (c.nds.empty()) {
    problem = "--nd needs at least one number";
    return std::nullopt;
  }
  count(o.frames, "--frames", c.nof_frames);
  count(o.seed, "--seed", c.seed);
  count(o.lead, "--lead", c.lead_samples);
  count(o.gap, "--gap", c.gap_samples);
  if (!o.tail.empty()) {
    uint64_t t = 0;
    count(o.tail, "--tail", t);
    c.tail_samples = t;
  }
  count(o.cut, "--cut", c.cut_samples);
  uint64_t threads = 0;
  count(o.threads, "--threads", threads);
  if (problem.empty() && threads > 4096) {
    problem = "--threads must be 0..4096 (0: all hardware threads)";
  }
  c.nof_threads = static_cast<unsigned>(std::min<uint64_t>(threads, 4096));
  uint64_t first_seq = 0;
  count(o.first_seq, "--first-seq", first_seq);
  if (problem.empty() && first_seq > 255) {
    problem = "--first-seq must be 0..255";
  }
  c.first_seq = static_cast<uint8_t>(first_seq);
  uint64_t taps = 1;
  count(o.taps, "--taps", taps);
  if (problem.empty() && (taps < 1 || taps > static_cast<uint64_t>(wp::G))) {
    problem = "--taps must be 1.." + std::to_string(wp::G) + " (the delay spread must stay inside the guard)";
  }
  imp.nof_taps = static_cast<int>(std::min<uint64_t>(taps, static_cast<uint64_t>(wp::G)));
  if (!o.corrupt.empty()) {
    for (const auto& s : split_list(o.corrupt)) {
      uint64_t i = 0;
      count(s, "--corrupt-header (frame numbers from 0)", i);
      if (problem.empty() && i >= c.nof_frames) {
        problem = "--corrupt-header names frame " + s + " but there are " + std::to_string(c.nof_frames) +
                  " frames, numbered from 0";
      }
      c.corrupt_header_frames.push_back(i);
    }
  }
  if (!problem.empty()) {
    return std::nullopt;
  }
  if (o.snr_dB) {
    finite(*o.snr_dB, "--snr-db");
    imp.snr_dB = o.snr_dB;
  }
  finite(o.cfo_Hz, "--cfo-hz");
  imp.cfo_Hz = o.cfo_Hz;
  finite(o.tap_decay_dB, "--tap-decay-db");
  if (problem.empty() && o.tap_decay_dB < 0.0) {
    problem = "--tap-decay-db must be >= 0";
  }
  imp.tap_decay_dB = o.tap_decay_dB;
  finite(o.gain, "--gain");
  if (problem.empty() && !(o.gain > 0.0)) {
    problem = "--gain must be > 0 (a linear amplitude factor)";
  }
  imp.gain = o.gain;
  if (o.phase_rad && o.random_phase) {
    problem = "give either --phase-rad or --random-phase, not both";
  } else if (o.phase_rad) {
    finite(*o.phase_rad, "--phase-rad");
    imp.phase_rad = *o.phase_rad;
  }
  imp.random_phase = o.random_phase;
  finite(o.sample_rate_sps, "--sample-rate");
  if (problem.empty() && !(o.sample_rate_sps > 0.0)) {
    problem = "--sample-rate must be > 0";
  }
  imp.sample_rate_sps = o.sample_rate_sps;
  v.output.sample_rate_sps = o.sample_rate_sps;
  c.payload_path = o.payload;
  if (!problem.empty()) {
    return std::nullopt;
  }
  return v;
}

std::optional<options> parse(int argc, char** argv, int& exit_code)
{
  options o;
  po::options_description desc(DESCRIPTION);
  // clang-format off
  desc.add_options()
    ("help,h", "show this help and exit")
    ("output,o", po::value(&o.output)->value_name("BASE"), "where to write: BASE without extension (required)")
    ("datatype,d", po::value(&o.datatype)->value_name("cf32_le|ci16_le|ci8")->default_value("cf32_le"), "sample format on disk (ci16_le and ci8 are scaled automatically, see above)")
    ("raw", po::bool_switch(&o.raw), "write raw interleaved I/Q, BASE.cf32, BASE.ci16 or BASE.ci8, instead of a SigMF pair")
    ("mod,m", po::value(&o.mods)->value_name("LIST")->default_value("qpsk"), "modulation of the data symbols: qpsk, qam16, or a comma-separated list cycled over the frames (qpsk,qam16 alternates)")
    ("mcs", po::value(&o.mcs)->value_name("LIST"), "coded frames (profile 2): MCS 0 (QPSK 1/3), 1 (QPSK 2/3), 2 (16-QAM 2/3) or 7 (16-QAM 4/5), or 'none' for an uncoded frame (its modulation from --mod), or a comma-separated list cycled over the frames (2,none mixes coded and uncoded). A coded frame carries exactly L(MCS, Nd) information bytes")
    ("frames,n", po::value(&o.frames)->value_name("N")->default_value("2"), "frames to transmit (0: no frame, e.g. noise only)")
    ("nd", po::value(&o.nds)->value_name("LIST")->default_value("8"), "data symbols per frame, 1..1048575, or a comma-separated list cycled over the frames")
    ("payload", po::value(&o.payload)->value_name("FILE"), "take the payload bytes from FILE, in order, starting over at its end (default: random from the seed)")
    ("seed", po::value(&o.seed)->value_name("N")->default_value("1"), "master seed of the payload, channel, phase and noise (each its own stream)")
    ("snr-db", po::value<double>()->value_name("DB"), "add white Gaussian noise for this SNR [dB] (default: no noise)")
    ("cfo-hz", po::value(&o.cfo_Hz)->value_name("HZ")->default_value(0.0), "carrier frequency offset [Hz]; the profile's estimator is unambiguous below fs/1152 = 2.2 MHz")
    ("taps", po::value(&o.taps)->value_name("N")->default_value("1"), "multipath taps at delays 0..N-1 samples, complex Gaussian, unit total energy (1: no multipath; at most 64)")
    ("tap-decay-db", po::value(&o.tap_decay_dB)->value_name("DB")->default_value(3.0), "mean power of tap l is 10^(-DB l / 10) before normalisation [dB per tap]")
    ("gain", po::value(&o.gain)->value_name("G")->default_value(1.0), "amplitude gain (linear; matters for cf32 only, integer outputs are rescaled)")
    ("phase-rad", po::value<double>()->value_name("RAD"), "carrier phase [rad] (default 0)")
    ("random-phase", po::bool_switch(&o.random_phase), "draw the carrier phase uniformly in [0, 2 pi) from the seed")
    ("lead", po::value(&o.lead)->value_name("SAMPLES")->default_value("1000"), "samples before the first frame (silence, or noise with --snr-db)")
    ("gap", po::value(&o.gap)->value_name("SAMPLES")->default_value("777"), "samples between frames")
    ("tail", po::value(&o.tail)->value_name("SAMPLES"), "samples after the last frame (default: --gap)")
    ("corrupt-header", po::value(&o.corrupt)->value_name("LIST"), "frames (comma-separated, numbered from 0) sent with the header CRC inverted: receivers reject them, BASE.truth leaves their payload out, frames.json says header_ok false")
    ("cut", po::value(&o.cut)->value_name("SAMPLES")->default_value("0"), "drop the last SAMPLES samples of the capture (cuts the last frame off)")
    ("first-seq", po::value(&o.first_seq)->value_name("N")->default_value("0"), "sequence number of the first frame, 0..255; then +1 per frame, wrapping at 256")
    ("sample-rate", po::value(&o.sample_rate_sps)->value_name("SPS")->default_value(wp::SAMPLE_RATE_SPS, "2.538e9"), "sample rate [samples/s]: recorded in the SigMF meta and used for --cfo-hz")
    ("description", po::value(&o.description)->value_name("TEXT"), "SigMF core:description (default: the generator's settings)")
    ("threads", po::value(&o.threads)->value_name("N")->default_value("0"), "threads that make the frames (0: all hardware threads); the files are the same, byte for byte, for any N")
    ("quiet,q", po::bool_switch(&o.quiet), "only warnings and errors on standard error")
    ("verbose,v", po::bool_switch(&o.verbose), "more log detail (debug)");
  // clang-format on
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "whd-tx: " << e.what() << "\nTry 'whd-tx --help'.\n";
    exit_code = EXIT_USAGE;
    return std::nullopt;
  }
  if (vm.count("help")) {
    std::cout << desc << "\nExamples:\n"
              << "  whd-tx -o basic --frames 2 --nd 8 --mod qpsk\n"
              << "  whd-tx -o impaired -d ci8 --mod qpsk,qam16 --frames 3 --nd 20 --snr-db 28 \\\n"
              << "         --cfo-hz 700e3 --taps 4 --gain 0.3 --random-phase --seed 7\n"
              << "  whd-tx -o cut -d ci16_le --mod qam16 --nd 10 --snr-db 30 --cut 3000\n"
              << "  whd-tx -o coded -d ci8 --mcs 0,1,2,7 --frames 8 --nd 12 --snr-db 20\n"
              << "  whd-tx -o noise -d ci8 --frames 0 --lead 200000 --tail 0 --snr-db 20\n";
    exit_code = 0;
    return std::nullopt;
  }
  if (vm.count("snr-db")) {
    o.snr_dB = vm["snr-db"].as<double>();
  }
  if (vm.count("phase-rad")) {
    o.phase_rad = vm["phase-rad"].as<double>();
  }
  return o;
}

template <typename T>
std::string join(const std::vector<T>& items)
{
  std::ostringstream s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    s << (i ? "," : "") << items[i];
  }
  return s.str();
}

std::string describe(const bb::capture_config& c)
{
  std::ostringstream s;
  s << "whd-tx: " << c.nof_frames << " frames, mod ";
  for (std::size_t i = 0; i < c.mods.size(); ++i) {
    s << (i ? "," : "") << wp::to_string(c.mods[i]);
  }
  if (!c.mcs.empty()) {
    s << ", mcs ";
    for (std::size_t i = 0; i < c.mcs.size(); ++i) {
      s << (i ? "," : "") << (c.mcs[i] == wp::NO_MCS ? std::string("none") : std::to_string(c.mcs[i]));
    }
  }
  s << ", nd ";
  for (std::size_t i = 0; i < c.nds.size(); ++i) {
    s << (i ? "," : "") << c.nds[i];
  }
  s << ", seed " << c.seed;
  const auto& imp = c.impairments;
  if (imp.snr_dB) {
    s << ", SNR " << *imp.snr_dB << " dB";
  }
  if (imp.cfo_Hz != 0.0) {
    s << ", CFO " << imp.cfo_Hz << " Hz";
  }
  if (imp.nof_taps > 1) {
    s << ", " << imp.nof_taps << "-tap channel";
  }
  if (imp.gain != 1.0) {
    s << ", gain " << imp.gain;
  }
  if (imp.random_phase) {
    s << ", random phase";
  } else if (imp.phase_rad != 0.0) {
    s << ", phase " << imp.phase_rad << " rad";
  }
  if (!c.corrupt_header_frames.empty()) {
    s << ", corrupted headers";
  }
  if (c.cut_samples > 0) {
    s << ", cut " << c.cut_samples << " samples";
  }
  return s.str();
}

void log_configuration(spdlog::logger& log, const bb::capture_config& c, const bb::output_config& out,
                       const bb::capture_plan& plan)
{
  const auto& imp = c.impairments;
  log.info("output {} ({}{}), sample rate {} S/s, {} threads", out.base.string(), whd::to_string(out.type),
           out.raw ? ", raw" : ", SigMF", out.sample_rate_sps,
           c.nof_threads ? std::to_string(c.nof_threads) : "all " + std::to_string(std::thread::hardware_concurrency()));
  std::vector<std::string> mods;
  for (auto m : c.mods) {
    mods.emplace_back(wp::to_string(m));
  }
  log.info("frames {}, mod {}, nd {}, first seq {}, corrupted headers [{}], payload {}", c.nof_frames, join(mods),
           join(c.nds), c.first_seq, join(c.corrupt_header_frames),
           c.payload_path.empty() ? std::string("random") : c.payload_path.string());
  log.info("layout: lead {}, gap {}, tail {}, cut {} -> {} samples ({} listed frames{})", c.lead_samples,
           c.gap_samples, c.tail_samples.value_or(c.gap_samples), c.cut_samples, plan.nof_samples,
           plan.frames.size(),
           plan.nof_frames_dropped ? ", " + std::to_string(plan.nof_frames_dropped) + " cut before their header ended"
                                   : std::string());
  log.info("seed {} -> payload {:#x}, channel {:#x}, phase {:#x}, noise {:#x}", c.seed, plan.seeds.payload,
           plan.seeds.channel, plan.seeds.phase, plan.seeds.noise);
  std::string taps;
  for (auto t : plan.taps) {
    taps += fmt::format("{}({:.4f}{:+.4f}j)", taps.empty() ? "" : " ", t.real(), t.imag());
  }
  log.info("impairments: SNR {}, CFO {} Hz, taps {} (decay {} dB/tap): {}; gain {} phase {:.6f} rad{}",
           imp.snr_dB ? fmt::format("{} dB", *imp.snr_dB) : std::string("none (noiseless)"), imp.cfo_Hz,
           imp.nof_taps, imp.tap_decay_dB, taps, std::abs(plan.complex_gain), std::arg(plan.complex_gain),
           imp.random_phase ? " (random)" : "");
  log.info("signal power over the frames {:.6g}, noise power {:.6g}, integer scale {:.6g}", plan.signal_power,
           plan.noise_power, bb::output_scale(out.type, plan));
}

} // namespace

int main(int argc, char** argv)
{
  int exit_code = 0;
  const auto opts = parse(argc, argv, exit_code);
  if (!opts) {
    return exit_code;
  }
  auto log = spdlog::stderr_color_mt("whd-tx");
  log->set_level(opts->quiet ? spdlog::level::warn : opts->verbose ? spdlog::level::debug : spdlog::level::info);
  log->set_pattern("%^[%l]%$ %v");

  std::string problem;
  auto v = validate(*opts, problem);
  bb::capture_plan plan;
  if (v) {
    try {
      plan = bb::plan_capture(v->capture);
    } catch (const std::invalid_argument& e) {
      problem = e.what();
    }
  }
  if (!problem.empty()) {
    std::cerr << "whd-tx: " << problem << "\nTry 'whd-tx --help'.\n";
    return EXIT_USAGE;
  }
  auto& cfg = v->capture;
  auto& out = v->output;
  out.description = opts->description.empty() ? describe(cfg) : opts->description;

  log_configuration(*log, cfg, out, plan);
  const double max_cfo = out.sample_rate_sps / (2.0 * wp::SYMBOL_LEN);
  if (std::abs(cfg.impairments.cfo_Hz) >= max_cfo) {
    log->warn("|CFO| {} Hz is not below fs/1152 = {:.0f} Hz: a receiver of the profile cannot estimate it "
              "unambiguously",
              cfg.impairments.cfo_Hz, max_cfo);
  }
  if (plan.nof_frames_dropped > 0) {
    log->warn("{} frame(s) cut off before the end of their header: not listed in frames.json nor in the truth",
              plan.nof_frames_dropped);
  }

  try {
    const auto t0 = std::chrono::steady_clock::now();
    const auto summary = bb::write_capture(cfg, out);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log->info("wrote {} ({} samples in {:.2f} s), {} ({} bytes), {} ({} frames)", summary.data_path.string(),
              summary.plan.nof_samples, secs, summary.truth_path.string(), summary.nof_truth_bytes,
              summary.frames_path.string(), summary.plan.frames.size());
    if (out.type != whd::datatype::cf32_le) {
      log->info("integer peak {:.0f} of full scale {:.0f}", summary.peak, bb::integer_full_scale(out.type));
    }
    if (summary.nof_clipped > 0) {
      log->warn("{} samples clipped at integer full scale", summary.nof_clipped);
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "whd-tx: " << e.what() << "\nTry 'whd-tx --help'.\n";
    return EXIT_USAGE;
  } catch (const std::exception& e) {
    log->error("{}", e.what());
    return EXIT_RUNTIME;
  }
  return 0;
}
