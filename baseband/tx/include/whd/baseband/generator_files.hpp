/// @file generator_files.hpp
/// Writes a generated capture to disk the way shared/vectors/ holds them: the
/// samples (a SigMF pair through transport::sigmf_writer, or a raw file), and beside
/// them NAME.truth (payload bytes of the listed frames with intact headers, in
/// order) and NAME.frames.json (one object per listed frame: start, nd, mod, seq,
/// header_ok).
///
/// Integer outputs (ci16_le, ci8) are scaled so that I and Q, whose standard
/// deviation over the frames is sigma = sqrt((signal_power + noise_power) / 2), map
/// sigma to full_scale / INTEGER_HEADROOM: an OFDM sum of 352 tones is close to
/// Gaussian, and a Gaussian exceeds 7 sigma with probability 2.6e-12, so nothing
/// clips in practice even in captures of 10^9 samples. Samples that would clip are
/// saturated and counted.
#pragma once

#include <whd/baseband/generator.hpp>
#include <whd/transport/sample_types.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace whd::baseband {

/// Integer full scale over the RMS of one component (I or Q) of the frames.
inline constexpr double INTEGER_HEADROOM = 7.0;

/// Where and how to write a capture.
struct output_config {
  std::filesystem::path base;          ///< path without extension (a trailing .sigmf-meta, .sigmf-data, .sigmf, .cf32, .ci16 or .ci8 is dropped)
  datatype type = datatype::cf32_le;   ///< sample format on disk
  bool raw = false;                    ///< raw interleaved I/Q (BASE.cf32/.ci16/.ci8) instead of SigMF
  std::string description;             ///< SigMF core:description
  double sample_rate_sps = profile::SAMPLE_RATE_SPS; ///< SigMF core:sample_rate
};

/// What was written.
struct output_summary {
  capture_plan plan;                    ///< what was generated
  std::filesystem::path data_path;      ///< samples
  std::filesystem::path meta_path;      ///< SigMF meta; empty for raw output
  std::filesystem::path truth_path;     ///< NAME.truth
  std::filesystem::path frames_path;    ///< NAME.frames.json
  float scale = 1.0f;                   ///< factor applied before integer conversion (1 for cf32)
  double peak = 0.0;                    ///< largest |I| or |Q| written, after scaling
  uint64_t nof_clipped = 0;             ///< samples with I or Q saturated
  uint64_t nof_truth_bytes = 0;         ///< bytes in NAME.truth
};

/// Largest magnitude of an integer component: 32767 (ci16) or 127 (ci8); 0 for cf32.
double integer_full_scale(datatype t);

/// The scale integer outputs use for a plan (see the file comment); 1 for cf32.
float output_scale(datatype t, const capture_plan& plan);

/// Raw file extension of a datatype: ".cf32", ".ci16" or ".ci8".
std::string raw_extension(datatype t);

/// Generate `cfg` and write it as `out` says.
/// @throws std::invalid_argument on a bad configuration; std::runtime_error (or
///   transport::capture_error) when a file cannot be read or written
output_summary write_capture(const capture_config& cfg, const output_config& out);

} // namespace whd::baseband
