// gpu_coded_decoder against the CPU's FEC: the same information bytes and RS counts as
// fec::coded_decoder on the same soft values, exactly, in every Viterbi form; the
// device's RS decoder against rs_decode (libfec) codeword by codeword, return value
// included; and clean encoded frames back to their information.
#include <whd/fec/coded_rx.hpp>
#include <whd/fec/coded_tx.hpp>
#include <whd/fec/gpu_coded_decoder.hpp>
#include <whd/fec/reed_solomon.hpp>

#include "gpu_fec_kernels.hpp"
#include "gpu_guard.hpp"
#include "gpu_viterbi_relu.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string_view>
#include <vector>

namespace {

namespace fec = whd::fec;
namespace cuda = whd::cuda;

/// How a frame's soft values are drawn.
enum class soft_kind { uniform, saturated, mostly_zero, noisy_codeword, clean_codeword };

struct frame_case {
  fec::frame_geometry g;
  std::vector<uint8_t> info;    ///< what was encoded (codeword kinds)
  std::vector<int8_t> streams;  ///< 8 Ce demultiplexed soft values
};

frame_case make_frame(int mcs, uint32_t nd, soft_kind kind, std::mt19937& rng)
{
  frame_case f{fec::geometry(mcs, nd), {}, {}};
  f.streams.assign(fec::NOF_ENCODERS * f.g.ce, 0);
  if (kind == soft_kind::noisy_codeword || kind == soft_kind::clean_codeword) {
    f.info.resize(f.g.info_bytes);
    for (auto& b : f.info) {
      b = uint8_t(rng());
    }
    const auto tx = fec::encode_frame(f.g, f.info);
    std::vector<int8_t> soft(f.g.coded_bits());
    for (std::size_t i = 0; i < soft.size(); ++i) {
      const bool one = (tx[i / 8] >> (7 - i % 8)) & 1u;
      int v = one ? -40 : 40;
      if (kind == soft_kind::noisy_codeword) {
        v += int(rng() % 121) - 60; // some values turned: the Viterbi and RS both work
      }
      soft[i] = int8_t(v);
    }
    fec::demultiplex_symbols(f.g, 0, soft, f.streams);
    return f;
  }
  for (auto& v : f.streams) {
    switch (kind) {
    case soft_kind::uniform: v = int8_t(int(rng() % 255) - 127); break;
    case soft_kind::saturated: v = rng() & 1u ? 127 : -127; break;
    default: v = rng() % 8 == 0 ? int8_t(int(rng() % 255) - 127) : 0; break;
    }
  }
  return f;
}

/// The frames on the device, decoded there in one run; info bytes and counts back.
struct device_result {
  std::vector<std::vector<uint8_t>> info;
  std::vector<fec::rs_stats> rs;
};

device_result decode_on_device(fec::gpu_coded_decoder& dec, const std::vector<frame_case>& frames, cuda::stream_ref st)
{
  std::size_t stream_bytes = 0, info_bytes = 0;
  for (const auto& f : frames) {
    stream_bytes += f.streams.size();
    info_bytes += f.g.info_bytes;
  }
  cuda::device_buffer<int8_t> d_streams(stream_bytes);
  cuda::device_buffer<uint8_t> d_info(info_bytes);
  cuda::device_buffer<fec::rs_stats> d_rs(frames.size());
  // Poison the outputs: every byte must be written.
  WHD_CUDA_CHECK(cudaMemset(d_info.data(), 0xA5, info_bytes));
  std::vector<fec::gpu_coded_frame> jobs;
  std::size_t s_at = 0, i_at = 0;
  for (const auto& f : frames) {
    WHD_CUDA_CHECK(cudaMemcpy(d_streams.data() + s_at, f.streams.data(), f.streams.size(), cudaMemcpyHostToDevice));
    jobs.push_back({f.g, d_streams.data() + s_at, d_info.data() + i_at});
    s_at += f.streams.size();
    i_at += f.g.info_bytes;
  }
  dec.run(jobs, d_rs.data(), st);
  st.synchronize();
  device_result r;
  r.rs.resize(frames.size());
  WHD_CUDA_CHECK(cudaMemcpy(r.rs.data(), d_rs.data(), frames.size() * sizeof(fec::rs_stats), cudaMemcpyDeviceToHost));
  i_at = 0;
  for (const auto& f : frames) {
    r.info.emplace_back(f.g.info_bytes);
    WHD_CUDA_CHECK(cudaMemcpy(r.info.back().data(), d_info.data() + i_at, f.g.info_bytes, cudaMemcpyDeviceToHost));
    i_at += f.g.info_bytes;
  }
  return r;
}

fec::gpu_coded_capacity capacity_of(const std::vector<frame_case>& frames)
{
  fec::gpu_coded_capacity c{frames.size(), 0, 0, 0};
  for (const auto& f : frames) {
    c.max_coded_bits += f.g.coded_bits();
    c.max_tiles += fec::NOF_ENCODERS * fec::nof_tiles(f.g.nin);
    c.max_codewords += f.g.codewords;
  }
  return c;
}

TEST(gpu_coded_decoder, equals_the_cpu_decoder_in_every_form)
{
  WHD_REQUIRE_GPU();
  constexpr unsigned SEED = 2026;
  std::printf("seed %u\n", SEED);
  std::mt19937 rng(SEED);
  std::vector<frame_case> frames;
  for (const soft_kind kind : {soft_kind::uniform, soft_kind::saturated, soft_kind::mostly_zero, soft_kind::noisy_codeword}) {
    for (const int mcs : fec::MCS_LIST) {
      for (const uint32_t nd : {1u, 2u, 7u, 52u, 300u, 2000u}) {
        frames.push_back(make_frame(mcs, nd, kind, rng));
      }
    }
  }
  std::vector<std::vector<uint8_t>> want(frames.size());
  std::vector<fec::coded_job> jobs;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    want[i].resize(frames[i].g.info_bytes);
    jobs.push_back({frames[i].g, frames[i].streams, want[i], {}});
  }
  fec::coded_decoder().decode(jobs);
  uint64_t corrected = 0, failed = 0;
  for (const auto& j : jobs) {
    corrected += j.rs.corrected;
    failed += j.rs.failed;
  }
  std::printf("%zu frames; the CPU corrected %llu bytes, failed %llu codewords\n", frames.size(), (unsigned long long)corrected,
              (unsigned long long)failed);
  ASSERT_GT(corrected, 0u) << "RS's corrections untested";
  ASSERT_GT(failed, 0u) << "RS's failures untested";

  fec::gpu_coded_decoder dec(capacity_of(frames));
  cuda::stream st;
  for (const fec::viterbi_form form : fec::VITERBI_FORMS) {
    dec.use_form(form);
    // Twice: a second run reuses the descriptors and scratch.
    for (int pass = 0; pass < 2; ++pass) {
      const device_result got = decode_on_device(dec, frames, st);
      int bad = 0;
      for (std::size_t i = 0; i < frames.size(); ++i) {
        const bool same = got.info[i] == want[i] && got.rs[i].corrected == jobs[i].rs.corrected && got.rs[i].failed == jobs[i].rs.failed;
        if (!same && ++bad <= 5) {
          const auto mis = std::mismatch(got.info[i].begin(), got.info[i].end(), want[i].begin());
          ADD_FAILURE() << fec::to_string(form) << ", pass " << pass << ": frame " << i << " (MCS " << frames[i].g.mcs << ", Nd "
                        << frames[i].g.nd << ") first differing byte " << (mis.first - got.info[i].begin()) << " of "
                        << got.info[i].size() << "; RS GPU " << got.rs[i].corrected << "/" << got.rs[i].failed << ", CPU "
                        << jobs[i].rs.corrected << "/" << jobs[i].rs.failed;
        }
      }
      EXPECT_EQ(bad, 0) << fec::to_string(form) << ": frames differing from the CPU's";
    }
  }
}

// The relu form's packed arithmetic (its device functions run on the host: DPX
// instructions emulated) against decode_tile_reference, tile by tile: no GPU needed.
TEST(gpu_coded_decoder, relu_form_on_the_host_equals_the_reference_tiles)
{
  constexpr unsigned SEED = 99;
  std::printf("seed %u\n", SEED);
  std::mt19937 rng(SEED);
  int frames = 0;
  for (const soft_kind kind : {soft_kind::uniform, soft_kind::saturated, soft_kind::mostly_zero, soft_kind::noisy_codeword}) {
    for (const int mcs : fec::MCS_LIST) {
      for (const uint32_t nd : {1u, 2u, 7u, 52u, 130u}) {
        const frame_case f = make_frame(mcs, nd, kind, rng);
        const fec::frame_geometry& g = f.g;
        ASSERT_TRUE(fec::gpu::relu::handles(g.punct));
        // The reference: each encoder's stream depunctured whole, every tile decoded plainly.
        std::vector<uint8_t> want(fec::NOF_ENCODERS * g.q, 0), got(fec::NOF_ENCODERS * g.q, 0x5A);
        for (int e = 0; e < fec::NOF_ENCODERS; ++e) {
          const std::span<const int8_t> c(f.streams.data() + std::size_t(e) * g.ce, g.ce);
          std::vector<int8_t> whole(3 * g.nin), part(3 * fec::MAX_TILE_STEPS);
          for (uint64_t k = 0; k < fec::nof_tiles(g.nin); ++k) {
            const fec::tile_span t = fec::tile_of(g.nin, k);
            fec::depuncture_tile(g, c, k, part.data());
            std::copy_n(part.begin(), 3 * (t.run_end - t.run_first), whole.begin() + std::ptrdiff_t(3 * t.run_first));
          }
          for (uint64_t k = 0; k < fec::nof_tiles(g.nin); ++k) {
            fec::decode_tile_reference({whole.data(), g.nin, k, 8 * g.q, want.data() + std::size_t(e) * g.q});
          }
        }
        fec::gpu::frame_desc d{};
        d.streams = f.streams.data();
        d.decoded = got.data();
        d.ce = g.ce;
        d.nin = g.nin;
        d.q = g.q;
        d.pin_log2 = g.punct.pin == 1 ? 0u : g.punct.pin == 2 ? 1u : 2u;
        d.pout = uint32_t(g.punct.pout);
        std::vector<uint4> slot(fec::gpu::DEC_STEPS);
        for (const char* form : {"chain", "tree", "words"}) {
          const std::string_view name = form;
          std::fill(got.begin(), got.end(), uint8_t(0x5A));
          for (uint64_t r = 0; r < 4 * fec::nof_tiles(g.nin); ++r) {
            if (name == "tree") {
              fec::gpu::relu::decode_item<true>(d, r, slot.data(), 1);
            } else if (name == "words") {
              fec::gpu::relu::decode_item<false, true>(d, r, slot.data(), 1);
            } else {
              fec::gpu::relu::decode_item<false>(d, r, slot.data(), 1);
            }
          }
          const auto mis = std::mismatch(got.begin(), got.end(), want.begin());
          EXPECT_TRUE(mis.first == got.end()) << form << ", MCS " << mcs << ", Nd " << nd << ", kind " << int(kind) << ": byte "
                                              << (mis.first - got.begin()) << " of " << got.size() << " differs";
        }
        ++frames;
      }
    }
  }
  std::printf("%d frames, every tile as decode_tile_reference's\n", frames);
}

TEST(gpu_coded_decoder, clean_frames_decode_to_their_information)
{
  WHD_REQUIRE_GPU();
  constexpr unsigned SEED = 77;
  std::printf("seed %u\n", SEED);
  std::mt19937 rng(SEED);
  std::vector<frame_case> frames;
  for (const int mcs : fec::MCS_LIST) {
    for (const uint32_t nd : {1u, 3u, 64u, 1000u}) {
      frames.push_back(make_frame(mcs, nd, soft_kind::clean_codeword, rng));
    }
  }
  fec::gpu_coded_decoder dec(capacity_of(frames));
  cuda::stream st;
  const device_result got = decode_on_device(dec, frames, st);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(got.info[i], frames[i].info) << "MCS " << frames[i].g.mcs << ", Nd " << frames[i].g.nd;
    EXPECT_EQ(got.rs[i].corrected, 0u);
    EXPECT_EQ(got.rs[i].failed, 0u);
  }
}

TEST(gpu_coded_decoder, rs_equals_libfec_from_0_to_10_byte_errors)
{
  WHD_REQUIRE_GPU();
  constexpr unsigned SEED = 4242;
  std::printf("seed %u\n", SEED);
  std::mt19937 rng(SEED);
  constexpr int PER_ERRORS = 3000;
  constexpr int MAX_ERRORS = 10;
  const int count = PER_ERRORS * (MAX_ERRORS + 1);
  const auto nof_words = static_cast<std::size_t>(count);
  std::vector<uint8_t> words(nof_words * fec::RS_N, 0);
  std::vector<int> lengths(nof_words);
  std::vector<uint8_t> want(words.size(), 0);
  std::vector<int> want_result(nof_words);
  std::vector<int> histogram(MAX_ERRORS + 1, 0);
  for (int w = 0; w < count; ++w) {
    const int errors = w / PER_ERRORS;
    // Short codewords too, and the full length often.
    const int k = rng() % 4 == 0 ? fec::RS_K : 1 + int(rng() % fec::RS_K);
    const int n = k + fec::RS_PARITY;
    uint8_t* word = words.data() + std::size_t(w) * fec::RS_N;
    for (int b = 0; b < k; ++b) {
      word[b] = uint8_t(rng());
    }
    fec::rs_encode(std::span<const uint8_t>(word, std::size_t(k)), std::span<uint8_t>(word + k, fec::RS_PARITY));
    std::vector<int> pos(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      pos[std::size_t(i)] = i;
    }
    std::shuffle(pos.begin(), pos.end(), rng);
    for (int e = 0; e < std::min(errors, n); ++e) {
      word[pos[std::size_t(e)]] ^= uint8_t(1 + rng() % 255);
    }
    lengths[std::size_t(w)] = n;
    std::copy_n(word, n, want.data() + std::size_t(w) * fec::RS_N);
    want_result[std::size_t(w)] = fec::rs_decode(std::span<uint8_t>(want.data() + std::size_t(w) * fec::RS_N, std::size_t(n)));
  }
  cuda::device_buffer<uint8_t> d_words(words.size());
  cuda::device_buffer<int> d_lengths(lengths.size()), d_result(lengths.size());
  WHD_CUDA_CHECK(cudaMemcpy(d_words.data(), words.data(), words.size(), cudaMemcpyHostToDevice));
  WHD_CUDA_CHECK(cudaMemcpy(d_lengths.data(), lengths.data(), lengths.size() * sizeof(int), cudaMemcpyHostToDevice));
  cuda::stream st;
  fec::gpu::launch_rs_words(d_words.data(), d_lengths.data(), d_result.data(), count, st.get());
  st.synchronize();
  std::vector<int> got_result(lengths.size());
  WHD_CUDA_CHECK(cudaMemcpy(words.data(), d_words.data(), words.size(), cudaMemcpyDeviceToHost));
  WHD_CUDA_CHECK(cudaMemcpy(got_result.data(), d_result.data(), got_result.size() * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  std::vector<int> fails(MAX_ERRORS + 1, 0);
  for (int w = 0; w < count; ++w) {
    const auto at = std::ptrdiff_t(w) * fec::RS_N;
    const bool same = got_result[std::size_t(w)] == want_result[std::size_t(w)] &&
                      std::equal(words.begin() + at, words.begin() + at + lengths[std::size_t(w)], want.begin() + at);
    if (!same && ++bad <= 5) {
      ADD_FAILURE() << "codeword " << w << " (" << w / PER_ERRORS << " errors, n " << lengths[std::size_t(w)] << "): device "
                    << got_result[std::size_t(w)] << ", libfec " << want_result[std::size_t(w)];
    }
    fails[std::size_t(w / PER_ERRORS)] += want_result[std::size_t(w)] < 0;
  }
  EXPECT_EQ(bad, 0);
  for (int e = 0; e <= MAX_ERRORS; ++e) {
    std::printf("%2d byte errors: %d of %d codewords fail\n", e, fails[std::size_t(e)], PER_ERRORS);
  }
  // The cases the comparison stands for: corrections up to 4, failures beyond.
  EXPECT_EQ(fails[4], 0);
  EXPECT_GT(fails[5], PER_ERRORS / 2);
}

TEST(gpu_coded_decoder, refuses_a_run_past_its_capacity)
{
  WHD_REQUIRE_GPU();
  const fec::frame_geometry g = fec::geometry(2, 10);
  fec::gpu_coded_decoder dec({1, g.coded_bits(), fec::NOF_ENCODERS * fec::nof_tiles(g.nin), g.codewords});
  cuda::device_buffer<int8_t> s(2 * fec::NOF_ENCODERS * g.ce);
  cuda::device_buffer<uint8_t> info(2 * g.info_bytes);
  cuda::device_buffer<fec::rs_stats> rs(2);
  const std::vector<fec::gpu_coded_frame> two = {{g, s.data(), info.data()}, {g, s.data() + 8 * g.ce, info.data() + g.info_bytes}};
  EXPECT_THROW(dec.run(two, rs.data(), nullptr), std::length_error);
  const std::vector<fec::gpu_coded_frame> bigger = {{fec::geometry(2, 11), s.data(), info.data()}};
  EXPECT_THROW(dec.run(bigger, rs.data(), nullptr), std::length_error);
}

} // namespace
