/// @file reed_solomon.hpp
/// The outer code of profile 2 §2.2: RS(224,216) over GF(256) (field polynomial
/// 0x11D, alpha = 2, roots alpha^1 .. alpha^8), shortened to k <= 216 message bytes.
/// The codec is libfec's (Karn), `init_rs_char(8, 0x11d, 1, 1, 8, 255 - 8 - k)`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace whd::fec {

/// The 8 parity bytes of a message of k = 1 .. 216 bytes (§2.2: the coefficients,
/// highest degree first, of m(x) x^8 mod g(x)).
/// @param message [in] k bytes; @param parity [out] 8 bytes
/// @throws std::invalid_argument for a bad size
void rs_encode(std::span<const uint8_t> message, std::span<uint8_t> parity);

/// Corrects a received codeword of k + 8 bytes (message, then parity) in place:
/// libfec's decode_rs_char (Berlekamp-Massey, Chien, Forney; it fails where the
/// locator's degree is not its number of roots or a root lies in the shortened part),
/// and a correction stands only when it changes at most 4 bytes and leaves a codeword
/// (more than 4 is a failure, as profile 2 §3 counts one). The GPU's decoder follows
/// these rules step for step.
/// @return the bytes corrected (0 .. 4), or -1 when the codeword cannot be corrected
///         (more than 4 byte errors detected); the codeword is then left as received
/// @throws std::invalid_argument for a bad size
int rs_decode(std::span<uint8_t> codeword);

/// rs_decode of codewords of one length n = k + 8 bytes, word i at words[i n ..]:
/// the same results and bytes, the test that finds a word already a codeword (most
/// are) run on four words side by side.
/// @param words [in,out] n fixed.size() bytes
/// @param fixed [out] rs_decode's return value for each word
/// @throws std::invalid_argument for a bad size
void rs_decode_words(std::span<uint8_t> words, std::size_t n, std::span<int> fixed);

} // namespace whd::fec
