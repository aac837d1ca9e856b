/// @file bench_output.hpp
/// Writing a subcommand's JSON and Markdown files, each checked.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>

namespace whd::bench_app {

/// Writes `text` to `path` unless `path` is empty.
/// @throws std::runtime_error naming the file when it cannot be written
inline void write_output(const std::string& path, const std::string& text)
{
  if (path.empty()) {
    return;
  }
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) {
    throw std::runtime_error("cannot write " + path);
  }
}

} // namespace whd::bench_app
