#include <whd/baseband/modulator.hpp>

#include <complex>
// liquid-dsp takes std::complex as its complex type when <complex> comes first.
#include <liquid/liquid.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <numbers>
#include <stdexcept>
#include <string>

namespace whd::baseband {

namespace p = whd::profile;

namespace {

constexpr std::size_t NZ = static_cast<std::size_t>(p::N);

/// 1/sqrt(352): unit mean power over the used tones (§2).
const double TIME_SCALE = 1.0 / std::sqrt(static_cast<double>(p::NOF_USED));

void check_bins(std::span<const cf32> X, const char* who)
{
  if (X.size() != NZ) {
    throw std::invalid_argument(std::string(who) + ": expected " + std::to_string(p::N) + " bins, got " +
                                std::to_string(X.size()));
  }
}

void set_pilots(long long m, std::span<cf32> X)
{
  const float v = p::pilot_value(m);
  for (auto b : p::PILOT_BIN) {
    X[static_cast<std::size_t>(b)] = cf32(v, 0.0f);
  }
}

} // namespace

std::array<uint8_t, p::HEADER_BITS> transmitted_header_bits(const frame_spec& f)
{
  auto h = p::header_bits({f.mcs != p::NO_MCS ? p::mode_of_mcs(f.mcs) : static_cast<uint8_t>(f.mod), f.nd, f.seq});
  if (f.corrupt_header) {
    for (int i = p::HEADER_BITS - 16; i < p::HEADER_BITS; ++i) {
      h[static_cast<std::size_t>(i)] ^= 1u;
    }
  }
  return h;
}

void preamble_tones(std::span<cf32> X)
{
  check_bins(X, "preamble_tones");
  std::fill(X.begin(), X.end(), cf32{});
  for (int u = 0; u < p::NOF_USED; ++u) {
    X[static_cast<std::size_t>(p::USED_BIN[static_cast<std::size_t>(u)])] = cf32(p::preamble_value(u), 0.0f);
  }
}

void header_tones(const std::array<uint8_t, p::HEADER_BITS>& h, std::span<cf32> X)
{
  check_bins(X, "header_tones");
  std::fill(X.begin(), X.end(), cf32{});
  for (int d = 0; d < p::NOF_DATA; ++d) {
    const unsigned bit = (h[static_cast<std::size_t>(d % p::HEADER_BITS)] ^ static_cast<unsigned>(p::pn(d))) & 1u;
    X[static_cast<std::size_t>(p::DATA_BIN[static_cast<std::size_t>(d)])] = cf32(bit ? -1.0f : 1.0f, 0.0f);
  }
  set_pilots(p::HEADER_SYMBOL, X);
}

void data_tones(p::modulation mod, std::span<const uint8_t> bytes, long long m, std::span<cf32> X)
{
  check_bins(X, "data_tones");
  if (bytes.size() != static_cast<std::size_t>(p::bytes_per_symbol(mod))) {
    throw std::invalid_argument("data_tones: a " + std::string(p::to_string(mod)) + " symbol takes " +
                                std::to_string(p::bytes_per_symbol(mod)) + " bytes, got " +
                                std::to_string(bytes.size()));
  }
  if (m < p::FIRST_DATA_SYMBOL) {
    throw std::invalid_argument("data_tones: data symbols are m >= 3, got m = " + std::to_string(m));
  }
  std::fill(X.begin(), X.end(), cf32{});
  const int bits = p::bits_per_tone(mod);
  // Bit stream MSB first; a group's first bit is the index's MSB. Groups never
  // straddle bytes (B = 2 or 4 divides 8).
  const int groups_per_byte = 8 / bits;
  const unsigned mask = (1u << bits) - 1u;
  for (int d = 0; d < p::NOF_DATA; ++d) {
    const unsigned byte = bytes[static_cast<std::size_t>(d / groups_per_byte)];
    const int shift = 8 - bits * (d % groups_per_byte + 1);
    const unsigned i = (byte >> shift) & mask;
    X[static_cast<std::size_t>(p::DATA_BIN[static_cast<std::size_t>(d)])] = constellation_point(mod, i);
  }
  set_pilots(m, X);
}

const std::array<cf32, p::N>& preamble_time_symbol()
{
  static const std::array<cf32, p::N> symbol = [] {
    std::array<cf32, p::N> x{};
    for (int n = 0; n < p::N; ++n) {
      double re = 0.0;
      double im = 0.0;
      for (int u = 0; u < p::NOF_USED; ++u) {
        const long long k = p::USED_K[static_cast<std::size_t>(u)];
        // (k n) mod N keeps the angle exact before the trigonometry.
        const double angle = 2.0 * std::numbers::pi * static_cast<double>(((k * n) % p::N + p::N) % p::N) / p::N;
        const double t = p::preamble_value(u);
        re += t * std::cos(angle);
        im += t * std::sin(angle);
      }
      x[static_cast<std::size_t>(n)] = cf32(static_cast<float>(re * TIME_SCALE), static_cast<float>(im * TIME_SCALE));
    }
    return x;
  }();
  return symbol;
}

modulator::modulator()
{
  freq_ = static_cast<cf32*>(fft_malloc(p::N * sizeof(cf32)));
  time_ = static_cast<cf32*>(fft_malloc(p::N * sizeof(cf32)));
  if (freq_ == nullptr || time_ == nullptr) {
    fft_free(freq_);
    fft_free(time_);
    throw std::bad_alloc();
  }
  std::fill(freq_, freq_ + p::N, cf32{});
  // Unnormalised inverse: y[n] = sum_b X[b] e^{+j 2 pi b n / N}.
  plan_ = fft_create_plan(p::N, freq_, time_, LIQUID_FFT_BACKWARD, 0);
  if (plan_ == nullptr) {
    fft_free(freq_);
    fft_free(time_);
    throw std::runtime_error("modulator: liquid-dsp could not create a 512-point inverse FFT plan");
  }
}

modulator::~modulator()
{
  fft_destroy_plan(static_cast<fftplan>(plan_));
  fft_free(freq_);
  fft_free(time_);
}

void modulator::modulate(std::span<const cf32> X, std::span<cf32> out)
{
  check_bins(X, "modulator::modulate");
  if (out.size() != static_cast<std::size_t>(p::SYMBOL_LEN)) {
    throw std::invalid_argument("modulator::modulate: the output takes " + std::to_string(p::SYMBOL_LEN) +
                                " samples, got " + std::to_string(out.size()));
  }
  std::copy(X.begin(), X.end(), freq_);
  fft_execute(static_cast<fftplan>(plan_));
  const auto scale = static_cast<float>(TIME_SCALE);
  for (std::size_t n = 0; n < NZ; ++n) {
    out[static_cast<std::size_t>(p::G) + n] = time_[n] * scale;
  }
  std::copy_n(out.begin() + p::N, p::G, out.begin());
}

void modulator::frame_symbol(const frame_spec& f, long long m, std::span<const uint8_t> symbol_payload,
                             std::span<cf32> out)
{
  if (m < 0 || m >= p::FIRST_DATA_SYMBOL + static_cast<long long>(f.nd)) {
    throw std::invalid_argument("modulator::frame_symbol: symbol " + std::to_string(m) + " is not in a frame of " +
                                std::to_string(f.nd) + " data symbols");
  }
  if (out.size() != static_cast<std::size_t>(p::SYMBOL_LEN)) {
    throw std::invalid_argument("modulator::frame_symbol: the output takes " + std::to_string(p::SYMBOL_LEN) +
                                " samples, got " + std::to_string(out.size()));
  }
  if (m < p::NOF_PREAMBLE_SYMBOLS) {
    // The fixed preamble, computed once in double precision.
    const auto& body = preamble_time_symbol();
    std::copy(body.begin(), body.end(), out.begin() + p::G);
    std::copy_n(out.begin() + p::N, p::G, out.begin());
    return;
  }
  if (m == p::HEADER_SYMBOL) {
    header_tones(transmitted_header_bits(f), tones_);
  } else {
    data_tones(f.mod, symbol_payload, m, tones_);
  }
  modulate(tones_, out);
}

std::vector<cf32> modulator::frame(const frame_spec& f, std::span<const uint8_t> payload)
{
  if (payload.size() != frame_payload_bytes(f)) {
    throw std::invalid_argument("modulator::frame: the frame carries " + std::to_string(frame_payload_bytes(f)) +
                                " payload bytes, got " + std::to_string(payload.size()));
  }
  std::vector<cf32> out(frame_samples(f.nd));
  const auto per_symbol = static_cast<std::size_t>(p::bytes_per_symbol(f.mod));
  const auto len = static_cast<std::size_t>(p::SYMBOL_LEN);
  for (long long m = 0; m < p::FIRST_DATA_SYMBOL + static_cast<long long>(f.nd); ++m) {
    std::span<const uint8_t> bytes;
    if (m >= p::FIRST_DATA_SYMBOL) {
      bytes = payload.subspan(static_cast<std::size_t>(m - p::FIRST_DATA_SYMBOL) * per_symbol, per_symbol);
    }
    frame_symbol(f, m, bytes, std::span<cf32>(out).subspan(static_cast<std::size_t>(m) * len, len));
  }
  return out;
}

} // namespace whd::baseband
