/// @file fuzz_check.hpp
/// What the fuzz targets share: a check that aborts with a message (libFuzzer
/// keeps the input that made it), and a scratch folder per process for the files
/// the readers open.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace whd::fuzz {

/// Abort with `what` when `ok` is false.
inline void check(bool ok, const char* what, const std::string& detail = {})
{
  if (!ok) {
    std::fprintf(stderr, "fuzz property failed: %s%s%s\n", what, detail.empty() ? "" : ": ", detail.c_str());
    std::abort();
  }
}

/// A folder of this process's own, in memory when /dev/shm is there (created once,
/// removed at exit; the path is never destroyed, so the exit handler may use it).
inline const std::filesystem::path& scratch_dir()
{
  static const std::filesystem::path* const dir = [] {
    std::error_code ec;
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
    std::string name = (base / "whd-fuzz-XXXXXX").string();
    check(::mkdtemp(name.data()) != nullptr, "cannot create a scratch folder", name);
    return new std::filesystem::path(name);
  }();
  static const bool cleaned = [] {
    std::atexit([] {
      std::error_code e;
      std::filesystem::remove_all(*dir, e);
    });
    return true;
  }();
  (void)cleaned;
  return *dir;
}

/// Replace `path` with exactly `size` bytes from `data` (zeros when `data` is null).
inline void write_file(const std::filesystem::path& path, const uint8_t* data, std::size_t size)
{
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0, "cannot create a scratch file", path.string());
  static const uint8_t zeros[4096] = {};
  std::size_t done = 0;
  while (done < size) {
    const std::size_t n = data != nullptr ? size - done : std::min(size - done, sizeof zeros);
    const ssize_t w = ::write(fd, data != nullptr ? data + done : zeros, n);
    check(w > 0, "cannot write a scratch file", path.string());
    done += std::size_t(w);
  }
  ::close(fd);
}

} // namespace whd::fuzz
