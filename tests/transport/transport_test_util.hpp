/// @file transport_test_util.hpp
/// Helpers shared by the transport tests: a temporary folder per test, files
/// written byte by byte, samples decoded from bytes without the library, and a
/// check that an error message names what it should.
#pragma once

#include "file_bytes.hpp"
#include <gtest/gtest.h>

#include <whd/transport/capture.hpp>

#include <stdlib.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

namespace whd::test {

/// A fresh folder under the system temp dir, removed with everything in it.
class temp_dir {
public:
  temp_dir()
  {
    std::string tmpl = (std::filesystem::temp_directory_path() / "whd_transport_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      throw std::runtime_error("mkdtemp failed for " + tmpl);
    }
    path_ = tmpl;
  }
  ~temp_dir()
  {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

private:
  std::filesystem::path path_;
};

/// All bytes of `path` (std::ifstream, independent of the library).
inline std::vector<unsigned char> read_bytes(const std::filesystem::path& path)
{
  return whd::test::file_bytes(path);
}

inline void write_bytes(const std::filesystem::path& path, const void* data, std::size_t n)
{
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline void write_text(const std::filesystem::path& path, const std::string& text)
{
  write_bytes(path, text.data(), text.size());
}

/// Sample `k` of little-endian `bytes` of type `t`, assembled byte by byte.
inline cf32 decode_le(const std::vector<unsigned char>& bytes, datatype t, std::size_t k)
{
  const unsigned char* p = bytes.data() + k * bytes_per_sample(t);
  switch (t) {
  case datatype::cf32_le: {
    auto f32 = [](const unsigned char* b) {
      const uint32_t u = uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
      return std::bit_cast<float>(u);
    };
    return {f32(p), f32(p + 4)};
  }
  case datatype::ci16_le: {
    auto i16 = [](const unsigned char* b) { return static_cast<int16_t>(static_cast<uint16_t>(b[0] | b[1] << 8)); };
    return {static_cast<float>(i16(p)), static_cast<float>(i16(p + 2))};
  }
  case datatype::ci8:
    return {static_cast<float>(static_cast<int8_t>(p[0])), static_cast<float>(static_cast<int8_t>(p[1]))};
  }
  return {};
}

/// Bitwise equality, so that -0.0 and NaN patterns count too.
inline bool same_bits(cf32 a, cf32 b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// The message of the capture_error that `f` throws ("" and a failure if none).
inline std::string capture_error_of(const std::function<void()>& f)
{
  try {
    f();
  } catch (const transport::capture_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected capture_error, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected capture_error, nothing thrown";
  return {};
}

/// Expect `message` to contain every one of `parts`.
inline void expect_mentions(const std::string& message, std::initializer_list<std::string> parts)
{
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "message lacks \"" << part << "\": " << message;
  }
}

} // namespace whd::test
