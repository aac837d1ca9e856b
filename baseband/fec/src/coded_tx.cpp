#include <whd/fec/coded_tx.hpp>
#include <whd/fec/reed_solomon.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace whd::fec {

std::vector<uint8_t> rs_stream(const frame_geometry& g, std::span<const uint8_t> info)
{
  if (info.size() != g.info_bytes) {
    throw std::invalid_argument("a coded frame of MCS " + std::to_string(g.mcs) + " and " + std::to_string(g.nd) +
                                " data symbols carries " + std::to_string(g.info_bytes) + " bytes, not " +
                                std::to_string(info.size()));
  }
  std::vector<uint8_t> rs(g.rs_bytes);
  uint64_t in = 0, out = 0;
  for (uint64_t j = 0; j < g.codewords; ++j) {
    const uint64_t k = g.message_bytes(j);
    std::copy_n(info.begin() + std::ptrdiff_t(in), k, rs.begin() + std::ptrdiff_t(out));
    rs_encode(info.subspan(in, k), std::span<uint8_t>(rs).subspan(out + k, RS_PARITY));
    in += k;
    out += k + RS_PARITY;
  }
  return rs;
}

std::vector<uint8_t> encoder_input(const frame_geometry& g, std::span<const uint8_t> rs, int e)
{
  std::vector<uint8_t> u(g.nin, 0);
  for (uint64_t b = 0; b < g.q; ++b) {
    const uint64_t i = b * NOF_ENCODERS + uint64_t(e);
    const uint8_t byte = i < rs.size() ? rs[i] : 0;
    for (int k = 0; k < 8; ++k) {
      u[8 * b + uint64_t(k)] = uint8_t((byte >> (7 - k)) & 1u);
    }
  }
  return u;
}

std::vector<uint8_t> convolve_punctured(std::span<const uint8_t> bits, const puncture_pattern& p)
{
  const std::size_t periods = bits.size() / std::size_t(p.pin);
  std::vector<uint8_t> out;
  out.reserve(periods * std::size_t(p.pout));
  unsigned reg = 0; // r[n] >> 1 of the step before: u[n-1] at bit 5 .. u[n-6] at bit 0
  std::array<unsigned, 7> codes{};
  for (std::size_t per = 0; per < periods; ++per) {
    for (int j = 0; j < p.pin; ++j) {
      const unsigned r = (unsigned(bits[per * std::size_t(p.pin) + std::size_t(j)] & 1u) << 6) | reg;
      codes[std::size_t(j)] = output_code(r);
      reg = r >> 1;
    }
    for (int i = 0; i < p.pout; ++i) {
      out.push_back(uint8_t((codes[p.input[std::size_t(i)]] >> (2 - p.which[std::size_t(i)])) & 1u));
    }
  }
  return out;
}

std::vector<uint8_t> multiplex(const frame_geometry& g, const std::vector<std::vector<uint8_t>>& streams)
{
  std::vector<uint8_t> v(g.coded_bits(), 0);
  for (uint64_t j = 0; j < v.size(); ++j) {
    const auto& c = streams[j % NOF_ENCODERS];
    const uint64_t i = j / NOF_ENCODERS;
    v[j] = i < c.size() ? c[i] : 0;
  }
  return v;
}

std::vector<uint8_t> interleave_and_whiten(const frame_geometry& g, std::span<const uint8_t> v)
{
  std::vector<uint8_t> out(v.size());
  const auto n = uint64_t(g.ncbps);
  for (uint64_t m = 0; m < g.nd; ++m) {
    for (int t = 0; t < g.ncbps; ++t) {
      const uint64_t pos = m * n + uint64_t(t);
      out[pos] = uint8_t(v[m * n + uint64_t(deinterleaved_index(t, g.ncbps))] ^ profile::PN[pos % profile::PN_PERIOD]);
    }
  }
  return out;
}

std::vector<uint8_t> pack_bits(std::span<const uint8_t> bits)
{
  std::vector<uint8_t> out((bits.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    out[i / 8] = uint8_t(out[i / 8] | ((bits[i] & 1u) << (7 - i % 8)));
  }
  return out;
}

std::vector<uint8_t> encode_frame(const frame_geometry& g, std::span<const uint8_t> info)
{
  const std::vector<uint8_t> rs = rs_stream(g, info);
  std::vector<std::vector<uint8_t>> streams(NOF_ENCODERS);
  for (int e = 0; e < NOF_ENCODERS; ++e) {
    streams[std::size_t(e)] = convolve_punctured(encoder_input(g, rs, e), g.punct);
  }
  return pack_bits(interleave_and_whiten(g, multiplex(g, streams)));
}

} // namespace whd::fec
