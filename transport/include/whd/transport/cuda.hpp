/// @file cuda.hpp
/// The project's one set of CUDA resources and its one error check:
/// WHD_CUDA_CHECK, cuda_error, device_buffer, pinned_buffer, stream, stream_ref,
/// event, device_span. No raw cudaMalloc/cudaFree outside this file.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace whd::cuda {

/// A failed CUDA runtime call: carries the expression, file:line and the error name.
class cuda_error : public std::runtime_error {
public:
  cuda_error(cudaError_t code, const char* expr, const char* file, int line);
  cudaError_t code() const noexcept { return code_; }

private:
  cudaError_t code_;
};

/// Throws cuda_error unless `code` is cudaSuccess.
void check(cudaError_t code, const char* expr, const char* file, int line);
/// Logs (to stderr) instead of throwing: for destructors.
void check_nothrow(cudaError_t code, const char* expr, const char* file, int line) noexcept;

/// Number of usable CUDA devices; 0 when there is no driver or no device.
int device_count() noexcept;
/// Why no device is usable ("" when one is), for skip messages and errors.
std::string no_device_reason();
/// The CUDA_VISIBLE_DEVICES that shows this process only devices [first, first + count)
/// of those it would see now: a range of the list already set, or the ordinals
/// themselves when none is. nullopt when a list is set and names fewer devices.
std::optional<std::string> visible_devices_for(const char* current, int first, int count);
/// Shows this process only devices [first, first + count) (visible_devices_for), so
/// that the driver starts those alone: a process using one GPU of four pays for one.
/// They are then devices 0 .. count - 1. Takes effect only when called before the
/// process's first CUDA call; the caller owns that order (whd-rx calls it first).
/// Returns false, changing nothing, when the list set names fewer devices.
bool show_only_devices(int first, int count);
/// Starts the primary contexts of `devices` side by side, a thread each, and lets each
/// reach the others' memory (peer access) where the hardware allows. Returns whether
/// every pair can (true for a single device).
bool start_devices(const std::vector<int>& devices);
/// Page-locked host memory of `bytes` bytes (uninitialised), for pinned_buffer. From
/// PINNED_REGISTER_FROM bytes on it is anonymous memory (transparent huge pages asked
/// for, not inherited by a child process), its pages made by several threads, then
/// registered with the driver: several times faster to make than from cudaMallocHost,
/// and copied to the device at the same rate (bench/probes/cuda_start_probe.cu). Smaller buffers, or where registration
/// is refused, come from cudaMallocHost. `registered` says which, for pinned_free.
void* pinned_alloc(std::size_t bytes, bool& registered);
/// Frees what pinned_alloc gave.
void pinned_free(void* p, std::size_t bytes, bool registered) noexcept;
/// The size from which pinned_alloc registers anonymous memory.
inline constexpr std::size_t PINNED_REGISTER_FROM = std::size_t(4) << 20;

/// Creates the primary context of `device` now, if there is one (the first CUDA
/// call that needs it would otherwise, and that takes a few hundred ms): so that a
/// thread can pay for it while the caller does other work. Errors are left to the
/// calls that follow (cleared here).
void create_context(int device) noexcept;

} // namespace whd::cuda

/// Check a CUDA runtime call; throws whd::cuda::cuda_error on failure.
#define WHD_CUDA_CHECK(expr) ::whd::cuda::check((expr), #expr, __FILE__, __LINE__)
/// Check after a kernel launch (launch configuration errors).
#define WHD_CUDA_CHECK_LAUNCH() ::whd::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
/// Log-only variant for destructors.
#define WHD_CUDA_CHECK_NOTHROW(expr) ::whd::cuda::check_nothrow((expr), #expr, __FILE__, __LINE__)

namespace whd::cuda {

/// Non-owning view of device memory: pointer and element count.
template <typename T>
struct device_span {
  T* ptr = nullptr;
  std::size_t count = 0;

  T* data() const noexcept { return ptr; }
  std::size_t size() const noexcept { return count; }
  std::size_t size_bytes() const noexcept { return count * sizeof(T); }
  device_span subspan(std::size_t offset, std::size_t n) const
  {
    if (offset + n > count) {
      throw std::out_of_range("device_span::subspan out of range");
    }
    return {ptr + offset, n};
  }
  operator device_span<const T>() const noexcept { return {ptr, count}; }
};

/// Owning device allocation of `count` elements of T (uninitialised).
template <typename T>
class device_buffer {
public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count) : count_(count)
  {
    if (count_ > 0) {
      void* p = nullptr;
      WHD_CUDA_CHECK(cudaMalloc(&p, count_ * sizeof(T)));
      ptr_ = static_cast<T*>(p);
    }
  }
  ~device_buffer() { reset(); }
  device_buffer(device_buffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept
  {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t size_bytes() const noexcept { return count_ * sizeof(T); }
  device_span<T> span() const noexcept { return {ptr_, count_}; }

private:
  void reset() noexcept
  {
    if (ptr_ != nullptr) {
      WHD_CUDA_CHECK_NOTHROW(cudaFree(ptr_));
      ptr_ = nullptr;
      count_ = 0;
    }
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

/// Owning page-locked host allocation of `count` elements of T (uninitialised).
template <typename T>
class pinned_buffer {
public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t count) : count_(count)
  {
    if (count_ > 0) {
      ptr_ = static_cast<T*>(pinned_alloc(count_ * sizeof(T), registered_));
    }
  }
  ~pinned_buffer() { reset(); }
  pinned_buffer(pinned_buffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)), registered_(std::exchange(o.registered_, false))
  {
  }
  pinned_buffer& operator=(pinned_buffer&& o) noexcept
  {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
      registered_ = std::exchange(o.registered_, false);
    }
    return *this;
  }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;

  T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t size_bytes() const noexcept { return count_ * sizeof(T); }
  T& operator[](std::size_t i) const noexcept { return ptr_[i]; }
  T* begin() const noexcept { return ptr_; }
  T* end() const noexcept { return ptr_ + count_; }

private:
  void reset() noexcept
  {
    if (ptr_ != nullptr) {
      pinned_free(ptr_, count_ * sizeof(T), registered_);
      ptr_ = nullptr;
      count_ = 0;
      registered_ = false;
    }
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
  bool registered_ = false; ///< pinned_alloc's: registered anonymous memory
};

/// Non-owning stream handle (the default stream when empty).
class stream_ref {
public:
  stream_ref() = default;
  stream_ref(cudaStream_t s) noexcept : s_(s) {} // NOLINT: implicit on purpose
  cudaStream_t get() const noexcept { return s_; }
  operator cudaStream_t() const noexcept { return s_; } // NOLINT
  void synchronize() const { WHD_CUDA_CHECK(cudaStreamSynchronize(s_)); }

private:
  cudaStream_t s_ = nullptr;
};

/// Owning non-blocking CUDA stream.
class stream {
public:
  stream() { WHD_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~stream()
  {
    if (s_ != nullptr) {
      WHD_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
    }
  }
  stream(stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  stream& operator=(stream&& o) noexcept
  {
    std::swap(s_, o.s_);
    return *this;
  }
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  cudaStream_t get() const noexcept { return s_; }
  stream_ref ref() const noexcept { return {s_}; }
  operator stream_ref() const noexcept { return {s_}; } // NOLINT
  void synchronize() const { WHD_CUDA_CHECK(cudaStreamSynchronize(s_)); }

private:
  cudaStream_t s_ = nullptr;
};

/// Owning CUDA event (timing enabled unless `timing` is false).
class event {
public:
  explicit event(bool timing = true)
  {
    WHD_CUDA_CHECK(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~event()
  {
    if (e_ != nullptr) {
      WHD_CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
    }
  }
  event(event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  event& operator=(event&& o) noexcept
  {
    std::swap(e_, o.e_);
    return *this;
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  cudaEvent_t get() const noexcept { return e_; }
  void record(stream_ref s) { WHD_CUDA_CHECK(cudaEventRecord(e_, s.get())); }
  void synchronize() const { WHD_CUDA_CHECK(cudaEventSynchronize(e_)); }
  /// Whether the work before the last record is done (true when never recorded).
  bool done() const
  {
    const cudaError_t e = cudaEventQuery(e_);
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError(); // not an error: clears nothing sticky
      return false;
    }
    WHD_CUDA_CHECK(e);
    return true;
  }
  /// Milliseconds from `start` to this event (both recorded and complete).
  float elapsed_ms_since(const event& start) const
  {
    float ms = 0.0f;
    WHD_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }

private:
  cudaEvent_t e_ = nullptr;
};

} // namespace whd::cuda
