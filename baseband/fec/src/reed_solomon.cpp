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

/// libfec's encoder as one 64-bit shift register (parity byte 0 in the top byte):
/// each message byte m steps it to (r << 8) ^ STEP[m ^ (r >> 56)], where STEP[f] is
/// what libfec's step adds for feedback f, i.e. the parity of the one-byte message f
/// (taken from libfec's own encoder, so that the two agree by construction).
class rs_register {
  static_assert(RS_PARITY == 8, "the parity fills one 64-bit word");

public:
  rs_register()
  {
    void* c = codecs().get(1);
    for (unsigned f = 0; f < 256; ++f) {
      uint8_t m = uint8_t(f);
      std::array<uint8_t, RS_PARITY> p{};
      encode_rs_char(c, &m, p.data());
      step_[f] = load(p.data());
    }
  }
  /// The parity of k message bytes, packed as load() packs the received parity.
  uint64_t parity(const uint8_t* message, std::size_t k) const noexcept
  {
    uint64_t r = 0;
    for (std::size_t i = 0; i < k; ++i) {
      r = (r << 8) ^ step_[message[i] ^ uint8_t(r >> 56)];
    }
    return r;
  }
  /// parity() of four messages of k bytes, `stride` apart, side by side: four
  /// independent chains of dependent table loads (one chain's latency is its cost).
  void parity4(const uint8_t* message, std::size_t stride, std::size_t k, uint64_t (&r)[4]) const noexcept
  {
    uint64_t a = 0, b = 0, c = 0, d = 0;
    const uint8_t *ma = message, *mb = message + stride, *mc = message + 2 * stride, *md = message + 3 * stride;
    for (std::size_t i = 0; i < k; ++i) {
      a = (a << 8) ^ step_[ma[i] ^ uint8_t(a >> 56)];
      b = (b << 8) ^ step_[mb[i] ^ uint8_t(b >> 56)];
      c = (c << 8) ^ step_[mc[i] ^ uint8_t(c >> 56)];
      d = (d << 8) ^ step_[md[i] ^ uint8_t(d >> 56)];
    }
    r[0] = a;
    r[1] = b;
    r[2] = c;
    r[3] = d;
  }
  /// 8 parity bytes as one word, the first in the top byte.
  static uint64_t load(const uint8_t* p) noexcept
  {
    uint64_t r = 0;
    for (std::size_t i = 0; i < std::size_t(RS_PARITY); ++i) {
      r = (r << 8) | p[i];
    }
    return r;
  }

private:
  std::array<uint64_t, 256> step_{};
};

const rs_register& parity_register()
{
  static const rs_register r;
  return r;
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
  // A codeword (its parity that of its message) is what libfec finds all syndromes of
  // zero for, and returns unchanged with 0: most words of a frame are, and the
  // register is several times cheaper than libfec's eight syndromes.
  const std::size_t k = codeword.size() - RS_PARITY;
  if (parity_register().parity(codeword.data(), k) == rs_register::load(codeword.data() + k)) {
    return 0;
  }
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
    encode_rs_char(c, codeword.data(), parity.data());
    ok = std::equal(parity.begin(), parity.end(), codeword.begin() + std::ptrdiff_t(k));
  }
  if (!ok) {
    std::copy_n(received.begin(), codeword.size(), codeword.begin());
    return -1;
  }
  return fixed;
}

void rs_decode_words(std::span<uint8_t> words, std::size_t n, std::span<int> fixed)
{
  if (n <= RS_PARITY || n > RS_N || words.size() != n * fixed.size()) {
    throw std::invalid_argument("rs_decode_words: codewords of 9 .. 224 bytes, n bytes for each result");
  }
  const std::size_t k = n - RS_PARITY;
  const rs_register& reg = parity_register();
  std::size_t i = 0;
  for (; i + 4 <= fixed.size(); i += 4) {
    uint8_t* w = words.data() + i * n;
    uint64_t parity[4];
    reg.parity4(w, n, k, parity);
    for (std::size_t j = 0; j < 4; ++j) {
      // A codeword is rs_decode's 0 as it is; any other word takes rs_decode's own way.
      uint8_t* word = w + j * n;
      fixed[i + j] = parity[j] == rs_register::load(word + k) ? 0 : rs_decode(std::span<uint8_t>(word, n));
    }
  }
  for (; i < fixed.size(); ++i) {
    fixed[i] = rs_decode(std::span<uint8_t>(words.data() + i * n, n));
  }
}

} // namespace whd::fec
