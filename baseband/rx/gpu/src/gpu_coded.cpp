// Coded frames' buffers in the GPU receiver (gpu_coded.hpp).
#include "gpu_coded.hpp"

#include <algorithm>

namespace whd::baseband::gpu {

std::shared_ptr<coded_span> coded_span_cache::take(int device, std::size_t stream_bytes, std::size_t info_bytes)
{
  {
    std::lock_guard lk(m_);
    const auto it = std::find_if(free_.begin(), free_.end(), [&](const auto& s) {
      return s->device == device && s->d_streams.size() >= stream_bytes && s->d_info.size() >= info_bytes;
    });
    if (it != free_.end()) {
      auto s = std::move(*it);
      free_.erase(it);
      return s;
    }
  }
  WHD_CUDA_CHECK(cudaSetDevice(device));
  auto s = std::make_shared<coded_span>();
  s->device = device;
  s->d_streams = cuda::device_buffer<int8_t>(stream_bytes);
  s->d_info = cuda::device_buffer<uint8_t>(std::max<std::size_t>(info_bytes, 1));
  s->h_info = cuda::pinned_buffer<uint8_t>(std::max<std::size_t>(info_bytes, 1));
  std::lock_guard lk(m_);
  device_bytes_ += stream_bytes + info_bytes;
  return s;
}

void coded_span_cache::give(std::shared_ptr<coded_span> s)
{
  if (s) {
    std::lock_guard lk(m_);
    free_.push_back(std::move(s));
  }
}

std::size_t coded_span_cache::device_bytes() const
{
  std::lock_guard lk(m_);
  return device_bytes_;
}

} // namespace whd::baseband::gpu
