/// @file coded_frame.hpp
/// Profile 2 (shared/spec/hrp-profile-v2.md): the coded modes, their puncturing
/// patterns, and the capacity of a coded frame of Nd data symbols (§2.1), from which
/// every other step takes its sizes.
#pragma once

#include <whd/baseband/profile.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#if defined(__CUDACC__)
#define WHD_FEC_HD __host__ __device__ __forceinline__
#else
#define WHD_FEC_HD inline
#endif

namespace whd::fec {

/// Parallel convolutional encoders; RS stream bytes go to them round robin (§2.3).
inline constexpr int NOF_ENCODERS = 8;
/// Constraint length K = 7: 64 states, 6 tail bits (§2.4).
inline constexpr int CONSTRAINT = 7;
inline constexpr int NOF_STATES = 1 << (CONSTRAINT - 1);
inline constexpr int TAIL_BITS = CONSTRAINT - 1;
/// Generators X, Y, Z (octal 133, 171, 165), applied to r[n] = u[n] 2^6 + ... + u[n-6].
inline constexpr std::array<unsigned, 3> GENERATORS = {0133, 0171, 0165};
/// Outputs of the mother code per input bit (rate 1/3).
inline constexpr int MOTHER_OUTPUTS = 3;

/// Reed-Solomon RS(224,216) over GF(256) (§2.2).
inline constexpr int RS_N = 224;
inline constexpr int RS_K = 216;
inline constexpr int RS_PARITY = RS_N - RS_K;
inline constexpr int RS_T = RS_PARITY / 2; ///< byte errors a codeword corrects
inline constexpr unsigned RS_FIELD_POLY = 0x11D;

/// Per-symbol interleaver columns (§2.5).
inline constexpr int INTERLEAVER_COLUMNS = 21;

// Every generator has its first and last taps set: flipping u[n] or u[n-6] flips all
// three outputs, which gives the trellis its butterflies (viterbi.hpp).
static_assert((GENERATORS[0] & GENERATORS[1] & GENERATORS[2] & 0x41u) == 0x41u);

/// Mother-code outputs (X<<2 | Y<<1 | Z, §2.4) of r = u[n] 2^6 + ... + u[n-6].
WHD_FEC_HD constexpr unsigned output_code(unsigned r)
{
  unsigned c = 0;
  for (unsigned g : GENERATORS) {
    unsigned v = r & g, p = 0;
    while (v != 0) {
      p ^= v & 1u;
      v >>= 1;
    }
    c = (c << 1) | p;
  }
  return c;
}

/// A puncturing pattern (§2.4): per period of `pin` input bits, the `pout` outputs kept,
/// in transmission order; output i is output `which[i]` (0 X, 1 Y, 2 Z) of input `input[i]`.
struct puncture_pattern {
  int pin = 1;
  int pout = 3;
  std::array<uint8_t, 7> input{};
  std::array<uint8_t, 7> which{};
};

enum class code_rate : uint8_t { r1_3, r1_2, r4_7, r2_3, r4_5 };

WHD_FEC_HD constexpr puncture_pattern pattern_of(code_rate r)
{
  switch (r) {
  case code_rate::r1_3: return {1, 3, {0, 0, 0}, {0, 1, 2}};
  case code_rate::r1_2: return {1, 2, {0, 0}, {0, 1}};
  case code_rate::r4_7: return {4, 7, {0, 0, 1, 2, 2, 3, 3}, {0, 1, 0, 0, 1, 0, 1}};
  case code_rate::r2_3: return {2, 3, {0, 0, 1}, {0, 1, 0}};
  case code_rate::r4_5: return {4, 5, {0, 0, 1, 2, 3}, {0, 1, 0, 0, 0}};
  }
  return {};
}

constexpr const char* to_string(code_rate r)
{
  switch (r) {
  case code_rate::r1_3: return "1/3";
  case code_rate::r1_2: return "1/2";
  case code_rate::r4_7: return "4/7";
  case code_rate::r2_3: return "2/3";
  case code_rate::r4_5: return "4/5";
  }
  return "?";
}

/// The MCS numbers profile 2 defines (§1).
inline constexpr std::array<int, 4> MCS_LIST = {0, 1, 2, 7};

constexpr bool mcs_defined(int mcs) { return mcs == 0 || mcs == 1 || mcs == 2 || mcs == 7; }

/// The constellation of a defined MCS.
WHD_FEC_HD constexpr profile::modulation modulation_of_mcs(int mcs)
{
  return mcs >= 2 ? profile::modulation::qam16 : profile::modulation::qpsk;
}

/// The convolutional rate of a defined MCS: 1/3, 2/3, 2/3, 4/5.
WHD_FEC_HD constexpr code_rate rate_of_mcs(int mcs)
{
  return mcs == 0 ? code_rate::r1_3 : mcs == 7 ? code_rate::r4_5 : code_rate::r2_3;
}

/// "0,1,2,7"-style MCS name to number; nullopt when not a defined MCS.
std::optional<int> parse_mcs(std::string_view s);

/// The sizes of one coded frame (§2.1, §2.2, §2.4): all follow from (mcs, Nd).
struct frame_geometry {
  int mcs = 0;
  uint32_t nd = 0;
  int bits_per_tone = 2;   ///< B
  int ncbps = 0;           ///< coded bits per data symbol, 336 B
  puncture_pattern punct;
  uint64_t ce = 0;         ///< coded bits per encoder, Nd Ncbps / 8
  uint64_t periods = 0;    ///< P, puncturing periods per encoder
  uint64_t nin = 0;        ///< trellis steps per encoder (input bits, tail included), P pin
  uint64_t q = 0;          ///< payload-stream bytes per encoder
  uint64_t codewords = 0;  ///< c', RS codewords of the frame
  uint64_t last_k = 0;     ///< message bytes of the last codeword (1 .. 216)
  uint64_t rs_bytes = 0;   ///< R, the RS stream's bytes (L + 8 c')
  uint64_t info_bytes = 0; ///< L, the frame's information (payload) bytes
  uint64_t pad_bits = 0;   ///< coded pad per encoder, Ce - P pout

  /// Coded bits of the frame, Nd Ncbps: one soft value each.
  uint64_t coded_bits() const { return uint64_t(nd) * uint64_t(ncbps); }
  /// Coded bits per encoder in one data symbol, Ncbps / 8.
  int per_symbol_per_encoder() const { return ncbps / NOF_ENCODERS; }
  /// Message bytes of codeword j.
  uint64_t message_bytes(uint64_t j) const { return j + 1 < codewords ? uint64_t(RS_K) : last_k; }
};

/// The geometry of a frame of `nd` data symbols (1 .. profile::MAX_ND) at `mcs`
/// (0, 1, 2, 7). @throws std::invalid_argument otherwise.
frame_geometry geometry(int mcs, uint32_t nd);

} // namespace whd::fec
