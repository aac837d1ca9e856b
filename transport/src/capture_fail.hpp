/// @file capture_fail.hpp
/// How the capture I/O reports a problem: a capture_error that names the file first.
/// Private to the transport library.
#pragma once

#include <whd/transport/capture.hpp>

#include <filesystem>
#include <string>
#include <system_error>

namespace whd::transport::detail {

/// Throw capture_error "'FILE': PROBLEM"; `problem` says what is wrong and what to do.
[[noreturn]] inline void fail(const std::filesystem::path& file, const std::string& problem)
{
  throw capture_error("'" + file.string() + "': " + problem);
}

/// The text of errno value `err` (thread-safe, unlike strerror).
inline std::string errno_text(int err) { return std::generic_category().message(err); }

} // namespace whd::transport::detail
