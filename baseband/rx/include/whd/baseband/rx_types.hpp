/// @file rx_types.hpp
/// What a receiver is configured with and what it reports (profile §4, §9).
/// Data outcomes (no preamble, CRC failure, truncation) are fields here, never
/// exceptions.
#pragma once

#include <whd/baseband/profile.hpp>
#include <whd/transport/enum_names.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace whd::baseband {

class payload_sink;

/// How soft decisions are stored: one value per payload bit, in payload order.
enum class llr_format {
  int8, ///< round(LLR x scale), saturated to +-127
  f16,  ///< IEEE binary16, saturated to +-65504
  f32,  ///< IEEE binary32
};

inline constexpr enum_names<llr_format, 3> LLR_FORMAT_NAMES{
    {{llr_format::int8, "int8"}, {llr_format::f16, "f16"}, {llr_format::f32, "f32"}}};
constexpr const char* to_string(llr_format f) { return name_of(LLR_FORMAT_NAMES, f).data(); }
constexpr std::optional<llr_format> parse_llr_format(std::string_view s) { return parse_name(LLR_FORMAT_NAMES, s); }
/// Bytes one value takes.
constexpr std::size_t llr_value_bytes(llr_format f) { return f == llr_format::int8 ? 1 : f == llr_format::f16 ? 2 : 4; }

/// Soft output: LLR = ln P(b = 0) / P(b = 1) of every payload bit (max-log,
/// demap.hpp), written beside the payload.
struct llr_output {
  payload_sink* sink = nullptr; ///< where the values go (null: no soft output)
  llr_format format = llr_format::int8;
  /// int8 only: the stored value is round(LLR x scale); 4 keeps |LLR| up to 31.75
  /// in steps of 0.25.
  float scale = 4.0f;
};

/// Consecutive data symbols of a frame: first is 0 for the frame's first data symbol.
struct symbol_run {
  uint32_t first = 0;
  uint32_t count = 0;
  friend bool operator==(const symbol_run&, const symbol_run&) = default;
};

/// One accepted frame (profile §9 "frames").
struct frame_result {
  uint64_t start = 0;            ///< first preamble sample (guard included), as located
  profile::modulation mod = profile::modulation::qpsk;
  /// Profile 2: the coded frame's MCS (0, 1, 2, 7), profile::NO_MCS for an uncoded frame.
  int mcs = profile::NO_MCS;
  uint32_t nd = 0;               ///< data symbols announced by the header
  uint8_t seq = 0;               ///< frame sequence number
  uint32_t symbols = 0;          ///< whole data symbols decoded (< nd when truncated)
  bool truncated = false;        ///< the capture ended inside the frame
  double cfo_Hz = 0.0;           ///< carrier frequency offset estimate
  double snr_dB = 0.0;           ///< preamble SNR, signal over whole-band noise (as whd-tx states SNR)
  uint64_t payload_offset = 0;   ///< first byte of this frame in the payload file
  /// Bytes written for this frame: its whole symbols' bits (uncoded), its L
  /// information bytes (coded; 0 when truncated, profile 2 §3).
  uint64_t payload_bytes = 0;
  /// Coded frames: the bytes Reed-Solomon corrected, and the codewords it could not
  /// correct (written as received, profile 2 §3).
  uint32_t rs_corrected = 0;
  uint32_t rs_failed = 0;
  /// Non-finite samples (NaN or Inf in I or Q) in the FFT windows the frame was
  /// decoded from (preamble, header, data symbols decoded): each was taken as 0.
  /// Non-zero marks a frame whose bits may be wrong where they lie.
  uint64_t bad_samples = 0;
  /// The data symbols whose FFT windows held any of them, in order: their payload
  /// bytes are written (the payload stays whole symbols) but are unreliable.
  std::vector<symbol_run> bad_symbols;
};

/// Frames handed over as a run goes (rx_config::on_frames).
using frames_fn = std::function<void(std::span<const frame_result>)>;

/// Set-up parameters of the receive chain, shared by every backend so that
/// they make the same decisions.
struct rx_config {
  /// Sample rate used to state CFO in Hz [samples/s].
  double sample_rate_sps = profile::SAMPLE_RATE_SPS;
  /// Detection: normalised lag-576 autocorrelation |P|^2/(R1 R2) must exceed this.
  /// A frame at SNR s gives about (s / (1 + s))^2: 0.1 still finds frames at -3 dB,
  /// where MCS 0 decodes (its information bits need Es/N0 near 0 dB); noise alone
  /// stays far below, and validation against the preamble rejects what crosses.
  float detect_threshold = 0.1f;
  /// Validation: energy of the preamble cross-correlation within +-G/2 lags of its
  /// peak, normalised (a single clean path gives N/NOF_USED = 1.45), must exceed this.
  float validate_threshold = 0.3f;
  /// First path: earliest lag within G/2 before the peak whose power exceeds this
  /// fraction of the peak's.
  float first_path_fraction = 0.2f;
  /// The FFT window starts this many samples before the end of the guard, so
  /// that weak early paths and timing jitter stay inside the guard.
  int timing_backoff = 8;
  /// Channel estimate: the window of the impulse response's taps (0: plain least
  /// squares), how many of them lie before the first path, and the fewest a frame
  /// keeps: each frame keeps the window's first K taps, K from channel_taps_min to
  /// channel_taps in steps of 8, where its estimate's error is least
  /// (channel_taps.hpp); channel_taps_min >= channel_taps keeps every tap.
  int channel_taps = 48;
  int channel_taps_early = 16;
  int channel_taps_min = 24;
  /// Worker threads for the CPU backend (0: all hardware threads).
  unsigned nof_threads = 0;
  /// Data symbols decoded per batch (bounds memory for long frames).
  std::size_t symbols_per_batch = 4096;
  /// Cancellation (may be null; must outlive run()): once it reads true, run()
  /// starts no further frame (a frame being decoded is finished) and the search
  /// stops at its next block of samples; the result and the payload then hold
  /// the frames finished so far, and receive_result::interrupted is set. It is
  /// only read, with relaxed loads, so a signal handler may set it.
  const std::atomic<bool>* stop = nullptr;
  /// Soft output beside the payload (none unless llr.sink is set; the sink must
  /// outlive run()).
  llr_output llr;
  /// Frames as they become final, for a report written while the run goes (may be
  /// empty): called in capture order, from one thread at a time, with every frame
  /// of the result exactly once (after its payload was handed to the sink), the
  /// last ones before run() returns. The span lives for the call only. A run that
  /// throws may stop calling it at any point.
  frames_fn on_frames;
};

/// A preamble whose header was rejected (profile §4).
struct header_failure {
  uint64_t start = 0;
  profile::header_status reason = profile::header_status::crc;
  /// Non-finite samples (taken as 0) in the preamble and header FFT windows: the
  /// likely cause of the failure when non-zero.
  uint64_t bad_samples = 0;
};

/// Memory a run held: what a benchmark of a large capture reports to show that
/// memory stays bounded (it does not grow with the capture).
struct resource_use {
  /// Peak resident set of the process so far (getrusage), bytes; mapped capture
  /// pages that were read count while they stay mapped.
  uint64_t peak_rss_bytes = 0;
  /// Device memory the backend allocated (all its GPUs), bytes; 0 on the CPU.
  uint64_t device_bytes = 0;
  /// Device memory in use on its busiest GPU as the driver reports it (the
  /// backend's, the CUDA context's and any other process's), bytes; 0 on the CPU.
  uint64_t device_used_bytes = 0;
  /// Page-locked host memory the backend allocated, bytes.
  uint64_t pinned_bytes = 0;
  /// Data symbols per batch the backend ran with (the GPU's may be fewer than asked
  /// for when device or pinned memory ran short at start).
  std::size_t symbols_per_batch = 0;
  /// Chunks each GPU decoded, from the first used (empty on the CPU).
  std::vector<uint64_t> chunks_per_gpu;
};

/// Peak resident set of this process so far, bytes (0 where unknown).
uint64_t peak_rss_bytes() noexcept;

/// Everything a run found.
struct receive_result {
  uint64_t nof_samples = 0;           ///< samples read
  std::vector<frame_result> frames;   ///< accepted frames, in capture order
  std::vector<header_failure> header_failures;
  uint64_t data_symbols = 0;          ///< data symbols decoded over all frames
  uint64_t payload_bytes = 0;         ///< bytes handed to the sink
  uint64_t llr_bytes = 0;             ///< bytes handed to rx_config::llr.sink (0 without one)
  /// Where the time went, per stage of the backend (for benchmarks; names are the
  /// backend's own, seconds of wall time, stages of different threads overlap).
  std::vector<std::pair<std::string, double>> stage_seconds;
  /// Memory held (see resource_use).
  resource_use resources;
  /// Seconds of run() spent setting up before the first samples were handed over
  /// (the GPU backend: CUDA context and buffers; 0 where nothing is set up per run).
  double setup_seconds = 0.0;
  /// rx_config::stop ended the run before the end of the source: the frames listed
  /// (and their payload) are complete, but frames after them were not searched.
  bool interrupted = false;
  /// Lines for the log's detail (whd-rx -v): choices the backend made as the run went
  /// (the GPUs that took chunks, and why further GPUs were started or not).
  std::vector<std::string> notes;
};

/// Where payload bytes go, in capture order.
class payload_sink {
public:
  virtual ~payload_sink() = default;
  virtual void write(std::span<const uint8_t> bytes) = 0;
  /// Told before a write by a caller that knows whether more writes wait behind it
  /// (whd-rx's writer thread: decoded chunks queued for it), that is, whether this
  /// sink is what holds the caller up; a sink may then spend more threads on the
  /// write (payload_file_sink's automatic way on tmpfs). Nothing by default.
  virtual void behind(bool more_waiting) { (void)more_waiting; }
};

/// Progress callback: samples consumed so far, total samples.
using progress_fn = std::function<void(uint64_t done, uint64_t total)>;

} // namespace whd::baseband
