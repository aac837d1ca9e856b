/// @file variant.hpp
/// The named variants of the 512-point transform: how the three register passes are
/// ordered, how values move between them, where twiddles come from, and how the
/// batched kernel is shaped. Host-only header (no CUDA headers); the enums are used by
/// device code too.
#pragma once

#include <whd/transport/enum_names.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace whd::fft {

/// How the nine radix-2 stages are ordered.
enum class ordering : std::uint8_t {
  /// Decimation in time on bit-reversed input, the bit reversal folded into the load
  /// and exchange patterns (three radix-2 stages per register set, twiddles inside).
  dit,
  /// Self-sorting radix-8 (Stockham / four-step): natural order in and out,
  /// twiddles between the passes.
  stockham,
};

/// How values move between the register passes.
enum class exchange : std::uint8_t {
  /// Both exchanges through shared memory (three barriers).
  smem,
  /// First exchange through shared memory, second by warp shuffles inside groups of
  /// 8 lanes (one barrier). A transform spans two warps, so one exchange must cross them.
  shfl,
};

/// Where the twiddle factors come from.
enum class twiddle : std::uint8_t {
  /// A read-only table in global memory (L1-resident), computed in double and rounded.
  table,
  /// sincospif for the base factors, short products for their powers.
  sincos,
};

/// Input sample type of the batched transform (output is always cf32).
enum class input_type : std::uint8_t {
  cf32, ///< std::complex<float>
  cf16, ///< two IEEE binary16 (I, Q), the layout of CUDA's __half2 ("LittleFloat")
  ci8,  ///< two int8 (I, Q) times one float scale per group of transforms ("TinyFixed")
};

/// One named variant of the batched transform.
struct variant {
  ordering order = ordering::stockham;
  exchange exch = exchange::smem;
  twiddle tw = twiddle::table;
  /// Transforms per block (64 threads each): 1, 2, 4 or 8.
  int groups = 4;
  /// Persistent grid: each block loops over transforms, loading the next one before
  /// computing the current one.
  bool pipelined = false;

  friend bool operator==(const variant&, const variant&) = default;
};

/// Threads that cooperate on one transform.
inline constexpr int THREADS_PER_TRANSFORM = 64;
/// Values (complex) each of those threads holds.
inline constexpr int VALUES_PER_THREAD = 8;

/// All variants, in a fixed order (the tuner times each of them).
std::span<const variant> all_variants();

/// "stockham/smem/table/g4" or ".../g4/pipe": the name used in logs, the tune cache
/// and on the command line.
std::string to_string(const variant& v);
/// Parse a name written by to_string; nullopt if it names no variant.
std::optional<variant> parse_variant(std::string_view name);

/// "cf32", "cf16" or "ci8".
inline constexpr enum_names<input_type, 3> INPUT_TYPE_NAMES{
    {{input_type::cf32, "cf32"}, {input_type::cf16, "cf16"}, {input_type::ci8, "ci8"}}};
std::string_view to_string(input_type t);
/// Parse an input type name; nullopt if unknown.
std::optional<input_type> parse_input_type(std::string_view name);

/// The variant used when nothing was tuned for the present GPU.
variant default_variant(input_type t);

} // namespace whd::fft
