/// @file modulator.hpp
/// The transmitter of the profile: a frame's symbols in the frequency domain
/// (profile §4, §5) and on air (§2). Used by the capture generator, by tests,
/// and by the receiver for its known preamble.
#pragma once

#include <whd/baseband/demap.hpp> // constellation_point
#include <whd/baseband/profile.hpp>
#include <whd/transport/sample_types.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace whd::baseband {

/// What a frame's header says, and whether it is sent intact (§4).
struct frame_spec {
  profile::modulation mod = profile::modulation::qpsk; ///< data symbols' constellation
  uint32_t nd = 1;                                     ///< data symbols, 1 .. profile::MAX_ND
  uint8_t seq = 0;                                     ///< frame sequence number
  bool corrupt_header = false; ///< send the CRC field inverted, so that the header check fails
  /// Profile 2: the MCS of a coded frame (0, 1, 2, 7; `mod` must be its
  /// constellation), profile::NO_MCS for an uncoded frame.
  int mcs = profile::NO_MCS;
};

/// Samples of a frame of `nd` data symbols on air, guards included: (3 + nd) * SYMBOL_LEN.
constexpr uint64_t frame_samples(uint32_t nd)
{
  return (static_cast<uint64_t>(profile::FIRST_DATA_SYMBOL) + nd) * profile::SYMBOL_LEN;
}

/// Channel bytes a frame's data symbols carry: nd * bytes_per_symbol(mod) (§4
/// "Payloads are whole symbols"); a coded frame's are its coded bits.
constexpr uint64_t frame_payload_bytes(const frame_spec& f)
{
  return static_cast<uint64_t>(f.nd) * static_cast<uint64_t>(profile::bytes_per_symbol(f.mod));
}

/// The 48 header bits sent for `f` (§4): header_bits() of its fields; with
/// `f.corrupt_header` the 16 CRC bits h[32..47] are inverted, which fails the
/// CRC for any fields (and leaves the modulation field valid, so a receiver
/// rejects the frame for its CRC). Each bit is changed in all 7 repetitions.
std::array<uint8_t, profile::HEADER_BITS> transmitted_header_bits(const frame_spec& f);

// ---------------------------------------------------------------- frequency domain
// X is indexed by FFT bin b = k mod N (profile::N entries); tones other than the
// ones named are zero. Points have unit mean energy, before the 1/sqrt(352) of §2.

/// Preamble symbol (m = 0, 1): used tone u carries T[u] = 1 - 2 p[u] (§4).
/// @param[out] X profile::N bins
void preamble_tones(std::span<cf32> X);

/// Header symbol (m = 2): data tone d carries BPSK (bit 0 -> +1) of h[d mod 48] XOR p[d],
/// pilots carry P[2] (§4).
/// @param[in] h the 48 header bits (0 or 1), e.g. transmitted_header_bits()
/// @param[out] X profile::N bins
void header_tones(const std::array<uint8_t, profile::HEADER_BITS>& h, std::span<cf32> X);

/// Data symbol m >= 3: groups of B bits of `bytes` (MSB first) are the constellation
/// indices of data tones d = 0..335; pilots carry P[m] (§4, §5).
/// @param[in] bytes exactly profile::bytes_per_symbol(mod) bytes
/// @param[in] m symbol number within the frame (selects the pilot value P[m])
/// @param[out] X profile::N bins
/// @throws std::invalid_argument on a wrong size or m < 3
void data_tones(profile::modulation mod, std::span<const uint8_t> bytes, long long m, std::span<cf32> X);

// ---------------------------------------------------------------- time domain

/// The 512 samples after the guard of a preamble symbol, x[0..511] of §2, computed
/// in double precision (for the receiver's fine timing and for tests).
const std::array<cf32, profile::N>& preamble_time_symbol();

/// Turns frequency-domain symbols into samples on air (§2):
/// x[n] = (1/sqrt(352)) sum_k X[k] e^{+j 2 pi k n / 512}, sent as x[448..511] then x[0..511].
/// Owns a liquid-dsp inverse FFT plan and its buffers: one per thread.
class modulator {
public:
  modulator();
  ~modulator();
  modulator(const modulator&) = delete;
  modulator& operator=(const modulator&) = delete;

  /// One OFDM symbol on air.
  /// @param[in] X profile::N bins
  /// @param[out] out profile::SYMBOL_LEN samples: guard, then the 512-sample body
  void modulate(std::span<const cf32> X, std::span<cf32> out);

  /// Symbol m of frame `f` on air.
  /// @param[in] symbol_payload for m >= 3 the bytes_per_symbol(f.mod) bytes of that
  ///   symbol; ignored (may be empty) for m < 3
  /// @param[out] out profile::SYMBOL_LEN samples
  void frame_symbol(const frame_spec& f, long long m, std::span<const uint8_t> symbol_payload, std::span<cf32> out);

  /// A whole frame on air (for small frames; the generator streams symbol by symbol).
  /// @param[in] payload frame_payload_bytes(f) bytes, symbol after symbol
  /// @return frame_samples(f.nd) samples
  std::vector<cf32> frame(const frame_spec& f, std::span<const uint8_t> payload);

private:
  void* plan_ = nullptr; // liquid fftplan, kept out of this header
  cf32* freq_ = nullptr; // FFT input, profile::N (liquid-aligned)
  cf32* time_ = nullptr; // FFT output, profile::N
  std::array<cf32, profile::N> tones_{};
};

} // namespace whd::baseband
