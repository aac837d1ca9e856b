#include <whd/baseband/payload_sinks.hpp>
#include <whd/transport/at_once.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <linux/magic.h>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace whd::baseband {

namespace {
/// Small writes are gathered up to this before they reach the file.
constexpr std::size_t BUFFER_BYTES = std::size_t(1) << 20;
/// The smallest piece one thread writes.
constexpr std::size_t MIN_PIECE = std::size_t(256) << 10;
/// The piece a split write hands out (payload_write::split).
constexpr std::size_t SPLIT_PIECE = std::size_t(256) << 10;
/// How much lower (nice) the copying threads of a split write run than the caller:
/// they take the cores that the capture's reading leaves idle, not the reading's.
/// With the same priority they slowed packet captures down.
constexpr int SPLIT_NICE = 10;
/// The file grows ahead of the writes by at least this, at most by MAX_GROWTH.
constexpr uint64_t MIN_GROWTH = uint64_t(64) << 20;
constexpr uint64_t MAX_GROWTH = uint64_t(1) << 30;
} // namespace

payload_file_sink::payload_file_sink(const std::string& path, unsigned nof_threads, payload_write method) : path_(path)
{
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    owns_fd_ = false;
    path_ = "standard output";
  } else {
    // Read as well as write: a shared writable mapping of the file needs both
    // (mmap refuses a write-only descriptor). A file that may not be read is written.
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno == EACCES) {
      fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (fd_ < 0) {
      throw std::runtime_error("cannot create payload file '" + path_ + "': " + std::strerror(errno));
    }
  }
  struct stat st {};
  positioned_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && ::lseek(fd_, 0, SEEK_CUR) == 0;
  struct statfs fs {};
  in_memory_ = positioned_ && ::fstatfs(fd_, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  nof_threads_ = positioned_ ? (nof_threads != 0 ? nof_threads : std::clamp(hw / 2, 1u, 8u)) : 1;
  method_ = method != payload_write::automatic ? method : payload_write::pwrite;
  adaptive_ = method == payload_write::automatic && in_memory_;
  buffer_.reserve(BUFFER_BYTES);
}

payload_file_sink::~payload_file_sink()
{
  if (fd_ >= 0 && owns_fd_) {
    ::close(fd_); // an error here has nowhere to go: close() is how it is heard
  }
}

void payload_file_sink::put(std::span<const uint8_t> bytes, uint64_t offset) const
{
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = positioned_ ? ::pwrite(fd_, bytes.data() + done, bytes.size() - done, off_t(offset + done))
                                  : ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      if (err == EPIPE) {
        throw std::runtime_error("cannot write the payload to " + path_ + ": the reader closed the pipe");
      }
      throw std::runtime_error("cannot write payload file '" + path_ + "': " + std::strerror(err));
    }
    done += std::size_t(n);
  }
}

void payload_file_sink::flush()
{
  if (buffer_.empty()) {
    return;
  }
  const std::vector<uint8_t> pending = std::move(buffer_);
  buffer_ = {};
  buffer_.reserve(BUFFER_BYTES);
  put(pending, offset_);
  offset_ += pending.size();
}

void payload_file_sink::reserve(uint64_t end, payload_write way)
{
  if (way != payload_write::pwrite) {
    // A copy into a mapping past what the disk holds would raise SIGBUS, so the free
    // space is checked before every mapped write, for the pages it makes: those from
    // offset_ to end, which the sparse growth below (ftruncate) has not allocated
    // (another writer filling the disk at the same time is not seen).
    struct statvfs fs {};
    if (::fstatvfs(fd_, &fs) == 0 && uint64_t(fs.f_bavail) * fs.f_frsize < end - std::min(end, offset_)) {
      throw std::runtime_error("cannot write payload file '" + path_ + "': " + std::strerror(ENOSPC));
    }
  }
  if (end <= reserved_) {
    return;
  }
  if (way == payload_write::pwrite && in_memory_) {
    return; // the writes make the pages as they come; a full tmpfs is heard from them
  }
  const uint64_t want = std::max(end, reserved_ + std::clamp(reserved_, MIN_GROWTH, MAX_GROWTH));
  if (way == payload_write::pwrite) {
    // Allocated, so that the writes find their blocks; a full disk is heard here.
    // fallocate, not posix_fallocate: where the file system lacks it, the latter
    // writes the blocks one by one instead.
    const int err = ::fallocate(fd_, 0, off_t(reserved_), off_t(want - reserved_)) == 0 ? 0 : errno;
    if (err == ENOSPC || err == EFBIG) {
      throw std::runtime_error("cannot write payload file '" + path_ + "': " + std::strerror(err));
    }
    // A file system without fallocate takes the writes as they come.
    reserved_ = err == 0 ? want : end;
    return;
  }
  // The file grows sparse (ftruncate), so that the copies' page faults allocate its
  // pages in parallel; fallocate would zero every page first, on one thread. The
  // free space was checked above for the pages this write makes; the growth past
  // them stays sparse.
  if (::ftruncate(fd_, off_t(want)) != 0) {
    throw std::runtime_error("cannot write payload file '" + path_ + "': " + std::strerror(errno));
  }
  reserved_ = want;
}

void payload_file_sink::write(std::span<const uint8_t> bytes)
{
  if (fd_ < 0) {
    throw std::runtime_error("payload file '" + path_ + "' written after it was closed");
  }
  if (bytes.size() < PARALLEL_FROM || !positioned_) {
    if (buffer_.size() + bytes.size() > BUFFER_BYTES) {
      flush();
    }
    if (bytes.size() >= BUFFER_BYTES) {
      put(bytes, offset_);
      offset_ += bytes.size();
      return;
    }
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    return;
  }
  flush();
  const payload_write way = adaptive_ && behind_ ? payload_write::split : method_;
  if (way == payload_write::pwrite) {
    reserve(offset_ + bytes.size(), way);
    put(bytes, offset_);
    offset_ += bytes.size();
    return;
  }
  write_mapped(bytes, way);
}

void payload_file_sink::write_mapped(std::span<const uint8_t> bytes, payload_write way)
{
  reserve(offset_ + bytes.size(), way);
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t map_off = offset_ / page * page;
  const std::size_t map_len = std::size_t(offset_ + bytes.size() - map_off);
  void* map = ::mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, off_t(map_off));
  if (map == MAP_FAILED) {
    // Not mappable (a file system without mmap, a file that may not be read): this
    // write and the next ones by pwrite, and method() says so.
    method_ = payload_write::pwrite;
    adaptive_ = false;
    reserve(offset_ + bytes.size(), method_);
    put(bytes, offset_);
    offset_ += bytes.size();
    return;
  }
  if (crew_ == nullptr) {
    // Kept for the file's life: a chunk's write would otherwise start its threads anew.
    // One file's mapped writes all go one way: map, or split (asked for, or automatic).
    const bool split = way == payload_write::split;
    crew_ = std::make_unique<transport::crew>(split ? std::max(nof_threads_, 2u) : nof_threads_, [split] {
      transport::name_this_thread("whd-copy");
      if (split) {
        // Copies at a lower priority (a crew thread's own; failure leaves it as it was).
        (void)::setpriority(PRIO_PROCESS, id_t(::gettid()), SPLIT_NICE);
      }
    });
  }
  struct unmap_at_exit {
    void* p;
    std::size_t n;
    ~unmap_at_exit() { ::munmap(p, n); }
  } const unmap{map, map_len}; // also when a write below throws
  auto* dst = static_cast<uint8_t*>(map) + (offset_ - map_off);
  if (way == payload_write::split) {
    write_split(bytes, dst);
  } else {
    // Each thread a share, none below MIN_PIECE (the rest then have nothing to do).
    const std::size_t parts = std::clamp<std::size_t>(bytes.size() / MIN_PIECE, 1, crew_->parts());
    crew_->run([&](std::size_t k) {
      if (k < parts) {
        const std::size_t lo = bytes.size() * k / parts, hi = bytes.size() * (k + 1) / parts;
        std::memcpy(dst + lo, bytes.data() + lo, hi - lo);
      }
    });
  }
  offset_ += bytes.size();
}

void payload_file_sink::write_split(std::span<const uint8_t> bytes, uint8_t* dst)
{
  // Parts other than 0 run on the crew's threads at SPLIT_NICE, or after part 0 on the
  // calling thread when those could not be had (then nothing is left for them).
  const std::size_t nof_pieces = (bytes.size() + SPLIT_PIECE - 1) / SPLIT_PIECE;
  std::mutex m;
  std::size_t front = 0, back = nof_pieces; // pieces [front, back) are still to go
  auto take = [&](bool from_front) -> std::optional<std::size_t> {
    std::lock_guard lk(m);
    if (front == back) {
      return std::nullopt;
    }
    return from_front ? front++ : --back;
  };
  auto span_of = [&](std::size_t k) {
    const std::size_t lo = k * SPLIT_PIECE;
    return std::pair{lo, std::min(bytes.size(), lo + SPLIT_PIECE) - lo};
  };
  crew_->run([&](std::size_t part) {
    if (part == 0) { // the calling thread
      while (const auto k = take(true)) {
        const auto [lo, n] = span_of(*k);
        put(bytes.subspan(lo, n), offset_ + lo);
      }
      return;
    }
    while (const auto k = take(false)) {
      const auto [lo, n] = span_of(*k);
      std::memcpy(dst + lo, bytes.data() + lo, n);
    }
  });
}

void payload_file_sink::close()
{
  if (fd_ < 0) {
    return;
  }
  std::exception_ptr error;
  try {
    flush();
  } catch (...) {
    error = std::current_exception();
  }
  // Space the file was grown by past the end goes again.
  if (error == nullptr && reserved_ > offset_ && ::ftruncate(fd_, off_t(offset_)) != 0) {
    error = std::make_exception_ptr(std::runtime_error("cannot finish payload file '" + path_ + "': " + std::strerror(errno)));
  }
  const int rc = owns_fd_ ? ::close(fd_) : 0;
  const int err = errno;
  fd_ = -1;
  if (error) {
    std::rethrow_exception(error);
  }
  if (rc != 0) {
    throw std::runtime_error("cannot finish payload file '" + path_ + "': " + std::strerror(err));
  }
}

} // namespace whd::baseband
