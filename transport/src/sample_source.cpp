#include <whd/transport/capture.hpp>

#include "capture_fail.hpp"
#include "sample_codec.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <cerrno>
#include <stdexcept>

namespace whd::transport {

namespace {

using detail::fail;

/// Integer samples are decoded through a block of this many bytes on the caller's
/// stack: no allocation, nothing shared between threads.
constexpr std::size_t BLOCK_BYTES = 16384;

/// pread into `out` from byte `offset` until it is full or the file ends; returns the
/// bytes read. Uses no file offset, so threads may call it on one descriptor at once.
std::size_t pread_full(int fd, const std::filesystem::path& path, std::span<std::byte> out, uint64_t offset)
{
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      fail(path, "read failed at byte " + std::to_string(offset + done) + ": " + detail::errno_text(errno) +
                     "; check the disk, or copy the capture elsewhere and read it there");
    }
    if (n == 0) {
      break; // the file is shorter than when it was opened
    }
    done += static_cast<std::size_t>(n);
  }
  return done;
}

} // namespace

capture_reader::capture_reader(capture_info info) : info_(std::move(info))
{
  fd_ = ::open(info_.data_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    fail(info_.data_path, "cannot be opened for reading: " + detail::errno_text(errno) +
                              "; check that it exists and is readable");
  }
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    fail(info_.data_path, "is a directory; pass a capture file");
  }
}

capture_reader::~capture_reader()
{
  if (map_ != nullptr) {
    ::munmap(const_cast<std::byte*>(map_), map_bytes_);
  }
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

std::span<const std::byte> capture_reader::mapped() const
{
  std::call_once(map_once_, [this] {
    const std::size_t bytes = std::size_t(info_.nof_samples * bytes_per_sample(info_.type));
    if (bytes == 0) {
      return;
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
      return;
    }
    ::madvise(p, bytes, MADV_SEQUENTIAL);
    map_ = static_cast<const std::byte*>(p);
    map_bytes_ = bytes;
  });
  return {map_, map_bytes_};
}

void capture_reader::release_mapped(uint64_t first, uint64_t end) const
{
  if (map_ == nullptr) {
    return;
  }
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t bps = bytes_per_sample(info_.type);
  const uint64_t lo = (std::min<uint64_t>(first * bps, map_bytes_) + page - 1) / page * page;
  const uint64_t hi = std::min<uint64_t>(end * bps, map_bytes_) / page * page;
  if (lo < hi) {
    ::madvise(const_cast<std::byte*>(map_) + lo, std::size_t(hi - lo), MADV_DONTNEED);
  }
}

std::size_t capture_reader::read(uint64_t first, std::span<cf32> out) const
{
  if (first >= info_.nof_samples || out.empty()) {
    return 0;
  }
  const std::size_t count = static_cast<std::size_t>(std::min<uint64_t>(out.size(), info_.nof_samples - first));
  const std::size_t bps = bytes_per_sample(info_.type);
  if (info_.type == datatype::cf32_le) {
    // Stored exactly as cf32 is held in memory: read straight into the caller's span.
    return pread_full(fd_, info_.data_path, std::as_writable_bytes(out.first(count)), first * bps) / bps;
  }
  alignas(8) std::byte block[BLOCK_BYTES];
  const std::size_t per_block = BLOCK_BYTES / bps;
  std::size_t done = 0;
  while (done < count) {
    const std::size_t want = std::min(per_block, count - done);
    const std::size_t got = pread_full(fd_, info_.data_path, std::span(block, want * bps), (first + done) * bps) / bps;
    detail::decode(info_.type, std::span<const std::byte>(block, got * bps), out.subspan(done, got));
    done += got;
    if (got < want) {
      break;
    }
  }
  return done;
}

std::size_t capture_reader::read_raw(uint64_t first, std::span<std::byte> out) const
{
  const std::size_t bps = bytes_per_sample(info_.type);
  if (out.size() % bps != 0) {
    throw std::invalid_argument("capture_reader::read_raw: " + std::to_string(out.size()) +
                                " bytes is not a whole number of " + std::string(to_string(info_.type)) +
                                " samples (" + std::to_string(bps) + " bytes each)");
  }
  if (first >= info_.nof_samples || out.empty()) {
    return 0;
  }
  const uint64_t count = std::min<uint64_t>(out.size() / bps, info_.nof_samples - first);
  return pread_full(fd_, info_.data_path, out.first(static_cast<std::size_t>(count * bps)), first * bps) / bps;
}

std::size_t memory_source::read(uint64_t first, std::span<cf32> out) const
{
  if (first >= samples_.size()) {
    return 0;
  }
  const std::size_t count = std::min<std::size_t>(out.size(), samples_.size() - static_cast<std::size_t>(first));
  std::copy_n(samples_.begin() + static_cast<std::ptrdiff_t>(first), count, out.begin());
  return count;
}

std::size_t memory_source::read_raw(uint64_t first, std::span<std::byte> out) const
{
  if (out.size() % sizeof(cf32) != 0) {
    throw std::invalid_argument("memory_source::read_raw: " + std::to_string(out.size()) + " bytes is not a whole number of cf32 samples");
  }
  if (first >= samples_.size()) {
    return 0;
  }
  const std::size_t count = std::min<std::size_t>(out.size() / sizeof(cf32), samples_.size() - static_cast<std::size_t>(first));
  std::memcpy(out.data(), samples_.data() + first, count * sizeof(cf32));
  return count;
}

} // namespace whd::transport
