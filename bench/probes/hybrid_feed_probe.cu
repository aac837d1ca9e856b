// Feeding a capture to the GPU two ways at once: can the copy engine take part of the
// capture straight from the page cache (cudaHostRegister of the mapped file, read-only)
// while the host's threads pread the rest into page-locked buffers, so that the two
// rates add? Registration alone runs at about 15 GB/s of capture (serialised in the
// driver, register_probe.cu) and costs the host's memory nothing; the pread path moves
// each byte three times through the host's memory.
//
// Chunks of the capture go to the device in order, as the GPU receiver sends them:
// `slots` chunks in flight, each with a page-locked buffer, a device buffer and a
// stream. Modes:
//   pread    every chunk preaded by the pool (1 MiB a task), then copied;
//   register a thread registers the mapping window by window ahead of the chunks, and
//            every chunk is copied from the registered pages;
//   hybrid   the registering thread takes windows at least two ahead of the chunk being
//            sent; a chunk whose windows it has not taken is preaded, one whose windows
//            are registered is copied from them (a window in registration is waited for).
// Reports GB/s of capture from the first chunk to the last copy done, and how many
// chunks went each way; unregistration is timed apart.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 bench/probes/hybrid_feed_probe.cu -o hybrid_feed_probe -lpthread
// Usage: hybrid_feed_probe FILE MODE [chunk MiB=32] [window MiB=64] [threads=8] [slots=4]
#include "probe_util.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

/// A fixed pool: run(n, f) calls f(i) for i < n on all threads, the caller among them.
class pool {
public:
  explicit pool(unsigned n)
  {
    for (unsigned t = 1; t < n; ++t) {
      threads_.emplace_back([this] { loop(); });
    }
  }
  ~pool()
  {
    {
      std::lock_guard lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) {
      t.join();
    }
  }
  template <class F>
  void run(unsigned n, F&& f)
  {
    std::function<void(unsigned)> job = f;
    {
      std::lock_guard lk(m_);
      job_ = &job;
      n_ = n;
      next_ = 0;
      left_ = n;
      ++gen_;
    }
    cv_.notify_all();
    work();
    std::unique_lock lk(m_);
    done_cv_.wait(lk, [&] { return left_ == 0; });
    job_ = nullptr;
  }

private:
  void work()
  {
    for (;;) {
      unsigned i;
      std::function<void(unsigned)>* job;
      {
        std::lock_guard lk(m_);
        if (job_ == nullptr || next_ >= n_) {
          return;
        }
        i = next_++;
        job = job_;
      }
      (*job)(i);
      std::lock_guard lk(m_);
      if (--left_ == 0) {
        done_cv_.notify_all();
      }
    }
  }
  void loop()
  {
    unsigned seen = 0;
    for (;;) {
      {
        std::unique_lock lk(m_);
        cv_.wait(lk, [&] { return stop_ || (gen_ != seen && job_ != nullptr && next_ < n_); });
        if (stop_) {
          return;
        }
        seen = gen_;
      }
      work();
    }
  }
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  std::function<void(unsigned)>* job_ = nullptr;
  unsigned n_ = 0, next_ = 0, left_ = 0, gen_ = 0;
  bool stop_ = false;
};

enum : int { UNTAKEN = 0, REGISTERING = 1, REGISTERED = 2, PREADING = 3 };

} // namespace

int main(int argc, char** argv)
{
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FILE pread|register|hybrid [chunk MiB] [window MiB] [threads] [slots]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[2];
  const std::size_t chunk = std::size_t(argc > 3 ? std::atoi(argv[3]) : 32) << 20;
  const std::size_t window = std::size_t(argc > 4 ? std::atoi(argv[4]) : 64) << 20;
  const unsigned threads = unsigned(argc > 5 ? std::atoi(argv[5]) : 8);
  const std::size_t nof_slots = std::size_t(argc > 6 ? std::atoi(argv[6]) : 4);
  const int fd = ::open(argv[1], O_RDONLY);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  struct stat st {};
  ::fstat(fd, &st);
  const std::size_t bytes = std::size_t(st.st_size) / window * window;
  const std::size_t nof_windows = bytes / window, nof_chunks = bytes / chunk;
  CHECK(cudaFree(nullptr));
  struct slot {
    void* h = nullptr;
    void* d = nullptr;
    cudaStream_t s{};
    cudaEvent_t done{};
  };
  std::vector<slot> slots(nof_slots);
  for (auto& s : slots) {
    CHECK(cudaHostAlloc(&s.h, chunk, cudaHostAllocDefault));
    std::memset(s.h, 0, chunk);
    CHECK(cudaMalloc(&s.d, chunk));
    CHECK(cudaStreamCreateWithFlags(&s.s, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
  }
  auto* base = static_cast<char*>(::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0));
  pool readers(threads);
  std::vector<std::atomic<int>> state(nof_windows);
  for (auto& x : state) {
    x = UNTAKEN;
  }
  std::atomic<std::size_t> reader_window{0};
  std::atomic<bool> stop{false};
  std::mutex m;
  std::condition_variable registered_cv;
  double t_register = 0;
  std::thread registrar;
  const bool registers = mode != "pread";
  if (registers) {
    registrar = std::thread([&] {
      CHECK(cudaSetDevice(0));
      for (;;) {
        // The lowest window not taken, two or more ahead of the reader (hybrid), or the next (register).
        std::size_t w = mode == "hybrid" ? reader_window.load() + 2 : 0;
        for (; w < nof_windows; ++w) {
          int expect = UNTAKEN;
          if (state[w].compare_exchange_strong(expect, REGISTERING)) {
            break;
          }
        }
        if (w >= nof_windows || stop) {
          return;
        }
        const double t0 = now();
        CHECK(cudaHostRegister(base + w * window, window, cudaHostRegisterReadOnly));
        t_register += now() - t0;
        {
          std::lock_guard lk(m);
          state[w] = REGISTERED;
        }
        registered_cv.notify_all();
      }
    });
  }
  std::size_t direct = 0, preaded = 0;
  double t_wait_reg = 0, t_pread = 0, t_wait_slot = 0;
  const double t0 = now();
  for (std::size_t c = 0; c < nof_chunks; ++c) {
    slot& s = slots[c % nof_slots];
    const double ts = now();
    CHECK(cudaEventSynchronize(s.done));
    t_wait_slot += now() - ts;
    const std::size_t first = c * chunk, w0 = first / window, w1 = (first + chunk - 1) / window;
    reader_window = w0;
    bool all_registered = registers;
    for (std::size_t w = w0; w <= w1 && all_registered; ++w) {
      int expect = UNTAKEN;
      if (mode == "register" || !state[w].compare_exchange_strong(expect, PREADING)) {
        if (state[w] == PREADING) {
          all_registered = false;
          continue;
        }
        const double tw = now();
        std::unique_lock lk(m);
        registered_cv.wait(lk, [&] { return state[w] == REGISTERED; });
        t_wait_reg += now() - tw;
      } else {
        all_registered = false;
      }
    }
    if (all_registered) {
      // Copied from the registered pages, a piece per window.
      for (std::size_t off = first; off < first + chunk;) {
        const std::size_t end = std::min(first + chunk, (off / window + 1) * window);
        CHECK(cudaMemcpyAsync(static_cast<char*>(s.d) + (off - first), base + off, end - off, cudaMemcpyHostToDevice, s.s));
        off = end;
      }
      ++direct;
    } else {
      const double tp = now();
      const unsigned parts = unsigned(chunk >> 20);
      readers.run(parts, [&](unsigned p) {
        const std::size_t off = std::size_t(p) << 20;
        if (::pread(fd, static_cast<char*>(s.h) + off, std::size_t(1) << 20, off_t(first + off)) < 0) {
          std::perror("pread");
          std::exit(1);
        }
      });
      t_pread += now() - tp;
      CHECK(cudaMemcpyAsync(s.d, s.h, chunk, cudaMemcpyHostToDevice, s.s));
      ++preaded;
    }
    CHECK(cudaEventRecord(s.done, s.s));
  }
  CHECK(cudaDeviceSynchronize());
  const double t1 = now();
  stop = true;
  if (registrar.joinable()) {
    registrar.join();
  }
  const double t2 = now();
  std::size_t unregistered = 0;
  for (std::size_t w = 0; w < nof_windows; ++w) {
    if (state[w] == REGISTERED) {
      CHECK(cudaHostUnregister(base + w * window));
      ++unregistered;
    }
  }
  const double t3 = now();
  std::printf("%-8s %5.1f GB in %3zu MiB chunks, %3zu MiB windows, %2u threads, %zu slots: %6.2f GB/s (%.3f s); chunks direct %zu, "
              "preaded %zu; waiting for a slot %.3f s, pread %.3f s, waiting for registration %.3f s, registering %.3f s (%.1f GB/s while at it); "
              "unregistering %zu windows %.3f s\n",
              mode.c_str(), double(bytes) / 1e9, chunk >> 20, window >> 20, threads, nof_slots, double(bytes) / (t1 - t0) / 1e9, t1 - t0,
              direct, preaded, t_wait_slot, t_pread, t_wait_reg, t_register, t_register > 0 ? double(unregistered * window) / t_register / 1e9 : 0.0,
              unregistered, t3 - t2);
  ::munmap(base, bytes);
  return 0;
}
