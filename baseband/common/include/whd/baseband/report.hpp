/// @file report.hpp
/// The JSON report of whd-rx (profile §9) and the optional comparison with a
/// truth payload.
#pragma once

#include <whd/baseband/rx_types.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
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
  uint64_t payload_bits = 0;
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
/// `with_frames` false leaves "frames" out, for dump_report to write them.
nlohmann::json make_report(const input_description& in, const receive_result& res, const timing_description& t,
                           const std::optional<truth_comparison>& truth = std::nullopt, bool with_frames = true);

/// The report as text, as `report.dump(indent)` writes it (-1: compact), with
/// `frames` as its "frames" (written in place of whatever `report` holds there).
/// The frames go straight from the results to the text instead of through a JSON
/// object each, whose making and writing cost some 3 us a frame: on a capture of
/// short packets, more than the frame's air time. Numbers keep their values (a
/// non-finite one is null, as nlohmann writes it); invalid UTF-8 in strings becomes
/// U+FFFD.
std::string dump_report(nlohmann::json report, const std::vector<frame_result>& frames, int indent);

/// dump_report's text and a line break written to `file` as it is made, some
/// 16 000 frames at a time (a capture of a million short frames has a report of some
/// 300 MB; several threads format its frames, a block each, and they are written in
/// order).
/// Returns false when a write failed (errno says why).
bool write_report(std::FILE* file, nlohmann::json report, const std::vector<frame_result>& frames, int indent);

} // namespace whd::baseband
