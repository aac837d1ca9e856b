/// @file frame_dump.hpp
/// What the receiver saw inside chosen frames, for people and plots (whd-rx
/// --dump): the equalised constellation points after the pilot phase correction,
/// the channel estimate on every used tone, and the per-tone SNR from the
/// preamble's two symbols. Frames are located with frame_locator and their data
/// symbols decoded again the way the CPU backend decodes them (profile §4), so the
/// dump shows the CPU reference's view whatever backend produced the payload.
#pragma once

#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/rx_types.hpp>
#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace whd::baseband {

/// Which frames and how much of them.
struct frame_dump_config {
  std::vector<uint64_t> frames{0};  ///< indices of accepted frames, in capture order (0-based)
  uint32_t max_symbols = 64;        ///< data symbols dumped per frame (the first ones)
};

/// One frame's dump.
struct frame_dump {
  uint64_t index = 0;                                 ///< among accepted frames
  frame_result info;                                  ///< as the locator reports it
  std::array<cf32, profile::NOF_USED> h{};            ///< channel estimate used to equalise (smoothed)
  std::array<cf32, profile::NOF_USED> h_ls{};         ///< plain least squares over the two preamble symbols
  /// |Y0 - Y1|^2 / 2 on each used tone: one draw of the noise power per bin.
  std::array<float, profile::NOF_USED> noise_tone{};
  double noise = 0.0;                                 ///< mean of noise_tone: the noise power per bin
  uint32_t nof_symbols = 0;                           ///< data symbols dumped
  /// Equalised, pilot-corrected points: symbol s, data tone d at [s * NOF_DATA + d].
  std::vector<cf32> points;
  /// Per data tone: mean |z - nearest point|^2 over the dumped symbols (decision-directed error power).
  std::array<float, profile::NOF_DATA> error_power{};
};

/// Locates the chosen frames in `src` and dumps them. Indices past the last
/// accepted frame are left out (the result is shorter).
std::vector<frame_dump> dump_frames(const transport::sample_source& src, const rx_config& cfg, const frame_dump_config& dcfg);

/// JSON of the dumps. Per frame: the locator's fields; per used tone (increasing
/// k): k, kind ("data" or "pilot"), |H| and arg H [rad] of the estimate in use and
/// of plain LS, the noise draw, the per-tone SNR |H|^2 / noise [dB] (noise averaged
/// over the band) and the raw one with that tone's own draw; per data tone the
/// decision-directed SNR 1 / error power [dB]; the points as [[I, Q], ...] per symbol.
nlohmann::json frame_dumps_json(const std::vector<frame_dump>& dumps);

} // namespace whd::baseband
