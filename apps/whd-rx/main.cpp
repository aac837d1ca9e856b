// whd-rx: decode a WHD-HRP capture to payload bytes and a JSON report.
// Option parsing, wiring and logging only; the receive chain lives in baseband/.
#include <whd/baseband/decode_run.hpp>
#include <whd/baseband/decode_session.hpp>
#include <whd/baseband/frame_dump.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/baseband/receiver_factory.hpp>
#include <whd/baseband/report.hpp>
#include <whd/transport/at_once.hpp>
#include <whd/transport/capture.hpp>
#include <whd/transport/cuda.hpp>
#include <whd/transport/link_pack.hpp>

#include <boost/program_options.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace po = boost::program_options;
namespace bb = whd::baseband;
namespace tr = whd::transport;

namespace {

constexpr int EXIT_RUNTIME = 1; // the capture or an output could not be used
constexpr int EXIT_USAGE = 2;   // the command line is wrong
constexpr int EXIT_SIGNAL = 128; // + the signal's number: stopped by SIGINT or SIGTERM

// Set by the first SIGINT or SIGTERM; the receiver reads it between frames.
std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag is set from a signal handler");

extern "C" void on_stop_signal(int sig)
{
  g_signal = sig;
  g_stop.store(true, std::memory_order_relaxed);
}

/// SIGINT and SIGTERM stop the run after the frame being decoded; a second one
/// (the handler resets itself) ends the process at once.
void catch_stop_signals()
{
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

/// The report file (--report FILE), written as the run goes: frames as the receiver
/// hands them over, the rest at the end. A run that fails leaves no half-written
/// report: the file is removed again unless finish() wrote it whole (a device or a
/// pipe named as the report is only closed).
class streamed_report {
public:
  explicit streamed_report(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "w"))
  {
    if (file_ == nullptr) {
      throw std::runtime_error("cannot write report '" + path + "': " + std::strerror(errno));
    }
    struct stat st {};
    regular_ = ::fstat(::fileno(file_), &st) == 0 && S_ISREG(st.st_mode);
    writer_.emplace(bb::file_output(file_), 2);
  }
  ~streamed_report()
  {
    writer_.reset(); // its thread stops before the file closes
    if (file_ != nullptr) {
      std::fclose(file_);
      if (regular_) {
        ::unlink(path_.c_str());
      }
    }
  }
  streamed_report(const streamed_report&) = delete;
  streamed_report& operator=(const streamed_report&) = delete;

  bb::report_writer& writer() { return *writer_; }

  /// The rest of the report; false (errno says why) when it could not be written whole.
  bool finish(nlohmann::json report)
  {
    bool ok = writer_->finish(std::move(report));
    int err = errno;
    writer_.reset();
    std::FILE* f = std::exchange(file_, nullptr);
    if (std::fclose(f) != 0 && ok) {
      ok = false;
      err = errno;
    }
    if (!ok && regular_) {
      ::unlink(path_.c_str());
    }
    errno = err;
    return ok;
  }

private:
  std::string path_;
  std::FILE* file_;
  bool regular_ = false;
  std::optional<bb::report_writer> writer_;
};

/// The receiver of the run, kept past run() so that main can leave its GPU buffers
/// and CUDA context to the process's exit (see main).
std::unique_ptr<bb::receiver> g_receiver;

struct options {
  std::string capture;
  std::string payload;       // empty: no payload file
  std::string report = "-";  // "-": standard output
  std::string backend = "auto";
  std::string format;        // empty: from the extension / meta
  std::string truth;
  std::string llr;                // empty: no soft output
  std::string llr_format = "int8";
  float llr_scale = 4.0f;
  std::string payload_write = "auto";
  std::string link = "auto";
  // Counts are parsed signed and checked: Boost reads "-1" into an unsigned as its largest value.
  int64_t batch = 0;     ///< 0: the GPU backend's default (gpu_config::symbols_per_batch)
  int streams = 0;       ///< 0: the GPU backend's default (gpu_config::nof_streams)
  int device = 0;
  std::string gpus = "1";
  int64_t threads = 0;
  std::optional<double> sample_rate;
  bool quiet = false;
  int verbose = 0;
  std::string dump;                      // --dump: constellation and channel of chosen frames (JSON)
  std::string dump_frames = "0";         // accepted-frame indices, comma-separated
  int64_t dump_symbols = 64;             // data symbols dumped per frame
};

const char* const DESCRIPTION = R"(whd-rx - WirelessHD HRP (WHD-HRP profiles 1 and 2) receiver

Usage: whd-rx CAPTURE [options]

Finds every frame in CAPTURE (preamble detection, CFO, timing, channel estimate,
header with CRC, pilot phase tracking, QPSK/16-QAM demapping; for coded frames of
profile 2, MCS 0, 1, 2, 7: de-whitening, de-interleaving, soft Viterbi and
RS(224,216)) and writes
  - the payload of every accepted frame, in capture order (-o): an uncoded frame's
    symbols' bits, a coded frame's L information bytes (none when it is truncated;
    a codeword RS cannot correct is written as received and counted),
  - optionally the soft decisions of every transmitted bit (--llr), and
  - a JSON report (--report): frames with start, mod, nd, seq, symbols,
    truncated, cfo_hz, snr_db, payload_offset, payload_bytes (coded frames add
    mcs, rs_corrected, rs_failed); header failures (reason crc, mode, nd);
    timing (ns per data symbol, x real time, raw Gbps, info Gbps per second of
    air). A report file gets its frames while the capture decodes (a run that
    fails removes it); a report on standard output is written once the run is over.

CAPTURE is a SigMF recording (NAME, NAME.sigmf-meta or NAME.sigmf-data) with
core:datatype cf32_le, ci16_le or ci8, or a raw interleaved file whose extension
names its format (.cf32/.cfile, .ci16/.sc16, .ci8/.sc8) or given by --format.

Samples that are NaN or infinite (cf32 captures) are taken as 0; the frames whose
windows held any are decoded and marked in the report (bad_samples, bad_symbols).

Memory does not grow with the capture (tens of GB decode in a few hundred MB; the
report's "resources" give peak RSS and device memory). Short of GPU or page-locked
memory at start, the GPU backend halves --batch until its buffers fit and warns.

SIGINT (Ctrl-C) or SIGTERM stops the run after the frame being decoded: the
payload and report then hold every frame before, whole, and the report says
"interrupted": true. A second signal ends it at once (outputs incomplete).

Exit status:
  0        the capture was read to its end (with or without frames);
  1        the capture or an output file could not be used: a missing file, a
           SigMF meta that is not JSON, lacks core:datatype or names another
           datatype, a data file that is empty, shorter than one symbol (576
           samples) or not whole samples, an unwritable output, a read error;
  2        the command line is wrong;
  128+SIG  stopped by signal SIG (130 SIGINT, 143 SIGTERM), outputs whole as above.

Environment: WHD_RX_TEARDOWN=1 frees the GPU backend's buffers and CUDA context
before exiting (for leak checkers); by default the process's exit releases them.

Options)";

std::optional<options> parse(int argc, char** argv, int& exit_code)
{
  options o;
  po::options_description desc(DESCRIPTION);
  desc.add_options()("help,h", "show this help and exit")
    ("output,o", po::value(&o.payload)->value_name("FILE"),
     "write the payload bytes to FILE (default: not written); '-' is standard output (then --report must name a file), so "
     "that 'whd-rx CAPTURE -o - --report r.json | consumer' needs no temporary file")
    ("report,r", po::value(&o.report)->value_name("FILE")->default_value("-"), "write the JSON report to FILE; '-' is standard output")
    ("llr", po::value(&o.llr)->value_name("FILE"),
     "write soft decisions to FILE: one value per payload bit, in payload order, LLR = ln P(b=0)/P(b=1) (positive: 0), "
     "max-log over the constellation, weighted by each tone's channel gain over the frame's noise; the hard bits are unchanged")
    ("llr-format", po::value(&o.llr_format)->value_name("int8|f16|f32")->default_value("int8"),
     "how --llr stores a value: int8 = round(LLR x --llr-scale) saturated to +-127 (the report names the scale), f16 or f32 as they are")
    ("llr-scale", po::value(&o.llr_scale)->value_name("S")->default_value(4.0f, "4"),
     "int8 soft values: LLR x S, rounded (4: |LLR| up to 31.75 in steps of 0.25)")
    ("payload-write", po::value(&o.payload_write)->value_name("auto|map|pwrite|split")->default_value("auto"),
     "how large writes go into the -o and --llr files: map = copied into a mapping of the file by several threads, pwrite = "
     "written at their offsets (into blocks allocated ahead on a disk's file system; on tmpfs as they come), split = each "
     "write shared between pwrite from its front and, at a lower priority, threads copying into the mapping from its back; "
     "auto = pwrite on a disk's file system (faster than map into its page cache); on tmpfs (/dev/shm), split for a write "
     "while more wait for the writer (long frames: faster than pwrite) and pwrite while the writes keep up (split's copiers "
     "would take cores from the reading) (bench/results)")
    ("backend,b", po::value(&o.backend)->value_name("auto|cpu|gpu")->default_value("auto"),
     "where the chain runs: gpu needs a CUDA device; auto takes the GPU when one is present and the GPU backend is built, else the CPU")
    ("link,l", po::value(&o.link)->value_name("auto|f32|half|int8")->default_value("auto"),
     "GPU: how a cf32 capture crosses to the device: f32 as stored (8 bytes a sample), half (4) or int8 with a scale per 1024 "
     "samples (2), packed by the reading threads; auto = f32, whose bits are the CPU backend's (packing may change a bit near a "
     "decision's edge). ci8 and ci16 captures always cross as stored (2 and 4 bytes), exactly; another value is noted")
    ("batch", po::value(&o.batch)->value_name("SYMBOLS")->default_value(0),
     "GPU: the capture crosses to the device in chunks of SYMBOLS x 576 samples (one copy in, the search, the location and the "
     "decode of every frame in it, one copy out); 0: chunks of 2^24 samples")
    ("streams", po::value(&o.streams)->value_name("N")->default_value(0),
     "GPU: chunks in flight per device, each with its own stream and buffers; 0: the default (4)")
    ("device", po::value(&o.device)->value_name("N")->default_value(0), "GPU: first CUDA device ordinal")
    ("gpus", po::value(&o.gpus)->value_name("N|all")->default_value("1"),
     "GPU: use N devices from --device on ('all': every device present from it). The first takes each batch while it keeps "
     "up; the others start (their contexts and buffers, a few tenths of a second on their own thread) only once the "
     "first falls behind by more than that over the rest of the capture, then take the batches it cannot. Where one GPU "
     "keeps up with the host, the run is one GPU's; -v says which GPUs took batches and why. The payload stays in "
     "capture order. The process sees only these devices. More than present is an error")
    ("format,f", po::value(&o.format)->value_name("cf32_le|ci16_le|ci8"), "sample format of a raw capture (overrides its extension)")
    ("sample-rate", po::value<double>()->value_name("SPS"), "sample rate used to state CFO in Hz (default: the meta's core:sample_rate, else 2.538e9)")
    ("truth,t", po::value(&o.truth)->value_name("FILE"), "compare the payload with FILE; the report adds bit errors and BER")
    ("threads,j", po::value(&o.threads)->value_name("N")->default_value(0), "CPU worker threads (0: all cores)")
    ("dump", po::value(&o.dump)->value_name("FILE"),
     "write, as JSON, the equalised points (after the pilot phase), the channel estimate and the per-tone SNR of the frames "
     "--dump-frames names, as the CPU reference decodes them")
    ("dump-frames", po::value(&o.dump_frames)->value_name("LIST")->default_value("0"), "accepted frames to dump, 0-based, e.g. 0,2")
    ("dump-symbols", po::value(&o.dump_symbols)->value_name("N")->default_value(64), "data symbols dumped per frame")
    ("quiet,q", po::bool_switch(&o.quiet), "only warnings and errors on standard error, no progress")
    ("verbose,v", po::value<int>()->implicit_value(1)->zero_tokens(), "more log detail (debug): the backend's stage times and set-up's steps");
  po::options_description hidden;
  hidden.add_options()("capture", po::value(&o.capture));
  po::positional_options_description pos;
  pos.add("capture", 1);
  po::options_description all;
  all.add(desc).add(hidden);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "whd-rx: " << e.what() << "\nTry 'whd-rx --help'.\n";
    exit_code = EXIT_USAGE;
    return std::nullopt;
  }
  if (vm.count("help")) {
    std::cout << desc << "\nExamples:\n  whd-rx capture.sigmf-meta -o payload.bin --report report.json\n"
              << "  whd-rx capture.ci8 --backend cpu --truth capture.truth\n"
              << "  whd-rx capture.sigmf-meta -o payload.bin --llr soft.i8 --report report.json\n";
    exit_code = 0;
    return std::nullopt;
  }
  if (vm.count("verbose")) {
    o.verbose = 1;
  }
  if (vm.count("sample-rate")) {
    o.sample_rate = vm["sample-rate"].as<double>();
  }
  std::string problem;
  if (o.capture.empty()) {
    problem = "no capture given";
  } else if (!bb::parse_backend(o.backend)) {
    problem = "--backend must be " + whd::names_of(bb::BACKEND_NAMES) + ", not '" + o.backend + "'";
  } else if (!o.format.empty() && !whd::parse_datatype(o.format)) {
    problem = "--format must be " + whd::names_of(whd::DATATYPE_NAMES) + ", not '" + o.format + "'";
  } else if (o.link != "auto" && !tr::parse_link_format(o.link)) {
    problem = "--link must be auto, " + whd::names_of(tr::LINK_FORMAT_NAMES) + ", not '" + o.link + "'";
  } else if (!bb::parse_gpu_count(o.gpus)) {
    problem = "--gpus must be a positive number or 'all', not '" + o.gpus + "'";
  } else if (o.sample_rate && !(*o.sample_rate > 0.0 && std::isfinite(*o.sample_rate))) {
    problem = "--sample-rate must be a positive number";
  } else if (o.batch < 0 || o.streams < 0 || o.device < 0 || o.threads < 0 || o.threads > 65536) {
    problem = "--batch, --streams and --device must be 0 or more, --threads from 0 to 65536";
  } else if (o.dump_symbols < 0 || o.dump_symbols > int64_t(UINT32_MAX)) {
    problem = "--dump-symbols must be 0 or more";
  } else if (o.report.empty()) {
    problem = "--report needs a file name or '-'";
  } else if (o.payload == "-" && o.report == "-") {
    problem = "-o - writes the payload to standard output: give the report a file with --report FILE";
  } else if (!bb::parse_llr_format(o.llr_format)) {
    problem = "--llr-format must be " + whd::names_of(bb::LLR_FORMAT_NAMES) + ", not '" + o.llr_format + "'";
  } else if (!bb::parse_payload_write(o.payload_write)) {
    problem = "--payload-write must be " + whd::names_of(bb::PAYLOAD_WRITE_NAMES) + ", not '" + o.payload_write + "'";
  } else if (!(o.llr_scale > 0.0f) || !std::isfinite(o.llr_scale)) {
    problem = "--llr-scale must be a positive number";
  } else if (o.llr == "-" && (o.payload == "-" || o.report == "-")) {
    problem = "--llr - writes the soft values to standard output: give the payload and the report files (-o FILE --report FILE)";
  } else if (!o.llr.empty() && o.llr == o.payload && !std::filesystem::is_character_file(o.llr)) {
    problem = "--llr and -o name the same file";
  } else if (o.dump_frames.empty() || o.dump_frames.find_first_not_of("0123456789,") != std::string::npos) {
    problem = "--dump-frames must be frame indices separated by commas, e.g. 0,2, not '" + o.dump_frames + "'";
  }
  if (!problem.empty()) {
    std::cerr << "whd-rx: " << problem << "\nTry 'whd-rx --help'.\n";
    exit_code = EXIT_USAGE;
    return std::nullopt;
  }
  return o;
}

/// Progress on a terminal only, at most four times a second.
bb::progress_fn make_progress(bool enabled)
{
  if (!enabled) {
    return {};
  }
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [last](uint64_t done, uint64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - *last < std::chrono::milliseconds(250)) {
      return;
    }
    *last = now;
    std::fprintf(stderr, "\rwhd-rx: %5.1f%% of %llu samples%s", total ? 100.0 * double(done) / double(total) : 100.0,
                 static_cast<unsigned long long>(total), done >= total ? "\n" : "");
  };
}

/// How a payload file takes large writes, for the log.
std::string write_way(const bb::payload_file_sink& f)
{
  return f.method() == bb::payload_write::automatic ? "pwrite, split while writes wait" : bb::to_string(f.method());
}

/// The receiver the options ask for (receiver_factory.hpp resolves them), with the
/// choice logged once.
std::unique_ptr<bb::receiver> choose_backend(const options& o, bool narrowed, const bb::decode_session& session, spdlog::logger& log)
{
  bb::receiver_request req;
  req.backend = *bb::parse_backend(o.backend);
  if (o.link != "auto") {
    req.link = tr::parse_link_format(o.link);
  }
  req.nof_gpus = *bb::parse_gpu_count(o.gpus);
  req.gpus_text = o.gpus;
  req.device = o.device;
  req.narrowed = narrowed;
  req.batch = std::size_t(o.batch);
  req.streams = o.streams;
  req.threads = unsigned(o.threads);
  auto made = session.make_receiver(req, [&log](const bb::receiver_choice& c) {
    if (c.backend == "gpu") {
      log.info("GPU: {} device(s) from {}, the capture crossing {}, FFT exchange {} ({})", c.nof_gpus, c.device,
               c.link == tr::link_format::f32 ? std::string("as stored")
                                              : fmt::format("packed as {} ({} bytes a sample)", tr::to_string(c.link), tr::link_bytes_per_sample(c.link)),
               c.fft_exchange == whd::fft::exchange::shfl ? "warp shuffles" : "shared memory", c.fft_source);
    } else if (!c.reason.empty()) {
      log.info("backend auto: {}; using the CPU", c.reason);
    }
  });
  return std::move(made.rx);
}

/// --dump: the chosen frames decoded again by the CPU reference, as JSON.
bool write_dump(const options& o, const tr::sample_source& src, const bb::rx_config& cfg, spdlog::logger& log)
{
  bb::frame_dump_config d;
  d.frames.clear();
  std::stringstream list(o.dump_frames);
  for (std::string item; std::getline(list, item, ',');) {
    if (!item.empty()) {
      d.frames.push_back(std::stoull(item));
    }
  }
  d.max_symbols = uint32_t(o.dump_symbols);
  const auto dumps = bb::dump_frames(src, cfg, d);
  std::ofstream f(o.dump);
  f << bb::frame_dumps_json(dumps).dump(1) << "\n";
  f.close();
  if (!f) {
    log.error("cannot write dump '{}'", o.dump);
    return false;
  }
  log.info("dump: {} of {} frame(s) asked for, {} data symbols each at most, to '{}'", dumps.size(), d.frames.size(), d.max_symbols, o.dump);
  return true;
}

int run(const options& o)
{
  auto log = spdlog::stderr_color_mt("whd-rx");
  log->set_level(o.quiet ? spdlog::level::warn : (o.verbose ? spdlog::level::debug : spdlog::level::info));
  const auto t0 = std::chrono::steady_clock::now();
  // Process start, as the kernel saw it (the report's wall and set-up times count from it).
  const double t0_since_start = bb::seconds_since_process_start().value_or(0.0);
  // A reader that closes the pipe of `-o -` makes write() fail with EPIPE, reported
  // as an error, rather than killing the process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  // Set-up as it went, for -v: seconds from t0 at each step's end.
  std::vector<std::pair<std::string_view, double>> setup_marks;
  auto mark = [&](std::string_view step) {
    setup_marks.emplace_back(step, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  };
  // The process sees only the GPUs it uses (the driver starts every device it can
  // see); the first one's context (a few hundred ms) is made while the capture's meta
  // is read and checked, the receiver after it. The others start when the first falls
  // behind (gpu_start::when_behind).
  const int nof_gpus = *bb::parse_gpu_count(o.gpus); // 0: all
  const bool narrowed = o.backend != "cpu" && nof_gpus > 0 && whd::cuda::show_only_devices(o.device, nof_gpus);
  std::jthread context;
  double context_seconds = 0; // the context thread's own time
  if (o.backend != "cpu" && o.dump.empty()) {
    context = std::jthread([device = narrowed ? 0 : o.device, &context_seconds] {
      whd::transport::name_this_thread("whd-cuda-start");
      const auto c0 = std::chrono::steady_clock::now();
      try {
        (void)whd::cuda::start_devices({device});
      } catch (const std::exception&) {
        (void)cudaGetLastError(); // a device not present: the receiver's set-up says so
      }
      context_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    });
  }

  // The capture, the truth file and the receiver's configuration (decode_session.hpp).
  bb::decode_options d;
  d.path = o.capture;
  if (!o.format.empty()) {
    d.format = whd::parse_datatype(o.format);
  }
  if (!o.truth.empty()) {
    d.truth = o.truth;
  }
  if (!o.payload.empty()) {
    d.payload = o.payload;
  }
  d.payload_way = *bb::parse_payload_write(o.payload_write);
  d.stop = &g_stop;
  d.nof_threads = unsigned(o.threads);
  d.sample_rate_sps = o.sample_rate;
  d.llr.format = *bb::parse_llr_format(o.llr_format);
  d.llr.scale = o.llr_scale;
  d.llr_name = o.llr;
  d.warn = [log](const std::string& line) { log->warn("{}", line); };
  std::optional<bb::decode_session> session;
  try {
    session.emplace(std::move(d));
  } catch (const tr::capture_error& e) {
    log->error("{}", e.what());
    return EXIT_RUNTIME;
  } catch (const bb::unusable_file& e) {
    log->error("{}", e.what());
    return EXIT_RUNTIME;
  }
  mark("capture opened");
  const tr::capture_info& info = session->info();
  bb::rx_config& cfg = session->config();

  catch_stop_signals(); // both backends read rx_config::stop between frames
  // The outputs are opened before the receiver's set-up, so that one that cannot be
  // written is found at once.
  session->open_payload();
  const bb::payload_file_sink* file = session->payload_file();
  // A report file is written as the run goes (a capture of a million short frames
  // has hundreds of MB of it); one on standard output after the run, whole or not
  // at all.
  std::unique_ptr<streamed_report> report_file;
  if (o.report != "-") {
    try {
      report_file = std::make_unique<streamed_report>(o.report);
    } catch (const std::runtime_error& e) {
      log->error("{}", e.what());
      return EXIT_RUNTIME;
    }
    cfg.on_frames = [w = &report_file->writer()](std::span<const bb::frame_result> f) { w->add(f); };
  }
  std::unique_ptr<bb::payload_file_sink> llr_file;
  if (!o.llr.empty()) {
    llr_file = std::make_unique<bb::payload_file_sink>(o.llr, 0, *bb::parse_payload_write(o.payload_write));
    cfg.llr.sink = llr_file.get();
  }
  mark("outputs opened");
  if (context.joinable()) {
    context.join();
    mark("CUDA context waited for");
  }
  g_receiver = choose_backend(o, narrowed, *session, *log);
  mark("receiver made");
  auto& rx = g_receiver;
  log->info("capture {}: {} samples of {}, sample rate {:.4g} S/s; backend {}, {} payload{}, report to {}", info.data_path.string(),
            info.nof_samples, whd::to_string(info.type), cfg.sample_rate_sps, rx->backend(),
            file == nullptr ? std::string("no")
                            : fmt::format("'{}' ({})", o.payload, file->positioned() ? write_way(*file) : "in order"),
            o.llr.empty() ? std::string() : fmt::format(", {} soft values to '{}'", o.llr_format, o.llr),
            o.report == "-" ? "stdout" : "'" + o.report + "'");
  const double run_start = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto& result = session->run(*rx, nullptr, make_progress(!o.quiet && isatty(STDERR_FILENO)));
  if (llr_file) {
    llr_file->close();
  }
  const double since_t0 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bb::run_seconds split{t0_since_start + since_t0, t0_since_start + run_start + result.setup_seconds};

  const auto& truth = session->truth();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto report_json = session->report(seconds, split);
  // A path need not be UTF-8: its invalid bytes become U+FFFD rather than failing the report.
  // Written as it is made: a capture of a million short frames has a report of
  // hundreds of MB.
  std::cout.flush();
  const auto report_t0 = std::chrono::steady_clock::now();
  if (report_file && report_file->writer().size() != result.frames.size()) {
    throw std::logic_error(fmt::format("the receiver handed {} frame(s) to the report of {}", report_file->writer().size(), result.frames.size()));
  }
  const bool written = report_file ? report_file->finish(std::move(report_json)) : bb::write_report(stdout, std::move(report_json), result.frames, 2);
  const int err = errno;
  if (!written) {
    log->error("cannot write report '{}': {}", o.report == "-" ? std::string("standard output") : o.report, std::strerror(err));
    return EXIT_RUNTIME;
  }
  const double report_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - report_t0).count();
  if (!o.dump.empty() && !write_dump(o, session->reader(), cfg, *log)) {
    return EXIT_RUNTIME;
  }
  log->info("{} frame(s), {} header failure(s), {} data symbols, {} payload bytes in {:.3f} s", result.frames.size(),
            result.header_failures.size(), result.data_symbols, result.payload_bytes, seconds);
  for (const auto& [stage, sec] : result.stage_seconds) {
    log->debug("stage {}: {:.3f} s", stage, sec);
  }
  for (const auto& note : result.notes) {
    log->debug("{}", note);
  }
  log->debug("set-up: {:.3f} s from the process's start to main()", t0_since_start);
  for (const auto& [step, at] : setup_marks) {
    log->debug("set-up: {} at {:.3f} s after main()", step, at);
  }
  if (context_seconds > 0) {
    log->debug("set-up: the CUDA context took {:.3f} s on its thread", context_seconds);
  }
  log->debug("set-up: the receiver's buffers took {:.3f} s", result.setup_seconds);
  log->debug("after the run: the report {} in {:.3f} s (not in its timing)", report_file ? "finished" : "written", report_seconds);
  const auto& m = result.resources;
  log->info("memory: peak RSS {:.0f} MiB; {} symbols per batch{}", double(m.peak_rss_bytes) / 1048576.0, m.symbols_per_batch,
            m.device_bytes == 0 ? std::string()
                                : fmt::format(", {:.0f} MiB on the GPU(s) and {:.0f} MiB page-locked for them ({:.0f} MiB in use on the busiest GPU)",
                                              double(m.device_bytes) / 1048576.0, double(m.pinned_bytes) / 1048576.0,
                                              double(m.device_used_bytes) / 1048576.0));
  if (truth) {
    log->info("truth: {} bit errors in {} bits (BER {:.3g}), {} bits missing or extra", truth->bit_errors, truth->compared_bits,
              truth->ber(), truth->missing_bits);
  }
  if (result.interrupted) {
    const int sig = g_signal != 0 ? int(g_signal) : SIGINT;
    log->warn("interrupted by {}: the payload and report hold the {} frame(s) decoded before it, whole; the capture was "
              "not read to its end (the report says \"interrupted\": true)",
              sig == SIGTERM ? "SIGTERM" : "SIGINT", result.frames.size());
    return EXIT_SIGNAL + sig;
  }
  return 0;
}

} // namespace

int main(int argc, char** argv)
{
  int exit_code = 0;
  const auto o = parse(argc, argv, exit_code);
  if (!o) {
    return exit_code;
  }
  int code = EXIT_RUNTIME;
  try {
    code = run(*o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "whd-rx: error: %s\n", e.what());
  }
  // The outputs are closed and the report written. Freeing the GPU backend's
  // page-locked and device buffers one by one and then the CUDA context costs a
  // noticeable part of a short run after its work is done; the process's exit
  // releases them all at once. WHD_RX_TEARDOWN=1 frees them first
  // (for leak checkers such as compute-sanitizer --leak-check full).
  if (const char* t = std::getenv("WHD_RX_TEARDOWN"); t != nullptr && std::string_view(t) == "1") {
    g_receiver.reset();
    return code;
  }
  std::cout.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}
