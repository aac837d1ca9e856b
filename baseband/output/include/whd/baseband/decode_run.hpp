/// @file decode_run.hpp
/// What every front end of the receiver (whd-rx, the Python module whdrx) does
/// around one receiver::run, so that they say the same things: the checks of a
/// capture before it is decoded, the warnings after, the sink that feeds both a
/// payload file and a --truth comparison, and the report of the whole run.
/// decode_session.hpp runs them, in order, for both front ends.
#pragma once

#include <whd/baseband/report.hpp>
#include <whd/baseband/rx_types.hpp>
#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace whd::baseband {

/// Why a capture of this size cannot hold a frame (empty, or shorter than one
/// OFDM symbol), as a sentence that follows the data file's name; nullopt when it can.
std::optional<std::string> unusable_capture_size(const transport::capture_info& info);

/// A warning when the meta's annotations reach past the data (the data file was
/// likely cut short); nullopt otherwise.
std::optional<std::string> cut_short_warning(const transport::capture_info& info);

/// A warning when frames or rejected headers held NaN or infinite samples
/// (decoded as 0); nullopt otherwise.
std::optional<std::string> bad_samples_warning(const receive_result& res);

/// A warning when a run with header failures decoded fewer bytes than its truth holds:
/// the truth is compared as one stream, so where a failed header was a frame of the
/// truth's, the payload after it meets the next frame's truth. (A truth without the
/// frames whose headers are broken, as the conformance captures' are, stays aligned.)
std::optional<std::string> truth_shift_warning(const receive_result& res, const truth_comparison& truth);

/// Forwards the payload to a file and to a truth comparison, each if any (neither
/// keeps it: memory stays bounded for any capture size). With both, a large write
/// goes to the two at once, on this thread and one other: on a 40 GB capture the
/// two one after the other bound the whole run (whd-rx -v's stage "writer:
/// payload to the sink").
class tee_sink final : public payload_sink {
public:
  /// Either may be null; both must outlive the sink.
  tee_sink(payload_sink* first, payload_sink* second) : first_(first), second_(second) {}
  /// Write `bytes` to both (in parallel from 64 KiB on); rethrows either's error.
  void write(std::span<const uint8_t> bytes) override;
  /// Told to both.
  void behind(bool more_waiting) override;

private:
  payload_sink* first_;
  payload_sink* second_;
};

/// What a user waited for, as the report's timing states it beside the profile's
/// per-symbol figures.
struct run_seconds {
  double wall = 0.0;  ///< process start to the payload written (the whole run)
  double setup = 0.0; ///< process start to the first samples handed over: CUDA context, allocations
};

/// Seconds since this process started (the kernel's start time of the process,
/// 10 ms resolution), or nullopt where it cannot be read.
std::optional<double> seconds_since_process_start();

/// The report of one whole decode (profile §9, report.hpp's make_report): `capture`
/// is the name the user gave (a path, or a description of samples in memory),
/// `seconds` the run's wall time end to end (capture opened to payload written).
/// With `split`, the timing also holds setup_seconds, decode_seconds, wall_seconds,
/// air_seconds (capture samples / sample rate) and x_realtime_air (air over wall).
/// `with_frames` false leaves the frames to report_writer (report.hpp), the fast way
/// for captures of many frames.
nlohmann::json make_run_report(const std::string& capture, const transport::capture_info& info, const receive_result& res,
                               std::string_view backend, double seconds,
                               const std::optional<truth_comparison>& truth = std::nullopt,
                               const std::optional<run_seconds>& split = std::nullopt, double sample_rate_sps = 0.0,
                               bool with_frames = true);

/// The report's "llr" section for a run with soft output to `path`: file, format,
/// scale (int8), values, bytes, and what a value is.
nlohmann::json llr_report(const llr_output& llr, const receive_result& res, const std::string& path);

} // namespace whd::baseband
