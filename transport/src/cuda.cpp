#include <whd/transport/at_once.hpp>
#include <whd/transport/cuda.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

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

namespace {

/// Makes the pages of fresh anonymous memory, a write to each 4 KiB, on up to 8
/// threads (the kernel zeroes each page as it is made: the cost cudaMallocHost pays on
/// one thread).
void make_pages(void* p, std::size_t bytes)
{
  constexpr std::size_t PAGE = 4096;
  constexpr std::size_t PER_THREAD = std::size_t(8) << 20;
  const auto hw = std::size_t(std::max(1u, std::thread::hardware_concurrency()));
  const std::size_t nof_threads = std::clamp<std::size_t>(bytes / PER_THREAD, 1, std::min<std::size_t>(hw, 8));
  const std::size_t part = (bytes / nof_threads + PAGE - 1) / PAGE * PAGE;
  auto touch = [p, bytes, part](std::size_t k) {
    auto* b = static_cast<volatile unsigned char*>(p);
    const std::size_t end = std::min(bytes, (k + 1) * part);
    for (std::size_t i = k * part; i < end; i += PAGE) {
      b[i] = 0;
    }
  };
  transport::run_at_once(nof_threads, touch); // every part made, thread or not: nothing leaks the mapping
}

} // namespace

void* pinned_alloc(std::size_t bytes, bool& registered)
{
  registered = false;
  if (bytes >= PINNED_REGISTER_FROM) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      // Hints: huge pages make fewer, larger pages to zero and pin; a child process
      // must not share (copy on write) pages the device writes into.
      (void)::madvise(p, bytes, MADV_HUGEPAGE);
      (void)::madvise(p, bytes, MADV_DONTFORK);
      make_pages(p, bytes);
      if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) == cudaSuccess) {
        registered = true;
        return p;
      }
      cudaGetLastError(); // refused (a limit on locked memory, say): the driver's own allocation below
      ::munmap(p, bytes);
    }
  }
  void* p = nullptr;
  WHD_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return p;
}

void pinned_free(void* p, std::size_t bytes, bool registered) noexcept
{
  if (p == nullptr) {
    return;
  }
  if (registered) {
    WHD_CUDA_CHECK_NOTHROW(cudaHostUnregister(p));
    ::munmap(p, bytes);
  } else {
    WHD_CUDA_CHECK_NOTHROW(cudaFreeHost(p));
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
