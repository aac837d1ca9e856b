// Loopback of the CPU receiver over the generator's impairment grid: every
// combination of CFO, multipath, gain (and a random carrier phase) at SNR 30 dB,
// written to a real file in each datatype and read back, so the quantisation of
// ci16 and ci8 is the one a receiver meets. The verdict comes from the generator:
// its plan (frames, starts) and its truth (payload bytes).
#include "file_bytes.hpp"
#include <whd/baseband/generator.hpp>
#include <whd/baseband/generator_files.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/transport/capture.hpp>

#include "ber_theory.hpp"
#include "rx_test_util.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
using whd::datatype;

constexpr double SNR_dB = 30.0;
constexpr std::array<double, 5> CFOS_Hz = {0.0, 1e6, -1e6, 2e6, -2e6};
constexpr std::array<int, 3> TAPS = {1, 4, 16};
constexpr std::array<double, 3> GAINS = {0.01, 1.0, 10.0};

// The allowance for bit errors, and why it is not "16 taps only".
//
// The generator's taps are complex Gaussian, so the channel's gain |H[k]| on a
// tone is Rayleigh distributed over draws: P(|H|^2 < x * mean) ~ x. A 4-tap
// channel has notches as deep as a 16-tap one, only fewer of them (seed 10003,
// 4 taps, has a -43 dB notch at k = 28: the tone's Es/N0 is -11 dB there, and no
// receiver decodes it). So errors are allowed on multipath channels (4 and 16
// taps) only where the realised channel puts them, and bounded by what theory
// predicts for that channel:
// - a data tone whose bit error probability is below HEALTHY_PB = 1e-9, at its
//   Es/N0 from the capture's SNR, the file's quantisation noise, the realised
//   channel's gain on the tone and the LS estimation loss below, must carry no
//   error at all (the whole grid compares ~1.2e6 bits, so even summed over every
//   tone a healthy tone errs with probability ~1e-3): an error there is a
//   receiver fault (timing outside the guard, a missed derotation, a wrong
//   channel estimate), not noise;
// - the errors over all multipath captures of one taps count stay below
//   MAX_EXCESS times the count predicted by summing, over the frames' data tones,
//   Pb(Es/N0 of the tone / LS_LOSS) * bits carried. The LS channel estimate
//   averaged over the two preamble symbols has error variance N0/2 per tone, which
//   adds |X|^2 N0/2 to the equalised noise: Es/N0 / 1.5 (1.76 dB). A better
//   estimate (smoothed over tones) only lowers the count. The errors of one frame
//   share its channel estimate, so the count varies more than a Poisson count
//   does; 1.5x plus 10 bits is the slack (the grid's draws gave 0.3 to 0.85 of
//   the prediction). Errors on deep fades grow about linearly with the noise
//   (diversity 1), so this catches a receiver some dB worse than LS equalisation;
//   the zero-error rule on healthy tones is the sharp check.
// - a flat channel (1 tap) carries no error at all (its tones' Pb is ~1e-39).
constexpr double LS_LOSS = 1.5;
constexpr double HEALTHY_PB = 1e-9;
constexpr double MAX_EXCESS = 1.5;
constexpr double EXCESS_SLACK_BITS = 10.0;

std::vector<uint8_t> read_bytes(const std::filesystem::path& path)
{
  return whd::test::file_bytes(path);
}

class rx_loopback_grid : public ::testing::TestWithParam<std::tuple<p::modulation, datatype>> {};

TEST_P(rx_loopback_grid, decodes_every_cfo_channel_and_gain_from_a_file)
{
  const auto [mod, type] = GetParam();
  const std::string tag = std::string(p::to_string(mod)) + "-" + std::string(whd::to_string(type));
  whd::test::temp_dir dir(tag);
  // Seeds: one block of 100 per (modulation, datatype), one seed per capture.
  const uint64_t seed0 = 10'000 + 1000 * uint64_t(mod) + 100 * uint64_t(type);
  std::cout << tag << ": capture seeds " << seed0 << " .. " << seed0 + CFOS_Hz.size() * TAPS.size() * GAINS.size() - 1
            << "\n";

  whd::test::bit_count per_taps[TAPS.size()];
  double predicted[TAPS.size()] = {};
  uint64_t idx = 0;
  for (double cfo : CFOS_Hz) {
    for (std::size_t t = 0; t < TAPS.size(); ++t) {
      for (double gain : GAINS) {
        bb::capture_config cfg;
        cfg.mods = {mod};
        cfg.nds = {uint32_t(4 + idx % 5), uint32_t(8 - idx % 3)};
        cfg.nof_frames = 2;
        cfg.lead_samples = 200 + 61 * idx;
        cfg.gap_samples = 100 + 37 * idx;
        cfg.tail_samples = 300;
        cfg.seed = seed0 + idx;
        cfg.first_seq = uint8_t(idx * 7);
        cfg.impairments.snr_dB = SNR_dB;
        cfg.impairments.cfo_Hz = cfo;
        cfg.impairments.nof_taps = TAPS[t];
        cfg.impairments.gain = gain;
        cfg.impairments.random_phase = true;
        bb::output_config out;
        out.base = dir.path() / ("cap" + std::to_string(idx));
        out.type = type;
        const auto written = bb::write_capture(cfg, out);
        const std::string what = tag + " seed " + std::to_string(cfg.seed) + " cfo " + std::to_string(cfo) +
                                 " Hz, " + std::to_string(TAPS[t]) + " taps, gain " + std::to_string(gain);
        EXPECT_EQ(written.nof_clipped, 0u) << what;

        whd::transport::capture_reader reader(whd::transport::open_capture(written.meta_path));
        bb::rx_config rc;
        rc.nof_threads = 1;
        const auto rx = whd::test::run_cpu_receiver(reader, rc);
        const auto truth = read_bytes(written.truth_path);
        // The first path carries at least 1/16 of the energy with 3 dB/tap decay
        // in most draws; when it is weak the receiver takes the next strong one.
        const int64_t max_late = TAPS[t] == 1 ? 1 : 4;
        const auto errors = whd::test::check_against_plan(written.plan, truth, rx, what, 1, max_late);
        per_taps[t] += errors;
        for (const auto& f : rx.result.frames) {
          EXPECT_NEAR(f.cfo_Hz, cfo, 10e3) << what << ": CFO estimate of the frame at " << f.start;
        }
        // Per-tone Es/N0 of this capture: the SNR, the quantisation noise of an
        // integer file (step 1/scale per component in signal units: 1/(6 scale^2)
        // complex), and the realised channel's gain on each tone.
        const double quant = type == datatype::cf32_le ? 0.0 : 1.0 / (6.0 * double(written.scale) * written.scale);
        const double snr = written.plan.signal_power / (written.plan.noise_power + quant);
        const auto rel = whd::test::relative_tone_power(written.plan.taps);
        uint64_t symbols = 0;
        for (const auto& f : rx.result.frames) {
          symbols += f.symbols;
        }
        for (std::size_t d = 0; d < rel.size(); ++d) {
          const double pb = whd::test::ber(mod, whd::test::tone_es_n0(snr) * rel[d] / LS_LOSS);
          predicted[t] += pb * double(symbols) * p::bits_per_tone(mod);
          if (pb < HEALTHY_PB) {
            EXPECT_EQ(errors.per_tone[d], 0u) << what << ": bit errors on data tone " << d << " (k = " << p::DATA_K[d]
                                              << "), whose channel is only " << 10 * std::log10(rel[d])
                                              << " dB from the mean";
          }
        }
        if (TAPS[t] == 1) {
          EXPECT_EQ(errors.errors, 0u) << what << ": bit errors on a flat channel";
        }
        for (const auto& pth : {written.data_path, written.meta_path, written.truth_path, written.frames_path}) {
          std::filesystem::remove(pth);
        }
        ++idx;
      }
    }
  }
  for (std::size_t t = 0; t < TAPS.size(); ++t) {
    std::cout << tag << ", " << TAPS[t] << " taps: " << per_taps[t].errors << " bit errors in " << per_taps[t].bits
              << " bits (BER " << per_taps[t].ber() << "), predicted " << predicted[t] << "\n";
  }
  for (std::size_t t = 0; t < TAPS.size(); ++t) {
    EXPECT_GT(per_taps[t].bits, 0u);
    EXPECT_LE(double(per_taps[t].errors), MAX_EXCESS * predicted[t] + EXCESS_SLACK_BITS)
        << tag << ", " << TAPS[t] << " taps: more bit errors than the realised channels explain";
  }
}

INSTANTIATE_TEST_SUITE_P(mod_x_datatype, rx_loopback_grid, whd::test::mod_x_datatype_values(), whd::test::mod_x_datatype_name);

} // namespace
