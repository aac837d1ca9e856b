// The streamed truth comparison (whd-rx --truth) against the in-memory one and
// against the errors a test put in: the payload is fed in pieces of every size,
// and is shorter, as long as, or longer than the truth.
#include <whd/baseband/report.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace fs = std::filesystem;

/// A truth file in the test's temporary directory, removed afterwards.
class truth_file {
public:
  explicit truth_file(const std::vector<uint8_t>& bytes)
      : path_(fs::path(testing::TempDir()) / ("truth_checker_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                             "_" + std::to_string(bytes.size()) + ".truth"))
  {
    std::ofstream f(path_, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  ~truth_file() { fs::remove(path_); }
  truth_file(const truth_file&) = delete;
  truth_file& operator=(const truth_file&) = delete;
  const fs::path& path() const noexcept { return path_; }

private:
  fs::path path_;
};

TEST(TruthChecker, StreamedEqualsInMemoryAndCountsTheFlippedBits)
{
  std::mt19937_64 rng(7);
  const std::size_t truth_len = (3u << 20) + 17; // more than the checker's read block
  std::vector<uint8_t> truth(truth_len);
  for (auto& b : truth) {
    b = uint8_t(rng());
  }
  const truth_file tf(truth);
  for (const std::size_t decoded_len : {std::size_t(0), truth_len / 3, truth_len, truth_len + 1000}) {
    std::vector<uint8_t> decoded(decoded_len);
    for (std::size_t i = 0; i < decoded_len; ++i) {
      decoded[i] = i < truth_len ? truth[i] : uint8_t(rng());
    }
    // Flip distinct bits inside the common part; their number is what must be counted.
    const std::size_t common = std::min(decoded_len, truth_len);
    uint64_t flipped = 0;
    for (std::size_t i = 0; i < common; i += 1 + rng() % 4099) {
      decoded[i] ^= uint8_t(1u << (rng() % 8));
      ++flipped;
    }
    bb::truth_checker checker(tf.path());
    std::size_t at = 0;
    while (at < decoded_len) {
      const std::size_t n = std::min<std::size_t>(decoded_len - at, rng() % 3 == 0 ? 0 : rng() % 300000);
      checker.write(std::span<const uint8_t>(decoded.data() + at, n));
      at += n;
    }
    const auto streamed = checker.result();
    const auto in_memory = bb::compare_with_truth(decoded, truth);
    SCOPED_TRACE("decoded " + std::to_string(decoded_len) + " of " + std::to_string(truth_len) + " bytes");
    EXPECT_EQ(streamed.bit_errors, flipped);
    EXPECT_EQ(streamed.bit_errors, in_memory.bit_errors);
    EXPECT_EQ(streamed.compared_bits, uint64_t(common) * 8);
    EXPECT_EQ(streamed.compared_bits, in_memory.compared_bits);
    EXPECT_EQ(streamed.missing_bits, uint64_t(std::max(decoded_len, truth_len) - common) * 8);
    EXPECT_EQ(streamed.missing_bits, in_memory.missing_bits);
    EXPECT_EQ(streamed.expected_bytes, truth_len);
    EXPECT_EQ(streamed.decoded_bytes, decoded_len);
    EXPECT_EQ(streamed.path, tf.path().string());
  }
}

TEST(TruthChecker, MissingFileNamesIt)
{
  const fs::path missing = fs::path(testing::TempDir()) / "no_such_dir_truth_checker" / "x.truth";
  try {
    bb::truth_checker checker(missing);
    FAIL() << "no exception for a missing truth file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
}

} // namespace
