// Bit error rate of the CPU receiver on an AWGN channel (1 tap, no CFO, random
// carrier phase) against the uncoded Gray theory of QPSK and 16-QAM, at the
// Eb/N0 where theory gives 1e-3. The receiver must come within 0.5 dB of theory:
// its measured BER must lie between theory at Eb/N0 + 0.5 dB and at Eb/N0 - 0.5 dB.
//
// The same test with the channel estimate left at plain least squares over the two
// preamble symbols and the header (rx_config::channel_taps = 0) must show that
// estimator's known loss instead: its estimate's error has variance N0/3 per tone, the
// equalised noise becomes N0 (1 + |X|^2 / 3), 10 log10(4/3) = 1.25 dB; so the measured
// BER must lie within 0.5 dB of theory at Eb/N0 - 1.25 dB. That the test resolves
// this difference is what makes its 0.5 dB verdict on the default receiver mean
// something.
//
// From Eb/N0 to the generator's SNR (see tone_es_n0 in ber_theory.hpp for the
// derivation): the SNR is the mean signal power per sample over the frames
// (preamble, header, pilots and data all have unit energy per used tone, and the
// guard repeats body samples, so every symbol has the same mean power) against
// the noise power per sample over the whole band, 512 bins. The receiver's FFT
// puts a data tone at energy 512^2/352 and noise at 512 per bin, so per data tone
// Es/N0 = SNR * 512/352 (SNR + 1.63 dB), and Eb/N0 = Es/N0 / B with B = 2 (QPSK)
// or 4 (16-QAM) bits per tone. The guard's 64 samples (576/512, 0.51 dB of energy
// per symbol) are discarded before the FFT and do not enter this ratio.
//
// Statistics: ~2.0e6 payload bits per modulation, ~2000 errors expected at 1e-3;
// the window of +-0.5 dB spans 0.53x..1.77x the theory BER, far wider than
// the estimate's spread (a few percent, more than Poisson because the bits of a
// frame share its channel estimate; 60 frames average that out).
#include <whd/baseband/generator.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include "ber_theory.hpp"
#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;

using rx_config = bb::rx_config;

double db(double x) { return 10.0 * std::log10(x); }
double lin(double x_dB) { return std::pow(10.0, x_dB / 10.0); }

/// Loss of equalising with a three-symbol LS estimate (the preamble's two and the
/// header): 10 log10(4/3).
const double LS_LOSS_dB = db(4.0 / 3.0);

/// Theory's Pb at Eb/N0 [dB].
double theory_ber(p::modulation mod, double ebn0_dB)
{
  return whd::test::ber(mod, lin(ebn0_dB) * p::bits_per_tone(mod));
}

/// Eb/N0 [dB] where theory gives `pb` (theory is decreasing in Eb/N0): bisection.
double ebn0_for_ber(p::modulation mod, double pb)
{
  double lo = -5.0, hi = 30.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (theory_ber(mod, mid) > pb ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

struct ber_case {
  p::modulation mod;
  uint32_t nd;        ///< data symbols per frame
  uint64_t nof_frames;
  uint64_t seed;
  int channel_taps;   ///< rx_config::channel_taps (0: plain least squares)
  double expected_loss_dB; ///< the estimator's loss against theory (0 for the default receiver)
};

class rx_awgn_ber : public ::testing::TestWithParam<ber_case> {};

TEST_P(rx_awgn_ber, within_half_a_dB_of_gray_theory_at_1e_3)
{
  const auto& c = GetParam();
  constexpr double TARGET_BER = 1e-3;
  constexpr double WINDOW_dB = 0.5;
  const double ebn0_dB = ebn0_for_ber(c.mod, TARGET_BER);
  const double esn0_dB = ebn0_dB + db(p::bits_per_tone(c.mod));
  const double snr_dB = esn0_dB - db(whd::test::tone_es_n0(1.0));

  bb::capture_config cfg;
  cfg.mods = {c.mod};
  cfg.nds = {c.nd};
  cfg.nof_frames = c.nof_frames;
  cfg.lead_samples = 500;
  cfg.gap_samples = 300;
  cfg.seed = c.seed;
  cfg.impairments.snr_dB = snr_dB;
  cfg.impairments.random_phase = true;
  bb::memory_capture cap;
  const auto plan = bb::generate_capture(cfg, cap);
  const whd::transport::memory_source src(cap.samples());
  bb::rx_config rc;
  rc.nof_threads = 1;
  rc.channel_taps = c.channel_taps;
  const auto out = whd::test::run_cpu_receiver(src, rc);
  const std::string what = std::string(p::to_string(c.mod)) + (c.channel_taps ? "" : " (plain LS estimate)") +
                           " seed " + std::to_string(c.seed);
  const auto errors = whd::test::check_against_plan(plan, cap.truth(), out, what, 2, 2);

  const double lo = theory_ber(c.mod, ebn0_dB - c.expected_loss_dB + WINDOW_dB);
  const double hi = theory_ber(c.mod, ebn0_dB - c.expected_loss_dB - WINDOW_dB);
  const double measured = errors.ber();
  // The Eb/N0 at which theory gives the measured BER: the receiver's loss.
  const double loss_dB = ebn0_dB - ebn0_for_ber(c.mod, measured);
  std::cout << what << ": Eb/N0 " << ebn0_dB << " dB (Es/N0 " << esn0_dB << " dB, capture SNR " << snr_dB
            << " dB): " << errors.errors << " bit errors in " << errors.bits << " bits, BER " << measured
            << "; theory " << TARGET_BER << ", expected loss " << c.expected_loss_dB << " dB, window [" << lo << ", "
            << hi << "]; loss against theory " << loss_dB << " dB\n";
  ASSERT_GE(errors.bits, 2'000'000u) << what << ": too few bits for a meaningful estimate";
  EXPECT_GE(measured, lo) << what << ": loss " << loss_dB << " dB, below the expected " << c.expected_loss_dB
                          << " dB by more than " << WINDOW_dB << " dB: the SNR mapping or the error count is wrong";
  EXPECT_LE(measured, hi) << what << ": loss " << loss_dB << " dB, above the expected " << c.expected_loss_dB
                          << " dB by more than " << WINDOW_dB
                          << " dB (plain LS channel estimation over the two preamble symbols costs " << LS_LOSS_dB
                          << " dB)";
}

INSTANTIATE_TEST_SUITE_P(gray, rx_awgn_ber,
                         ::testing::Values(ber_case{p::modulation::qpsk, 50, 60, 301, rx_config{}.channel_taps, 0.0},
                                           ber_case{p::modulation::qam16, 25, 60, 302, rx_config{}.channel_taps, 0.0},
                                           ber_case{p::modulation::qpsk, 50, 60, 303, 0, LS_LOSS_dB},
                                           ber_case{p::modulation::qam16, 25, 60, 304, 0, LS_LOSS_dB}),
                         [](const auto& param_info) {
                           return std::string(p::to_string(param_info.param.mod)) +
                                  (param_info.param.channel_taps ? "" : "_plain_ls");
                         });

} // namespace
