// Page-cache DMA probe: can the GPU copy a ci8 capture's symbol windows (1024 of
// every 1152 bytes) straight from the mapped file, skipping the host's packing
// copy? Times cudaHostRegister (read-only) of the mapping in pieces, a 2D copy of
// the windows from the registered pages, cudaHostUnregister, and, beside them, the
// same 2D copy and a contiguous copy from pinned memory.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 bench/probes/register_probe.cu -o register_probe
// Usage: register_probe FILE [piece MiB]
#include "probe_util.hpp"

#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char** argv)
{
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [piece MiB]\n", argv[0]);
    return 2;
  }
  const std::size_t piece = std::size_t(argc > 2 ? std::atoi(argv[2]) : 256) << 20;
  const std::size_t WIN = 1024, STRIDE = 1152;
  const int fd = ::open(argv[1], O_RDONLY);
  struct stat st {};
  ::fstat(fd, &st);
  const std::size_t bytes = std::size_t(st.st_size) / piece * piece;
  const std::size_t per_piece = piece / STRIDE; // windows wholly inside a piece
  CHECK(cudaFree(nullptr));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  void* d = nullptr;
  CHECK(cudaMalloc(&d, piece));
  for (int rep = 0; rep < 1; ++rep) {
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    double t_reg = 0, t_copy = 0, t_unreg = 0;
    std::size_t windows = 0;
    for (std::size_t off = 0; off < bytes; off += piece) {
      char* base = static_cast<char*>(p) + off;
      double t0 = now();
      CHECK(cudaHostRegister(base, piece, cudaHostRegisterReadOnly));
      double t1 = now();
      CHECK(cudaMemcpy2DAsync(d, WIN, base, STRIDE, WIN, per_piece, cudaMemcpyHostToDevice, s));
      CHECK(cudaStreamSynchronize(s));
      double t2 = now();
      CHECK(cudaHostUnregister(base));
      double t3 = now();
      t_reg += t1 - t0;
      t_copy += t2 - t1;
      t_unreg += t3 - t2;
      windows += per_piece;
    }
    ::munmap(p, bytes);
    const double out = double(windows * WIN);
    std::printf("registered mapping, %zu MiB pieces: register %.1f GB/s, 2D copy %.1f GB/s, unregister %.1f GB/s, all %.1f GB/s "
                "(%.2f ns/window)\n",
                piece >> 20, double(bytes) / t_reg / 1e9, out / t_copy / 1e9, double(bytes) / t_unreg / 1e9,
                out / (t_reg + t_copy + t_unreg) / 1e9, (t_reg + t_copy + t_unreg) / double(windows) * 1e9);
  }
  // Registration from several host threads at once (does the driver serialise it?).
  for (unsigned threads : {2u, 4u, 8u, 16u}) {
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    const std::size_t pieces = bytes / piece;
    const double t0 = now();
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (std::size_t k = t; k < pieces; k += threads) {
          CHECK(cudaHostRegister(static_cast<char*>(p) + k * piece, piece, cudaHostRegisterReadOnly));
        }
      });
    }
    for (auto& x : ts) {
      x.join();
    }
    const double t1 = now();
    for (std::size_t k = 0; k < pieces; ++k) {
      CHECK(cudaHostUnregister(static_cast<char*>(p) + k * piece));
    }
    ::munmap(p, bytes);
    std::printf("register from %u threads: %.1f GB/s\n", threads, double(bytes) / (t1 - t0) / 1e9);
  }
  void* h = nullptr;
  CHECK(cudaHostAlloc(&h, piece, cudaHostAllocDefault));
  std::memset(h, 1, piece);
  for (int two_d = 1; two_d >= 0; --two_d) {
    const double t0 = now();
    for (int r = 0; r < 8; ++r) {
      if (two_d) {
        CHECK(cudaMemcpy2DAsync(d, WIN, h, STRIDE, WIN, per_piece, cudaMemcpyHostToDevice, s));
      } else {
        CHECK(cudaMemcpyAsync(d, h, per_piece * WIN, cudaMemcpyHostToDevice, s));
      }
    }
    CHECK(cudaStreamSynchronize(s));
    const double t = now() - t0;
    std::printf("pinned memory, %s: %.1f GB/s\n", two_d ? "2D copy of windows" : "contiguous copy", 8.0 * double(per_piece * WIN) / t / 1e9);
  }
  return 0;
}
