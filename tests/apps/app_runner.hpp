/// @file app_runner.hpp
/// Runs an app binary as a user would: arguments without a shell, standard output
/// and standard error kept apart, the exit status or the signal that ended it.
#pragma once

#include "file_bytes.hpp"
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace whd::test {

/// A fresh empty folder under the system's temporary folder, removed at scope exit.
class scratch {
public:
  explicit scratch(const std::string& tag)
  {
    std::string name = (std::filesystem::temp_directory_path() / ("whd-app-" + tag + "-XXXXXX")).string();
    if (::mkdtemp(name.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary folder like " + name);
    }
    path_ = name;
  }
  ~scratch()
  {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

private:
  std::filesystem::path path_;
};

/// How a process ended, and what it wrote.
struct app_result {
  int exit_code = -1;   ///< exit status, -1 when a signal ended it
  int signal = 0;       ///< the signal that ended it, 0 when it exited
  std::string out;      ///< standard output
  std::string err;      ///< standard error
  /// The command line and its standard error, for failure messages.
  std::string what;
};

inline std::string read_text(const std::filesystem::path& p)
{
  return whd::test::file_text(p);
}

inline std::vector<uint8_t> read_bytes(const std::filesystem::path& p)
{
  return whd::test::file_bytes(p);
}

/// A process started with its standard output and error in files of `dir`.
class app_process {
public:
  app_process(const std::string& binary, const std::vector<std::string>& args, const std::filesystem::path& dir)
      : out_path_(dir / ".stdout"), err_path_(dir / ".stderr")
  {
    what_ = binary;
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (const auto& a : args) {
      argv.push_back(const_cast<char*>(a.c_str()));
      what_ += " '" + a + "'";
    }
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = ::posix_spawn(&pid_, binary.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      throw std::runtime_error("cannot start " + binary + ": " + std::generic_category().message(rc));
    }
  }
  ~app_process()
  {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
  }
  app_process(const app_process&) = delete;
  app_process& operator=(const app_process&) = delete;

  pid_t pid() const noexcept { return pid_; }

  /// Still running (not reaped)?
  bool running()
  {
    if (pid_ <= 0) {
      return false;
    }
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = st;
      pid_ = -1;
      return false;
    }
    return true;
  }

  /// Wait for the end and collect what it wrote.
  app_result wait()
  {
    if (pid_ > 0) {
      int st = 0;
      while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
      }
      status_ = st;
      pid_ = -1;
    }
    app_result r;
    if (WIFEXITED(status_)) {
      r.exit_code = WEXITSTATUS(status_);
    } else if (WIFSIGNALED(status_)) {
      r.signal = WTERMSIG(status_);
    }
    r.out = read_text(out_path_);
    r.err = read_text(err_path_);
    r.what = what_ + "\n--- stderr:\n" + r.err;
    return r;
  }

private:
  std::filesystem::path out_path_, err_path_;
  std::string what_;
  pid_t pid_ = -1;
  int status_ = 0;
};

/// Runs `binary args...` to its end.
inline app_result run_app(const std::string& binary, const std::vector<std::string>& args, const std::filesystem::path& dir)
{
  app_process p(binary, args, dir);
  return p.wait();
}

/// A sanitizer report in standard error (a sanitized build runs the same tests).
inline bool sanitizer_report(const app_result& r)
{
  return r.err.find("Sanitizer") != std::string::npos || r.err.find("runtime error:") != std::string::npos;
}

} // namespace whd::test
