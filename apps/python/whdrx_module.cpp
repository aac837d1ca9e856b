// _whdrx: the Python binding of the receiver and the transmitter (the extension
// module behind the package whdrx). Wiring only: a capture is decoded by
// baseband's decode_session, as in whd-rx; the transmitter is baseband's
// write_capture, as in whd-tx.
#include <whd/baseband/decode_session.hpp>
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver_factory.hpp>
#include <whd/baseband/report.hpp>
#include <whd/transport/capture.hpp>
#include <whd/transport/cuda.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace py = pybind11;
namespace bb = whd::baseband;
namespace tr = whd::transport;

namespace {

/// An output file of write_capture that cannot be used: OSError with the library's message.
class file_problem : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Samples handed over in memory, in a file of their own (memfd) that the capture
/// reader opens like any raw capture: a numpy array then takes exactly whd-rx's path
/// (the detector's exact integer sums, the GPU's ci8 bytes crossing as they are).
class memory_file {
public:
  explicit memory_file(std::span<const std::byte> bytes)
  {
    fd_ = ::memfd_create("whdrx-samples", MFD_CLOEXEC);
    if (fd_ < 0) {
      throw std::runtime_error(std::string("cannot create an in-memory file for the samples: ") + std::strerror(errno));
    }
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        const int err = errno;
        ::close(fd_);
        throw std::runtime_error(std::string("cannot copy the samples into an in-memory file: ") + std::strerror(err));
      }
      done += std::size_t(n);
    }
  }
  ~memory_file() { ::close(fd_); }
  memory_file(const memory_file&) = delete;
  memory_file& operator=(const memory_file&) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
  int fd_ = -1;
};

/// The payload kept in memory, handed over to numpy without a copy.
class vector_sink final : public bb::payload_sink {
public:
  void write(std::span<const uint8_t> bytes) override { bytes_.insert(bytes_.end(), bytes.begin(), bytes.end()); }
  std::vector<uint8_t> take() { return std::move(bytes_); }

private:
  std::vector<uint8_t> bytes_;
};

/// Hands what is written to the sink of the call under way: a kept receiver's
/// configuration (its soft-value sink) outlives the calls that use it.
class forwarding_sink final : public bb::payload_sink {
public:
  void write(std::span<const uint8_t> bytes) override { target->write(bytes); }
  void behind(bool more_waiting) override { target->behind(more_waiting); }
  bb::payload_sink* target = nullptr;
};

/// The receiver of the last decode, kept for the next one in this process when that
/// asks for the same settings: the GPU backend's slots (page-locked and device
/// memory, costly to make and free) are then made once, not per call, as in one
/// whd-rx process; whdrx.batch's workers decode capture after capture. whdrx.release()
/// frees it; otherwise it is left to the process's exit, as whd-rx leaves its buffers.
struct kept_receiver {
  std::mutex in_use;  ///< held by the call using it; a call meanwhile makes its own receiver
  std::string key;    ///< the settings it was made for (empty: none kept)
  bb::made_receiver made;
  std::atomic<bool> stop{false};
  forwarding_sink soft;
  std::vector<std::string>* warnings = nullptr; ///< the call's
  std::vector<std::string> made_notices;        ///< what making it said, repeated to each call
  bool making = false;
};

/// Never destroyed: a GPU receiver freed by a static destructor would run after the
/// CUDA runtime has gone.
kept_receiver& kept()
{
  static auto* k = new kept_receiver;
  return *k;
}

void release_kept()
{
  py::gil_scoped_release release;
  kept_receiver& k = kept();
  const std::lock_guard lk(k.in_use);
  k.made = {};
  k.key.clear();
}

/// What decode() was asked for, checked by the Python layer (whdrx/__init__.py).
struct decode_args {
  std::string backend = "auto";
  std::string link = "auto";
  std::string gpus = "1";
  int device = 0;
  std::size_t batch = 0;
  unsigned threads = 0;
  std::optional<double> sample_rate;
  std::optional<std::string> format;
  std::optional<std::string> truth;
  std::optional<std::string> output; ///< payload file; none: the payload is returned in memory
  std::optional<std::string> llr;    ///< soft output's format (int8, f16, f32); none: no soft output
  float llr_scale = 4.0f;
};

bb::receiver_request to_request(const decode_args& a)
{
  bb::receiver_request req;
  const auto backend = bb::parse_backend(a.backend);
  if (!backend) {
    throw std::invalid_argument("backend must be " + whd::names_of(bb::BACKEND_NAMES) + ", not '" + a.backend + "'");
  }
  req.backend = *backend;
  if (a.link != "auto") {
    req.link = tr::parse_link_format(a.link);
    if (!req.link) {
      throw std::invalid_argument("link must be auto, " + whd::names_of(tr::LINK_FORMAT_NAMES) + ", not '" + a.link + "'");
    }
  }
  const auto gpus = bb::parse_gpu_count(a.gpus);
  if (!gpus) {
    throw std::invalid_argument("gpus must be a positive number or 'all', not '" + a.gpus + "'");
  }
  req.nof_gpus = *gpus;
  req.gpus_text = a.gpus;
  if (a.device < 0) {
    throw std::invalid_argument("device must be a CUDA device ordinal >= 0, not " + std::to_string(a.device));
  }
  req.device = a.device;
  req.batch = a.batch;
  req.threads = a.threads;
  return req;
}

py::dict choice_dict(const bb::receiver_choice& c)
{
  py::dict d;
  d["backend"] = c.backend;
  d["reason"] = c.reason;
  d["gpus"] = c.nof_gpus;
  if (c.backend == "gpu") {
    d["device"] = c.device;
    d["link"] = std::string(tr::to_string(c.link));
    d["fft_exchange"] = c.fft_exchange == whd::fft::exchange::shfl ? "warp shuffles" : "shared memory";
    d["fft_source"] = c.fft_source;
  }
  return d;
}

/// Decoded bytes as a 1-D numpy array of `dtype`, whose values take `item` bytes,
/// that owns them (no copy). The item size is ours, not read from the dtype: pybind11
/// before 2.12 reads it from NumPy 1's descriptor layout, which NumPy 2 changed.
py::array owned_array(std::vector<uint8_t>&& bytes, const py::dtype& dtype, std::size_t item)
{
  auto* held = new std::vector<uint8_t>(std::move(bytes));
  py::capsule owner(held, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
  return py::array(dtype, {py::ssize_t(held->size() / item)}, {py::ssize_t(item)}, held->data(), owner);
}

/// numpy's name of a soft-output format's values.
const char* numpy_dtype(bb::llr_format f) { return f == bb::llr_format::int8 ? "int8" : f == bb::llr_format::f16 ? "float16" : "float32"; }

/// Decode one capture: `path` names it (the user's name for the report is
/// `display`). The receiver runs on another thread with the GIL released; this one
/// polls for Python signals (Ctrl-C) and, on one, sets rx_config::stop as SIGINT does
/// in whd-rx, waits for the receiver to finish its frame and raises.
py::dict decode_capture(const std::string& path, const std::string& display, const decode_args& args)
{
  const auto t0 = std::chrono::steady_clock::now();
  const auto req = to_request(args);
  std::optional<whd::datatype> format;
  if (args.format) {
    format = whd::parse_datatype(*args.format);
    if (!format) {
      throw std::invalid_argument("format must be " + whd::names_of(whd::DATATYPE_NAMES) + ", not '" + *args.format + "'");
    }
  }
  if (args.sample_rate && !(*args.sample_rate > 0.0)) {
    throw std::invalid_argument("sample_rate must be positive");
  }
  std::optional<bb::llr_format> llr_format;
  if (args.llr) {
    llr_format = bb::parse_llr_format(*args.llr);
    if (!llr_format) {
      throw std::invalid_argument("llr must be False, True, " + whd::names_of(bb::LLR_FORMAT_NAMES) + ", not '" + *args.llr + "'");
    }
    if (!(args.llr_scale > 0.0f) || !std::isfinite(args.llr_scale)) {
      throw std::invalid_argument("llr_scale must be a positive number");
    }
  }
  std::vector<std::string> warnings;
  std::atomic<bool> stop{false};
  // Where a Ctrl-C is told: this call's flag, or the kept receiver's once the call
  // takes it (the poll below sets both, so that none is lost in the switch).
  std::atomic<std::atomic<bool>*> stop_target{&stop};
  // The payload (without an output file) and the soft values, kept in memory.
  vector_sink memory;
  vector_sink soft;
  struct outcome {
    std::unique_ptr<bb::decode_session> session; ///< kept for the report, made once the run has been waited for
    bb::receiver_choice choice;
  };
  auto work = [&]() -> outcome {
    outcome o;
    // The CUDA context (the largest part of a first call's set-up) is made while the capture is
    // opened, as whd-rx does; made already, this costs nothing.
    std::jthread context;
    if (req.backend != bb::backend_kind::cpu) {
      context = std::jthread([device = args.device] { whd::cuda::create_context(device); });
    }
    bb::decode_options opts;
    opts.path = path;
    opts.name = display;
    opts.format = format;
    opts.truth = args.truth;
    opts.payload = args.output;
    opts.stop = &stop;
    opts.nof_threads = args.threads;
    opts.sample_rate_sps = args.sample_rate;
    if (llr_format) {
      opts.llr = {&soft, *llr_format, args.llr_scale};
      opts.llr_name = "<memory: DecodeResult.llr>";
    }
    opts.warn = [&warnings](const std::string& line) { warnings.push_back(line); };
    o.session = std::make_unique<bb::decode_session>(std::move(opts));
    bb::decode_session& session = *o.session;
    if (context.joinable()) {
      context.join();
    }
    std::unique_lock kept_lock(kept().in_use, std::try_to_lock);
    bb::made_receiver own;
    bb::receiver* rx = nullptr;
    if (kept_lock.owns_lock()) {
      kept_receiver& k = kept();
      std::ostringstream key;
      key << std::hexfloat << args.backend << '|' << args.link << '|' << args.gpus << '|' << args.device << '|' << args.batch << '|'
          << args.threads << '|' << whd::to_string(session.info().type) << '|' << session.config().sample_rate_sps << '|'
          << (llr_format ? bb::to_string(*llr_format) : "none") << '|' << args.llr_scale;
      k.warnings = &warnings;
      stop_target.store(&k.stop);
      k.stop.store(stop.load());
      k.soft.target = &soft;
      if (k.key != key.str() || k.made.rx == nullptr) {
        k.made = {}; // the old one's memory goes before the new one's is made
        k.key.clear();
        k.made_notices.clear();
        bb::rx_config kcfg = session.config();
        kcfg.stop = &k.stop;
        if (llr_format) {
          kcfg.llr.sink = &k.soft;
        }
        k.making = true;
        auto notice = [&k](const std::string& line) {
          if (k.making) {
            k.made_notices.push_back(line);
          }
          k.warnings->push_back(line);
        };
        k.made = bb::make_receiver(req, kcfg, session.info().type, notice);
        k.making = false;
        k.key = key.str();
      } else {
        warnings.insert(warnings.end(), k.made_notices.begin(), k.made_notices.end());
      }
      rx = k.made.rx.get();
      o.choice = k.made.choice;
    } else {
      own = session.make_receiver(req);
      rx = own.rx.get();
      o.choice = own.choice;
    }
    session.open_payload();
    try {
      session.run(*rx, &memory);
    } catch (...) {
      if (kept_lock.owns_lock()) { // a receiver that failed is not trusted with the next capture
        kept().made = {};
        kept().key.clear();
      }
      throw;
    }
    return o;
  };

  std::future<outcome> running;
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    running = std::async(std::launch::async, work);
    while (running.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) {
        interrupted = true;
        stop.store(true);
        stop_target.load()->store(true);
        break;
      }
    }
    running.wait();
  }
  if (interrupted) {
    // The receiver stopped after its frame; its result is dropped and the signal's
    // exception (KeyboardInterrupt for Ctrl-C) raised.
    try {
      running.get();
    } catch (...) {
    }
    throw py::error_already_set();
  }
  auto o = running.get();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bb::receive_result& result = o.session->result();
  py::dict d;
  auto report = o.session->report(seconds);
  if (llr_format) {
    d["llr"] = owned_array(soft.take(), py::dtype(numpy_dtype(*llr_format)), bb::llr_value_bytes(*llr_format));
  } else {
    d["llr"] = py::none();
  }
  d["report"] = bb::dump_report(std::move(report), result.frames, -1);
  d["choice"] = choice_dict(o.choice);
  d["warnings"] = warnings;
  d["interrupted"] = result.interrupted;
  if (args.output) {
    d["payload"] = py::none();
  } else {
    d["payload"] = owned_array(memory.take(), py::dtype("uint8"), 1);
  }
  return d;
}

decode_args make_args(std::string backend, std::string link, std::string gpus, int device, std::size_t batch, unsigned threads,
                      std::optional<double> sample_rate, std::optional<std::string> format, std::optional<std::string> truth,
                      std::optional<std::string> output, std::optional<std::string> llr, float llr_scale)
{
  return decode_args{std::move(backend), std::move(link),  std::move(gpus),   device,         batch,    threads,
                     sample_rate,        std::move(format), std::move(truth), std::move(output), std::move(llr), llr_scale};
}

py::dict decode_path(const std::string& path, std::string backend, std::string link, std::string gpus, int device,
                     std::size_t batch, unsigned threads, std::optional<double> sample_rate, std::optional<std::string> format,
                     std::optional<std::string> truth, std::optional<std::string> output, std::optional<std::string> llr,
                     float llr_scale)
{
  return decode_capture(path, path,
                        make_args(std::move(backend), std::move(link), std::move(gpus), device, batch, threads, sample_rate,
                                  std::move(format), std::move(truth), std::move(output), std::move(llr), llr_scale));
}

/// `samples`: a C-contiguous buffer of `datatype`'s on-disk layout (the Python
/// layer checks the numpy array's dtype and shape and names the datatype).
py::dict decode_buffer(const py::buffer& samples, const std::string& datatype, const std::string& display, std::string backend,
                       std::string link, std::string gpus, int device, std::size_t batch, unsigned threads,
                       std::optional<double> sample_rate, std::optional<std::string> truth, std::optional<std::string> output,
                       std::optional<std::string> llr, float llr_scale)
{
  const py::buffer_info buf = samples.request();
  const auto bytes = std::span(static_cast<const std::byte*>(buf.ptr), std::size_t(buf.size * buf.itemsize));
  std::unique_ptr<memory_file> file;
  {
    py::gil_scoped_release release;
    file = std::make_unique<memory_file>(bytes);
  }
  return decode_capture(file->path(), display,
                        make_args(std::move(backend), std::move(link), std::move(gpus), device, batch, threads, sample_rate,
                                  datatype, std::move(truth), std::move(output), std::move(llr), llr_scale));
}

std::vector<whd::profile::modulation> parse_mods(const std::vector<std::string>& names)
{
  std::vector<whd::profile::modulation> mods;
  for (const auto& m : names) {
    if (const auto mod = whd::profile::parse_modulation(m)) {
      mods.push_back(*mod);
    } else {
      throw std::invalid_argument("mod takes qpsk, qam16 or a list of them (cycled over the frames), not '" + m + "'");
    }
  }
  return mods;
}

/// whd-tx: generate a capture and write it with its sidecars (BASE.truth,
/// BASE.frames.json). Returns what was written.
py::dict write_capture(const std::string& base, const std::string& datatype, bool raw, const std::vector<std::string>& mods,
                       const std::vector<int>& mcs, const std::vector<uint32_t>& nds, uint64_t frames, const std::string& payload, uint64_t seed,
                       std::optional<double> snr_db, double cfo_hz, int taps, double tap_decay_db, double gain,
                       std::optional<double> phase_rad, bool random_phase, uint64_t lead, uint64_t gap,
                       std::optional<uint64_t> tail, const std::vector<uint64_t>& corrupt_header, uint64_t cut,
                       unsigned first_seq, double sample_rate, const std::string& description)
{
  bb::capture_config c;
  c.mods = parse_mods(mods);
  c.mcs = mcs; // checked by the generator: 0, 1, 2, 7 or NO_MCS
  c.nds = nds;
  c.nof_frames = frames;
  c.payload_path = payload;
  c.seed = seed;
  c.lead_samples = lead;
  c.gap_samples = gap;
  c.tail_samples = tail;
  c.cut_samples = cut;
  c.corrupt_header_frames = corrupt_header;
  if (first_seq > 255) {
    throw std::invalid_argument("first_seq must be 0..255");
  }
  c.first_seq = static_cast<uint8_t>(first_seq);
  auto& imp = c.impairments;
  imp.snr_dB = snr_db;
  imp.cfo_Hz = cfo_hz;
  imp.nof_taps = taps;
  imp.tap_decay_dB = tap_decay_db;
  imp.gain = gain;
  if (phase_rad && random_phase) {
    throw std::invalid_argument("give either phase_rad or random_phase, not both");
  }
  imp.phase_rad = phase_rad.value_or(0.0);
  imp.random_phase = random_phase;
  if (!(sample_rate > 0.0)) {
    throw std::invalid_argument("sample_rate must be > 0");
  }
  imp.sample_rate_sps = sample_rate;
  bb::output_config out;
  out.base = base;
  const auto type = whd::parse_datatype(datatype);
  if (!type) {
    throw std::invalid_argument("datatype must be cf32_le, ci16_le or ci8, not '" + datatype + "'");
  }
  out.type = *type;
  out.raw = raw;
  out.description = description;
  out.sample_rate_sps = sample_rate;
  bb::output_summary s;
  {
    py::gil_scoped_release release;
    try {
      s = bb::write_capture(c, out);
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::runtime_error& e) {
      throw file_problem(e.what());
    }
  }
  py::dict d;
  d["data_path"] = s.data_path.string();
  d["meta_path"] = s.meta_path.empty() ? py::object(py::none()) : py::object(py::str(s.meta_path.string()));
  d["truth_path"] = s.truth_path.string();
  d["frames_path"] = s.frames_path.string();
  d["samples"] = s.plan.nof_samples;
  d["scale"] = s.scale;
  d["peak"] = s.peak;
  d["clipped"] = s.nof_clipped;
  d["truth_bytes"] = s.nof_truth_bytes;
  d["signal_power"] = s.plan.signal_power;
  d["noise_power"] = s.plan.noise_power;
  d["frames_dropped"] = s.plan.nof_frames_dropped;
  return d;
}

} // namespace

PYBIND11_MODULE(_whdrx, m)
{
  m.doc() = "whd-rx's receiver and transmitter (use the package whdrx, not this module)";
  // An unusable capture (a bad file, or one too short to hold a frame) raises
  // whdrx.CaptureError, and a truth or payload file that cannot be used OSError,
  // each with whd-rx's message.
  static py::exception<tr::capture_error> capture_error(m, "CaptureError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) {
        std::rethrow_exception(p);
      }
    } catch (const tr::capture_error& e) {
      capture_error(e.what());
    } catch (const bb::unusable_file& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const file_problem& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });
  m.attr("SAMPLE_RATE_SPS") = whd::profile::SAMPLE_RATE_SPS;
  m.attr("SYMBOL_LEN") = whd::profile::SYMBOL_LEN;
  m.def("release", &release_kept,
        "frees the receiver kept from the last decode (its GPU and page-locked memory); the next decode makes a new one");
  m.def("device_count", &whd::cuda::device_count, "CUDA devices usable here (0 without a GPU or driver)");
  m.def("no_device_reason", &whd::cuda::no_device_reason, "why no CUDA device is usable, in words");
  m.def("decode_path", &decode_path, py::arg("path"), py::arg("backend"), py::arg("link"), py::arg("gpus"), py::arg("device"),
        py::arg("batch"), py::arg("threads"), py::arg("sample_rate"), py::arg("format"), py::arg("truth"), py::arg("output"),
        py::arg("llr"), py::arg("llr_scale"));
  m.def("decode_buffer", &decode_buffer, py::arg("samples"), py::arg("datatype"), py::arg("display"), py::arg("backend"),
        py::arg("link"), py::arg("gpus"), py::arg("device"), py::arg("batch"), py::arg("threads"), py::arg("sample_rate"),
        py::arg("truth"), py::arg("output"), py::arg("llr"), py::arg("llr_scale"));
  m.def("write_capture", &write_capture, py::arg("base"), py::arg("datatype"), py::arg("raw"), py::arg("mods"), py::arg("mcs"), py::arg("nds"),
        py::arg("frames"), py::arg("payload"), py::arg("seed"), py::arg("snr_db"), py::arg("cfo_hz"), py::arg("taps"),
        py::arg("tap_decay_db"), py::arg("gain"), py::arg("phase_rad"), py::arg("random_phase"), py::arg("lead"),
        py::arg("gap"), py::arg("tail"), py::arg("corrupt_header"), py::arg("cut"), py::arg("first_seq"),
        py::arg("sample_rate"), py::arg("description"));
}
