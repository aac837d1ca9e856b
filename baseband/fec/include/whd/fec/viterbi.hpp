/// @file viterbi.hpp
/// The soft-decision Viterbi decoder of profile 2's K = 7 mother code (§2.4), as one
/// definition that every backend implements bit for bit.
///
/// The definition
/// - Input: per trellis step n (= input bit u[n]) three soft values (X, Y, Z) of the
///   depunctured stream, int8, LLR = ln P(0)/P(1) times LLR_SCALE, rounded and
///   saturated to +-127 (demap.hpp's llr_to_int8); a punctured or padded output is 0.
/// - Branch metric of a transition whose outputs are (cX, cY, cZ):
///   sum over the outputs of (c ? -L : +L); path metrics add branch metrics and the
///   larger survives. Arithmetic is exact integer arithmetic (an implementation may
///   subtract a common value from all states of a tile at any step, and use 16-bit
///   metrics: the spread of a tile's metrics stays under 12 x 381 + |START_OTHER|).
/// - State after step n: s = u[n] 2^5 + u[n-1] 2^4 + ... + u[n-5]. New state j comes
///   from states 2(j mod 32) (decision 0) and 2(j mod 32) + 1 (decision 1) with input
///   bit j / 32. Ties keep decision 0: decision 1 only where its metric is larger.
/// - Tiles: each encoder's nin steps are cut into tiles of T = tile_length(nin) output
///   bits (TILE, or TILE_LONG where the stream has at least LONG_STREAM steps); tile k
///   outputs u[k T .. min((k+1) T, nin)), running the trellis over steps
///   [max(0, k T - ACQUIRE), min(nin, (k+1) T + DEPTH)). A tile that starts at
///   step 0 starts in state 0 (metric 0, other states START_OTHER); any other starts
///   with all metrics 0. A tile that runs to step nin traces back from state 0 (the
///   tail); any other from the state of largest metric at its last step, the lowest
///   state number among equals.
/// Tiles are independent: a GPU decodes them all at once, the CPU 16 or 32 at a time.
#pragma once

#include <whd/fec/coded_frame.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace whd::fec {

/// The int8 soft values' scale: an LLR of 1 is 4 steps (the soft output's default).
inline constexpr float LLR_SCALE = 4.0f;
/// Output bits per tile (TILE_LONG in streams of at least LONG_STREAM steps), and the
/// steps run before (acquisition) and after (traceback depth) them. Long streams take
/// long tiles so that the overlap is paid less often (1.43 trellis steps an information
/// bit at MCS 2 with TILE, 1.13 with TILE_LONG); short ones keep short tiles, whose many
/// small items fill a GPU and end sooner. What the tiles cost against a full-length
/// floating-point Viterbi is measured by whd-bench ber (bench/results/).
inline constexpr uint64_t TILE = 512;
inline constexpr uint64_t TILE_LONG = 2048;
inline constexpr uint64_t LONG_STREAM = 16 * TILE_LONG;
inline constexpr uint64_t ACQUIRE = 96;
inline constexpr uint64_t DEPTH = 96;
/// Path metric of states other than 0 where a tile starts at step 0.
inline constexpr int START_OTHER = -4096;
/// Output bits of a tile at most, and the trellis steps it runs at most.
inline constexpr uint64_t MAX_TILE = TILE_LONG;
inline constexpr uint64_t MAX_TILE_STEPS = ACQUIRE + MAX_TILE + DEPTH;
static_assert(TILE % 16 == 0 && TILE_LONG % 16 == 0, "tiles write whole bytes and start on a word of soft values");

/// The steps tile k of a stream of nin steps outputs and runs.
struct tile_span {
  uint64_t out_first = 0, out_end = 0; ///< output bits [out_first, out_end)
  uint64_t run_first = 0, run_end = 0; ///< trellis steps run [run_first, run_end)
};

/// Output bits per tile of a stream of nin steps.
WHD_FEC_HD constexpr uint64_t tile_length(uint64_t nin) { return nin >= LONG_STREAM ? TILE_LONG : TILE; }

WHD_FEC_HD constexpr uint64_t nof_tiles(uint64_t nin) { return (nin + tile_length(nin) - 1) / tile_length(nin); }

WHD_FEC_HD constexpr tile_span tile_of(uint64_t nin, uint64_t k)
{
  const uint64_t length = tile_length(nin);
  tile_span t;
  t.out_first = k * length;
  t.out_end = t.out_first + length < nin ? t.out_first + length : nin;
  t.run_first = t.out_first > ACQUIRE ? t.out_first - ACQUIRE : 0;
  t.run_end = t.out_end + DEPTH < nin ? t.out_end + DEPTH : nin;
  return t;
}

/// One tile to decode: the stream's depunctured soft values (3 nin int8), which
/// tile, and where its bits go: bits [out_first, min(out_end, nof_bits)) of the
/// stream, packed MSB first into `bits` (the whole stream's bytes; a tile writes
/// only its own, whole bytes).
struct tile_job {
  const int8_t* soft = nullptr;
  uint64_t nin = 0;
  uint64_t tile = 0;
  uint64_t nof_bits = 0; ///< bits wanted from the stream (8 Q): the tail is not written
  uint8_t* bits = nullptr;
};

/// Decodes one tile as the definition says, plainly (int32 metrics, one state at a
/// time): the reference the vectorised and GPU decoders are tested against.
void decode_tile_reference(const tile_job& job);

/// How decode_tiles runs: the reference, 16 tiles at once in AVX2's 16-bit lanes, or
/// 32 in AVX-512's. Every way gives decode_tile_reference's bits.
enum class viterbi_isa { reference, avx2, avx512 };

/// The way decode_tiles takes: AVX-512 where present (it measured faster than the
/// 16-lane AVX2 decoder), else AVX2, else the reference.
viterbi_isa best_viterbi_isa() noexcept;
bool viterbi_isa_available(viterbi_isa isa) noexcept;
constexpr const char* to_string(viterbi_isa isa)
{
  return isa == viterbi_isa::avx512 ? "AVX-512, 32 tiles at once" : isa == viterbi_isa::avx2 ? "AVX2, 16 tiles at once" : "reference";
}

/// Decodes the tiles as best_viterbi_isa() says.
void decode_tiles(std::span<const tile_job> jobs);
/// Decodes the tiles the way asked for.
/// @throws std::invalid_argument when the processor lacks it
void decode_tiles(std::span<const tile_job> jobs, viterbi_isa isa);

/// Whether decode_tiles is vectorised on this processor (AVX2 or AVX-512).
bool viterbi_vectorised() noexcept;

} // namespace whd::fec
