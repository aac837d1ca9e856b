/// @file resident_blocks.cu
/// Occupancy of the persistent (pipelined) kernels, queried once per kernel and device.
#include "fft512_kernels.cuh"

#include <map>
#include <mutex>
#include <utility>

namespace whd::fft::detail {

int resident_blocks(const void* kernel, int block_threads)
{
  int device = 0;
  WHD_CUDA_CHECK(cudaGetDevice(&device));
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> known;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(kernel, device);
  if (const auto it = known.find(key); it != known.end()) {
    return it->second;
  }
  int per_sm = 0;
  int sms = 0;
  WHD_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, 0));
  WHD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int blocks = std::max(1, per_sm * sms);
  known.emplace(key, blocks);
  return blocks;
}

} // namespace whd::fft::detail
