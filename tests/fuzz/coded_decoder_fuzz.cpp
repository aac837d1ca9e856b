// Fuzz target: profile 2's FEC decoder over soft values of any value, and the header's
// mode field. Whatever the input: a coded frame of any MCS and Nd decodes to exactly L
// bytes, RS's counts stay within the frame's codewords, the vectorised Viterbi equals
// the reference on every tile, and a header parses to a defined mode or a reason.
#include "fuzz_check.hpp"
#include "fuzz_targets.hpp"

#include <whd/baseband/profile.hpp>
#include <whd/fec/coded_rx.hpp>
#include <whd/fec/viterbi.hpp>

#include <array>
#include <cstring>
#include <string>
#include <vector>

namespace whd::fuzz {

int coded_decoder_one(const uint8_t* data, std::size_t size)
{
  namespace p = profile;
  if (size < 9) {
    return 0;
  }
  // Bytes 0..5: a header word and CRC as received (48 bits, any value).
  std::array<uint8_t, p::HEADER_BITS> h{};
  for (int i = 0; i < p::HEADER_BITS; ++i) {
    h[std::size_t(i)] = uint8_t((data[i / 8] >> (7 - i % 8)) & 1u);
  }
  p::header_fields f{};
  const p::header_status hs = p::parse_header(h, f);
  if (hs == p::header_status::ok) {
    check(p::mode_defined(f.mod_field) && f.nd >= 1, "an accepted header names a defined mode and Nd >= 1");
    const int mcs = p::mcs_of_mode(f.mod_field);
    check(mcs == p::NO_MCS || fec::mcs_defined(mcs), "a coded mode's MCS is defined", std::to_string(mcs));
  } else if (hs == p::header_status::reserved_mode) {
    check(!p::mode_defined(f.mod_field), "only an undefined mode is reserved");
  }
  // Byte 6: the MCS; bytes 7..8: Nd (1 .. 64); the rest: the soft values, repeated.
  const int mcs = fec::MCS_LIST[data[6] % fec::MCS_LIST.size()];
  const auto nd = uint32_t(1 + ((uint32_t(data[7]) << 8 | data[8]) % 64));
  const fec::frame_geometry g = fec::geometry(mcs, nd);
  std::vector<int8_t> soft(g.coded_bits());
  const std::size_t n = size - 9;
  for (std::size_t i = 0; i < soft.size(); ++i) {
    soft[i] = n == 0 ? int8_t(0) : int8_t(data[9 + i % n]);
    if (soft[i] == -128) {
      soft[i] = -127; // the decoder's input range (llr_to_int8's)
    }
  }
  std::vector<uint8_t> info(g.info_bytes, 0xA5);
  const fec::rs_stats rs = fec::decode_frame(g, soft, info);
  check(rs.failed <= g.codewords, "RS fails at most every codeword");
  check(rs.corrected <= uint32_t(fec::RS_T) * (g.codewords - rs.failed), "RS corrects at most 4 bytes a codeword",
        std::to_string(rs.corrected) + " in " + std::to_string(g.codewords - rs.failed) + " codewords");

  // The vectorised decoder against the reference, tile by tile, on encoder 0's stream.
  std::vector<int8_t> streams(fec::NOF_ENCODERS * g.ce);
  fec::demultiplex_symbols(g, 0, soft, streams);
  std::vector<int8_t> mother(3 * g.nin + 3 * fec::MAX_TILE_STEPS);
  std::vector<uint8_t> a((g.nin + 7) / 8, 0), b((g.nin + 7) / 8, 0);
  std::vector<fec::tile_job> jobs;
  for (uint64_t k = 0; k < fec::nof_tiles(g.nin); ++k) {
    const fec::tile_span t = fec::tile_of(g.nin, k);
    fec::depuncture_tile(g, std::span<const int8_t>(streams).subspan(0, g.ce), k, mother.data() + 3 * t.run_first);
    fec::decode_tile_reference({mother.data(), g.nin, k, 8 * g.q, b.data()});
    jobs.push_back({mother.data(), g.nin, k, 8 * g.q, a.data()});
  }
  fec::decode_tiles(jobs);
  check(a == b, "the vectorised Viterbi equals the reference", "MCS " + std::to_string(mcs) + ", Nd " + std::to_string(nd));
  return 0;
}

} // namespace whd::fuzz
