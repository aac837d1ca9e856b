// What starting CUDA costs a fresh process, step by step, against the set-up whd-rx
// reports (issue 20 asks set-up <= 0.15 s): the driver's initialisation (cuInit), the
// device's primary context (what cudaFree(nullptr) makes), and the allocations whd-rx
// makes for one capture (device memory and page-locked host memory of the sizes its
// report lists). Run it several times: each run is one fresh process.
// Build: nvcc -O2 -std=c++17 scripts/experiments/cuda_start_probe.cu -o cuda_start_probe -lcuda
// Usage: cuda_start_probe [DEVICE_MIB] [PINNED_MIB]   (defaults 1114 and 147: whd-rx's on the H100)
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

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
  cudaFreeHost(h);
  cudaFree(d);
  step("freeing both");
  return 0;
}
