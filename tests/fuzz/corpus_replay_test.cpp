// The fuzz targets over data/fuzz/: the seed corpus each was started from and the
// inputs that once made one fail (regress-*), kept so that a fix stays fixed. A
// failing property aborts the test with the target's message.
#include "fuzz_targets.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using target_fn = int (*)(const uint8_t*, std::size_t);

/// Every input file of data/fuzz/NAME, in name order; fails when there is none.
std::size_t replay(const std::string& name, target_fn target)
{
  const fs::path dir = fs::path(WHD_FUZZ_CORPUS_DIR) / name;
  std::vector<fs::path> inputs;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) {
      inputs.push_back(e.path());
    }
  }
  std::sort(inputs.begin(), inputs.end());
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    std::cout << name << ": " << path.filename().string() << " (" << bytes.size() << " bytes)" << std::endl;
    EXPECT_EQ(target(bytes.data(), bytes.size()), 0) << path;
  }
  EXPECT_FALSE(inputs.empty()) << "no input in " << dir;
  return inputs.size();
}

TEST(fuzz_corpus, sigmf_meta) { replay("sigmf_meta", whd::fuzz::sigmf_meta_one); }

TEST(fuzz_corpus, capture_reader) { replay("capture_reader", whd::fuzz::capture_reader_one); }

TEST(fuzz_corpus, frame_decoder) { replay("frame_decoder", whd::fuzz::frame_decoder_one); }

TEST(fuzz_corpus, coded_decoder) { replay("coded_decoder", whd::fuzz::coded_decoder_one); }

} // namespace
