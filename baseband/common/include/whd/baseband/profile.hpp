/// @file profile.hpp
/// The WHD-HRP receive profile, version 1 (shared/spec/hrp-profile.md), as
/// compile-time constants. Every other file takes its sizes, tone tables,
/// sequences, constellations and header layout from here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <whd/fft/fft512.hpp>
#include <whd/transport/enum_names.hpp>

namespace whd::profile {

/// Profile version written in reports (§9 "profile"): 2, coded frames
/// (shared/spec/hrp-profile-v2.md); a profile-1 frame is a valid profile-2 frame.
inline constexpr int VERSION = 2;

// ---------------------------------------------------------------- §1 numerology

/// Nominal sample rate [samples/s].
inline constexpr double SAMPLE_RATE_SPS = 2.538e9;
/// FFT size N.
inline constexpr int N = 512;
/// Guard (cyclic prefix) length G [samples].
inline constexpr int G = 64;
/// One OFDM symbol on air, guard included [samples].
inline constexpr int SYMBOL_LEN = N + G;
/// The symbol deadline [ns]: SYMBOL_LEN / SAMPLE_RATE_SPS, as the profile rounds it.
inline constexpr double SYMBOL_PERIOD_NS = 226.95;

static_assert(N == fft::N, "the FFT module and the profile disagree on N");
static_assert(SYMBOL_LEN == 576);

/// Highest |k| of a used (data or pilot) subcarrier.
inline constexpr int K_MAX_USED = 177;
/// Lowest |k| of a used subcarrier (|k| <= 1 is DC).
inline constexpr int K_MIN_USED = 2;

inline constexpr int NOF_DATA = 336;
inline constexpr int NOF_PILOTS = 16;
inline constexpr int NOF_DC = 3;
inline constexpr int NOF_NULL = 157;
inline constexpr int NOF_USED = NOF_DATA + NOF_PILOTS;

static_assert(NOF_DATA + NOF_PILOTS + NOF_DC + NOF_NULL == N, "tone classes must cover the FFT");

/// Pilot subcarriers k, increasing.
inline constexpr std::array<int, NOF_PILOTS> PILOT_K = {-159, -137, -115, -93, -71, -49, -27, -5,
                                                         5,    27,   49,   71,  93,  115, 137, 159};

/// FFT bin b = k mod N of subcarrier k.
constexpr int bin_of(int k) { return ((k % N) + N) % N; }

constexpr bool is_pilot(int k)
{
  for (int p : PILOT_K) {
    if (p == k) {
      return true;
    }
  }
  return false;
}
constexpr bool is_used(int k) { return k >= -K_MAX_USED && k <= K_MAX_USED && (k >= K_MIN_USED || k <= -K_MIN_USED); }
constexpr bool is_data(int k) { return is_used(k) && !is_pilot(k); }
constexpr bool is_dc(int k) { return k >= -1 && k <= 1; }
constexpr bool is_null(int k) { return !is_used(k) && !is_dc(k); }

namespace detail {
template <int COUNT, typename PRED>
constexpr std::array<int16_t, COUNT> tones_where(PRED pred)
{
  std::array<int16_t, COUNT> out{};
  int n = 0;
  for (int k = -N / 2; k < N / 2; ++k) {
    if (pred(k)) {
      if (n < COUNT) {
        out[static_cast<std::size_t>(n)] = static_cast<int16_t>(k);
      }
      ++n;
    }
  }
  return n == COUNT ? out : throw "tone count differs from the profile";
}
template <int COUNT, typename PRED>
constexpr int count_where(PRED pred)
{
  int n = 0;
  for (int k = -N / 2; k < N / 2; ++k) {
    n += pred(k) ? 1 : 0;
  }
  return n;
}
template <std::size_t COUNT>
constexpr std::array<int16_t, COUNT> bins_of(const std::array<int16_t, COUNT>& ks)
{
  std::array<int16_t, COUNT> out{};
  for (std::size_t i = 0; i < COUNT; ++i) {
    out[i] = static_cast<int16_t>(bin_of(ks[i]));
  }
  return out;
}
} // namespace detail

/// Data tone d = 0..335 -> subcarrier k, increasing k (d = 0 is k = -177).
inline constexpr std::array<int16_t, NOF_DATA> DATA_K = detail::tones_where<NOF_DATA>(is_data);
/// Used tone u = 0..351 -> subcarrier k, increasing k.
inline constexpr std::array<int16_t, NOF_USED> USED_K = detail::tones_where<NOF_USED>(is_used);
/// Data tone d -> FFT bin.
inline constexpr std::array<int16_t, NOF_DATA> DATA_BIN = detail::bins_of(DATA_K);
/// Used tone u -> FFT bin.
inline constexpr std::array<int16_t, NOF_USED> USED_BIN = detail::bins_of(USED_K);

static_assert(detail::count_where<0>(is_dc) == NOF_DC);
static_assert(detail::count_where<0>(is_null) == NOF_NULL);
static_assert(DATA_K[0] == -177 && DATA_K[NOF_DATA - 1] == 177);

namespace detail {
constexpr std::array<int16_t, NOF_PILOTS> pilot_used_index()
{
  std::array<int16_t, NOF_PILOTS> out{};
  for (int i = 0; i < NOF_PILOTS; ++i) {
    for (int u = 0; u < NOF_USED; ++u) {
      if (USED_K[static_cast<std::size_t>(u)] == PILOT_K[static_cast<std::size_t>(i)]) {
        out[static_cast<std::size_t>(i)] = static_cast<int16_t>(u);
      }
    }
  }
  return out;
}
constexpr std::array<int16_t, NOF_DATA> data_used_index()
{
  std::array<int16_t, NOF_DATA> out{};
  int d = 0;
  for (int u = 0; u < NOF_USED; ++u) {
    if (!is_pilot(USED_K[static_cast<std::size_t>(u)])) {
      out[static_cast<std::size_t>(d++)] = static_cast<int16_t>(u);
    }
  }
  return out;
}
} // namespace detail

/// Pilot i -> its used-tone index u.
inline constexpr std::array<int16_t, NOF_PILOTS> PILOT_USED = detail::pilot_used_index();
/// Data tone d -> its used-tone index u.
inline constexpr std::array<int16_t, NOF_DATA> DATA_USED = detail::data_used_index();
/// Pilot i -> FFT bin.
inline constexpr std::array<int16_t, NOF_PILOTS> PILOT_BIN = [] {
  std::array<int16_t, NOF_PILOTS> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<int16_t>(bin_of(PILOT_K[i]));
  }
  return out;
}();

// ---------------------------------------------------------------- §3 PN sequence

inline constexpr int PN_PERIOD = 127;

/// p[0..126]: x^7 + x^4 + 1, state 0x7F, output the feedback bit.
inline constexpr std::array<uint8_t, PN_PERIOD> PN = [] {
  std::array<uint8_t, PN_PERIOD> p{};
  unsigned s = 0x7F;
  for (auto& bit : p) {
    const unsigned b = ((s >> 6) ^ (s >> 3)) & 1u;
    s = ((s << 1) | b) & 0x7Fu;
    bit = static_cast<uint8_t>(b);
  }
  return p;
}();

/// p[i mod 127].
constexpr int pn(long long i) { return PN[static_cast<std::size_t>(((i % PN_PERIOD) + PN_PERIOD) % PN_PERIOD)]; }

namespace detail {
constexpr uint32_t pn_first32()
{
  uint32_t v = 0;
  for (int i = 0; i < 32; ++i) {
    v = (v << 1) | PN[static_cast<std::size_t>(i)];
  }
  return v;
}
} // namespace detail
// The profile's check value: p[0..31] = 00001110111100101100100100000010.
static_assert(detail::pn_first32() == 0b00001110111100101100100100000010u, "PN check value");

// ---------------------------------------------------------------- §4 frame

/// Symbols before the data: two preamble symbols and the header.
inline constexpr int NOF_PREAMBLE_SYMBOLS = 2;
inline constexpr int HEADER_SYMBOL = 2;
inline constexpr int FIRST_DATA_SYMBOL = 3;

/// Preamble value on used tone u: T[u] = 1 - 2 p[u].
constexpr float preamble_value(int u) { return 1.0f - 2.0f * static_cast<float>(pn(u)); }
/// Pilot value of symbol m >= 2: P[m] = 1 - 2 p[m].
constexpr float pilot_value(long long m) { return 1.0f - 2.0f * static_cast<float>(pn(m)); }

inline constexpr int HEADER_BITS = 48;
inline constexpr int HEADER_REPETITIONS = NOF_DATA / HEADER_BITS;
static_assert(HEADER_REPETITIONS * HEADER_BITS == NOF_DATA);
inline constexpr uint32_t MAX_ND = (1u << 20) - 1;

/// Modulation field values (h[0..3]).
enum class modulation : uint8_t { qpsk = 0, qam16 = 1 };

constexpr int bits_per_tone(modulation m) { return m == modulation::qpsk ? 2 : 4; }
constexpr int bits_per_symbol(modulation m) { return bits_per_tone(m) * NOF_DATA; }
constexpr int bytes_per_symbol(modulation m) { return bits_per_symbol(m) / 8; }
static_assert(bits_per_symbol(modulation::qpsk) == 672 && bytes_per_symbol(modulation::qam16) == 168);
inline constexpr int MAX_BITS_PER_SYMBOL = bits_per_symbol(modulation::qam16);
inline constexpr int MAX_BYTES_PER_SYMBOL = bytes_per_symbol(modulation::qam16);

/// Names of the modulations; "16qam" is another spelling of qam16 that parse_modulation takes.
inline constexpr enum_names<modulation, 3> MODULATION_NAMES{
    {{modulation::qpsk, "qpsk"}, {modulation::qam16, "qam16"}, {modulation::qam16, "16qam"}}};
constexpr const char* to_string(modulation m) { return name_of(MODULATION_NAMES, m).data(); }
constexpr std::optional<modulation> parse_modulation(std::string_view s) { return parse_name(MODULATION_NAMES, s); }

/// CRC-16/CCITT-FALSE: polynomial 0x1021, init 0xFFFF, no reflection, no final XOR.
constexpr uint16_t crc16_ccitt_false(const uint8_t* data, std::size_t len)
{
  uint16_t crc = 0xFFFF;
  for (std::size_t i = 0; i < len; ++i) {
    crc = static_cast<uint16_t>(crc ^ (static_cast<uint16_t>(data[i]) << 8));
    for (int b = 0; b < 8; ++b) {
      crc = (crc & 0x8000u) ? static_cast<uint16_t>((crc << 1) ^ 0x1021u) : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}
namespace detail {
constexpr uint16_t crc_check()
{
  const uint8_t s[9] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  return crc16_ccitt_false(s, 9);
}
} // namespace detail
static_assert(detail::crc_check() == 0x29B1, "CRC-16/CCITT-FALSE check value");

/// Header fields (§4).
struct header_fields {
  uint8_t mod_field = 0; ///< h[0..3], the mode (profile 2 §1): 0 QPSK, 1 16-QAM, 2..4 and 9 coded, others reserved
  uint32_t nd = 0;       ///< h[4..23], data symbols
  uint8_t seq = 0;       ///< h[24..31]
};

/// The 48 header bits h[0..47] (one per element, 0 or 1) of `f`, CRC included.
constexpr std::array<uint8_t, HEADER_BITS> header_bits(const header_fields& f)
{
  const uint32_t word = (static_cast<uint32_t>(f.mod_field & 0xF) << 28) | ((f.nd & 0xFFFFFu) << 8) | f.seq;
  const uint8_t bytes[4] = {static_cast<uint8_t>(word >> 24), static_cast<uint8_t>(word >> 16),
                            static_cast<uint8_t>(word >> 8), static_cast<uint8_t>(word)};
  const uint16_t crc = crc16_ccitt_false(bytes, 4);
  std::array<uint8_t, HEADER_BITS> h{};
  for (int i = 0; i < 32; ++i) {
    h[static_cast<std::size_t>(i)] = static_cast<uint8_t>((word >> (31 - i)) & 1u);
  }
  for (int i = 0; i < 16; ++i) {
    h[static_cast<std::size_t>(32 + i)] = static_cast<uint8_t>((crc >> (15 - i)) & 1u);
  }
  return h;
}

// ---------------------------------------------------------------- profile 2 §1 mode

/// The coded modes' HRP MCS numbers; NO_MCS for the uncoded modes 0 and 1.
inline constexpr int NO_MCS = -1;

/// Whether the mode field h[0..3] names a defined mode: 0, 1 (uncoded), 2, 3, 4, 9 (coded).
constexpr bool mode_defined(unsigned field) { return field <= 4 || field == 9; }
/// The MCS of a defined mode (mode = MCS + 2), NO_MCS for the uncoded modes.
constexpr int mcs_of_mode(unsigned field) { return field >= 2 ? int(field) - 2 : NO_MCS; }
/// The mode field of an MCS (0, 1, 2, 7).
constexpr uint8_t mode_of_mcs(int mcs) { return uint8_t(mcs + 2); }
/// The constellation of a defined mode: 16-QAM for modes 1, 4 (MCS 2) and 9 (MCS 7).
constexpr modulation modulation_of_mode(unsigned field)
{
  return field == 1 || field == 4 || field == 9 ? modulation::qam16 : modulation::qpsk;
}
static_assert(mode_defined(9) && !mode_defined(5) && !mode_defined(8) && !mode_defined(10));
static_assert(mcs_of_mode(4) == 2 && mode_of_mcs(7) == 9 && modulation_of_mode(mode_of_mcs(7)) == modulation::qam16);

/// Why a header was rejected: its CRC, a reserved mode (profile 2 §1), or Nd = 0.
enum class header_status : uint8_t { ok, crc, reserved_mode, zero_nd };

constexpr const char* to_string(header_status s)
{
  switch (s) {
  case header_status::ok: return "ok";
  case header_status::crc: return "crc";
  case header_status::reserved_mode: return "mode";
  case header_status::zero_nd: return "nd";
  }
  return "?";
}

/// Parse 48 decided header bits; checks the CRC first, then the fields.
constexpr header_status parse_header(const std::array<uint8_t, HEADER_BITS>& h, header_fields& out)
{
  uint32_t word = 0;
  for (int i = 0; i < 32; ++i) {
    word = (word << 1) | (h[static_cast<std::size_t>(i)] & 1u);
  }
  uint16_t rx_crc = 0;
  for (int i = 32; i < 48; ++i) {
    rx_crc = static_cast<uint16_t>((rx_crc << 1) | (h[static_cast<std::size_t>(i)] & 1u));
  }
  const uint8_t bytes[4] = {static_cast<uint8_t>(word >> 24), static_cast<uint8_t>(word >> 16),
                            static_cast<uint8_t>(word >> 8), static_cast<uint8_t>(word)};
  out.mod_field = static_cast<uint8_t>(word >> 28);
  out.nd = (word >> 8) & 0xFFFFFu;
  out.seq = static_cast<uint8_t>(word & 0xFFu);
  if (crc16_ccitt_false(bytes, 4) != rx_crc) {
    return header_status::crc;
  }
  if (!mode_defined(out.mod_field)) {
    return header_status::reserved_mode;
  }
  if (out.nd == 0) {
    return header_status::zero_nd;
  }
  return header_status::ok;
}

/// The header's soft decision (§4 leaves deciding to the receiver): each bit's
/// combined soft value (positive: bit 0) decided by its sign, and where that header
/// fails its CRC, the two least reliable bits flipped in turn and together (a Chase
/// search, cheapest pattern first) until one parses; a flip is allowed only where the
/// bit's magnitude is under HEADER_FLIP_LIMIT of the mean magnitude, so a header sent
/// wrong (every repetition of a bit inverted) stays rejected. CRC-16/CCITT-FALSE over 48
/// bits has minimum distance 4 (header_crc_distance below), so at most one of the
/// three patterns can pass and none passes a header with two errors elsewhere.
inline constexpr float HEADER_FLIP_LIMIT = 0.5f;
inline constexpr int HEADER_CHASE_BITS = 2;

struct header_decision {
  header_status status = header_status::crc;
  uint8_t flips = 0; ///< bits flipped to pass the CRC (0 when the signs passed)
};

constexpr header_decision decide_header(const float* soft, header_fields& out)
{
  std::array<uint8_t, HEADER_BITS> h{};
  float sum = 0.0f;
  int weakest[HEADER_CHASE_BITS] = {-1, -1}; // ascending magnitude, the lower index on ties
  for (int j = 0; j < HEADER_BITS; ++j) {
    const float s = soft[j];
    const float a = s < 0.0f ? -s : s;
    h[std::size_t(j)] = s < 0.0f ? 1 : 0;
    sum += a;
    for (int k = 0; k < HEADER_CHASE_BITS; ++k) {
      const int w = weakest[k];
      if (w < 0 || a < (soft[w] < 0.0f ? -soft[w] : soft[w])) {
        for (int i = HEADER_CHASE_BITS - 1; i > k; --i) {
          weakest[i] = weakest[i - 1];
        }
        weakest[k] = j;
        break;
      }
    }
  }
  header_decision d{parse_header(h, out), 0};
  if (d.status != header_status::crc) {
    return d;
  }
  const float limit = HEADER_FLIP_LIMIT * (sum / float(HEADER_BITS));
  bool weak[HEADER_CHASE_BITS] = {};
  for (int k = 0; k < HEADER_CHASE_BITS; ++k) {
    const float s = soft[weakest[k]];
    weak[k] = (s < 0.0f ? -s : s) < limit;
  }
  // Patterns by cost (the sum of the flipped magnitudes): {0}, {1}, {0, 1}.
  for (unsigned pattern = 1; pattern < (1u << HEADER_CHASE_BITS); ++pattern) {
    bool allowed = true;
    for (int k = 0; k < HEADER_CHASE_BITS; ++k) {
      allowed = allowed && (((pattern >> k) & 1u) == 0 || weak[k]);
    }
    if (!allowed) {
      continue;
    }
    std::array<uint8_t, HEADER_BITS> t = h;
    uint8_t n = 0;
    for (int k = 0; k < HEADER_CHASE_BITS; ++k) {
      if (((pattern >> k) & 1u) != 0) {
        t[std::size_t(weakest[k])] ^= 1u;
        ++n;
      }
    }
    header_fields f{};
    if (parse_header(t, f) == header_status::ok) {
      out = f;
      return {header_status::ok, n};
    }
  }
  return d; // `out` holds the fields as the signs read them (the patterns parsed into their own)
}

// ---------------------------------------------------------------- §5 constellations

/// QPSK amplitude a = 1/sqrt(2).
inline constexpr float QPSK_A = 0.70710678118654752f;
/// 16-QAM unit c = 1/sqrt(10).
inline constexpr float QAM16_C = 0.31622776601683794f;

/// QPSK point of index i (0..3): I = -a if bit0 set, Q = -a if bit1 set.
constexpr std::array<float, 2> qpsk_point(unsigned i)
{
  return {(i & 1u) ? -QPSK_A : QPSK_A, (i & 2u) ? -QPSK_A : QPSK_A};
}

/// Gray level of two bits (MSB first): 00 -3c, 01 -c, 11 +c, 10 +3c.
constexpr float qam16_level(unsigned two_bits)
{
  switch (two_bits & 3u) {
  case 0: return -3.0f * QAM16_C;
  case 1: return -QAM16_C;
  case 3: return QAM16_C;
  default: return 3.0f * QAM16_C;
  }
}

/// 16-QAM point of index i = b3 b2 b1 b0: I from b3 b2, Q from b1 b0.
constexpr std::array<float, 2> qam16_point(unsigned i) { return {qam16_level(i >> 2), qam16_level(i)}; }

static_assert(qam16_point(0)[0] < -0.9f && qam16_point(10)[0] > 0.9f && qam16_point(10)[1] > 0.9f);

} // namespace whd::profile
