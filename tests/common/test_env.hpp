/// @file test_env.hpp
/// Where tests find the conformance captures, and the GPU skip guard.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace whd::test {

/// The conformance captures, read in place: $WHD_VECTORS_DIR if set, else
/// the path configured at build time (../shared/vectors beside the checkout).
inline std::filesystem::path vectors_dir()
{
  if (const char* env = std::getenv("WHD_VECTORS_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return WHD_VECTORS_DIR;
}

/// A conformance capture's file `name` (e.g. "basic_qpsk_cf32.sigmf-meta").
inline std::filesystem::path vector_file(const std::string& name) { return vectors_dir() / name; }

} // namespace whd::test
