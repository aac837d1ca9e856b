// chunk_reader and memory_source: every sample is new in exactly one chunk, in
// order; the look-ahead equals the source; `last` only on the last chunk; one
// buffer for the whole walk.

#include "transport_test_util.hpp"

#include <whd/transport/capture.hpp>

#include <cstdio>
#include <random>

namespace {

using namespace whd;
using namespace whd::transport;

constexpr unsigned SEED = 7351;

std::vector<cf32> random_samples(std::size_t n, unsigned seed)
{
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<cf32> v(n);
  for (cf32& x : v) {
    x = cf32(g(rng), g(rng));
  }
  return v;
}

/// Walk `src` and check every property of the chunks.
void check_walk(const std::vector<cf32>& src, std::size_t chunk_samples, std::size_t overlap_samples)
{
  SCOPED_TRACE("length " + std::to_string(src.size()) + ", chunk " + std::to_string(chunk_samples) + ", overlap " +
               std::to_string(overlap_samples));
  const memory_source source(src);
  chunk_reader reader(source, chunk_samples, overlap_samples);
  std::vector<int> times_new(src.size(), 0);
  uint64_t next = 0;
  std::size_t nof_chunks = 0;
  bool saw_last = false;
  const cf32* buffer = nullptr;
  chunk c;
  while (reader.next(c)) {
    ++nof_chunks;
    ASSERT_FALSE(saw_last) << "a chunk after the last";
    ASSERT_EQ(c.first, next) << "chunk " << nof_chunks - 1 << " does not start where the previous one's new part ends";
    const uint64_t left = src.size() - c.first;
    EXPECT_EQ(c.nof_new, std::min<uint64_t>(chunk_samples, left));
    EXPECT_EQ(c.samples.size(), std::min<uint64_t>(chunk_samples + overlap_samples, left));
    ASSERT_LE(c.nof_new, c.samples.size());
    for (std::size_t k = 0; k < c.samples.size(); ++k) {
      ASSERT_TRUE(test::same_bits(c.samples[k], src[c.first + k]))
          << "sample " << c.first + k << (k < c.nof_new ? " (new)" : " (overlap)");
    }
    for (std::size_t k = 0; k < c.nof_new; ++k) {
      ++times_new[c.first + k];
    }
    EXPECT_EQ(c.last, c.first + c.nof_new == src.size());
    saw_last = c.last;
    // One buffer for the whole walk.
    if (buffer == nullptr) {
      buffer = c.samples.data();
    }
    EXPECT_EQ(c.samples.data(), buffer);
    next += c.nof_new;
  }
  EXPECT_EQ(next, src.size());
  EXPECT_EQ(saw_last, !src.empty());
  EXPECT_EQ(nof_chunks, (src.size() + chunk_samples - 1) / chunk_samples);
  for (std::size_t k = 0; k < src.size(); ++k) {
    ASSERT_EQ(times_new[k], 1) << "sample " << k;
  }
  EXPECT_FALSE(reader.next(c)) << "a chunk after the walk ended";
}

TEST(transport_chunk_reader, every_sample_new_once_in_order)
{
  std::printf("seed %u\n", SEED);
  const std::vector<cf32> src = random_samples(10007, SEED);
  const std::pair<std::size_t, std::size_t> sizes[] = {
      {1, 0},     {1, 5},     {7, 3},       {64, 0},     {64, 64},    {100, 250}, // overlap longer than a chunk
      {1000, 17}, {4096, 576}, {10007, 0},  {10007, 9},  {10000, 7},  {20000, 100},
  };
  for (const std::size_t length : {std::size_t{1}, std::size_t{2}, std::size_t{99}, src.size()}) {
    const std::vector<cf32> part(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(length));
    for (const auto& [chunk_samples, overlap_samples] : sizes) {
      check_walk(part, chunk_samples, overlap_samples);
    }
  }
}

TEST(transport_chunk_reader, random_sizes)
{
  std::printf("seed %u\n", SEED + 1);
  std::mt19937 rng(SEED + 1);
  for (int rep = 0; rep < 40; ++rep) {
    const std::size_t length = rng() % 5000;
    const std::size_t chunk_samples = 1 + rng() % 700;
    const std::size_t overlap_samples = rng() % 900;
    check_walk(random_samples(length, SEED + 2 + static_cast<unsigned>(rep)), chunk_samples, overlap_samples);
  }
}

TEST(transport_chunk_reader, empty_source_yields_no_chunk)
{
  const memory_source source({});
  chunk_reader reader(source, 128, 16);
  chunk c;
  EXPECT_FALSE(reader.next(c));
  EXPECT_FALSE(reader.next(c));
}

TEST(transport_chunk_reader, zero_chunk_is_refused)
{
  const memory_source source(random_samples(10, SEED));
  EXPECT_THROW(chunk_reader(source, 0, 16), std::invalid_argument);
}

/// A source that promises more than it gives (a file cut while being read).
class short_source final : public sample_source {
public:
  short_source(std::vector<cf32> samples, uint64_t claimed) : inner_(std::move(samples)), claimed_(claimed) {}
  uint64_t size() const override { return claimed_; }
  std::size_t read(uint64_t first, std::span<cf32> out) const override { return inner_.read(first, out); }
  whd::datatype type() const override { return inner_.type(); }
  std::size_t read_raw(uint64_t first, std::span<std::byte> out) const override { return inner_.read_raw(first, out); }
  void release(uint64_t first, uint64_t end) const override { inner_.release(first, end); }

private:
  memory_source inner_;
  uint64_t claimed_;
};

TEST(transport_chunk_reader, source_ending_early_ends_the_walk)
{
  const std::vector<cf32> src = random_samples(130, SEED);
  for (const std::size_t overlap : {std::size_t{0}, std::size_t{20}, std::size_t{45}}) {
    SCOPED_TRACE(overlap);
    const short_source source(src, 1000);
    chunk_reader reader(source, 50, overlap);
    chunk c;
    uint64_t next = 0;
    bool saw_last = false;
    while (reader.next(c)) {
      ASSERT_FALSE(saw_last);
      ASSERT_EQ(c.first, next);
      for (std::size_t k = 0; k < c.samples.size(); ++k) {
        ASSERT_TRUE(test::same_bits(c.samples[k], src[c.first + k]));
      }
      next += c.nof_new;
      saw_last = c.last;
    }
    EXPECT_TRUE(saw_last);
    EXPECT_EQ(next, src.size());
  }
}

TEST(transport_memory_source, reads_and_short_reads)
{
  const std::vector<cf32> src = random_samples(100, SEED);
  const memory_source source(src);
  EXPECT_EQ(source.size(), 100u);
  EXPECT_EQ(source.samples().size(), 100u);
  std::vector<cf32> out(30, cf32(-7.0f, -7.0f));
  ASSERT_EQ(source.read(10, out), 30u);
  for (std::size_t k = 0; k < 30; ++k) {
    EXPECT_TRUE(test::same_bits(out[k], src[10 + k])) << k;
  }
  std::fill(out.begin(), out.end(), cf32(-7.0f, -7.0f));
  ASSERT_EQ(source.read(90, out), 10u);
  EXPECT_TRUE(test::same_bits(out[9], src[99]));
  EXPECT_EQ(out[10], cf32(-7.0f, -7.0f)) << "wrote past the count it returned";
  EXPECT_EQ(source.read(100, out), 0u);
  EXPECT_EQ(source.read(~uint64_t{0}, out), 0u);
  EXPECT_EQ(source.read(5, std::span<cf32>()), 0u);
}

} // namespace
