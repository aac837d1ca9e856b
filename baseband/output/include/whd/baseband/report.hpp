/// @file report.hpp
/// The JSON report of whd-rx (profile §9) and the optional comparison with a
/// truth payload.
#pragma once

#include <whd/baseband/rx_types.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace whd::baseband {

/// What was read.
struct input_description {
  std::string path;
  std::string datatype;
  uint64_t samples = 0;
  std::optional<double> sample_rate_sps;
};

/// How long a region took (profile §8).
struct timing_description {
  std::string backend;        ///< "cpu" or "gpu"
  std::string region;         ///< "end-to-end" or "pipeline"
  double seconds = 0.0;       ///< wall time of the region
  uint64_t data_symbols = 0;
  uint64_t payload_bits = 0;  ///< channel bits of the data symbols decoded (raw_gbps; a coded frame's coded bits)
  uint64_t info_bits = 0;     ///< payload bits written (info_gbps: per second of air, profile 2 §3)
};

/// Bit errors of a decoded payload against a truth payload.
struct truth_comparison {
  std::string path;
  uint64_t expected_bytes = 0;
  uint64_t decoded_bytes = 0;
  uint64_t compared_bits = 0;
  uint64_t bit_errors = 0;     ///< over the common length
  uint64_t missing_bits = 0;   ///< |expected - decoded| in bits
  double ber() const { return compared_bits ? double(bit_errors) / double(compared_bits) : 0.0; }
};

/// Compare `decoded` with `expected` byte by byte (bit errors over the common length).
truth_comparison compare_with_truth(std::span<const uint8_t> decoded, std::span<const uint8_t> expected);

/// The same comparison as compare_with_truth, streamed: the decoded payload is fed
/// as it is written and the truth file is read alongside it in blocks, so memory
/// stays bounded however large the capture (a payload of tens of GB is compared
/// without holding either side).
class truth_checker final : public payload_sink {
public:
  /// Open the truth file.
  /// @throws std::runtime_error naming the file when it cannot be opened
  explicit truth_checker(const std::filesystem::path& truth);
  ~truth_checker() override;
  truth_checker(const truth_checker&) = delete;
  truth_checker& operator=(const truth_checker&) = delete;

  /// Compare the next decoded bytes with the truth at the same offset.
  /// @throws std::runtime_error naming the file when reading it fails
  void write(std::span<const uint8_t> bytes) override;
  /// The comparison of everything written so far (`path` is the truth file).
  truth_comparison result() const;

private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  uint64_t expected_bytes_ = 0;
  uint64_t decoded_bytes_ = 0;
  uint64_t bit_errors_ = 0;
  std::vector<uint8_t> block_;
};

/// ns per data symbol, x real time and raw Gbps, as profile §8 defines them.
nlohmann::json timing_json(const timing_description& t);

/// The whole report (profile §9); `truth` adds a "truth" object when given.
/// Fields added to §9: per frame "bad_samples" (non-finite samples taken as 0 in its
/// FFT windows) and "bad_symbols" ([first, count] runs of data symbols, 0 being the
/// frame's first, whose windows held any); per header failure "bad_samples"; and
/// "interrupted" (the run was stopped: frames after the last listed were not searched);
/// "resources" (resource_use: peak RSS, device and pinned memory, batch size).
/// `with_frames` false leaves "frames" out, for report_writer to write them.
nlohmann::json make_report(const input_description& in, const receive_result& res, const timing_description& t,
                           const std::optional<truth_comparison>& truth = std::nullopt, bool with_frames = true);

/// The report's text written as a run goes: its "frames" first, as the receiver
/// hands them over (rx_config::on_frames), formatted and written by a thread of its
/// own (some 16 000 frames a thread when that many wait: a capture of a million
/// short frames has a report of some 200-300 MB, which written after the run took
/// longer than the run's decode), then the rest of the report once the run is over.
/// The text reads back as make_report's JSON with those frames; its layout is
/// nlohmann's dump(indent) (-1: compact) but for "frames" coming first and each frame
/// written compact on a line of its own (one line a frame at any indent). The frames
/// go straight from the results to the text instead of through a JSON object each,
/// whose making and writing cost some 3 us a frame. Numbers keep their values (a
/// non-finite one is null, as nlohmann writes it); invalid UTF-8 in strings becomes
/// U+FFFD.
class report_writer {
public:
  /// Writes its text, returns false when it could not (errno says why).
  using output = std::function<bool(std::string_view)>;

  /// Writes the report's opening; the thread starts.
  report_writer(output out, int indent);
  /// Stops the thread; frames handed over and not yet written are dropped.
  ~report_writer();
  report_writer(const report_writer&) = delete;
  report_writer& operator=(const report_writer&) = delete;

  /// The next frames of the list (copied), from one thread at a time.
  void add(std::span<const frame_result> frames);
  /// Frames handed over so far.
  std::size_t size() const noexcept;
  /// Writes the frames handed over, then the rest of `report` (whatever it holds as
  /// "frames" is left out) and a line break. Returns false when a write failed,
  /// at this call or before it (errno says why); nothing is written after one.
  bool finish(nlohmann::json report);

private:
  struct state;
  std::unique_ptr<state> s_;
};

/// An output that writes to `file` and flushes it.
report_writer::output file_output(std::FILE* file);

/// report_writer's text of `report` with `frames`, without the final line break.
std::string dump_report(nlohmann::json report, const std::vector<frame_result>& frames, int indent);

/// report_writer's text of `report` with `frames` written to `file`.
/// Returns false when a write failed (errno says why).
bool write_report(std::FILE* file, nlohmann::json report, const std::vector<frame_result>& frames, int indent);

} // namespace whd::baseband
