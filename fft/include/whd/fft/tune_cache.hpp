/// @file tune_cache.hpp
/// The tuner's choice of variant per input type, stored per GPU in a small JSON file
/// that `whd-bench fft --tune` writes and the receiver reads at start, and the plan
/// that runs the chosen variants.
#pragma once

#include <whd/fft/fft512.hpp>
#include <whd/fft/variant.hpp>

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace whd::fft {

/// The variant to run for each input type, and where that choice came from.
struct tuned_choice {
  /// Indexed by input_type (cf32, cf16, ci8).
  std::array<variant, 3> choice{default_variant(input_type::cf32), default_variant(input_type::cf16),
                                default_variant(input_type::ci8)};
  /// Measured ns per transform of each choice at `batch` (0 when not measured).
  std::array<double, 3> ns_per_fft{};
  /// Batch size the tuner timed.
  std::size_t batch = 0;
  /// The GPU it was tuned on ("" for the built-in defaults).
  std::string device_name;
  /// Why this choice: "tune cache PATH" or "default (REASON)", for the log.
  std::string source = "default (built in)";

  const variant& operator[](input_type t) const { return choice[static_cast<std::size_t>(t)]; }
  variant& operator[](input_type t) { return choice[static_cast<std::size_t>(t)]; }
};

/// Where the cache lives: $WHD_FFT_TUNE_CACHE if set, else
/// $XDG_CACHE_HOME/whd-rx/fft-tune.json, else $HOME/.cache/whd-rx/fft-tune.json,
/// else ./fft-tune.json.
std::filesystem::path tune_cache_path();

/// Name of the current CUDA device ("" when there is none).
std::string current_device_name();

/// Read the choice for `device_name` from `file`. Returns the defaults (with the
/// reason in `source`) when the file is missing, unreadable, malformed, names a
/// variant this build does not know, or was written for another GPU. Never throws
/// for a bad cache: a stale file must not stop the receiver.
tuned_choice load_tuned_choice(const std::filesystem::path& file, std::string_view device_name);
/// load_tuned_choice(tune_cache_path(), current_device_name()).
tuned_choice load_tuned_choice();

/// Write `choice` to `file` (creating its folder), with `date` (ISO 8601) recorded.
/// @throws std::runtime_error when the file cannot be written
void save_tuned_choice(const std::filesystem::path& file, const tuned_choice& choice, std::string_view date);

/// Runs the chosen variant for each input type (see fft512.hpp for the arguments).
/// Holds no device memory; run() only enqueues.
class fft512_plan {
public:
  /// With the built-in defaults.
  fft512_plan() = default;
  explicit fft512_plan(tuned_choice choice) : choice_(std::move(choice)) {}

  const tuned_choice& choice() const noexcept { return choice_; }

  void run(const cf32* d_in, cf32* d_out, std::size_t count, stream_handle stream) const;
  void run(const cf16* d_in, cf32* d_out, std::size_t count, stream_handle stream) const;
  void run(const ci8* d_in, const float* d_scale, std::size_t nof_per_scale, cf32* d_out, std::size_t count,
           stream_handle stream) const;

private:
  tuned_choice choice_;
};

} // namespace whd::fft
