// The modulator against, strongest first: the conformance captures made by an
// independent implementation of the profile; a float64 inverse DFT written from §2;
// and an ideal demodulator that checks what §4 puts on every tone class.
#include <whd/baseband/modulator.hpp>

#include "test_env.hpp"
#include "tx_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <iostream>
#include <numbers>
#include <random>
#include <set>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::cf32;
using whd::test::vector_file;

/// How well `ours` explains `theirs` up to one complex gain.
struct fit {
  double correlation = 0.0;  ///< |<ours, theirs>| / (|ours| |theirs|)
  double residual = 0.0;     ///< |theirs - a ours| / |theirs| with the least-squares a
  std::complex<double> gain; ///< a
};

fit fit_gain(std::span<const cf32> ours, std::span<const cf32> theirs)
{
  std::complex<double> cross;
  double e_ours = 0.0, e_theirs = 0.0;
  for (std::size_t n = 0; n < ours.size(); ++n) {
    cross += std::conj(std::complex<double>(ours[n])) * std::complex<double>(theirs[n]);
    e_ours += std::norm(std::complex<double>(ours[n]));
    e_theirs += std::norm(std::complex<double>(theirs[n]));
  }
  fit f;
  f.correlation = std::abs(cross) / std::sqrt(e_ours * e_theirs);
  f.gain = cross / e_ours;
  double e_res = 0.0;
  for (std::size_t n = 0; n < ours.size(); ++n) {
    e_res += std::norm(std::complex<double>(theirs[n]) - f.gain * std::complex<double>(ours[n]));
  }
  f.residual = std::sqrt(e_res / e_theirs);
  return f;
}

/// Regenerates every frame of a conformance capture from its .truth payload and the
/// header fields of its .frames.json, and compares with the capture's samples.
void check_against_capture(const std::string& name, double min_correlation, double max_residual)
{
  const auto samples = whd::test::read_samples(vector_file(name + ".sigmf-meta"));
  const auto frames = whd::test::read_frames_json(vector_file(name + ".frames.json"));
  const auto truth = whd::test::read_file_bytes(vector_file(name + ".truth"));
  ASSERT_FALSE(frames.empty());
  bb::modulator mod;
  std::size_t offset = 0;
  for (const auto& fr : frames) {
    ASSERT_TRUE(fr.header_ok) << "a clean capture is expected";
    const bb::frame_spec spec{fr.mod, fr.nd, fr.seq, false};
    const auto len = static_cast<std::size_t>(bb::frame_payload_bytes(spec));
    ASSERT_LE(offset + len, truth.size());
    const auto ours = mod.frame(spec, std::span<const uint8_t>(truth).subspan(offset, len));
    offset += len;
    ASSERT_LE(fr.start + ours.size(), samples.size());
    const auto theirs = std::span<const cf32>(samples).subspan(fr.start, ours.size());
    const fit f = fit_gain(ours, theirs);
    std::cout << name << " frame at " << fr.start << ": correlation 1 - " << 1.0 - f.correlation << ", residual "
              << f.residual << ", gain " << f.gain << "\n";
    ::testing::Test::RecordProperty(name + "_" + std::to_string(fr.start) + "_one_minus_correlation",
                   std::to_string(1.0 - f.correlation));
    EXPECT_GT(f.correlation, min_correlation) << name << " frame at " << fr.start;
    EXPECT_LT(f.residual, max_residual) << name << " frame at " << fr.start;
    // Per symbol as well, so that a wrong symbol cannot hide in a long frame.
    for (std::size_t s = 0; s < ours.size(); s += p::SYMBOL_LEN) {
      const fit fs = fit_gain(std::span<const cf32>(ours).subspan(s, p::SYMBOL_LEN), theirs.subspan(s, p::SYMBOL_LEN));
      EXPECT_LT(std::abs(fs.gain - f.gain) / std::abs(f.gain), 10 * max_residual)
          << name << " frame at " << fr.start << ", symbol " << s / p::SYMBOL_LEN;
    }
  }
  EXPECT_EQ(offset, truth.size()) << "the frames carry the whole truth";
}

TEST(modulator, matches_independent_qpsk_capture)
{
  // cf32: only float rounding separates the two implementations.
  check_against_capture("basic_qpsk_cf32", 1.0 - 1e-9, 1e-5);
}

TEST(modulator, matches_independent_qam16_ci16_capture)
{
  // ci16 at an RMS of about 9000: quantisation (1/sqrt(12) per component) is ~5e-5
  // of the signal, so the residual is bounded at 2e-4 and 1 - correlation at 1e-7.
  check_against_capture("basic_qam16_ci16", 1.0 - 1e-7, 2e-4);
}

/// x[n] = (1/sqrt(352)) sum_k X[k] e^{+j 2 pi k n / 512} in long double, from §2.
std::vector<std::complex<long double>> reference_idft(std::span<const cf32> X)
{
  std::vector<std::complex<long double>> x(p::N);
  const long double pi = std::numbers::pi_v<long double>;
  for (int n = 0; n < p::N; ++n) {
    std::complex<long double> acc;
    for (int k = -p::N / 2; k < p::N / 2; ++k) {
      const cf32 v = X[static_cast<std::size_t>((k + p::N) % p::N)];
      if (v == cf32{}) {
        continue;
      }
      const long double a = 2 * pi * static_cast<long double>(k) * n / p::N;
      acc += std::complex<long double>(v.real(), v.imag()) * std::complex<long double>(std::cos(a), std::sin(a));
    }
    x[static_cast<std::size_t>(n)] = acc / std::sqrt(static_cast<long double>(p::NOF_USED));
  }
  return x;
}

TEST(modulator, symbol_equals_float64_idft_with_cyclic_guard)
{
  std::mt19937_64 rng(20261122);
  std::cout << "seed 20261122\n";
  bb::modulator mod;
  for (auto m : {p::modulation::qpsk, p::modulation::qam16}) {
    std::vector<uint8_t> bytes(static_cast<std::size_t>(p::bytes_per_symbol(m)));
    for (auto& b : bytes) {
      b = static_cast<uint8_t>(rng());
    }
    std::vector<cf32> X(p::N);
    bb::data_tones(m, bytes, 7, X);
    std::vector<cf32> out(p::SYMBOL_LEN);
    mod.modulate(X, out);
    const auto ref = reference_idft(X);
    long double err = 0, energy = 0, worst = 0;
    int worst_n = -1;
    for (int n = 0; n < p::N; ++n) {
      const auto got = std::complex<long double>(out[static_cast<std::size_t>(p::G + n)]);
      const long double e = std::abs(got - ref[static_cast<std::size_t>(n)]);
      err += e * e;
      energy += std::norm(ref[static_cast<std::size_t>(n)]);
      if (e > worst) {
        worst = e;
        worst_n = n;
      }
    }
    EXPECT_LT(std::sqrt(err / energy), 1e-6L) << p::to_string(m);
    EXPECT_LT(worst, 1e-5L) << p::to_string(m) << " worst at n = " << worst_n;
    // Unit mean power over the body for QPSK (every used tone has |X| = 1, to
    // float precision).
    if (m == p::modulation::qpsk) {
      EXPECT_NEAR(static_cast<double>(energy / p::N), 1.0, 1e-6);
    }
    // The guard is x[448..511].
    for (int n = 0; n < p::G; ++n) {
      EXPECT_EQ(out[static_cast<std::size_t>(n)], out[static_cast<std::size_t>(p::N + n)]) << "guard sample " << n;
    }
  }
}

TEST(modulator, preamble_time_symbol_is_the_idft_of_T)
{
  std::vector<cf32> X(p::N);
  bb::preamble_tones(X);
  const auto ref = reference_idft(X);
  const auto& got = bb::preamble_time_symbol();
  double worst = 0.0;
  for (int n = 0; n < p::N; ++n) {
    worst = std::max(worst, static_cast<double>(std::abs(std::complex<long double>(got[static_cast<std::size_t>(n)]) -
                                                         ref[static_cast<std::size_t>(n)])));
  }
  EXPECT_LT(worst, 1e-6);
  // And the modulator's preamble symbols are that symbol with its guard.
  bb::modulator mod;
  const auto frame = mod.frame({p::modulation::qpsk, 1, 0, false}, std::vector<uint8_t>(84, 0x5A));
  for (int s = 0; s < 2; ++s) {
    for (int n = 0; n < p::SYMBOL_LEN; ++n) {
      const std::size_t body = static_cast<std::size_t>((n + p::N - p::G) % p::N);
      EXPECT_EQ(frame[static_cast<std::size_t>(s * p::SYMBOL_LEN + n)], got[body]) << "symbol " << s << " n " << n;
    }
  }
}

TEST(modulator, demodulated_frame_carries_what_the_profile_says)
{
  std::mt19937_64 rng(77);
  std::cout << "seed 77\n";
  bb::modulator mod;
  for (auto m : {p::modulation::qpsk, p::modulation::qam16}) {
    const bb::frame_spec spec{m, 5, 201, false};
    std::vector<uint8_t> payload(static_cast<std::size_t>(bb::frame_payload_bytes(spec)));
    for (auto& b : payload) {
      b = static_cast<uint8_t>(rng());
    }
    const auto frame = mod.frame(spec, payload);
    ASSERT_EQ(frame.size(), static_cast<std::size_t>((3 + 5) * p::SYMBOL_LEN));

    std::set<int> used;
    for (int k : p::USED_K) {
      used.insert(p::bin_of(k));
    }
    for (int sym = 0; sym < 8; ++sym) {
      const auto X = whd::test::tones_at(frame, static_cast<uint64_t>(sym) * p::SYMBOL_LEN);
      // DC and null tones carry nothing.
      for (int b = 0; b < p::N; ++b) {
        if (!used.count(b)) {
          EXPECT_LT(std::abs(X[static_cast<std::size_t>(b)]), 1e-5f) << "symbol " << sym << " bin " << b;
        }
      }
      if (sym < 2) {
        // Preamble: T[u] = 1 - 2 p[u] on used tone u.
        for (int u = 0; u < p::NOF_USED; ++u) {
          const float t = p::pn(u) ? -1.0f : 1.0f;
          EXPECT_LT(std::abs(X[static_cast<std::size_t>(p::bin_of(p::USED_K[static_cast<std::size_t>(u)]))] - t),
                    1e-5f)
              << "preamble u " << u;
        }
        continue;
      }
      // Pilots: P[m] = 1 - 2 p[m] in symbols m >= 2.
      const float pilot = p::pn(sym) ? -1.0f : 1.0f;
      for (int k : p::PILOT_K) {
        EXPECT_LT(std::abs(X[static_cast<std::size_t>(p::bin_of(k))] - pilot), 1e-5f) << "symbol " << sym << " k " << k;
      }
      if (sym == 2) {
        // Header: every data tone is +-1 and the 7 repetitions agree.
        std::array<int, 48> first{};
        first.fill(-1);
        for (int d = 0; d < p::NOF_DATA; ++d) {
          const cf32 v = X[static_cast<std::size_t>(p::bin_of(p::DATA_K[static_cast<std::size_t>(d)]))];
          ASSERT_LT(std::abs(std::abs(v.real()) - 1.0f), 1e-5f);
          ASSERT_LT(std::abs(v.imag()), 1e-5f);
          const int bit = (v.real() < 0 ? 1 : 0) ^ p::pn(d);
          auto& f = first[static_cast<std::size_t>(d % 48)];
          if (f < 0) {
            f = bit;
          }
          EXPECT_EQ(bit, f) << "repetition of header bit " << d % 48 << " at d = " << d;
        }
        p::header_fields fields;
        ASSERT_EQ(p::parse_header(whd::test::decide_header(X), fields), p::header_status::ok);
        EXPECT_EQ(fields.mod_field, static_cast<uint8_t>(m));
        EXPECT_EQ(fields.nd, 5u);
        EXPECT_EQ(fields.seq, 201);
        continue;
      }
      // Data: every tone sits on a constellation point.
      for (int d = 0; d < p::NOF_DATA; ++d) {
        const cf32 v = X[static_cast<std::size_t>(p::DATA_BIN[static_cast<std::size_t>(d)])];
        const unsigned i = whd::test::nearest_index(m, v);
        EXPECT_LT(std::abs(v - bb::constellation_point(m, i)), 1e-5f) << "symbol " << sym << " d " << d;
      }
    }
    EXPECT_EQ(whd::test::demodulate_frame(frame, 0, m, 5), payload) << p::to_string(m);
  }
}

TEST(modulator, bit_order_is_msb_first)
{
  // §4: the first bit of a group is the index MSB, bytes go MSB first. Byte 0x1B =
  // 00 01 10 11 puts QPSK indices 0, 1, 2, 3 on data tones 0..3; byte 0x5A = 0101
  // 1010 puts 16-QAM indices 5 and 10 on tones 0 and 1.
  std::vector<uint8_t> q(84, 0);
  q[0] = 0x1B;
  std::vector<cf32> X(p::N);
  bb::data_tones(p::modulation::qpsk, q, 3, X);
  for (unsigned d = 0; d < 4; ++d) {
    EXPECT_EQ(X[static_cast<std::size_t>(p::DATA_BIN[d])], bb::constellation_point(p::modulation::qpsk, d));
  }
  // Tone 0 is k = -177, i.e. bin 335.
  EXPECT_EQ(p::DATA_BIN[0], 512 - 177);
  std::vector<uint8_t> s(168, 0);
  s[0] = 0x5A;
  bb::data_tones(p::modulation::qam16, s, 3, X);
  EXPECT_EQ(X[static_cast<std::size_t>(p::DATA_BIN[0])], cf32(-p::QAM16_C, -p::QAM16_C)); // 5 = 01 01
  EXPECT_EQ(X[static_cast<std::size_t>(p::DATA_BIN[1])], cf32(3 * p::QAM16_C, 3 * p::QAM16_C)); // 10 = 10 10
}

TEST(modulator, corrupted_header_fails_the_crc_only)
{
  for (uint32_t nd : {1u, 6u, 1048575u}) {
    for (int seq : {0, 1, 255}) {
      for (auto m : {p::modulation::qpsk, p::modulation::qam16}) {
        const bb::frame_spec spec{m, nd, static_cast<uint8_t>(seq), true};
        const auto h = bb::transmitted_header_bits(spec);
        p::header_fields f;
        EXPECT_EQ(p::parse_header(h, f), p::header_status::crc);
        // The fields themselves are sent unchanged.
        EXPECT_EQ(f.nd, nd);
        EXPECT_EQ(f.seq, seq);
        EXPECT_EQ(f.mod_field, static_cast<uint8_t>(m));
      }
    }
  }
}

TEST(modulator, rejects_wrong_sizes)
{
  bb::modulator mod;
  std::vector<cf32> X(p::N), out(p::SYMBOL_LEN);
  EXPECT_THROW(bb::data_tones(p::modulation::qpsk, std::vector<uint8_t>(83), 3, X), std::invalid_argument);
  EXPECT_THROW(bb::data_tones(p::modulation::qpsk, std::vector<uint8_t>(84), 2, X), std::invalid_argument);
  EXPECT_THROW(mod.modulate(std::vector<cf32>(511), out), std::invalid_argument);
  EXPECT_THROW(mod.frame({p::modulation::qam16, 2, 0, false}, std::vector<uint8_t>(168)), std::invalid_argument);
}

} // namespace
