/// @file tx_test_util.hpp
/// An ideal receiver for the transmit-side tests, written from the profile's words
/// (§2 receive convention, §4 tone classes, §5 nearest point) and independent of
/// the project's receive chain: exact timing, no channel estimate.
#pragma once

#include "file_bytes.hpp"

#include <whd/baseband/profile.hpp>
#include <whd/transport/capture.hpp>
#include <whd/transport/sample_types.hpp>

#include <complex>
// liquid-dsp takes std::complex as its complex type when <complex> comes first.
#include <liquid/liquid.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace whd::test {

namespace tp = whd::profile;

/// X[b] of the OFDM symbol whose guard starts at `pos`: the unnormalised forward DFT
/// (liquid-dsp) of the 512 samples after the guard, times sqrt(352)/512 so that a
/// transmitted unit-energy point comes back as itself.
inline std::vector<cf32> tones_at(std::span<const cf32> samples, uint64_t pos)
{
  if (pos + tp::SYMBOL_LEN > samples.size()) {
    throw std::out_of_range("tones_at: symbol past the end of the samples");
  }
  std::vector<cf32> x(samples.begin() + static_cast<std::ptrdiff_t>(pos + tp::G),
                      samples.begin() + static_cast<std::ptrdiff_t>(pos + tp::SYMBOL_LEN));
  std::vector<cf32> y(tp::N);
  fftplan plan = fft_create_plan(tp::N, x.data(), y.data(), LIQUID_FFT_FORWARD, 0);
  fft_execute(plan);
  fft_destroy_plan(plan);
  const float s = std::sqrt(static_cast<float>(tp::NOF_USED)) / static_cast<float>(tp::N);
  for (auto& v : y) {
    v *= s;
  }
  return y;
}

/// Nearest constellation index (§5) by exhaustive search.
inline unsigned nearest_index(tp::modulation mod, cf32 y)
{
  const unsigned order = mod == tp::modulation::qpsk ? 4u : 16u;
  unsigned best = 0;
  float best_d = std::numeric_limits<float>::max();
  for (unsigned i = 0; i < order; ++i) {
    const auto pt = mod == tp::modulation::qpsk ? tp::qpsk_point(i) : tp::qam16_point(i);
    const float d = std::norm(y - cf32(pt[0], pt[1]));
    if (d < best_d) {
      best_d = d;
      best = i;
    }
  }
  return best;
}

/// Payload bytes of one data symbol's tones: indices of tones d = 0..335, B bits
/// each, MSB first, packed into bytes MSB first (§4).
inline std::vector<uint8_t> demap_symbol(tp::modulation mod, std::span<const cf32> X)
{
  const int bits = tp::bits_per_tone(mod);
  std::vector<uint8_t> out;
  unsigned acc = 0;
  int nof_acc = 0;
  for (int d = 0; d < tp::NOF_DATA; ++d) {
    const unsigned i = nearest_index(mod, X[static_cast<std::size_t>(tp::DATA_BIN[static_cast<std::size_t>(d)])]);
    for (int b = bits - 1; b >= 0; --b) {
      acc = (acc << 1) | ((i >> b) & 1u);
      if (++nof_acc == 8) {
        out.push_back(static_cast<uint8_t>(acc));
        acc = 0;
        nof_acc = 0;
      }
    }
  }
  return out;
}

/// The 48 header bits of a header symbol's tones: the 7 repetitions of each bit,
/// de-scrambled by p[d], combined by summing the real parts (§4).
inline std::array<uint8_t, tp::HEADER_BITS> decide_header(std::span<const cf32> X)
{
  std::array<double, tp::HEADER_BITS> soft{};
  for (int d = 0; d < tp::NOF_DATA; ++d) {
    const double v = X[static_cast<std::size_t>(tp::DATA_BIN[static_cast<std::size_t>(d)])].real();
    soft[static_cast<std::size_t>(d % tp::HEADER_BITS)] += tp::pn(d) ? -v : v;
  }
  std::array<uint8_t, tp::HEADER_BITS> h{};
  for (std::size_t i = 0; i < h.size(); ++i) {
    h[i] = soft[i] < 0.0 ? 1 : 0;
  }
  return h;
}

/// Payload of a frame at exact timing, without channel correction (clean captures).
inline std::vector<uint8_t> demodulate_frame(std::span<const cf32> samples, uint64_t start, tp::modulation mod,
                                             uint32_t nd)
{
  std::vector<uint8_t> out;
  for (uint32_t s = 0; s < nd; ++s) {
    const uint64_t pos = start + (static_cast<uint64_t>(tp::FIRST_DATA_SYMBOL) + s) * tp::SYMBOL_LEN;
    const auto bytes = demap_symbol(mod, tones_at(samples, pos));
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

/// All samples of a capture, through the project's capture reader.
inline std::vector<cf32> read_samples(const std::filesystem::path& path)
{
  whd::transport::capture_reader reader(whd::transport::open_capture(path));
  std::vector<cf32> out(reader.size());
  if (reader.read(0, out) != out.size()) {
    throw std::runtime_error("short read of " + path.string());
  }
  return out;
}

inline std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path) { return whd::test::file_bytes(path); }

/// One entry of a NAME.frames.json sidecar.
struct listed_frame {
  uint64_t start = 0;
  uint32_t nd = 0;
  tp::modulation mod = tp::modulation::qpsk;
  uint8_t seq = 0;
  bool header_ok = true;
};

inline std::vector<listed_frame> read_frames_json(const std::filesystem::path& path)
{
  std::ifstream f(path);
  if (!f) {
    throw std::runtime_error("cannot open " + path.string());
  }
  const auto j = nlohmann::json::parse(f);
  std::vector<listed_frame> out;
  for (const auto& o : j) {
    listed_frame r;
    r.start = o.at("start").get<uint64_t>();
    r.nd = o.at("nd").get<uint32_t>();
    const auto mod = o.at("mod").get<std::string>();
    if (mod != "qpsk" && mod != "qam16") {
      throw std::runtime_error("unknown mod " + mod);
    }
    r.mod = mod == "qpsk" ? tp::modulation::qpsk : tp::modulation::qam16;
    r.seq = o.at("seq").get<uint8_t>();
    r.header_ok = o.at("header_ok").get<bool>();
    out.push_back(r);
  }
  return out;
}

/// A fresh empty folder under the system's temporary folder.
inline std::filesystem::path scratch_dir(const std::string& name)
{
  const auto dir =
      std::filesystem::temp_directory_path() / ("whd-tx-test-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

} // namespace whd::test
