/// @file bench_output.hpp
/// Writing a subcommand's JSON and Markdown files, each checked, and the tail every
/// subcommand shares: run with progress on the log, write, print.
#pragma once

#include "subcommands.hpp"

#include <spdlog/spdlog.h>

#include <exception>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

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

/// Runs `run(progress)` with progress lines on the log, writes its result's JSON
/// and Markdown where asked (to_json and to_markdown of the result's namespace)
/// and prints the Markdown. @return EXIT_OK, or EXIT_RUNTIME after logging the error
template <class Run>
int run_and_report(Run&& run, const std::string& json, const std::string& markdown)
{
  auto log = spdlog::default_logger()->clone("whd-bench");
  try {
    const auto r = run([&](std::string_view line) { log->info("{}", line); });
    const std::string md = to_markdown(r);
    write_output(json, to_json(r) + '\n');
    write_output(markdown, md);
    std::cout << md;
  } catch (const std::exception& e) {
    log->error("{}", e.what());
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

} // namespace whd::bench_app
