#include "bench_util.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

namespace whd::rx_bench {

scratch_dir::scratch_dir(const std::string& tag)
{
  std::string name = (std::filesystem::temp_directory_path() / ("whd-bench-" + tag + "-XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr) {
    throw std::runtime_error("cannot create a scratch folder like " + name + " (set TMPDIR to a writable folder)");
  }
  path_ = name;
}

scratch_dir::~scratch_dir()
{
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

uint64_t bit_differences(std::span<const uint8_t> a, std::span<const uint8_t> b)
{
  const std::size_t m = std::min(a.size(), b.size());
  uint64_t n = 0;
  for (std::size_t i = 0; i < m; ++i) {
    n += uint64_t(std::popcount(unsigned(a[i] ^ b[i])));
  }
  return n + 8 * uint64_t(std::max(a.size(), b.size()) - m);
}

std::vector<uint8_t> read_bytes(const std::filesystem::path& path)
{
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    throw std::runtime_error("cannot read " + path.string());
  }
  return {std::istreambuf_iterator<char>(f), {}};
}

} // namespace whd::rx_bench
