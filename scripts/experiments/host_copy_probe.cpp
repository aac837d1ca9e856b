// Host copy probe: how fast can the host move a ci8 capture's symbol windows
// (1024 of every 1152 bytes) from a file in page cache into (pinned) memory?
// Compares a fresh mapping (page faults), a populated mapping, pread into a
// small staging buffer, and non-temporal stores, against a plain memcpy of
// anonymous memory on the same threads (the copy ceiling).
// Build: g++ -O2 -std=c++20 -mavx2 -pthread scripts/experiments/host_copy_probe.cpp -o host_copy_probe
// Usage: host_copy_probe FILE [threads] [repeats]
#include <immintrin.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace {

constexpr std::size_t WIN = 1024, STRIDE = 1152;

double now()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void parallel(unsigned threads, const std::function<void(unsigned)>& f)
{
  std::vector<std::thread> t;
  for (unsigned i = 0; i < threads; ++i) {
    t.emplace_back(f, i);
  }
  for (auto& x : t) {
    x.join();
  }
}

void copy_nt(std::byte* dst, const std::byte* src, std::size_t n)
{
  for (std::size_t i = 0; i < n; i += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
  }
}

// Windows [w0, w1) of src (stride STRIDE) into dst (stride WIN).
void windows(std::byte* dst, const std::byte* src, std::size_t w0, std::size_t w1, bool nt)
{
  for (std::size_t w = w0; w < w1; ++w) {
    if (nt) {
      copy_nt(dst + w * WIN, src + w * STRIDE, WIN);
    } else {
      std::memcpy(dst + w * WIN, src + w * STRIDE, WIN);
    }
  }
  if (nt) {
    _mm_sfence();
  }
}

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [threads] [repeats]\n", argv[0]);
    return 2;
  }
  const unsigned threads = argc > 2 ? unsigned(std::atoi(argv[2])) : std::thread::hardware_concurrency();
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const int fd = ::open(argv[1], O_RDONLY);
  if (fd < 0) {
    std::perror("open");
    return 1;
  }
  struct stat st {};
  ::fstat(fd, &st);
  const std::size_t bytes = std::size_t(st.st_size);
  const std::size_t nwin = bytes / STRIDE;
  const std::size_t out_bytes = nwin * WIN;
  auto* dst = static_cast<std::byte*>(std::aligned_alloc(4096, (out_bytes + 4095) / 4096 * 4096));
  auto* anon = static_cast<std::byte*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
  std::memset(dst, 1, out_bytes);
  std::memset(anon, 2, bytes);
  // Read the file once so it is in page cache.
  {
    std::vector<std::byte> b(1 << 20);
    for (std::size_t o = 0; o < bytes; o += b.size()) {
      if (::pread(fd, b.data(), b.size(), off_t(o)) < 0) {
        std::perror("pread");
        return 1;
      }
    }
  }
  std::printf("file %s: %.2f GB, %zu windows, %u threads, median of %d\n", argv[1], bytes / 1e9, nwin, threads, repeats);
  auto split = [&](unsigned i, std::size_t n) { return std::pair{n * i / threads, n * (i + 1) / threads}; };
  auto report = [&](const char* what, const std::vector<double>& t, double moved) {
    const double m = median(t);
    std::printf("%-58s %8.1f ms  %6.1f GB/s out  %6.2f ns/window\n", what, m * 1e3, moved / m / 1e9, m / double(nwin) * 1e9);
  };

  std::vector<double> t;
  // A: anonymous memcpy, large pieces per thread: the copy ceiling.
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now();
    parallel(threads, [&](unsigned i) {
      auto [a, b] = split(i, out_bytes);
      std::memcpy(dst + a, anon + a, b - a);
    });
    t.push_back(now() - t0);
  }
  report("anon memcpy (ceiling)", t, double(out_bytes));
  for (bool nt : {false, true}) {
    t.clear();
    for (int r = 0; r < repeats; ++r) {
      const double t0 = now();
      parallel(threads, [&](unsigned i) {
        auto [a, b] = split(i, nwin);
        windows(dst, anon, a, b, nt);
      });
      t.push_back(now() - t0);
    }
    report(nt ? "anon windows, NT stores" : "anon windows, memcpy", t, double(out_bytes));
  }

  // B/C: mapped file, fresh mapping each repeat (faults) or populated first.
  for (int mode = 0; mode < 4; ++mode) {
    t.clear();
    std::vector<double> tpop;
    for (int r = 0; r < repeats; ++r) {
      const double t0 = now();
      void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED | (mode == 3 ? MAP_POPULATE : 0), fd, 0);
      if (p == MAP_FAILED) {
        std::perror("mmap");
        return 1;
      }
      ::madvise(p, bytes, MADV_SEQUENTIAL);
      const auto* src = static_cast<const std::byte*>(p);
      if (mode == 1) {
        // populate in parallel, then copy
        parallel(threads, [&](unsigned i) {
          auto [a, b] = split(i, bytes / 4096);
          ::madvise(const_cast<std::byte*>(src) + a * 4096, (b - a) * 4096, MADV_POPULATE_READ);
        });
        tpop.push_back(now() - t0);
      }
      parallel(threads, [&](unsigned i) {
        auto [a, b] = split(i, nwin);
        if (mode == 2) {
          // each thread populates its own range first
          ::madvise(const_cast<std::byte*>(src) + (a * STRIDE) / 4096 * 4096, (b - a) * STRIDE + 4096, MADV_POPULATE_READ);
        }
        windows(dst, src, a, b, false);
      });
      t.push_back(now() - t0);
      ::munmap(p, bytes);
    }
    const char* names[] = {"mmap fresh, memcpy windows (faults)", "mmap + parallel MADV_POPULATE_READ, then windows",
                           "mmap, each thread POPULATE_READ its range, windows", "mmap MAP_POPULATE, windows"};
    report(names[mode], t, double(out_bytes));
    if (!tpop.empty()) {
      report("  of which populate", tpop, double(out_bytes));
    }
  }
  // Mapped, already populated (second pass over the same mapping).
  {
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    const auto* src = static_cast<const std::byte*>(p);
    for (bool nt : {false, true}) {
      t.clear();
      for (int r = 0; r < repeats; ++r) {
        const double t0 = now();
        parallel(threads, [&](unsigned i) {
          auto [a, b] = split(i, nwin);
          windows(dst, src, a, b, nt);
        });
        t.push_back(now() - t0);
      }
      report(nt ? "mmap populated, NT stores" : "mmap populated, memcpy", t, double(out_bytes));
    }
    ::munmap(p, bytes);
  }
  // D: pread spans of SPAN windows into a thread-local staging buffer, then windows.
  for (std::size_t span : {std::size_t(64), std::size_t(256), std::size_t(1024)}) {
    for (bool nt : {false, true}) {
      t.clear();
      for (int r = 0; r < repeats; ++r) {
        const double t0 = now();
        parallel(threads, [&](unsigned i) {
          auto [a, b] = split(i, nwin);
          std::vector<std::byte> stage(span * STRIDE);
          for (std::size_t w = a; w < b; w += span) {
            const std::size_t n = std::min(span, b - w);
            if (::pread(fd, stage.data(), n * STRIDE, off_t(w * STRIDE)) < 0) {
              std::abort();
            }
            windows(dst + w * WIN, stage.data(), 0, n, nt);
          }
        });
        t.push_back(now() - t0);
      }
      char name[96];
      std::snprintf(name, sizeof name, "pread %zu KiB spans, %s", span * STRIDE / 1024, nt ? "NT stores" : "memcpy");
      report(name, t, double(out_bytes));
    }
  }
  // pread straight into destination (contiguous, no window gather): the syscall copy rate
  t.clear();
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now();
    parallel(threads, [&](unsigned i) {
      auto [a, b] = split(i, out_bytes / (1 << 20));
      for (std::size_t m = a; m < b; ++m) {
        if (::pread(fd, dst + m * (1 << 20), 1 << 20, off_t(m << 20)) < 0) {
          std::abort();
        }
      }
    });
    t.push_back(now() - t0);
  }
  report("pread 1 MiB contiguous into destination", t, double(out_bytes));
  return 0;
}
