// Staging-ring probe: can a capture in the page cache reach N GPUs faster than the
// host's packing copy allows, if each thread preads whole spans (guards and all) into
// a small pinned ring that stays in the host's last-level cache, and the copy engine
// reads them from there? Then host memory sees the page cache's bytes once, not three
// times (read, packed write, DMA read). Each thread owns a stream on GPU t mod G and
// `slots` pinned buffers of `chunk` KiB; it waits for a slot's previous copy, preads
// the next chunk of the file into it and sends it. Beside it, the same with a ring as
// large as the file's share (no reuse: every line goes to DRAM), the packing path's
// shape. "pack": the receiver's packing instead of raw spans: 72 KiB spans pread into
// a per-thread buffer, then each symbol's 1024-byte window (of 1152) copied with plain
// stores into the ring slot, which is sent: the link carries windows only.
// Prints GB/s of file bytes moved and ns per 1152-byte ci8 symbol.
// Build: nvcc -O2 -std=c++20 -arch=sm_90 bench/probes/staging_ring_probe.cu -o staging_ring_probe
// Usage: staging_ring_probe FILE GPUS [passes [pack|rounds]]   (pack: the packing rows only;
// rounds: packing with and without the threads meeting after every round of chunks)
#include "probe_util.hpp"

#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

struct lane {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> done;
  char* host = nullptr; // slots * chunk bytes, pinned
  char* dev = nullptr;  // slots * chunk bytes
};

/// One configuration: `threads` lanes, each with `slots` pinned chunks of `chunk` bytes.
/// Returns the median seconds of `passes` passes over the whole file.
static double run(int fd, std::size_t file_bytes, int gpus, int threads, std::size_t chunk, int slots, int passes, bool pack,
                  bool rounds = false)
{
  constexpr std::size_t SYM = 1152, WIN = 1024, SPAN = 64 * SYM;
  // pack: a chunk of the file is chunk / WIN symbols, sent as chunk bytes of windows.
  const std::size_t file_chunk = pack ? chunk / WIN * SYM : chunk;
  std::vector<lane> lanes(threads);
  for (int t = 0; t < threads; ++t) {
    lane& l = lanes[t];
    l.device = t % gpus;
    CHECK(cudaSetDevice(l.device));
    CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    l.done.resize(slots);
    for (auto& e : l.done) {
      CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
    CHECK(cudaHostAlloc(reinterpret_cast<void**>(&l.host), chunk * slots, cudaHostAllocPortable));
    CHECK(cudaMalloc(reinterpret_cast<void**>(&l.dev), chunk * slots));
  }
  const std::size_t nof_chunks = pack ? file_bytes / file_chunk : (file_bytes + chunk - 1) / chunk;
  std::vector<double> t_pass;
  for (int pass = 0; pass <= passes; ++pass) {
    std::atomic<std::size_t> next{0};
    std::barrier round_end(threads); // rounds: every thread one chunk, then all meet (the receiver's batches)
    const double t0 = now();
    {
      std::vector<std::thread> workers;
      for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
          lane& l = lanes[t];
          CHECK(cudaSetDevice(l.device));
          for (std::size_t i = 0;; ++i) {
            const std::size_t k = rounds ? i * static_cast<std::size_t>(threads) + static_cast<std::size_t>(t) : next.fetch_add(1);
            if (k >= nof_chunks) {
              if (rounds) {
                round_end.arrive_and_drop();
              }
              break;
            }
            const int s = static_cast<int>(i % static_cast<std::size_t>(slots));
            CHECK(cudaEventSynchronize(l.done[s]));
            char* h = l.host + static_cast<std::size_t>(s) * chunk;
            const std::size_t off = k * file_chunk, want = pack ? chunk : std::min(chunk, file_bytes - off);
            const auto read_at = [&](char* dst, std::size_t bytes, std::size_t at) {
              std::size_t got = 0;
              while (got < bytes) {
                const ssize_t n = ::pread(fd, dst + got, bytes - got, static_cast<off_t>(at + got));
                if (n <= 0) {
                  std::perror("pread");
                  std::exit(1);
                }
                got += static_cast<std::size_t>(n);
              }
            };
            if (pack) {
              thread_local std::vector<char> staging(SPAN);
              for (std::size_t a = 0; a < file_chunk; a += SPAN) {
                const std::size_t span = std::min(SPAN, file_chunk - a);
                read_at(staging.data(), span, off + a);
                for (std::size_t w = 0; w < span / SYM; ++w) {
                  std::memcpy(h + (a / SYM + w) * WIN, staging.data() + w * SYM + (SYM - WIN), WIN);
                }
              }
            } else {
              read_at(h, want, off);
            }
            CHECK(cudaMemcpyAsync(l.dev + static_cast<std::size_t>(s) * chunk, h, want, cudaMemcpyHostToDevice, l.stream));
            CHECK(cudaEventRecord(l.done[s], l.stream));
            if (rounds) {
              round_end.arrive_and_wait();
            }
          }
          CHECK(cudaStreamSynchronize(l.stream));
        });
      }
      for (auto& w : workers) {
        w.join();
      }
    }
    if (pass > 0) { // pass 0 warms up
      t_pass.push_back(now() - t0);
    }
  }
  for (lane& l : lanes) {
    CHECK(cudaSetDevice(l.device));
    for (auto& e : l.done) {
      CHECK(cudaEventDestroy(e));
    }
    CHECK(cudaStreamDestroy(l.stream));
    CHECK(cudaFreeHost(l.host));
    CHECK(cudaFree(l.dev));
  }
  std::sort(t_pass.begin(), t_pass.end());
  return t_pass[t_pass.size() / 2];
}

int main(int argc, char** argv)
{
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FILE GPUS [passes]\n", argv[0]);
    return 2;
  }
  const int fd = ::open(argv[1], O_RDONLY);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  const std::size_t bytes = static_cast<std::size_t>(st.st_size);
  const int gpus = std::atoi(argv[2]);
  const int passes = argc > 3 ? std::atoi(argv[3]) : 5;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  std::printf("file %.2f GB, %d GPU(s), %d host threads, median of %d passes\n", double(bytes) / 1e9, gpus, cores, passes);
  std::printf("%-44s %10s %10s %14s\n", "threads x slots x chunk", "ms", "GB/s", "ns/1152 B");
  struct cfg {
    int threads;
    int slots;
    std::size_t chunk;
    bool pack;
  };
  std::vector<cfg> cfgs;
  const bool pack_only = argc > 4 && std::string(argv[4]) == "pack";
  if (argc > 4 && std::string(argv[4]) == "rounds") {
    // The receiver's shape: packed windows, 1 MiB slots, two a thread, with and
    // without the threads meeting after every round of one chunk each.
    for (bool rounds : {false, true}) {
      for (int slots : {2, 4}) {
        const double s = run(fd, bytes, gpus, cores, std::size_t(1) << 20, slots, passes, true, rounds);
        std::printf("pack %d x %d x 1024 KiB%-22s %10.2f %10.2f %14.2f\n", cores, slots, rounds ? ", rounds" : "", s * 1e3,
                    double(bytes) / s / 1e9, s * 1e9 / (double(bytes) / 1152.0));
        std::fflush(stdout);
      }
    }
    return 0;
  }
  for (bool pack : {false, true}) {
    if (pack_only && !pack) {
      continue;
    }
    for (int threads : {cores / 2, cores}) {
      for (std::size_t kib : {512, 1024, 2048}) {
        cfgs.push_back({threads, 2, kib << 10, pack});
        cfgs.push_back({threads, 4, kib << 10, pack});
      }
    }
    // No reuse: each thread's ring as large as its share of the file (the packing path's DRAM traffic).
    cfgs.push_back({cores, 0, 2048 << 10, pack});
  }
  for (cfg c : cfgs) {
    int slots = c.slots;
    if (slots == 0) {
      slots = static_cast<int>((bytes / static_cast<std::size_t>(c.threads) + c.chunk - 1) / c.chunk) + 1;
    }
    const double s = run(fd, bytes, gpus, c.threads, c.chunk, slots, passes, c.pack);
    char what[64];
    std::snprintf(what, sizeof what, "%s%d x %d x %zu KiB%s", c.pack ? "pack " : "", c.threads, slots, c.chunk >> 10,
                  c.slots == 0 ? " (no reuse)" : "");
    std::printf("%-44s %10.2f %10.2f %14.2f\n", what, s * 1e3, double(bytes) / s / 1e9, s * 1e9 / (double(bytes) / 1152.0));
    std::fflush(stdout);
  }
  return 0;
}
