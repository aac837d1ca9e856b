/// @file frame_locator.hpp
/// Finds frames one after another (profile §4): detection, fine timing, CFO,
/// the preamble channel estimate and the header. Both backends locate frames
/// with this one class, so they agree on every frame's start, CFO, channel and
/// header; they differ only in how they decode the data symbols.
#pragma once

#include <whd/baseband/rx_types.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/baseband/tone_math.hpp>
#include <whd/transport/capture.hpp>

#include <memory>
#include <optional>

namespace whd::baseband {

/// A frame whose header was accepted, with what decoding its data needs.
struct located_frame {
  frame_sync sync;
  channel_estimate channel;
  frame_result info;  ///< every field but payload_offset/payload_bytes
};

/// What locating one detection found: the steps of frame_locator::next after the
/// detector (fine timing, CFO, the three FFT windows, channel, header), which every
/// backend must reproduce for the same detection.
struct located_detection {
  enum class outcome : uint8_t {
    no_sync,  ///< synchronize() found no preamble (or the source ends inside its windows)
    cut_off,  ///< the source ends before the header is whole: nothing decodable follows
    rejected, ///< a preamble whose header failed: `header` says why
    accepted, ///< a frame
  };
  outcome what = outcome::no_sync;
  frame_sync sync;                                              ///< all but no_sync
  channel_estimate channel;                                     ///< rejected and accepted
  profile::header_status header = profile::header_status::ok;   ///< rejected and accepted
  profile::header_fields fields;                                ///< as parsed (rejected and accepted)
  uint64_t bad_samples = 0; ///< non-finite samples in the three FFT windows, taken as 0 (rejected and accepted)
};

/// What the search found next.
struct locator_event {
  std::optional<located_frame> frame;     ///< an accepted frame, or
  std::optional<header_failure> failure;  ///< a rejected header
  uint64_t resume = 0;                    ///< where the search goes on
};

/// Frame search over a sample source.
class frame_locator {
public:
  explicit frame_locator(const rx_config& cfg);
  ~frame_locator();
  frame_locator(const frame_locator&) = delete;
  frame_locator& operator=(const frame_locator&) = delete;

  /// The next frame or header failure at or after `pos`; nullopt at the end, or when
  /// rx_config::stop is raised during the search (then stopped() is true).
  /// Non-finite samples in the preamble and header windows are taken as 0 and
  /// counted in the frame's or the failure's `bad_samples`.
  std::optional<locator_event> next(const transport::sample_source& src, uint64_t pos, const progress_fn& progress = {});
  /// Everything next() does for one detection `d` of `src` after the detector. A
  /// member, not a free function, so that it reuses this locator's FFT plan and
  /// channel smoother; the GPU locator's tests compare against it.
  located_detection locate(const transport::sample_source& src, const detection& d);
  /// The last next() returned nullopt because rx_config::stop was raised.
  bool stopped() const noexcept { return det_.stopped(); }
  /// See detector::set_block_filter.
  void set_block_filter(block_filter* f) noexcept { det_.set_block_filter(f); }

private:
  struct plan;
  rx_config cfg_;
  detector det_;
  std::unique_ptr<plan> plan_;
  std::unique_ptr<channel_smoother> smoother_;
};

/// e^{-j 2 pi cycles}, reduced in double first: the derotation of every backend.
cf32 derotation(double cycles);

} // namespace whd::baseband
