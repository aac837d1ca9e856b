// What a process's exit costs once it has a CUDA context: the time from the last
// thing the process does (printed as a wall-clock stamp) to its exit as the shell sees
// it, for a bare context and for one holding whd-rx's allocations on the H100 (device
// MiB, page-locked MiB registered from anonymous memory, four streams). whd-rx ends
// with _Exit once its outputs are closed; this is the part of its whole process that
// follows its last log line.
// Build: nvcc -O2 -std=c++17 bench/probes/exit_probe.cu -o exit_probe
// Usage: t0=$(date +%s.%N); exit_probe [DEVICE_MIB] [PINNED_MIB]; t1=$(date +%s.%N)
//        (the stamp it prints against t1; defaults 0 0: a bare context)
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
void check(cudaError_t e, const char* what)
{
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
__global__ void touch(char* p, size_t n)
{
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    p[i] = 1;
  }
}
} // namespace

int main(int argc, char** argv)
{
  const size_t dev_mib = argc > 1 ? size_t(std::atol(argv[1])) : 0, pin_mib = argc > 2 ? size_t(std::atol(argv[2])) : 0;
  check(cudaFree(nullptr), "context");
  cudaStream_t s[4];
  for (auto& x : s) {
    check(cudaStreamCreate(&x), "stream");
  }
  char* d = nullptr;
  if (dev_mib > 0) {
    check(cudaMalloc(&d, dev_mib << 20), "device memory");
    touch<<<1024, 256, 0, s[0]>>>(d, dev_mib << 20);
  }
  if (pin_mib > 0) {
    void* h = ::mmap(nullptr, pin_mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    std::memset(h, 0, pin_mib << 20);
    check(cudaHostRegister(h, pin_mib << 20, cudaHostRegisterDefault), "register");
    if (d != nullptr) {
      check(cudaMemcpyAsync(d, h, pin_mib << 20, cudaMemcpyHostToDevice, s[1]), "copy");
    }
  }
  check(cudaDeviceSynchronize(), "sync");
  const double t = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::printf("%.6f\n", t);
  std::fflush(stdout);
  std::_Exit(0);
}
