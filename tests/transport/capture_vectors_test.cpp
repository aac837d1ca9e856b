// The conformance captures (../shared/vectors, read in place) as the capture I/O
// sees them, against an independent read of their bytes and their frames.json.

#include "test_env.hpp"
#include "transport_test_util.hpp"

#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <set>
#include <thread>

namespace {

using namespace whd;
using namespace whd::transport;
namespace fs = std::filesystem;

/// Every capture's sample rate (profile §1).
constexpr double RATE_SPS = 2.538e9;

struct vector_case {
  const char* name;
  datatype type;
  std::size_t nof_annotations;
};

/// Names the case in test listings instead of its bytes.
void PrintTo(const vector_case& v, std::ostream* os) { *os << v.name; }

// datatype and frame count as the vectors' README table states them.
const vector_case VECTORS[] = {
    {"basic_qpsk_cf32", datatype::cf32_le, 2},      {"basic_qam16_ci16", datatype::ci16_le, 2},
    {"impaired_mixed_ci8", datatype::ci8, 3},       {"header_crc_fail_cf32", datatype::cf32_le, 3},
    {"truncated_ci16", datatype::ci16_le, 2},       {"noise_only_ci8", datatype::ci8, 0},
    {"coded_mcs0_cf32", datatype::cf32_le, 2},      {"coded_mcs1_ci16", datatype::ci16_le, 2},
    {"coded_mcs2_ci8", datatype::ci8, 3},           {"coded_mcs7_cf32", datatype::cf32_le, 2},
    {"coded_lowsnr_mcs1_cf32", datatype::cf32_le, 3}, {"coded_truncated_mcs2_ci16", datatype::ci16_le, 2},
};

class transport_capture_vector : public ::testing::TestWithParam<vector_case> {
protected:
  fs::path meta() const { return test::vector_file(std::string(GetParam().name) + ".sigmf-meta"); }
  fs::path data() const { return test::vector_file(std::string(GetParam().name) + ".sigmf-data"); }
};

TEST(transport_capture_vectors, every_recording_in_the_folder_is_checked_here)
{
  std::set<std::string> listed;
  for (const vector_case& v : VECTORS) {
    listed.insert(v.name);
  }
  std::size_t found = 0;
  for (const auto& entry : fs::directory_iterator(test::vectors_dir())) {
    if (entry.path().extension() == ".sigmf-meta") {
      ++found;
      EXPECT_TRUE(listed.count(entry.path().stem().string()) == 1)
          << entry.path() << " is not in this test's table: add it";
    }
  }
  EXPECT_EQ(found, listed.size()) << "in " << test::vectors_dir();
}

TEST_P(transport_capture_vector, info_matches_the_files_and_frames)
{
  const vector_case& v = GetParam();
  const capture_info info = open_capture(meta());
  EXPECT_EQ(info.type, v.type);
  EXPECT_EQ(info.meta_path, meta());
  EXPECT_EQ(info.data_path, data());
  const uint64_t size = fs::file_size(data());
  ASSERT_EQ(size % bytes_per_sample(v.type), 0u);
  EXPECT_EQ(info.nof_samples, size / bytes_per_sample(v.type));
  EXPECT_GT(info.nof_samples, 0u);
  ASSERT_TRUE(info.sample_rate_sps.has_value());
  EXPECT_EQ(*info.sample_rate_sps, RATE_SPS);

  // Annotations mark the frames: one per frames.json entry, at its start, labelled
  // with its modulation.
  ASSERT_EQ(info.annotations.size(), v.nof_annotations);
  std::ifstream frames_file(test::vector_file(std::string(v.name) + ".frames.json"));
  const nlohmann::json frames = nlohmann::json::parse(frames_file);
  ASSERT_EQ(frames.size(), v.nof_annotations);
  for (std::size_t k = 0; k < frames.size(); ++k) {
    EXPECT_EQ(info.annotations[k].sample_start, frames[k]["start"].get<uint64_t>()) << "annotation " << k;
    // The constellation, and a coded frame's MCS after it (profile 2): "qam16-mcs2".
    const std::string label = frames[k]["mod"].get<std::string>() +
                              (frames[k].contains("mcs") ? "-mcs" + std::to_string(frames[k]["mcs"].get<int>()) : "");
    EXPECT_EQ(info.annotations[k].label, label) << "annotation " << k;
    EXPECT_GT(info.annotations[k].sample_count, 0u) << "annotation " << k;
    EXPECT_TRUE(info.annotations[k].comment.empty()) << "annotation " << k;
  }
}

TEST_P(transport_capture_vector, every_path_form_names_the_same_recording)
{
  const std::string base = (test::vectors_dir() / GetParam().name).string();
  const capture_info ref = open_capture(meta());
  for (const std::string& form : {base + ".sigmf-data", base + ".sigmf", base}) {
    SCOPED_TRACE(form);
    const capture_info info = open_capture(form);
    EXPECT_EQ(info.meta_path, ref.meta_path);
    EXPECT_EQ(info.data_path, ref.data_path);
    EXPECT_EQ(info.type, ref.type);
    EXPECT_EQ(info.nof_samples, ref.nof_samples);
  }
  // A format that agrees with the meta is accepted.
  EXPECT_EQ(open_capture(meta(), GetParam().type).nof_samples, ref.nof_samples);
}

TEST_P(transport_capture_vector, samples_equal_an_independent_decode)
{
  const capture_reader reader(open_capture(meta()));
  const datatype t = GetParam().type;
  const std::vector<unsigned char> bytes = test::read_bytes(data());
  const std::size_t n = bytes.size() / bytes_per_sample(t);
  ASSERT_EQ(reader.size(), n);

  // All of it, in reads of a prime length so that no read lines up with the
  // reader's internal blocks.
  std::vector<cf32> block(1009);
  std::size_t mismatches = 0;
  std::size_t first_bad = 0;
  for (std::size_t at = 0; at < n; at += block.size()) {
    const std::size_t got = reader.read(at, block);
    ASSERT_EQ(got, std::min(block.size(), n - at)) << "at " << at;
    for (std::size_t k = 0; k < got; ++k) {
      if (!test::same_bits(block[k], test::decode_le(bytes, t, at + k)) && mismatches++ == 0) {
        first_bad = at + k;
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << "first at sample " << first_bad;

  // Single samples: first, middle, last; integers come back as they are stored.
  for (const std::size_t k : {std::size_t{0}, n / 3, n / 2, n - 1}) {
    cf32 one{};
    ASSERT_EQ(reader.read(k, std::span(&one, 1)), 1u);
    EXPECT_TRUE(test::same_bits(one, test::decode_le(bytes, t, k))) << "sample " << k << ": " << one;
  }

  // Past the end: short counts, never an exception.
  std::vector<cf32> tail(10);
  EXPECT_EQ(reader.read(n - 3, tail), 3u);
  EXPECT_TRUE(test::same_bits(tail[2], test::decode_le(bytes, t, n - 1)));
  EXPECT_EQ(reader.read(n, tail), 0u);
  EXPECT_EQ(reader.read(n + 1000, tail), 0u);
  EXPECT_EQ(reader.read(0, std::span<cf32>()), 0u);
}

TEST_P(transport_capture_vector, read_raw_returns_the_stored_bytes)
{
  const capture_reader reader(open_capture(meta()));
  const std::size_t bps = bytes_per_sample(GetParam().type);
  const std::vector<unsigned char> bytes = test::read_bytes(data());
  const std::size_t n = bytes.size() / bps;

  std::vector<std::byte> raw(777 * bps);
  for (const std::size_t at : {std::size_t{0}, n / 2, n - 5}) {
    const std::size_t got = reader.read_raw(at, raw);
    ASSERT_EQ(got, std::min<std::size_t>(777, n - at)) << "at " << at;
    EXPECT_EQ(std::memcmp(raw.data(), bytes.data() + at * bps, got * bps), 0) << "at " << at;
  }
  EXPECT_EQ(reader.read_raw(n, raw), 0u);
  std::vector<std::byte> odd(bps + 1);
  EXPECT_THROW(reader.read_raw(0, odd), std::invalid_argument);
}

TEST_P(transport_capture_vector, concurrent_reads_agree)
{
  const capture_reader reader(open_capture(meta()));
  const datatype t = GetParam().type;
  const std::vector<unsigned char> bytes = test::read_bytes(data());
  const uint64_t n = reader.size();
  constexpr unsigned SEED = 20240611;
  std::printf("seed %u\n", SEED);
  std::atomic<std::size_t> mismatches{0};
  std::vector<std::thread> threads;
  for (unsigned id = 0; id < 4; ++id) {
    threads.emplace_back([&, id] {
      std::mt19937_64 rng(SEED + id);
      std::vector<cf32> buf(5000);
      for (int rep = 0; rep < 50; ++rep) {
        const uint64_t at = rng() % n;
        const std::size_t len = 1 + rng() % buf.size();
        const std::size_t got = reader.read(at, std::span(buf).first(len));
        if (got != std::min<uint64_t>(len, n - at)) {
          ++mismatches;
        }
        for (std::size_t k = 0; k < got; ++k) {
          if (!test::same_bits(buf[k], test::decode_le(bytes, t, at + k))) {
            ++mismatches;
          }
        }
      }
    });
  }
  for (std::thread& th : threads) {
    th.join();
  }
  EXPECT_EQ(mismatches.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(vectors, transport_capture_vector, ::testing::ValuesIn(VECTORS),
                         [](const ::testing::TestParamInfo<vector_case>& p) { return std::string(p.param.name); });

TEST(transport_capture_vectors, raw_cf32_equals_the_sigmf_recording)
{
  const fs::path raw_path = test::vector_file("basic_qpsk_cf32.cf32");
  const capture_info raw = open_capture(raw_path);
  EXPECT_EQ(raw.type, datatype::cf32_le);
  EXPECT_EQ(raw.data_path, raw_path);
  EXPECT_TRUE(raw.meta_path.empty());
  EXPECT_FALSE(raw.sample_rate_sps.has_value());
  EXPECT_TRUE(raw.annotations.empty());
  EXPECT_EQ(raw.nof_samples, fs::file_size(raw_path) / 8);
  EXPECT_EQ(open_capture(raw_path, datatype::cf32_le).nof_samples, raw.nof_samples);

  const capture_reader raw_reader(raw);
  const capture_reader sigmf_reader(open_capture(test::vector_file("basic_qpsk_cf32.sigmf-meta")));
  ASSERT_EQ(raw_reader.size(), sigmf_reader.size());
  std::vector<cf32> a(raw_reader.size());
  std::vector<cf32> b(sigmf_reader.size());
  ASSERT_EQ(raw_reader.read(0, a), a.size());
  ASSERT_EQ(sigmf_reader.read(0, b), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_TRUE(test::same_bits(a[k], b[k])) << "sample " << k << ": raw " << a[k] << ", SigMF " << b[k];
  }
}

TEST(transport_capture_vectors, chunks_of_a_file_cover_it_once)
{
  const capture_reader reader(open_capture(test::vector_file("basic_qam16_ci16.sigmf-meta")));
  std::vector<cf32> all(reader.size());
  ASSERT_EQ(reader.read(0, all), all.size());
  chunk_reader chunks(reader, 4096, 640);
  chunk c;
  uint64_t next = 0;
  while (chunks.next(c)) {
    ASSERT_EQ(c.first, next);
    for (std::size_t k = 0; k < c.samples.size(); ++k) {
      ASSERT_TRUE(test::same_bits(c.samples[k], all[c.first + k])) << "sample " << c.first + k;
    }
    next += c.nof_new;
    EXPECT_EQ(c.last, next == all.size());
  }
  EXPECT_EQ(next, all.size());
}

} // namespace
