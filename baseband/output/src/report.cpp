#include <whd/baseband/report.hpp>
#include <whd/transport/at_once.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

namespace whd::baseband {

namespace {

/// Bit errors between two byte runs of the same length. Eight bytes at a time, and
/// a popcount only where they differ: payloads mostly agree, and a popcount per
/// byte (a library call on CPUs without the instruction) ran at ~200 MB/s, slower
/// than the receiver writes payload.
uint64_t count_bit_errors(const uint8_t* a, const uint8_t* b, std::size_t n)
{
  uint64_t errors = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) {
      errors += uint64_t(std::popcount(x ^ y));
    }
  }
  for (; i < n; ++i) {
    errors += uint64_t(std::popcount(unsigned(a[i] ^ b[i])));
  }
  return errors;
}

/// The comparison's totals from its three counts.
truth_comparison make_comparison(uint64_t decoded_bytes, uint64_t expected_bytes, uint64_t bit_errors)
{
  truth_comparison c;
  c.expected_bytes = expected_bytes;
  c.decoded_bytes = decoded_bytes;
  const uint64_t n = std::min(decoded_bytes, expected_bytes);
  c.bit_errors = bit_errors;
  c.compared_bits = n * 8;
  c.missing_bits = (std::max(decoded_bytes, expected_bytes) - n) * 8;
  return c;
}

} // namespace

truth_comparison compare_with_truth(std::span<const uint8_t> decoded, std::span<const uint8_t> expected)
{
  const std::size_t n = std::min(decoded.size(), expected.size());
  return make_comparison(decoded.size(), expected.size(), count_bit_errors(decoded.data(), expected.data(), n));
}

truth_checker::truth_checker(const std::filesystem::path& truth) : path_(truth)
{
  std::error_code ec;
  const auto size = std::filesystem::file_size(truth, ec);
  file_ = ec ? nullptr : std::fopen(truth.c_str(), "rb");
  if (file_ == nullptr) {
    throw std::runtime_error("cannot read truth file '" + truth.string() + "'; check the path given to --truth");
  }
  expected_bytes_ = size;
}

truth_checker::~truth_checker()
{
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

void truth_checker::write(std::span<const uint8_t> bytes)
{
  constexpr std::size_t BLOCK = std::size_t(1) << 20;
  while (!bytes.empty() && decoded_bytes_ < expected_bytes_) {
    const std::size_t n = std::size_t(std::min<uint64_t>({bytes.size(), BLOCK, expected_bytes_ - decoded_bytes_}));
    block_.resize(n);
    if (std::fread(block_.data(), 1, n, file_) != n) {
      throw std::runtime_error("cannot read truth file '" + path_.string() + "' at byte " + std::to_string(decoded_bytes_) +
                               ": it ended early or a read failed");
    }
    bit_errors_ += count_bit_errors(bytes.data(), block_.data(), n);
    decoded_bytes_ += n;
    bytes = bytes.subspan(n);
  }
  decoded_bytes_ += bytes.size(); // past the truth's end: counted as extra bits
}

truth_comparison truth_checker::result() const
{
  truth_comparison c = make_comparison(decoded_bytes_, expected_bytes_, bit_errors_);
  c.path = path_.string();
  return c;
}

nlohmann::json timing_json(const timing_description& t)
{
  nlohmann::json j;
  j["backend"] = t.backend;
  j["region"] = t.region;
  j["data_symbols"] = t.data_symbols;
  j["seconds"] = t.seconds;
  if (t.data_symbols > 0 && t.seconds > 0.0) {
    const double ns = t.seconds * 1e9 / double(t.data_symbols);
    j["ns_per_symbol"] = ns;
    j["x_realtime"] = profile::SYMBOL_PERIOD_NS / ns;
    // Bits per data symbol times symbols per second (mixed modulations: their mean).
    j["raw_gbps"] = double(t.payload_bits) / t.seconds / 1e9;
  } else {
    j["ns_per_symbol"] = nullptr;
    j["x_realtime"] = nullptr;
    j["raw_gbps"] = nullptr;
  }
  // Information bits the link carried per second of its air time (profile 2 §3).
  j["info_gbps"] = t.data_symbols > 0 ? nlohmann::json(double(t.info_bits) / (double(t.data_symbols) * profile::SYMBOL_PERIOD_NS))
                                      : nlohmann::json(nullptr);
  return j;
}

nlohmann::json make_report(const input_description& in, const receive_result& res, const timing_description& t,
                           const std::optional<truth_comparison>& truth, bool with_frames)
{
  nlohmann::json r;
  r["profile"] = profile::VERSION;
  r["input"] = {{"path", in.path}, {"datatype", in.datatype}, {"samples", in.samples}};
  if (in.sample_rate_sps) {
    r["input"]["sample_rate"] = *in.sample_rate_sps;
  }
  r["frames"] = nlohmann::json::array();
  static const std::vector<frame_result> none;
  for (const auto& f : with_frames ? res.frames : none) {
    auto bad_symbols = nlohmann::json::array();
    for (const auto& run : f.bad_symbols) {
      bad_symbols.push_back({run.first, run.count});
    }
    nlohmann::json j = {{"start", f.start},
                        {"mod", profile::to_string(f.mod)},
                        {"nd", f.nd},
                        {"seq", f.seq},
                        {"symbols", f.symbols},
                        {"truncated", f.truncated},
                        {"cfo_hz", f.cfo_Hz},
                        {"snr_db", f.snr_dB},
                        {"payload_offset", f.payload_offset},
                        {"payload_bytes", f.payload_bytes},
                        {"bad_samples", f.bad_samples},
                        {"bad_symbols", std::move(bad_symbols)}};
    if (f.mcs != profile::NO_MCS) {
      j["mcs"] = f.mcs;
      j["rs_corrected"] = f.rs_corrected;
      j["rs_failed"] = f.rs_failed;
    }
    r["frames"].push_back(std::move(j));
  }
  r["header_failures"] = nlohmann::json::array();
  for (const auto& h : res.header_failures) {
    r["header_failures"].push_back({{"start", h.start}, {"reason", profile::to_string(h.reason)}, {"bad_samples", h.bad_samples}});
  }
  r["payload_bytes"] = res.payload_bytes;
  r["interrupted"] = res.interrupted;
  r["timing"] = timing_json(t);
  const resource_use& m = res.resources;
  r["resources"] = {{"peak_rss_bytes", m.peak_rss_bytes},
                    {"device_bytes", m.device_bytes},
                    {"device_used_bytes", m.device_used_bytes},
                    {"pinned_bytes", m.pinned_bytes},
                    {"symbols_per_batch", m.symbols_per_batch}};
  if (truth) {
    r["truth"] = {{"path", truth->path},
                  {"expected_bytes", truth->expected_bytes},
                  {"decoded_bytes", truth->decoded_bytes},
                  {"compared_bits", truth->compared_bits},
                  {"bit_errors", truth->bit_errors},
                  {"missing_bits", truth->missing_bits},
                  {"ber", truth->ber()}};
  }
  return r;
}

namespace {

/// A frame list as nlohmann's dump writes a JSON array of make_report's frame objects
/// (keys in its order: sorted), but each frame on a line of its own, compact: a
/// capture of 1.6 million short frames gives some 310 MB of report instead of 470 MB
/// spread over 22 million lines, and a frame is one line to grep or to read back
/// line by line. Each frame is put together in a buffer from pieces made once (a key
/// with its comma) and appended whole: appending piece by piece made the report's
/// writing a visible part of a run of many short frames.
class frames_writer {
public:
  explicit frames_writer(int indent) : indent_(indent)
  {
    static constexpr const char* KEYS[] = {"bad_samples",    "bad_symbols",  "cfo_hz",    "mcs",    "mod",    "nd",
                                           "payload_bytes",  "payload_offset", "rs_corrected", "rs_failed", "seq",
                                           "snr_db",         "start",        "symbols",   "truncated"};
    for (std::size_t k = 0; k < std::size(KEYS); ++k) {
      key_[k].assign(k == 0 ? 0 : 1, ',');
      key_[k] += '"';
      key_[k] += KEYS[k];
      key_[k] += "\":";
    }
    first_ = "[";
    first_ += line(2);
    first_ += '{';
    next_ = "},";
    next_ += line(2);
    next_ += '{';
    last_ = "}";
    last_ += line(1);
    last_ += ']';
  }

  /// The text of `frames`, the list's opening before the first of them when `opens`.
  void write(std::string& out, std::span<const frame_result> frames, bool opens)
  {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      p_ = buf_;
      put(i == 0 && opens ? first_ : next_);
      frame(out, frames[i]);
      out.append(buf_, p_);
    }
  }

  /// The list's end (the whole list when it is empty).
  void close(std::string& out, bool empty) const { out += empty ? std::string_view("[]") : std::string_view(last_); }

private:
  void frame(std::string& out, const frame_result& f)
  {
    put(key_[0]);
    number(f.bad_samples);
    put(key_[1]);
    if (f.bad_symbols.empty()) {
      put("[]");
    } else {
      out.append(buf_, p_);
      p_ = buf_;
      bad_symbols(out, f.bad_symbols);
    }
    put(key_[2]);
    real(f.cfo_Hz);
    const bool coded = f.mcs != profile::NO_MCS; // mcs and the RS counts only then
    if (coded) {
      put(key_[3]);
      number(unsigned(f.mcs));
    }
    put(key_[4]);
    put(f.mod == profile::modulation::qpsk ? std::string_view("\"qpsk\"") : std::string_view("\"qam16\""));
    put(key_[5]);
    number(f.nd);
    put(key_[6]);
    number(f.payload_bytes);
    put(key_[7]);
    number(f.payload_offset);
    if (coded) {
      put(key_[8]);
      number(f.rs_corrected);
      put(key_[9]);
      number(f.rs_failed);
    }
    put(key_[10]);
    number(unsigned(f.seq));
    put(key_[11]);
    real(f.snr_dB);
    put(key_[12]);
    number(f.start);
    put(key_[13]);
    number(f.symbols);
    put(key_[14]);
    put(f.truncated ? std::string_view("true") : std::string_view("false"));
  }

  /// Runs of bad symbols, as many as there are: through the string, not the buffer.
  static void bad_symbols(std::string& out, const std::vector<symbol_run>& runs)
  {
    out += '[';
    for (std::size_t j = 0; j < runs.size(); ++j) {
      out += j == 0 ? "[" : ",[";
      out += std::to_string(runs[j].first);
      out += ',';
      out += std::to_string(runs[j].count);
      out += ']';
    }
    out += ']';
  }

  std::string line(int level) const
  {
    std::string s;
    if (indent_ >= 0) {
      s += '\n';
      s.append(std::size_t(level * indent_), ' ');
    }
    return s;
  }

  void put(std::string_view s)
  {
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }

  template <class T>
  void number(T v)
  {
    p_ = std::to_chars(p_, p_ + 24, v).ptr;
  }

  /// The shortest text that reads back as `v`; a whole number keeps a ".0" so that
  /// it reads back as a float (JSON readers such as Python's tell 1 from 1.0).
  void real(double v)
  {
    if (!std::isfinite(v)) {
      put("null");
      return;
    }
    char* start = p_;
    p_ = std::to_chars(p_, p_ + 32, v).ptr;
    if (std::string_view(start, std::size_t(p_ - start)).find_first_of(".e") == std::string_view::npos) {
      put(".0");
    }
  }

  int indent_;
  std::array<std::string, 15> key_;
  std::string first_, next_, last_;
  /// One frame's text: the line's start (at most 2 + 1 + 2 x 64 bytes for an indent
  /// of up to 64), the keys' pieces (at most 12 x 17 bytes) and the values (at most
  /// 12 x 32).
  char buf_[1024];
  char* p_ = buf_;
};

/// Frames a thread formats at a time (some 5 MB of text).
constexpr std::size_t FRAMES_PER_BLOCK = 16384;

/// The text of several blocks of frames at once, a thread a block, handed to `take`
/// in order (a million frames' text formatted by one thread took longer than the
/// decode of their capture's air time).
class frames_formatter {
public:
  explicit frames_formatter(int indent) : indent_(indent)
  {
    const auto nof_threads = std::size_t(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
    for (std::size_t t = 0; t < nof_threads; ++t) {
      writers_.emplace_back(indent);
    }
    text_.resize(nof_threads);
  }

  /// `frames`, which follow `before` frames of the list.
  template <class Take>
  void format(std::span<const frame_result> frames, std::size_t before, Take&& take)
  {
    const std::size_t nof_blocks = (frames.size() + FRAMES_PER_BLOCK - 1) / FRAMES_PER_BLOCK;
    auto one = [&](std::size_t t, std::size_t block) {
      text_[t].clear();
      const std::size_t begin = block * FRAMES_PER_BLOCK;
      writers_[t].write(text_[t], frames.subspan(begin, std::min(frames.size() - begin, FRAMES_PER_BLOCK)), before + begin == 0);
    };
    for (std::size_t round = 0; round < nof_blocks; round += writers_.size()) {
      const std::size_t n = std::min(writers_.size(), nof_blocks - round);
      transport::run_at_once(n, [&](std::size_t t) { one(t, round + t); });
      for (std::size_t t = 0; t < n; ++t) {
        take(std::string_view(text_[t]));
      }
    }
  }

  /// The list's end (the whole list when it held no frame).
  std::string close(bool empty) const
  {
    std::string end;
    writers_.front().close(end, empty);
    return end;
  }

  int indent() const noexcept { return indent_; }

private:
  int indent_;
  std::vector<frames_writer> writers_;
  std::vector<std::string> text_;
};

/// The report's members other than "frames", as they follow the frame list: the
/// object's text without its opening brace ("\n  \"backend\": ...\n}"), or its close
/// alone when it has no other member.
std::string members_after_frames(nlohmann::json report, int indent)
{
  if (report.is_object()) {
    report.erase("frames");
  }
  if (!report.is_object() || report.empty()) {
    return indent >= 0 ? "\n}" : "}";
  }
  std::string text = report.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  text.front() = ','; // "{" -> ",": the members follow the frames
  return text;
}

} // namespace

struct report_writer::state {
  state(output o, int indent) : out(std::move(o)), formatter(std::clamp(indent, -1, 64)) {}

  /// Writes `text` unless a write failed before.
  void put(std::string_view text)
  {
    if (ok && !text.empty() && !out(text)) {
      ok = false;
      err = errno;
    }
  }

  void loop()
  {
    std::vector<frame_result> batch;
    for (;;) {
      {
        std::unique_lock lk(m);
        cv.wait(lk, [&] { return !pending.empty() || closing; });
        if (pending.empty()) {
          return;
        }
        batch.swap(pending);
      }
      formatter.format(batch, written, [&](std::string_view t) { put(t); });
      written += batch.size();
      batch.clear();
    }
  }

  output out;
  frames_formatter formatter;
  std::mutex m;
  std::condition_variable cv;
  std::vector<frame_result> pending; ///< handed over, not yet formatted
  bool closing = false;
  std::size_t written = 0; ///< frames formatted (the thread's)
  std::size_t added = 0;   ///< frames handed over (the caller's)
  bool ok = true;
  int err = 0;
  std::jthread thread; ///< last: started once the rest is made
};

report_writer::report_writer(output out, int indent) : s_(std::make_unique<state>(std::move(out), indent))
{
  const int in = s_->formatter.indent();
  s_->put(in >= 0 ? "{\n" + std::string(std::size_t(in), ' ') + "\"frames\": " : std::string("{\"frames\":"));
  s_->thread = std::jthread([st = s_.get()] {
    transport::name_this_thread("whd-report");
    st->loop();
  });
}

report_writer::~report_writer()
{
  if (s_ && s_->thread.joinable()) {
    {
      std::lock_guard lk(s_->m);
      s_->closing = true;
    }
    s_->cv.notify_one();
    s_->thread.join();
  }
}

void report_writer::add(std::span<const frame_result> frames)
{
  if (frames.empty()) {
    return;
  }
  {
    std::lock_guard lk(s_->m);
    s_->pending.insert(s_->pending.end(), frames.begin(), frames.end());
  }
  s_->added += frames.size();
  s_->cv.notify_one();
}

std::size_t report_writer::size() const noexcept { return s_->added; }

bool report_writer::finish(nlohmann::json report)
{
  {
    std::lock_guard lk(s_->m);
    s_->closing = true;
  }
  s_->cv.notify_one();
  s_->thread.join();
  const int indent = s_->formatter.indent();
  s_->put(s_->formatter.close(s_->written == 0));
  s_->put(members_after_frames(std::move(report), indent));
  s_->put("\n");
  errno = s_->ok ? 0 : s_->err;
  return s_->ok;
}

std::string dump_report(nlohmann::json report, const std::vector<frame_result>& frames, int indent)
{
  std::string text;
  text.reserve(4096 + frames.size() * 200);
  {
    report_writer w(
      [&](std::string_view t) {
        text += t;
        return true;
      },
      indent);
    w.add(frames);
    w.finish(std::move(report));
  }
  text.pop_back(); // finish's line break
  return text;
}

bool write_report(std::FILE* file, nlohmann::json report, const std::vector<frame_result>& frames, int indent)
{
  report_writer w(file_output(file), indent);
  w.add(frames);
  return w.finish(std::move(report));
}

report_writer::output file_output(std::FILE* file)
{
  return [file](std::string_view t) { return std::fwrite(t.data(), 1, t.size(), file) == t.size() && std::fflush(file) == 0; };
}

} // namespace whd::baseband
