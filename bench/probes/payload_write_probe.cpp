// How fast one process writes a payload file, five ways, each over the same bytes
// in pieces of 5 MiB (the GPU receiver's writes are a chunk's payload, 0.1-5 MB):
//   fwrite       one thread, buffered stdio
//   pwrite xT    T threads, each its share of a piece at its offset (pwrite)
//   mmap xT      the file grown sparse (ftruncate), mapped, T threads copying (the
//                payload sink's way, baseband/output/src/payload_file.cpp)
//   fallocate+pwrite xT  the blocks allocated first, then T threads pwriting
//   O_DIRECT xT  T threads pwriting 4 KiB-aligned buffers past the page cache (where
//                the file system allows it; tmpfs does not)
//   mmap+huge xT the mapping with MADV_HUGEPAGE (helps only where the kernel lets tmpfs
//                use huge pages: /sys/kernel/mm/transparent_hugepage/shmem_enabled)
//   populate+mmap xT  the mapping's pages made first by T threads (MADV_POPULATE_WRITE),
//                then copied into: the copy without its page faults
//   memcpy xT    T threads copying into memory already faulted in: the host's copy
//                ceiling, no file system at all
//   ahead: fallocate+pwrite xT, ahead: fallocate+mmap xT, ahead: populate+mmap xT
//                a helper thread makes the file's pages (fallocate; or faults them into
//                the mapping, MADV_POPULATE_WRITE) 8 MiB at a time, up to 256 MiB ahead
//                of the writes, while T threads write behind it: can making the pages
//                and filling them overlap, as they cannot within one thread?
//   ahead: populate+pwrite xT, ahead: populate x4+pwrite xT
//                the helper (one thread, or four at once on each step) faults the
//                pages into a mapping of the file while the writes are pwrites: a page
//                fault takes no inode lock, pwrite into a page already made only copies
//   io_uring QD xT  one thread keeps T writes of a piece each in flight through an
//                io_uring (raw system calls, no liburing): the kernel's own workers
//                write, the caller only submits and reaps
// (whd-rx's own ways, split included, are measured through the sink itself by
// sink_write_probe.cpp.)
// Median of 3 runs each; the file is removed between runs.
// Build: g++ -O2 -std=c++20 -pthread bench/probes/payload_write_probe.cpp -o payload_write_probe
// Usage: payload_write_probe PATH THREADS MIB
#include <fcntl.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t PIECE = std::size_t(5) << 20;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/// fn(i) on T threads, joined.
void parallel(unsigned t, const std::function<void(unsigned)>& fn)
{
  std::vector<std::thread> th;
  for (unsigned i = 0; i < t; ++i) {
    th.emplace_back(fn, i);
  }
  for (auto& x : th) {
    x.join();
  }
}

/// Writes all of [p, p + n) at `off`, or returns false.
bool pwrite_all(int fd, const char* p, std::size_t n, off_t off)
{
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, off);
    if (w <= 0) {
      return false;
    }
    p += w;
    n -= std::size_t(w);
    off += w;
  }
  return true;
}

/// A minimal io_uring: one submission and one completion queue, writes only.
class uring {
public:
  explicit uring(unsigned entries)
  {
    io_uring_params p{};
    fd_ = int(::syscall(__NR_io_uring_setup, entries, &p));
    if (fd_ < 0) {
      return;
    }
    entries_ = p.sq_entries;
    sq_len_ = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    cq_len_ = p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe);
    sq_ = ::mmap(nullptr, sq_len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, IORING_OFF_SQ_RING);
    cq_ = ::mmap(nullptr, cq_len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, IORING_OFF_CQ_RING);
    sqes_len_ = p.sq_entries * sizeof(io_uring_sqe);
    sqes_ = static_cast<io_uring_sqe*>(::mmap(nullptr, sqes_len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, IORING_OFF_SQES));
    if (sq_ == MAP_FAILED || cq_ == MAP_FAILED || sqes_ == MAP_FAILED) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    auto* sq = static_cast<char*>(sq_);
    auto* cq = static_cast<char*>(cq_);
    sq_tail_ = reinterpret_cast<unsigned*>(sq + p.sq_off.tail);
    sq_mask_ = *reinterpret_cast<unsigned*>(sq + p.sq_off.ring_mask);
    sq_array_ = reinterpret_cast<unsigned*>(sq + p.sq_off.array);
    cq_head_ = reinterpret_cast<unsigned*>(cq + p.cq_off.head);
    cq_tail_ = reinterpret_cast<unsigned*>(cq + p.cq_off.tail);
    cq_mask_ = *reinterpret_cast<unsigned*>(cq + p.cq_off.ring_mask);
    cqes_ = reinterpret_cast<io_uring_cqe*>(cq + p.cq_off.cqes);
  }
  ~uring()
  {
    if (fd_ >= 0) {
      ::munmap(sqes_, sqes_len_);
      ::munmap(cq_, cq_len_);
      ::munmap(sq_, sq_len_);
      ::close(fd_);
    }
  }
  uring(const uring&) = delete;
  uring& operator=(const uring&) = delete;

  bool ok() const { return fd_ >= 0; }
  unsigned entries() const { return entries_; }

  unsigned in_flight() const { return in_flight_; }

  /// Submits a write of [p, p + n) at `off`; false if the kernel refused it.
  bool write(int fd, const char* p, std::size_t n, off_t off)
  {
    const unsigned tail = *sq_tail_, i = tail & sq_mask_;
    io_uring_sqe& e = sqes_[i];
    std::memset(&e, 0, sizeof e);
    e.opcode = IORING_OP_WRITE;
    e.fd = fd;
    e.addr = reinterpret_cast<uint64_t>(p);
    e.len = unsigned(n);
    e.off = uint64_t(off);
    e.user_data = n;
    sq_array_[i] = i;
    __atomic_store_n(sq_tail_, tail + 1, __ATOMIC_RELEASE);
    if (::syscall(__NR_io_uring_enter, fd_, 1, 0, 0, nullptr, 0) != 1) {
      return false;
    }
    ++in_flight_;
    return true;
  }
  /// Waits for at least one completion and takes all there are; false on a failed or
  /// short write (the probe's writes are whole pieces, never short on these files).
  bool wait_one()
  {
    if (::syscall(__NR_io_uring_enter, fd_, 0, 1, IORING_ENTER_GETEVENTS, nullptr, 0) < 0) {
      return false;
    }
    bool good = true;
    unsigned head = *cq_head_;
    const unsigned tail = __atomic_load_n(cq_tail_, __ATOMIC_ACQUIRE);
    for (; head != tail; ++head, --in_flight_) {
      const io_uring_cqe& c = cqes_[head & cq_mask_];
      good = good && c.res >= 0 && uint64_t(c.res) == c.user_data;
    }
    __atomic_store_n(cq_head_, head, __ATOMIC_RELEASE);
    return good;
  }

private:
  int fd_ = -1;
  unsigned entries_ = 0, in_flight_ = 0;
  std::size_t sq_len_ = 0, cq_len_ = 0, sqes_len_ = 0;
  void *sq_ = MAP_FAILED, *cq_ = MAP_FAILED;
  io_uring_sqe* sqes_ = static_cast<io_uring_sqe*>(MAP_FAILED);
  unsigned *sq_tail_ = nullptr, *sq_array_ = nullptr, *cq_head_ = nullptr, *cq_tail_ = nullptr;
  unsigned sq_mask_ = 0, cq_mask_ = 0;
  io_uring_cqe* cqes_ = nullptr;
};

} // namespace

int main(int argc, char** argv)
{
  if (argc != 4) {
    std::fprintf(stderr, "usage: payload_write_probe PATH THREADS MIB\n");
    return 2;
  }
  const std::string path = argv[1];
  const unsigned nt = unsigned(std::max(1, std::atoi(argv[2])));
  const std::size_t bytes = (std::size_t(std::atol(argv[3])) << 20) / PIECE * PIECE;
  auto* src = static_cast<char*>(std::aligned_alloc(4096, PIECE));
  std::memset(src, 1, PIECE);
  auto share = [&](unsigned i) { return std::pair{PIECE * i / nt / 4096 * 4096, PIECE * (i + 1) / nt / 4096 * 4096}; };

  struct way {
    std::string name;
    std::function<bool()> run; // false: not possible here
  };
  const std::string tn = " x" + std::to_string(nt);
  // The mapping ways: the file grown sparse and mapped, then `fill` (fd, mapping).
  auto with_mapping = [&](const std::function<bool(int, char*)>& fill) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::ftruncate(fd, off_t(bytes)) != 0) {
      return false;
    }
    auto* m = static_cast<char*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (m == MAP_FAILED) {
      return false;
    }
    const bool ok = fill(fd, m);
    ::munmap(m, bytes);
    return ::close(fd) == 0 && ok;
  };
  // One piece at `o` copied into the mapping by the threads.
  auto copy_piece = [&](char* m, std::size_t o) {
    parallel(nt, [&](unsigned i) {
      auto [lo, hi] = share(i);
      std::memcpy(m + o + lo, src + lo, hi - lo);
    });
  };
  // These differ only in what is done to the mapping before the copy.
  auto mapped = [&](const std::function<bool(char*)>& prepare) {
    return with_mapping([&](int, char* m) {
      const bool ok = prepare(m);
      for (std::size_t o = 0; ok && o < bytes; o += PIECE) {
        copy_piece(m, o);
      }
      return ok;
    });
  };
  // A helper making the pages of [0, bytes) ahead of the writes, `step` at a time.
  constexpr std::size_t STEP = std::size_t(8) << 20, AHEAD = std::size_t(256) << 20;
  auto ahead = [&](const std::function<bool(std::size_t, std::size_t)>& make, const std::function<bool(std::size_t)>& write_piece) {
    std::atomic<std::size_t> made{0}, written{0};
    std::atomic<bool> ok{true};
    std::thread helper([&] {
      for (std::size_t o = 0; o < bytes && ok; o += STEP) {
        while (o >= written.load() + AHEAD && ok) {
          std::this_thread::yield();
        }
        if (!make(o, std::min(bytes, o + STEP))) {
          ok = false;
        }
        made = std::min(bytes, o + STEP);
      }
    });
    for (std::size_t o = 0; o < bytes && ok; o += PIECE) {
      while (made.load() < std::min(bytes, o + PIECE) && ok) {
        std::this_thread::yield();
      }
      if (!write_piece(o)) {
        ok = false;
      }
      written = o + PIECE;
    }
    helper.join();
    return ok.load();
  };
  // One piece at `o` pwritten by the threads, each its share.
  auto pwrite_piece = [&](int fd, std::size_t o) {
    std::atomic<bool> good{true};
    parallel(nt, [&](unsigned i) {
      auto [lo, hi] = share(i);
      if (!pwrite_all(fd, src + lo, hi - lo, off_t(o + lo))) {
        good = false;
      }
    });
    return good.load();
  };
  // The pages faulted in by `helpers` threads at once, the writes pwrites by the T threads.
  auto ahead_populate_pwrite = [&](unsigned helpers) {
    return with_mapping([&](int fd, char* m) {
      return ahead(
          [&](std::size_t lo, std::size_t hi) {
            std::atomic<bool> good{true};
            parallel(helpers, [&](unsigned i) {
              const std::size_t a = lo + (hi - lo) * i / helpers / 4096 * 4096, b = lo + (hi - lo) * (i + 1) / helpers / 4096 * 4096;
              if (b > a && ::madvise(m + a, b - a, MADV_POPULATE_WRITE) != 0) {
                good = false;
              }
            });
            return good.load();
          },
          [&](std::size_t o) { return pwrite_piece(fd, o); });
    });
  };
  auto ahead_mapped = [&](bool populate) {
    return with_mapping([&](int fd, char* m) {
      return ahead(
          [&](std::size_t lo, std::size_t hi) {
            return populate ? ::madvise(m + lo, hi - lo, MADV_POPULATE_WRITE) == 0 : ::fallocate(fd, 0, off_t(lo), off_t(hi - lo)) == 0;
          },
          [&](std::size_t o) {
            copy_piece(m, o);
            return true;
          });
    });
  };
  std::vector<char> sink_mem(bytes, 0); // faulted in here, before any timing
  const std::vector<way> ways{
      {"fwrite", [&] {
         FILE* f = std::fopen(path.c_str(), "wb");
         for (std::size_t o = 0; f != nullptr && o < bytes; o += PIECE) {
           std::fwrite(src, 1, PIECE, f);
         }
         return f != nullptr && std::fclose(f) == 0;
       }},
      {"pwrite" + tn, [&] {
         const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
         bool ok = fd >= 0;
         for (std::size_t o = 0; ok && o < bytes; o += PIECE) {
           parallel(nt, [&](unsigned i) {
             auto [lo, hi] = share(i);
             ok = pwrite_all(fd, src + lo, hi - lo, off_t(o + lo)) && ok;
           });
         }
         return ::close(fd) == 0 && ok;
       }},
      {"mmap" + tn, [&] {
         const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
         if (fd < 0 || ::ftruncate(fd, off_t(bytes)) != 0) {
           return false;
         }
         auto* m = static_cast<char*>(::mmap(nullptr, bytes, PROT_WRITE, MAP_SHARED, fd, 0));
         if (m == MAP_FAILED) {
           return false;
         }
         for (std::size_t o = 0; o < bytes; o += PIECE) {
           parallel(nt, [&](unsigned i) {
             auto [lo, hi] = share(i);
             std::memcpy(m + o + lo, src + lo, hi - lo);
           });
         }
         ::munmap(m, bytes);
         return ::close(fd) == 0;
       }},
      {"mmap+huge" + tn, [&] { return mapped([&](char* m) { return ::madvise(m, bytes, MADV_HUGEPAGE) == 0; }); }},
      {"populate+mmap" + tn, [&] {
         return mapped([&](char* m) {
           bool ok = true;
           parallel(nt, [&](unsigned i) {
             const std::size_t lo = bytes * i / nt / 4096 * 4096, hi = bytes * (i + 1) / nt / 4096 * 4096;
             ok = ::madvise(m + lo, hi - lo, MADV_POPULATE_WRITE) == 0 && ok;
           });
           return ok;
         });
       }},
      {"memcpy" + tn, [&] {
         for (std::size_t o = 0; o < bytes; o += PIECE) {
           parallel(nt, [&](unsigned i) {
             auto [lo, hi] = share(i);
             std::memcpy(sink_mem.data() + o + lo, src + lo, hi - lo);
           });
         }
         return true;
       }},
      {"fallocate+pwrite" + tn, [&] {
         const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
         bool ok = fd >= 0 && ::posix_fallocate(fd, 0, off_t(bytes)) == 0;
         for (std::size_t o = 0; ok && o < bytes; o += PIECE) {
           parallel(nt, [&](unsigned i) {
             auto [lo, hi] = share(i);
             ok = pwrite_all(fd, src + lo, hi - lo, off_t(o + lo)) && ok;
           });
         }
         return ::close(fd) == 0 && ok;
       }},
      {"ahead: fallocate+pwrite" + tn, [&] {
         const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
         const bool ok = fd >= 0 && ahead([&](std::size_t lo, std::size_t hi) { return ::fallocate(fd, 0, off_t(lo), off_t(hi - lo)) == 0; },
                                          [&](std::size_t o) { return pwrite_piece(fd, o); });
         return (fd < 0 || ::close(fd) == 0) && ok;
       }},
      {"ahead: fallocate+mmap" + tn, [&] { return ahead_mapped(false); }},
      {"ahead: populate+mmap" + tn, [&] { return ahead_mapped(true); }},
      {"ahead: populate+pwrite" + tn, [&] { return ahead_populate_pwrite(1); }},
      {"ahead: populate x4+pwrite" + tn, [&] { return ahead_populate_pwrite(4); }},
      {"io_uring QD" + std::to_string(nt), [&] {
         uring ring(std::max(nt, 2u));
         const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
         bool ok = ring.ok() && fd >= 0;
         const unsigned depth = std::min(nt, ring.entries());
         for (std::size_t o = 0; ok && o < bytes; o += PIECE) {
           while (ok && ring.in_flight() >= depth) {
             ok = ring.wait_one();
           }
           ok = ok && ring.write(fd, src, PIECE, off_t(o));
         }
         while (ok && ring.in_flight() > 0) {
           ok = ring.wait_one();
         }
         return (fd < 0 || ::close(fd) == 0) && ok;
       }},
      {"O_DIRECT" + tn, [&] {
         const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
         bool ok = fd >= 0;
         for (std::size_t o = 0; ok && o < bytes; o += PIECE) {
           parallel(nt, [&](unsigned i) {
             auto [lo, hi] = share(i);
             ok = pwrite_all(fd, src + lo, hi - lo, off_t(o + lo)) && ok;
           });
         }
         return (fd < 0 || ::close(fd) == 0) && ok;
       }},
  };
  std::printf("%s: %zu MB in pieces of 5 MiB, %u threads, median of 3\n", path.c_str(), bytes >> 20, nt);
  if (FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "r")) {
    char line[256] = {};
    std::printf("  tmpfs huge pages: %s", std::fgets(line, sizeof line, f) != nullptr ? line : "?\n");
    std::fclose(f);
  }
  for (const auto& w : ways) {
    std::vector<double> t;
    bool ok = true;
    for (int r = 0; r < 3 && ok; ++r) {
      ::unlink(path.c_str());
      const double t0 = now();
      ok = w.run();
      t.push_back(now() - t0);
    }
    ::unlink(path.c_str());
    if (!ok) {
      std::printf("  %-28s not possible here\n", w.name.c_str());
      continue;
    }
    std::sort(t.begin(), t.end());
    std::printf("  %-28s %6.2f GB/s\n", w.name.c_str(), double(bytes) / t[1] / 1e9);
  }
  std::free(src);
  return 0;
}
