#include <whd/fec/coded_frame.hpp>
#include <whd/fec/reed_solomon.hpp>

extern "C" {
#include <fec.h>
}

#include <algorithm>
#include <array>
#include <mutex>
#include <stdexcept>
#include <string>

namespace whd::fec {

namespace {

/// One libfec codec per shortened length k (its pad is 255 - 8 - k), made when
/// first needed and kept: the codec's tables are only read while coding, so threads
/// share it.
class rs_codecs {
public:
  ~rs_codecs()
  {
    for (void* c : codecs_) {
      if (c != nullptr) {
        free_rs_char(c);
      }
    }
  }
  void* get(std::size_t k)
  {
    if (k < 1 || k > RS_K) {
      throw std::invalid_argument("an RS codeword holds 1 .. 216 message bytes, not " + std::to_string(k));
    }
    std::call_once(once_[k], [&] {
      codecs_[k] = init_rs_char(8, int(RS_FIELD_POLY), 1, 1, RS_PARITY, 255 - RS_PARITY - int(k));
    });
    if (codecs_[k] == nullptr) {
      throw std::runtime_error("libfec could not make the RS codec");
    }
    return codecs_[k];
  }

private:
  std::array<void*, RS_K + 1> codecs_{};
  std::array<std::once_flag, RS_K + 1> once_;
};

rs_codecs& codecs()
{
  static rs_codecs c;
  return c;
}

} // namespace

void rs_encode(std::span<const uint8_t> message, std::span<uint8_t> parity)
{
  if (parity.size() != RS_PARITY) {
    throw std::invalid_argument("RS parity is 8 bytes");
  }
  void* c = codecs().get(message.size());
  // libfec's encoder takes a non-const pointer but only reads the message.
  encode_rs_char(c, const_cast<uint8_t*>(message.data()), parity.data());
}

int rs_decode(std::span<uint8_t> codeword)
{
  if (codeword.size() <= RS_PARITY) {
    throw std::invalid_argument("an RS codeword holds 1 .. 216 message bytes and 8 parity bytes");
  }
  void* c = codecs().get(codeword.size() - RS_PARITY);
  std::array<uint8_t, RS_N> received{};
  std::copy(codeword.begin(), codeword.end(), received.begin());
  const int fixed = decode_rs_char(c, codeword.data(), nullptr, 0);
  // A correction stands only if libfec made one (it fails where the locator's degree
  // is not its number of roots, where a root lies in the shortened part, and where the
  // corrected word's syndromes are not zero), of at most 4 bytes (beyond 4 errors
  // Berlekamp-Massey can give a locator of degree 5..8 whose roots are all found: more
  // than 4 byte errors detected, which profile 2 §3 counts as a failure), and its result
  // is a codeword (checked here too, whatever libfec's version checks).
  bool ok = fixed >= 0 && fixed <= RS_T;
  if (ok && fixed > 0) {
    std::array<uint8_t, RS_PARITY> parity{};
    const std::size_t k = codeword.size() - RS_PARITY;
    encode_rs_char(c, codeword.data(), parity.data());
    ok = std::equal(parity.begin(), parity.end(), codeword.begin() + std::ptrdiff_t(k));
  }
  if (!ok) {
    std::copy_n(received.begin(), codeword.size(), codeword.begin());
    return -1;
  }
  return fixed;
}

} // namespace whd::fec
