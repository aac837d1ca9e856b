/// @file coded_tx.hpp
/// The transmitter's side of profile 2 §2: information bytes to the bits a coded
/// frame sends, each step on its own so that tests check it against the spec's
/// vectors (§5).
#pragma once

#include <whd/fec/coded_frame.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace whd::fec {

/// The RS stream (§2.2): codewords of 216 bytes (the last k), each followed by its
/// 8 parity bytes; R = L + 8 c' bytes.
/// @param info [in] g.info_bytes bytes
/// @throws std::invalid_argument on a wrong size
std::vector<uint8_t> rs_stream(const frame_geometry& g, std::span<const uint8_t> info);

/// Encoder e's input u_e[0 .. nin) (§2.3), one bit per element: its Q bytes of the
/// RS stream (zero-extended to 8 Q bytes), MSB first, then zeros (the tail).
std::vector<uint8_t> encoder_input(const frame_geometry& g, std::span<const uint8_t> rs, int e);

/// One encoder from state 0 over `bits` (one per element), punctured by `p` (§2.4):
/// floor(size / pin) periods of pout bits.
std::vector<uint8_t> convolve_punctured(std::span<const uint8_t> bits, const puncture_pattern& p);

/// The multiplexed stream v (§2.5) of the encoders' punctured streams (each padded
/// with zeros to Ce bits): Nd Ncbps bits.
std::vector<uint8_t> multiplex(const frame_geometry& g, const std::vector<std::vector<uint8_t>>& streams);

/// Position t(k) = R (k mod 21) + floor(k / 21) of bit k of a symbol (§2.5).
WHD_FEC_HD constexpr int interleaved_position(int k, int ncbps)
{
  return (ncbps / INTERLEAVER_COLUMNS) * (k % INTERLEAVER_COLUMNS) + k / INTERLEAVER_COLUMNS;
}
/// The inverse, k(t) = 21 (t mod R) + floor(t / R).
WHD_FEC_HD constexpr int deinterleaved_index(int t, int ncbps)
{
  const int rows = ncbps / INTERLEAVER_COLUMNS;
  return INTERLEAVER_COLUMNS * (t % rows) + t / rows;
}

/// The transmitted bits (§2.5: interleaved per symbol, then whitened) of the
/// multiplexed stream v: Nd Ncbps bits, data symbol after data symbol, order t.
std::vector<uint8_t> interleave_and_whiten(const frame_geometry& g, std::span<const uint8_t> v);

/// The whole chain: the bytes a coded frame's data symbols carry, Nd Ncbps / 8 of
/// them, the transmitted bits packed MSB first (the modulator's per-symbol bytes).
/// @param info [in] g.info_bytes information bytes
std::vector<uint8_t> encode_frame(const frame_geometry& g, std::span<const uint8_t> info);

/// Bits (one per element) packed MSB first; the last byte zero-filled.
std::vector<uint8_t> pack_bits(std::span<const uint8_t> bits);

} // namespace whd::fec
