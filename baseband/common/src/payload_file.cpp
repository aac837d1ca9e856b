#include <whd/baseband/rx_types.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace whd::baseband {

namespace {
/// Small writes are gathered up to this before they reach the file.
constexpr std::size_t BUFFER_BYTES = std::size_t(1) << 20;
/// The smallest piece one thread writes.
constexpr std::size_t MIN_PIECE = std::size_t(256) << 10;
} // namespace

payload_file_sink::payload_file_sink(const std::string& path, unsigned nof_threads) : path_(path)
{
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    owns_fd_ = false;
    path_ = "standard output";
  } else {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw std::runtime_error("cannot create payload file '" + path_ + "': " + std::strerror(errno));
    }
  }
  struct stat st {};
  positioned_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && ::lseek(fd_, 0, SEEK_CUR) == 0;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  nof_threads_ = positioned_ ? (nof_threads != 0 ? nof_threads : std::clamp(hw / 2, 1u, 8u)) : 1;
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

void payload_file_sink::write(std::span<const uint8_t> bytes)
{
  if (fd_ < 0) {
    throw std::runtime_error("payload file '" + path_ + "' written after it was closed");
  }
  if (bytes.size() < PARALLEL_FROM || nof_threads_ == 1) {
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
  // Pieces at their offsets, one per thread (this one included).
  const auto parts = unsigned(std::min<std::size_t>(nof_threads_, bytes.size() / MIN_PIECE));
  std::vector<std::exception_ptr> errors(parts);
  auto piece = [&](unsigned k) {
    const std::size_t lo = bytes.size() * k / parts, hi = bytes.size() * (k + 1) / parts;
    try {
      put(bytes.subspan(lo, hi - lo), offset_ + lo);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> threads;
    for (unsigned k = 1; k < parts; ++k) {
      threads.emplace_back(piece, k);
    }
    piece(0);
  }
  for (const auto& e : errors) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
  offset_ += bytes.size();
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
