/// @file file_bytes.hpp
/// A whole file's bytes, read in one call (a stream iterator, byte by byte, takes
/// seconds on payload-sized files under the sanitizers).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace whd::test {

/// The bytes of the file at `path`; throws std::runtime_error when it cannot be read whole.
inline std::vector<uint8_t> file_bytes(const std::filesystem::path& path)
{
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  std::ifstream f(path, std::ios::binary);
  if (ec || !f) {
    throw std::runtime_error("cannot open " + path.string());
  }
  std::vector<uint8_t> bytes(size);
  if (!f.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()))) {
    throw std::runtime_error("cannot read " + path.string() + " whole");
  }
  return bytes;
}

/// The file at `path` as text.
inline std::string file_text(const std::filesystem::path& path)
{
  const auto bytes = file_bytes(path);
  return {bytes.begin(), bytes.end()};
}

} // namespace whd::test
