#include <whd/transport/at_once.hpp>
#include <whd/transport/cuda.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
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

std::optional<std::string> visible_devices_for(const char* current, int first, int count)
{
  std::vector<std::string> listed;
  if (current != nullptr && *current != '\0') { // "": no device at all
    std::string cur(current);
    for (std::size_t at = 0; at <= cur.size();) {
      const std::size_t comma = std::min(cur.find(',', at), cur.size());
      listed.push_back(cur.substr(at, comma - at));
      at = comma + 1;
    }
  }
  std::string out;
  for (int d = first; d < first + count; ++d) {
    if (current != nullptr && (d < 0 || std::size_t(d) >= listed.size())) {
      return std::nullopt;
    }
    if (!out.empty()) {
      out.push_back(',');
    }
    out.append(current != nullptr ? listed[std::size_t(d)] : std::to_string(d));
  }
  return out;
}

bool show_only_devices(int first, int count)
{
  const auto list = visible_devices_for(std::getenv("CUDA_VISIBLE_DEVICES"), first, count);
  return list && ::setenv("CUDA_VISIBLE_DEVICES", list->c_str(), 1) == 0;
}

namespace {
/// The peer access this process has enabled, (from, to): asked once each, so that a
/// second receiver on the same GPUs makes no failing call (which compute-sanitizer
/// reports as an API error).
std::mutex peers_m;
std::set<std::pair<int, int>> peers_enabled;
} // namespace

bool start_devices(const std::vector<int>& devices)
{
  std::vector<cudaError_t> started(devices.size(), cudaSuccess);
  std::vector<char> peers(devices.size(), 1);
  transport::run_at_once(devices.size(), [&](std::size_t i) {
    started[i] = cudaSetDevice(devices[i]);
    if (started[i] == cudaSuccess) {
      started[i] = cudaFree(nullptr); // the primary context
    }
    for (std::size_t j = 0; j < devices.size() && started[i] == cudaSuccess; ++j) {
      int can = 0;
      if (j == i) {
        continue;
      }
      if (cudaDeviceCanAccessPeer(&can, devices[i], devices[j]) != cudaSuccess || can == 0) {
        cudaGetLastError();
        peers[i] = 0;
        continue;
      }
      std::lock_guard lk(peers_m);
      if (peers_enabled.contains({devices[i], devices[j]})) {
        continue;
      }
      const cudaError_t e = cudaDeviceEnablePeerAccess(devices[j], 0);
      if (e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled) {
        peers_enabled.insert({devices[i], devices[j]});
      } else {
        peers[i] = 0;
      }
      (void)cudaGetLastError(); // an "already enabled" (by other code) is no error
    }
  });
  for (const cudaError_t e : started) {
    check(e, "cudaSetDevice + cudaFree(nullptr) (a device's context)", __FILE__, __LINE__);
  }
  return std::all_of(peers.begin(), peers.end(), [](char p) { return p != 0; });
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
