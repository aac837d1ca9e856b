#include "timed_process.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace whd::rx_bench {

namespace {

/// The last `n` bytes of a file (all of it when shorter; empty when unreadable).
std::string file_tail(const std::filesystem::path& path, std::size_t n)
{
  std::ifstream f(path, std::ios::binary);
  std::string s{std::istreambuf_iterator<char>(f), {}};
  return s.size() > n ? s.substr(s.size() - n) : s;
}

/// posix_spawn's file actions, destroyed at scope exit.
class file_actions {
public:
  file_actions() { ::posix_spawn_file_actions_init(&a_); }
  ~file_actions() { ::posix_spawn_file_actions_destroy(&a_); }
  file_actions(const file_actions&) = delete;
  file_actions& operator=(const file_actions&) = delete;
  posix_spawn_file_actions_t* get() noexcept { return &a_; }

private:
  posix_spawn_file_actions_t a_{};
};

} // namespace

std::string process_outcome::describe() const
{
  std::string s = signal != 0 ? "killed by signal " + std::to_string(signal) : "exit status " + std::to_string(exit_code);
  if (!stderr_tail.empty()) {
    std::string tail = stderr_tail;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) {
      tail.pop_back();
    }
    std::replace(tail.begin(), tail.end(), '\n', ' '); // one line, for logs and tables
    s += ": " + tail;
  }
  return s;
}

process_outcome run_timed(const std::filesystem::path& program, const std::vector<std::string>& args,
                          const std::filesystem::path& stderr_file)
{
  std::vector<std::string> owned;
  owned.reserve(args.size() + 1);
  owned.push_back(program.string());
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : owned) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);

  file_actions fa;
  ::posix_spawn_file_actions_addopen(fa.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(fa.get(), STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  ::posix_spawn_file_actions_addopen(fa.get(), STDERR_FILENO, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);

  process_outcome r;
  pid_t pid = 0;
  const auto t0 = std::chrono::steady_clock::now();
  if (const int e = ::posix_spawn(&pid, owned[0].c_str(), fa.get(), nullptr, argv.data(), environ); e != 0) {
    throw std::runtime_error("cannot start " + owned[0] + ": " + std::strerror(e));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error("waiting for " + owned[0] + " failed: " + std::strerror(errno));
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  if (!r.ok()) {
    constexpr std::size_t TAIL_BYTES = 600;
    r.stderr_tail = file_tail(stderr_file, TAIL_BYTES);
  }
  return r;
}

} // namespace whd::rx_bench
