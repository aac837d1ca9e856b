#include <whd/transport/cuda.hpp>

#include <cstdio>
#include <string>

namespace whd::cuda {

namespace {
std::string describe(cudaError_t code, const char* expr, const char* file, int line)
{
  return std::string(cudaGetErrorName(code)) + " (" + cudaGetErrorString(code) + ") in " + expr + " at " + file +
         ":" + std::to_string(line);
}
} // namespace

cuda_error::cuda_error(cudaError_t code, const char* expr, const char* file, int line)
    : std::runtime_error(describe(code, expr, file, line)), code_(code)
{
}

void check(cudaError_t code, const char* expr, const char* file, int line)
{
  if (code != cudaSuccess) {
    throw cuda_error(code, expr, file, line);
  }
}

void check_nothrow(cudaError_t code, const char* expr, const char* file, int line) noexcept
{
  if (code != cudaSuccess) {
    std::fprintf(stderr, "whd: CUDA error %s in %s at %s:%d\n", cudaGetErrorName(code), expr, file, line);
  }
}

int device_count() noexcept
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); // clear the sticky-free error so later calls start clean
    return 0;
  }
  return n;
}

void create_context(int device) noexcept
{
  if (device < 0 || device >= device_count() || cudaSetDevice(device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    cudaGetLastError();
  }
}

std::string no_device_reason()
{
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
      return std::string("no CUDA device or driver on this machine (") + cudaGetErrorName(e) + ")";
    }
    return std::string("no usable CUDA device: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  }
  return n == 0 ? "no CUDA device present" : "";
}

} // namespace whd::cuda
