/// @file decode_session.hpp
/// One decode of one capture, as every front end of the receiver (whd-rx, the Python
/// module whdrx) runs it, so that each step is written once and they say the same
/// things: the capture opened and checked, the truth file opened, the receiver's
/// configuration filled, the receiver made, the payload file opened, the run, the
/// truth comparison and the warnings after it, and the report. The front ends keep
/// what is theirs: options, logging, signals, where the soft values go, a report
/// written while the capture decodes (whd-rx), a receiver kept across calls (whdrx).
#pragma once

#include <whd/baseband/decode_run.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/baseband/receiver_factory.hpp>
#include <whd/baseband/report.hpp>
#include <whd/baseband/rx_types.hpp>
#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace whd::baseband {

/// A truth or payload file that cannot be used; what() names it and says why.
class unusable_file : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// What one decode is asked for.
struct decode_options {
  /// The capture: a SigMF meta or data file, or a raw file.
  std::string path;
  /// What the report and the messages call the capture (whdrx: the user's path, or a
  /// description of samples in memory); empty: the report says `path` and the
  /// messages name the data file, as whd-rx does.
  std::string name;
  /// The sample format of a raw capture (overrides its extension).
  std::optional<datatype> format;
  /// The expected payload, compared as it is decoded (the report's "truth").
  std::optional<std::string> truth;
  /// The payload file ("-": standard output); none: run()'s `otherwise` sink.
  std::optional<std::string> payload;
  /// How large writes go into the payload file.
  payload_write payload_way = payload_write::automatic;
  /// Read between frames: set, the run ends after the frame being decoded.
  const std::atomic<bool>* stop = nullptr;
  /// CPU worker threads (0: all cores).
  unsigned nof_threads = 0;
  /// The sample rate that states CFO in Hz; none: the meta's, else the profile's.
  std::optional<double> sample_rate_sps;
  /// Soft output: format and scale; its sink (null: none) may also be set through
  /// config() before the receiver is made.
  llr_output llr;
  /// Where the soft values go, as the report's "llr" names it.
  std::string llr_name;
  /// Told each warning as a line: the capture cut short, the receiver's notices,
  /// NaN or infinite samples.
  notice_fn warn;
};

/// One decode, in the steps a front end calls in this order: the constructor
/// (capture, truth, configuration), make_receiver (or a receiver of the front end's
/// own), run, report. open_payload may come before run, on either side of
/// make_receiver; run opens the payload file otherwise.
class decode_session {
public:
  /// Opens the capture (of its annotations only their reach, for the cut-short
  /// warning), checks that it can hold a frame, warns when its meta reaches past its
  /// data, opens it for reading and the truth file, and fills config().
  /// @throws transport::capture_error when the capture cannot be used (the message
  ///   names it: a missing file, a bad meta, no samples or fewer than one symbol)
  /// @throws unusable_file when the truth file cannot be read
  explicit decode_session(decode_options options);
  decode_session(const decode_session&) = delete;
  decode_session& operator=(const decode_session&) = delete;
  ~decode_session();

  /// The capture as opened.
  const transport::capture_info& info() const noexcept { return info_; }
  /// Its samples (whd-rx --dump reads them again after the run).
  const transport::capture_reader& reader() const noexcept { return *reader_; }
  /// The receiver's configuration: stop, threads, sample rate, soft output. A front
  /// end adds what is its own (on_frames, the soft values' sink) before making the
  /// receiver.
  rx_config& config() noexcept { return cfg_; }
  /// The receiver's configuration, read only.
  const rx_config& config() const noexcept { return cfg_; }

  /// The receiver `req` asks for, made with config() for this capture's datatype
  /// (receiver_factory.hpp); its notices go to the options' `warn`.
  /// @throws as make_receiver
  made_receiver make_receiver(const receiver_request& req, const choice_fn& chosen = {}) const;

  /// Opens the payload file the options name, if not open yet: a front end that
  /// wants an unusable file found before the receiver's set-up calls it first.
  /// @throws unusable_file naming the file when it cannot be created
  void open_payload();
  /// The payload file; null when the options name none or it is not open yet.
  const payload_file_sink* payload_file() const noexcept { return file_.get(); }

  /// Decodes the capture with `rx`: the payload to the payload file (opened now if
  /// open_payload was not called) or else to `otherwise` (may be null), and to the
  /// truth comparison; the file closed; the truth's comparison collected; a warning
  /// when samples were NaN or infinite, and when a failed header may have shifted the
  /// truth's comparison (decode_run.hpp's truth_shift_warning).
  /// @throws what the receiver or the payload file throw
  const receive_result& run(receiver& rx, payload_sink* otherwise = nullptr, const progress_fn& progress = {});

  /// What run returned.
  const receive_result& result() const noexcept { return result_; }
  /// The comparison with the truth file, after run; none without one.
  const std::optional<truth_comparison>& truth() const noexcept { return truth_; }

  /// The report of the run (decode_run.hpp's make_run_report, without the frames:
  /// report.hpp's writers add them), with an "llr" section when the run had soft
  /// output. `seconds`: the run's wall time end to end; `split` as make_run_report.
  nlohmann::json report(double seconds, const std::optional<run_seconds>& split = std::nullopt) const;

private:
  decode_options options_;
  transport::capture_info info_;
  std::unique_ptr<transport::capture_reader> reader_;
  std::unique_ptr<truth_checker> checker_;
  rx_config cfg_;
  std::unique_ptr<payload_file_sink> file_;
  receive_result result_;
  std::optional<truth_comparison> truth_;
  std::string backend_;     ///< of the receiver that ran
  bool soft_output_ = false; ///< the run had a soft-value sink
};

} // namespace whd::baseband
