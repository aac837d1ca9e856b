/// @file coded_rx.hpp
/// The receiver's side of profile 2 §2.6: a coded frame's soft values (the
/// demapper's, in transmission order t) to its information bytes, in steps that
/// batch over frames: soft values demultiplexed as symbols arrive, the Viterbi's
/// tiles of every frame and encoder 16 at a time, then the RS codewords.
#pragma once

#include <whd/fec/coded_frame.hpp>
#include <whd/fec/viterbi.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace whd::fec {

/// Reed-Solomon's verdict on a frame (profile 2 §3).
struct rs_stats {
  uint32_t corrected = 0; ///< bytes corrected
  uint32_t failed = 0;    ///< codewords that could not be corrected (their bytes as received)
};

/// Data symbols [first, first + count) of a frame: their soft values (count Ncbps,
/// int8 as viterbi.hpp defines, order t) de-whitened, de-interleaved and
/// demultiplexed into `streams`, encoder e's Ce values at [e Ce, (e + 1) Ce), each in
/// its punctured order (c_e). Symbols may come in any order and from any thread.
void demultiplex_symbols(const frame_geometry& g, uint64_t first, std::span<const int8_t> soft,
                         std::span<int8_t> streams);
/// The same for float soft values (references and benchmarks).
void demultiplex_symbols(const frame_geometry& g, uint64_t first, std::span<const float> soft, std::span<float> streams);

/// How llrs_to_int8 and demultiplex_llrs convert: SSE2, four LLRs at a time (every
/// x86-64), or AVX-512, sixteen (where present, and then the default). Either gives
/// the same values.
enum class llr_isa { sse2, avx512 };
bool llr_isa_available(llr_isa isa) noexcept;
llr_isa best_llr_isa() noexcept;

/// LLRs as the FEC takes them: out[i] = baseband::llr_to_int8(llr[i], scale), the same
/// values, vectorised as best_llr_isa() says. `out` holds llr.size() values.
void llrs_to_int8(std::span<const float> llr, float scale, std::span<int8_t> out);
/// The same, the way asked for.
/// @throws std::invalid_argument when the processor lacks it
void llrs_to_int8(std::span<const float> llr, float scale, std::span<int8_t> out, llr_isa isa);

/// Data symbol m of a frame from its demapper's float LLRs (Ncbps of them, order t):
/// each as llrs_to_int8 makes it, then as demultiplex_symbols places it. The
/// de-whitening is the LLR's sign flipped before the conversion (llr_to_int8 is odd).
void demultiplex_llrs(const frame_geometry& g, uint64_t m, std::span<const float> llr, float scale,
                      std::span<int8_t> streams);
/// The same, converting the way asked for.
/// @throws std::invalid_argument when the processor lacks it
void demultiplex_llrs(const frame_geometry& g, uint64_t m, std::span<const float> llr, float scale,
                      std::span<int8_t> streams, llr_isa isa);

/// Encoder stream `c` (Ce float soft values) depunctured whole: 3 nin values.
std::vector<float> depuncture_stream(const frame_geometry& g, std::span<const float> c);

/// Un-parsing (§2.3) and RS decoding (§2.2) of one codeword: RS stream bytes of
/// codeword `word` gathered from the encoders' decoded bytes (`decoded`: 8 Q bytes,
/// encoder e's Q at e Q), corrected, its k message bytes to info[word 216 ..].
/// @return what RS did to it: {bytes corrected, 0} or {0, 1} when it could not
rs_stats correct_codeword(const frame_geometry& g, const uint8_t* decoded, uint64_t word, std::span<uint8_t> info);

/// Codewords correct_codewords takes at once.
inline constexpr uint64_t RS_WORDS_AT_ONCE = 4;

/// correct_codeword of codewords [first, first + count) (count <= RS_WORDS_AT_ONCE),
/// the same bytes and counts, the test of those of 216 message bytes run side by side
/// (rs_decode_words).
/// @return the sum of their correct_codeword results
rs_stats correct_codewords(const frame_geometry& g, const uint8_t* decoded, uint64_t first, uint64_t count,
                           std::span<uint8_t> info);

/// Tile `tile` of encoder stream `c` (Ce values) depunctured (§2.4; erasures and the
/// coded pad 0): 3 values per trellis step of the tile's run, into `out`
/// (3 (run_end - run_first) values).
void depuncture_tile(const frame_geometry& g, std::span<const int8_t> c, uint64_t tile, int8_t* out);

/// Runs `body(i)` for i in [0, n), possibly on several threads at once.
using parallel_for = std::function<void(std::size_t n, const std::function<void(std::size_t i)>& body)>;

/// One coded frame to decode.
struct coded_job {
  frame_geometry g;
  std::span<const int8_t> streams; ///< 8 Ce demultiplexed soft values (demultiplex_symbols)
  std::span<uint8_t> info;         ///< [out] g.info_bytes bytes
  rs_stats rs;                     ///< [out]
};

/// Decodes coded frames: Viterbi (decode_tiles), un-parsing (§2.3), RS (§2.2). Owns
/// the scratch of its runs (grown as needed, kept).
class coded_decoder {
public:
  /// Decodes `jobs`, spreading the tiles and the codewords over `pf`
  /// (nullptr: the calling thread).
  void decode(std::span<coded_job> jobs, const parallel_for& pf = nullptr);

private:
  std::vector<uint8_t> decoded_;        ///< 8 Q bytes a job, encoder-major
  std::vector<uint64_t> decoded_at_;    ///< each job's first byte in decoded_
  std::vector<uint64_t> tiles_at_;      ///< prefix sums of the jobs' 8 nof_tiles(nin)
  std::vector<uint64_t> groups_at_;     ///< prefix sums of the jobs' groups of RS_WORDS_AT_ONCE codewords
};

/// A whole frame on one thread: demultiplexing, Viterbi, RS.
/// @param soft [in] g.coded_bits() soft values, order t, symbol after symbol
/// @param info [out] g.info_bytes bytes
rs_stats decode_frame(const frame_geometry& g, std::span<const int8_t> soft, std::span<uint8_t> info);

/// A reference outside the definition: a whole frame decoded from float soft values by
/// a full-length floating-point Viterbi per encoder (no tiles, start and end in state
/// 0, float metrics), then RS. What the tiled integer decoder costs is measured against it.
rs_stats decode_frame_float(const frame_geometry& g, std::span<const float> soft, std::span<uint8_t> info);

} // namespace whd::fec
