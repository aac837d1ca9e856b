/// @file timed_process.hpp
/// Runs a program as a user runs it (its arguments without a shell, standard output
/// discarded, standard error kept in a file) and times it from outside: from just
/// before the spawn to the return of waitpid, on the steady clock. Process start,
/// dynamic loading, everything the program does and its exit are all inside.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace whd::rx_bench {

/// How a timed process ended.
struct process_outcome {
  double seconds = 0.0;    ///< spawn to exit [s], steady clock
  int exit_code = -1;      ///< exit status; -1 when a signal ended it
  int signal = 0;          ///< the signal that ended it; 0 when it exited
  std::string stderr_tail; ///< the last bytes of its standard error

  /// It exited with status 0.
  bool ok() const noexcept { return exit_code == 0; }
  /// "exit status N" or "killed by signal N", then the tail of its standard error.
  std::string describe() const;
};

/// Runs `program` with `args`, waits for it and times it.
/// @param stderr_file where its standard error goes (overwritten, left in place)
/// @throws std::runtime_error naming the program when it cannot be started
process_outcome run_timed(const std::filesystem::path& program, const std::vector<std::string>& args,
                          const std::filesystem::path& stderr_file);

} // namespace whd::rx_bench
