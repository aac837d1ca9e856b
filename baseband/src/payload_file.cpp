#include <whd/baseband/rx_types.hpp>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace whd::baseband {

payload_file_sink::payload_file_sink(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb"))
{
  if (f_ == nullptr) {
    throw std::runtime_error("cannot create payload file '" + path_ + "': " + std::strerror(errno));
  }
}

payload_file_sink::~payload_file_sink()
{
  if (f_ != nullptr) {
    std::fclose(f_); // an error here has nowhere to go: close() is how it is heard
  }
}

void payload_file_sink::write(std::span<const uint8_t> bytes)
{
  if (f_ == nullptr) {
    throw std::runtime_error("payload file '" + path_ + "' written after it was closed");
  }
  if (std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size()) {
    throw std::runtime_error("cannot write payload file '" + path_ + "': " + std::strerror(errno));
  }
}

void payload_file_sink::close()
{
  if (f_ == nullptr) {
    return;
  }
  const int rc = std::fclose(f_);
  f_ = nullptr;
  if (rc != 0) {
    throw std::runtime_error("cannot finish payload file '" + path_ + "': " + std::strerror(errno));
  }
}

} // namespace whd::baseband
