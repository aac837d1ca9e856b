/// @file frame_locator.hpp
/// Finds frames (profile §4) in three steps that every backend shares:
///   1. candidate_search (sync.hpp): every candidate window of the capture, a pure
///      function of the samples, found in parallel;
///   2. locate(): one candidate's fine timing, CFO, preamble channel estimate and
///      header, again a pure function of the samples and the candidate, so that
///      candidates are located in parallel;
///   3. frame_walk: the candidates in order, each taken or skipped by where the
///      frames before it end. Only this step is sequential, and it is bookkeeping.
/// Both backends locate frames this way, so they agree on every frame's start, CFO,
/// channel and header; they differ in where the steps run and how the data symbols
/// are decoded.
#pragma once

#include <whd/baseband/locate_outcome.hpp>
#include <whd/baseband/rx_types.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/baseband/tone_math.hpp>
#include <whd/transport/capture.hpp>

#include <array>
#include <memory>
#include <optional>
#include <vector>

namespace whd::baseband {

/// derotation(cfo_cps * i) for the N samples i of an FFT window (frame_sync::cfo_cps):
/// every window of a frame is derotated by it times the window's base phase.
using derotation_table = std::array<cf32, profile::N>;

/// A frame whose header was accepted, with what decoding its data needs.
struct located_frame {
  frame_sync sync;
  /// Its channel estimate, shared rather than copied (5.4 kB, and a capture of short
  /// packets has a frame every few microseconds); null where the channel stays on the
  /// device that located the frame (the GPU backend's walk).
  std::shared_ptr<const channel_estimate> channel;
  frame_result info;  ///< every field but payload_offset/payload_bytes
};

/// Everything locating one candidate computes (fine timing, CFO, the three FFT
/// windows, channel, header): what every backend must reproduce for the same
/// candidate, and what the GPU locator's tests compare field by field.
struct located_detection {
  locate_outcome what = locate_outcome::no_sync;              ///< never needs_more
  frame_sync sync;                                            ///< all but no_sync
  channel_estimate channel;                                   ///< rejected and accepted
  profile::header_status header = profile::header_status::ok; ///< rejected and accepted
  profile::header_fields fields;                              ///< as parsed (rejected and accepted)
  uint64_t bad_samples = 0; ///< non-finite samples in the three FFT windows, taken as 0 (rejected and accepted)
};

/// What conclude() reads of a located candidate besides its channel: a
/// located_detection's fields but the channel estimate, of which only the SNR.
struct located_summary {
  locate_outcome what = locate_outcome::no_sync; ///< never needs_more
  frame_sync sync;
  double snr_dB = 0.0;
  profile::header_status header = profile::header_status::ok;
  profile::header_fields fields;
  uint64_t bad_samples = 0;
};

/// What locating one candidate found, as the walk and the receivers use it.
struct located_candidate {
  /// Never needs_more; rejected: failure is set; accepted: frame is set.
  locate_outcome what = locate_outcome::no_sync;
  std::optional<located_frame> frame;
  std::optional<header_failure> failure;
  /// Where the walk goes on after this candidate, had it been taken: candidates whose
  /// coarse point lies before it are skipped.
  uint64_t resume = 0;
};

/// Locates candidates one at a time; one per thread (it holds an FFT plan).
class candidate_locator {
public:
  /// `smoother` (not owned, may be null: plain LS) must outlive the locator.
  candidate_locator(const rx_config& cfg, const channel_smoother* smoother);
  ~candidate_locator();
  candidate_locator(const candidate_locator&) = delete;
  candidate_locator& operator=(const candidate_locator&) = delete;

  /// Fine timing, CFO, channel estimate and header of candidate `d` of `src`.
  /// Non-finite samples in the preamble and header windows are taken as 0 and
  /// counted in the frame's or the failure's `bad_samples`.
  located_candidate locate(const transport::sample_source& src, const detection& d);
  /// The steps of locate() with everything they computed.
  located_detection examine(const transport::sample_source& src, const detection& d);
  /// What the walk and the receivers keep of `x`, the candidate `d` of a source of
  /// `total` samples (both backends turn their locators' results into this).
  located_candidate conclude(const located_detection& x, const detection& d, uint64_t total) const;
  /// The same for a candidate located elsewhere: an accepted frame gets `channel`
  /// (null when the channel stays where the candidate was located: the GPU's walk).
  located_candidate conclude(const located_summary& x, std::shared_ptr<const channel_estimate> channel, const detection& d,
                             uint64_t total) const;
  /// The derotation table of the last candidate examined whose windows were read
  /// (any outcome but no_sync and cut_off): what its data symbols need too.
  const derotation_table& last_derotation() const noexcept;

private:
  struct plan;
  rx_config cfg_;
  const channel_smoother* smoother_;
  std::unique_ptr<plan> plan_;
};

/// The channel smoother rx_config asks for (null for plain least squares).
std::unique_ptr<channel_smoother> make_channel_smoother(const rx_config& cfg);

/// The sequential step: candidates in window order, each taken unless its coarse
/// point lies before where the frames taken so far let the search go on.
class frame_walk {
public:
  /// Where the walk stands: candidates whose coarse point is before it are skipped.
  uint64_t position() const noexcept { return pos_; }
  /// The walk met a candidate cut off by the end of the capture: nothing follows.
  bool ended() const noexcept { return ended_; }
  /// Whether `d` is taken at this point of the walk (false once ended()).
  bool takes(const detection& d) const noexcept { return !ended_ && d.coarse >= pos_; }
  /// Take candidate `d` (takes(d) must hold) located as `c`; returns true when it
  /// yields a frame or a header failure, which the caller then reports.
  bool take(const detection& d, const located_candidate& c);
  /// Skip ahead (the caller consumed the source up to `pos` by other means).
  void advance_to(uint64_t pos) noexcept { pos_ = std::max(pos_, pos); }

private:
  uint64_t pos_ = 0;
  bool ended_ = false;
};

/// Room for the frames of a capture of `total` search positions, judged by the `seen`
/// frames its first `searched` positions held: a quarter more than that density gives,
/// never more than frames of the least length (preamble and header) could fill, and 0
/// when nothing is left to judge (no frame seen, or the whole capture searched).
/// The receivers reserve it after their first chunk or region: grown by doubling, a
/// million short frames' records had been moved and their fresh pages faulted in
/// twice over on the walking thread.
uint64_t frames_to_reserve(uint64_t seen, uint64_t searched, uint64_t total);

/// Payload bytes a frame writes: its whole symbols' bits when uncoded (§4), its L
/// information bytes when coded, none when a coded frame is truncated (profile 2 §3).
uint64_t payload_bytes_of(const frame_result& f);

/// Reserves frames_to_reserve(frames.size(), searched, total) when that is more than
/// `frames` holds. A hint: memory refused leaves the list growing as it would.
void reserve_frames(std::vector<frame_result>& frames, uint64_t searched, uint64_t total);

/// What the search found next (frame_locator::next).
struct locator_event {
  std::optional<located_frame> frame;     ///< an accepted frame, or
  std::optional<header_failure> failure;  ///< a rejected header
  uint64_t resume = 0;                    ///< where the search goes on
};

/// Frame search over a sample source, one event at a time (the frame dump and the
/// benches; the receivers run the three steps batched).
class frame_locator {
public:
  explicit frame_locator(const rx_config& cfg);
  ~frame_locator();
  frame_locator(const frame_locator&) = delete;
  frame_locator& operator=(const frame_locator&) = delete;

  /// The next frame or header failure whose candidate's coarse point is at or after
  /// `pos`; nullopt at the end, or when rx_config::stop is raised during the search
  /// (then stopped() is true).
  std::optional<locator_event> next(const transport::sample_source& src, uint64_t pos, const progress_fn& progress = {});
  /// The last next() returned nullopt because rx_config::stop was raised.
  bool stopped() const noexcept { return stopped_; }
  /// See candidate_search::set_block_filter.
  void set_block_filter(block_filter* f) noexcept { search_.set_block_filter(f); }

private:
  rx_config cfg_;
  candidate_search search_;
  std::unique_ptr<channel_smoother> smoother_;
  candidate_locator locator_;
  bool stopped_ = false;
  /// Candidates of windows [cached_lo_, cached_hi_) from the last search.
  std::vector<detection> cached_;
  uint64_t cached_lo_ = 0, cached_hi_ = 0;
};

/// e^{-j 2 pi cycles}, reduced in double first: the derotation of every backend.
cf32 derotation(double cycles);

} // namespace whd::baseband
