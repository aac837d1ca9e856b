// The payload sink itself (baseband::payload_file_sink), as whd-rx's writer thread
// drives it: TOTAL MiB in writes of 3.5 MB (a chunk's payload of long frames) into a
// new file at PATH, by one --payload-write way with THREADS threads (0: the sink's
// own choice); median of 5 runs, the file removed before each. Compare two versions
// of the sink by building this against each (for the one before a change:
// `git show REV:baseband/output/src/payload_file.cpp` and its header into a folder
// put first on the include path).
// Build (from the repository root):
//   g++ -O2 -std=c++20 -pthread -Ibaseband/output/include -Ibaseband/rx/include
//     -Ibaseband/common/include -Itransport/include -Ifft/include
//     bench/probes/sink_write_probe.cpp baseband/output/src/payload_file.cpp -o sink_write_probe
//   (one command line)
// Usage: sink_write_probe PATH auto|map|pwrite|split TOTAL_MIB [THREADS]
#include <whd/baseband/payload_sinks.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace bb = whd::baseband;

int main(int argc, char** argv)
{
  if (argc < 4 || !bb::parse_payload_write(argv[2])) {
    std::fprintf(stderr, "usage: sink_write_probe PATH auto|map|pwrite|split TOTAL_MIB [THREADS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const auto method = *bb::parse_payload_write(argv[2]);
  constexpr std::size_t WRITE = 3500000;
  const std::size_t total = std::size_t(std::atol(argv[3])) << 20;
  const auto threads = unsigned(argc > 4 ? std::atoi(argv[4]) : 0);
  const std::vector<uint8_t> src(WRITE, 7);
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    ::unlink(path.c_str());
    const auto t0 = std::chrono::steady_clock::now();
    bb::payload_file_sink sink(path, threads, method);
    for (std::size_t at = 0; at < total; at += WRITE) {
      sink.write(src);
    }
    sink.close();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  ::unlink(path.c_str());
  std::sort(t.begin(), t.end());
  std::printf("%s x%u: %.2f GB/s (median of 5, %zu MiB in writes of %zu bytes)\n", argv[2], threads, double(total) / t[2] / 1e9,
              total >> 20, WRITE);
  return 0;
}
