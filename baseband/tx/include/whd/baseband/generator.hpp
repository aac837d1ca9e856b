/// @file generator.hpp
/// Assembles a whole capture of the profile (§4: "any number of frames, with
/// arbitrary samples before, between and after them"): leading samples, frames
/// separated by gaps, a tail, impairments, and a cut at the end; and streams it
/// block by block into a sink, so that a capture of millions of symbols never
/// needs all its samples in memory.
///
/// Layout, in samples: lead, frame 0, gap, frame 1, gap, ..., frame F-1, tail; then
/// the last `cut_samples` are dropped. Frame i's header carries seq = (first_seq + i)
/// mod 256; its modulation and Nd cycle through the configured lists.
///
/// Frames are prepared (payload, coding) and blocks of samples made (symbols,
/// channel, CFO, noise) on a pool of threads, a bounded window of them at a time,
/// and handed to the sink in capture order. Every random draw comes from a stream
/// of its own (frame i's payload from derive_stream_seed(seeds.payload, i), sample
/// n's noise from derive_stream_seed(seeds.noise, n)), so a seed gives the same
/// capture, byte for byte, with any number of threads.
#pragma once

#include <whd/baseband/impairments.hpp>
#include <whd/baseband/modulator.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/transport/sample_types.hpp>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

namespace whd::baseband {

/// What to generate.
struct capture_config {
  std::vector<profile::modulation> mods{profile::modulation::qpsk}; ///< frame i uses mods[i % size]
  std::vector<uint32_t> nds{8};          ///< frame i has nds[i % size] data symbols (1 .. MAX_ND)
  /// Profile 2: frame i is coded at mcs[i % size] (0, 1, 2, 7; its constellation then
  /// replaces mods), or uncoded where that is profile::NO_MCS; empty: all uncoded.
  std::vector<int> mcs;
  uint64_t nof_frames = 2;               ///< frames transmitted (0: no frame, e.g. noise only)
  uint64_t lead_samples = 1000;          ///< samples before the first frame
  uint64_t gap_samples = 777;            ///< samples between frames
  std::optional<uint64_t> tail_samples;  ///< samples after the last frame; none: gap_samples
  uint64_t cut_samples = 0;              ///< samples dropped at the end (cuts off the last frame)
  std::vector<uint64_t> corrupt_header_frames; ///< frame indices (0-based) sent with a failing CRC
  std::filesystem::path payload_path;    ///< payload bytes, read in order and cyclically; empty: random
  uint64_t seed = 1;                     ///< master seed of every random stream (derive_seeds)
  uint8_t first_seq = 0;                 ///< seq of frame 0
  impairment_config impairments;         ///< channel, CFO, gain, phase, noise
  /// Samples per block: the unit of work of a thread and what the sink is handed at
  /// a time (the CFO's phasor starts again, in double precision, at each block).
  std::size_t block_samples = 1u << 16;
  /// Threads that prepare frames and make blocks (the sink is fed on the calling
  /// thread); 0: all hardware threads. The output does not depend on it.
  unsigned nof_threads = 0;
};

/// One transmitted frame, as the sidecar NAME.frames.json lists it.
struct frame_record {
  uint64_t index = 0;   ///< position in transmit order (0-based)
  uint64_t start = 0;   ///< first sample of its first preamble symbol, guard included, before the channel delay
  uint32_t nd = 0;      ///< data symbols (as sent, also when cut off)
  profile::modulation mod = profile::modulation::qpsk;
  int mcs = profile::NO_MCS; ///< coded frames' MCS
  uint64_t payload_bytes = 0; ///< bytes of the frame in the truth: Nd x bytes per symbol, or L when coded
  uint8_t seq = 0;
  bool header_ok = true; ///< false: sent with a corrupted header (its payload is not in the truth)
  uint64_t samples_present = 0; ///< samples of the frame inside the capture (< frame_samples(nd) when cut off)
};

/// Everything decided before the first sample.
struct capture_plan {
  impairment_seeds seeds;             ///< the streams' seeds (print them)
  std::vector<cf32> taps;             ///< multipath taps, unit energy
  std::complex<double> complex_gain;  ///< g e^{j phi}
  double signal_power = 0.0;          ///< mean power of the frames on air without noise (SNR reference)
  double noise_power = 0.0;           ///< E|w|^2 of the noise; 0 when noiseless
  uint64_t nof_samples = 0;           ///< samples in the capture, after the cut
  uint64_t nof_samples_uncut = 0;     ///< samples before the cut
  std::vector<frame_record> frames;   ///< listed frames: those whose preamble and header are whole
  uint64_t nof_frames_dropped = 0;    ///< frames cut off before the end of their header (not listed)
  uint64_t truth_bytes = 0;           ///< payload bytes of listed frames with intact headers
};

/// Validates `cfg` and lays the capture out. Draws the channel and phase (cheap).
/// @throws std::invalid_argument naming the bad setting
capture_plan plan_capture(const capture_config& cfg);

/// Receives a capture as it is generated, in order.
class capture_sink {
public:
  virtual ~capture_sink() = default;
  /// The plan, before anything else.
  virtual void begin(const capture_plan& plan) = 0;
  /// Samples [first, first + block.size()) on air (impaired, in signal units).
  virtual void samples(uint64_t first, std::span<const cf32> block) = 0;
  /// A listed frame begins (called in transmit order, before its payload, and before
  /// the block holding its first sample).
  virtual void frame(const frame_record& rec) = 0;
  /// Payload bytes of the current frame when its header is intact, in order (the
  /// whole payload, also of a frame cut off at the end of the capture; a coded
  /// frame's L information bytes).
  virtual void truth(std::span<const uint8_t> bytes) = 0;
  /// Everything has been delivered.
  virtual void end() = 0;
};

/// Generates the capture `cfg` into `sink`, whose calls all come from the calling
/// thread, in order.
/// @throws std::invalid_argument on a bad configuration, std::runtime_error when the
///   payload file cannot be read; whatever the sink throws
/// @return the plan it followed
capture_plan generate_capture(const capture_config& cfg, capture_sink& sink);

/// A sink that keeps everything in memory (tests, small captures).
class memory_capture final : public capture_sink {
public:
  void begin(const capture_plan& plan) override { plan_ = plan; }
  void samples(uint64_t first, std::span<const cf32> block) override;
  void frame(const frame_record& rec) override { frames_.push_back(rec); }
  void truth(std::span<const uint8_t> bytes) override { truth_.insert(truth_.end(), bytes.begin(), bytes.end()); }
  void end() override {}

  const capture_plan& plan() const noexcept { return plan_; }
  const std::vector<cf32>& samples() const noexcept { return samples_; }
  const std::vector<frame_record>& frames() const noexcept { return frames_; }
  const std::vector<uint8_t>& truth() const noexcept { return truth_; }

private:
  capture_plan plan_;
  std::vector<cf32> samples_;
  std::vector<frame_record> frames_;
  std::vector<uint8_t> truth_;
};

} // namespace whd::baseband
