// What starting CUDA costs a fresh process, step by step, against the set-up whd-rx
// reports (the set-up target was 0.15 s): the driver's initialisation (cuInit), the
// device's primary context (what cudaFree(nullptr) makes), and the allocations whd-rx
// makes for one capture (device memory and page-locked host memory of the sizes its
// report lists). Run it several times: each run is one fresh process. Then the same
// page-locked MiB made another way: anonymous memory (transparent huge pages asked
// for), its pages made by 8 threads, then cudaHostRegister (and registered with its
// pages not made first); and a 64 MiB copy to the device from each, for the link's
// rate from either.
// Build: nvcc -O2 -std=c++17 bench/probes/cuda_start_probe.cu -o cuda_start_probe -lcuda
// Usage: cuda_start_probe [DEVICE_MIB] [PINNED_MIB]   (defaults 1114 and 147: whd-rx's on the H100)
#include <cuda.h>
#include <cuda_runtime.h>

#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

bool ok(cudaError_t e, const char* what)
{
  if (e != cudaSuccess) {
    std::printf("%s: %s\n", what, cudaGetErrorString(e));
  }
  return e == cudaSuccess;
}

} // namespace

int main(int argc, char** argv)
{
  const std::size_t device_mib = argc > 1 ? std::size_t(std::atol(argv[1])) : 1114;
  const std::size_t pinned_mib = argc > 2 ? std::size_t(std::atol(argv[2])) : 147;
  double t = now();
  const double t0 = t;
  auto step = [&](const char* what) {
    const double n = now();
    std::printf("  %-44s %7.1f ms\n", what, (n - t) * 1e3);
    t = n;
  };
  if (cuInit(0) != CUDA_SUCCESS) {
    std::printf("cuInit failed\n");
    return 1;
  }
  step("cuInit (the driver)");
  int n = 0;
  if (!ok(cudaGetDeviceCount(&n), "cudaGetDeviceCount")) {
    return 1;
  }
  step("cudaGetDeviceCount (the runtime)");
  if (!ok(cudaSetDevice(0), "cudaSetDevice") || !ok(cudaFree(nullptr), "cudaFree")) {
    return 1;
  }
  step("primary context (cudaFree(nullptr))");
  void* d = nullptr;
  if (!ok(cudaMalloc(&d, device_mib << 20), "cudaMalloc")) {
    return 1;
  }
  step("cudaMalloc of the device MiB");
  void* h = nullptr;
  if (!ok(cudaHostAlloc(&h, pinned_mib << 20, cudaHostAllocDefault), "cudaHostAlloc")) {
    return 1;
  }
  step("cudaHostAlloc of the page-locked MiB");
  cudaStream_t s{};
  if (!ok(cudaStreamCreate(&s), "cudaStreamCreate") || !ok(cudaMemcpyAsync(d, h, 1 << 20, cudaMemcpyHostToDevice, s), "copy") ||
      !ok(cudaStreamSynchronize(s), "sync")) {
    return 1;
  }
  step("a stream and a first 1 MiB copy");
  std::printf("  %-44s %7.1f ms  (%zu MiB device, %zu MiB page-locked)\n", "all", (t - t0) * 1e3, device_mib, pinned_mib);
  const std::size_t bytes = pinned_mib << 20;
  auto rate = [&](void* src, const char* what) {
    const std::size_t n = std::min<std::size_t>(bytes, std::size_t(64) << 20);
    for (int k = 0; k < 2; ++k) { // the second is timed
      const double a = now();
      if (!ok(cudaMemcpyAsync(d, src, n, cudaMemcpyHostToDevice, s), "copy") || !ok(cudaStreamSynchronize(s), "sync")) {
        return;
      }
      if (k == 1) {
        std::printf("  %-44s %7.1f GB/s\n", what, double(n) / (now() - a) * 1e-9);
      }
    }
    t = now();
  };
  rate(h, "copy to the device from cudaHostAlloc's");
  {
    std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string mode;
    std::getline(thp, mode);
    std::printf("  transparent huge pages: %s\n", mode.c_str());
  }
  t = now();
  void* a = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (a == MAP_FAILED) {
    std::printf("mmap failed\n");
    return 1;
  }
  madvise(a, bytes, MADV_HUGEPAGE);
  step("mmap of the same MiB (huge pages asked for)");
  {
    std::vector<std::thread> th;
    const std::size_t part = (bytes / 8 + 4095) & ~std::size_t(4095);
    for (std::size_t k = 0; k < 8; ++k) {
      th.emplace_back([&, k] {
        const std::size_t b = std::min(bytes, k * part);
        std::memset(static_cast<char*>(a) + b, 0, std::min(bytes, b + part) - b);
      });
    }
    for (auto& x : th) {
      x.join();
    }
  }
  step("its pages made by 8 threads");
  if (!ok(cudaHostRegister(a, bytes, cudaHostRegisterDefault), "cudaHostRegister")) {
    return 1;
  }
  step("cudaHostRegister of them");
  rate(a, "copy to the device from the registered");
  cudaHostUnregister(a);
  munmap(a, bytes);
  step("unregistering and unmapping them");
  void* c = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (c == MAP_FAILED) {
    std::printf("mmap failed\n");
    return 1;
  }
  madvise(c, bytes, MADV_HUGEPAGE);
  if (!ok(cudaHostRegister(c, bytes, cudaHostRegisterDefault), "cudaHostRegister")) {
    return 1;
  }
  step("mmap + cudaHostRegister, pages not made first");
  cudaHostUnregister(c);
  munmap(c, bytes);
  t = now();
  cudaFreeHost(h);
  cudaFree(d);
  step("freeing both");
  return 0;
}
