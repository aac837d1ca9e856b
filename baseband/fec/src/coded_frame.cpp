#include <whd/fec/coded_frame.hpp>

#include <charconv>
#include <stdexcept>
#include <string>

namespace whd::fec {

std::optional<int> parse_mcs(std::string_view s)
{
  int v = -1;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size() || !mcs_defined(v)) {
    return std::nullopt;
  }
  return v;
}

frame_geometry geometry(int mcs, uint32_t nd)
{
  if (!mcs_defined(mcs)) {
    throw std::invalid_argument("MCS " + std::to_string(mcs) + " is not defined by profile 2 (0, 1, 2, 7)");
  }
  if (nd == 0 || nd > profile::MAX_ND) {
    throw std::invalid_argument("a coded frame has 1 .. " + std::to_string(profile::MAX_ND) + " data symbols, not " +
                                std::to_string(nd));
  }
  frame_geometry g;
  g.mcs = mcs;
  g.nd = nd;
  g.bits_per_tone = profile::bits_per_tone(modulation_of_mcs(mcs));
  g.ncbps = profile::bits_per_symbol(modulation_of_mcs(mcs));
  g.punct = pattern_of(rate_of_mcs(mcs));
  g.ce = uint64_t(nd) * uint64_t(g.ncbps) / NOF_ENCODERS;
  g.periods = g.ce / uint64_t(g.punct.pout);
  g.nin = g.periods * uint64_t(g.punct.pin);
  g.q = (g.nin - TAIL_BITS) / 8;
  const uint64_t rcap = 8 * g.q;
  const uint64_t c = rcap / RS_N;
  const uint64_t rem = rcap - RS_N * c;
  g.info_bytes = RS_K * c + (rem > RS_PARITY ? rem - RS_PARITY : 0);
  g.codewords = (g.info_bytes + RS_K - 1) / RS_K;
  g.last_k = g.info_bytes - RS_K * (g.codewords - 1);
  g.rs_bytes = g.info_bytes + RS_PARITY * g.codewords;
  g.pad_bits = g.ce - g.periods * uint64_t(g.punct.pout);
  return g;
}

} // namespace whd::fec
