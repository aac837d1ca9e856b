/// @file reed_solomon.hpp
/// The outer code of profile 2 §2.2: RS(224,216) over GF(256) (field polynomial
/// 0x11D, alpha = 2, roots alpha^1 .. alpha^8), shortened to k <= 216 message bytes.
/// The codec is libfec's (Karn), `init_rs_char(8, 0x11d, 1, 1, 8, 255 - 8 - k)`.
#pragma once

#include <cstdint>
#include <span>

namespace whd::fec {

/// The 8 parity bytes of a message of k = 1 .. 216 bytes (§2.2: the coefficients,
/// highest degree first, of m(x) x^8 mod g(x)).
/// @param message [in] k bytes; @param parity [out] 8 bytes
/// @throws std::invalid_argument for a bad size
void rs_encode(std::span<const uint8_t> message, std::span<uint8_t> parity);

/// Corrects a received codeword of k + 8 bytes (message, then parity) in place:
/// libfec's decode_rs_char, except that a correction of more than 4 bytes (which it
/// makes where the locator's degree exceeds 4 and all its roots are found) is a
/// failure, as profile 2 §3 counts one.
/// @return the bytes corrected (0 .. 4), or -1 when the codeword cannot be corrected
///         (more than 4 byte errors detected); the codeword is then left as received
/// @throws std::invalid_argument for a bad size
int rs_decode(std::span<uint8_t> codeword);

} // namespace whd::fec
