#include <whd/baseband/gpu_receiver.hpp>

#include "host_pool.hpp"

#include <whd/transport/cuda.hpp>

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

namespace whd::baseband {

namespace {

constexpr std::size_t BLOCK = candidate_search::BLOCK;
constexpr int L = profile::SYMBOL_LEN;
constexpr int W = profile::N;
constexpr int THREADS = 128;
/// Positions one thread sweeps (its window sums slide along them). A thread's
/// samples start RUN samples after its neighbour's: an odd number of 4-byte words
/// (ci8: 31, ci16: 63), so that the lanes of a warp read different banks of shared
/// memory.
template <typename T>
constexpr int RUN = sizeof(T) == 1 ? 62 : 63;
/// Positions a thread block marks, and the samples their windows cover.
template <typename T>
constexpr int TILE = THREADS * RUN<T>;
template <typename T>
constexpr int TILE_SAMPLES = TILE<T> + L + W - 1;
/// Samples a call reads at most: its blocks and the last position's two windows.
constexpr std::size_t MAX_SAMPLES = candidate_search::FILTER_BLOCKS * BLOCK + L + W + L;

/// Integer type of the window sums: exact for a window of W samples (ci8: every
/// term is at most 2 * 128^2, a sum at most 2^24; ci16's need 64 bits).
template <typename T>
using sum_t = std::conditional_t<sizeof(T) == 1, int, long long>;
/// One sample (I and Q) as stored.
template <typename T>
using pair_t = std::conditional_t<sizeof(T) == 1, char2, short2>;

/// One sample's I and Q as integers.
template <typename T>
__device__ __forceinline__ void load(const pair_t<T>* s, int i, sum_t<T>& re, sum_t<T>& im)
{
  const pair_t<T> v = s[i];
  re = v.x;
  im = v.y;
}

/// flags[k] = 1 when a position of block k may cross. Positions p < nof_pos are
/// those whose two windows lie in the nof_samples samples read. Each thread block
/// first copies the samples of its TILE positions into shared memory.
template <typename T>
__global__ void __launch_bounds__(THREADS) mark_kernel(const T* raw, long long nof_samples, long long nof_pos, double half_thr, int* flags)
{
  __shared__ uint4 tile[(TILE_SAMPLES<T> * 2 * sizeof(T) + sizeof(uint4) - 1) / sizeof(uint4)];
  const long long tile0 = static_cast<long long>(blockIdx.x) * TILE<T>;
  {
    // 16-byte steps (a tile starts on a 16-byte boundary), then the last bytes.
    const long long have = min(static_cast<long long>(TILE_SAMPLES<T>), nof_samples - tile0);
    const int bytes = static_cast<int>(have) * 2 * int(sizeof(T));
    const auto* src = reinterpret_cast<const uint4*>(raw + 2 * tile0);
    for (int i = threadIdx.x; i < bytes / 16; i += THREADS) {
      tile[i] = src[i];
    }
    const auto* src_bytes = reinterpret_cast<const unsigned char*>(src);
    auto* dst_bytes = reinterpret_cast<unsigned char*>(tile);
    for (int i = bytes / 16 * 16 + int(threadIdx.x); i < bytes; i += THREADS) {
      dst_bytes[i] = src_bytes[i];
    }
  }
  __syncthreads();
  const int lp0 = int(threadIdx.x) * RUN<T>; // in the tile
  const long long p0 = tile0 + lp0;
  if (p0 >= nof_pos) {
    return;
  }
  const auto* s = reinterpret_cast<const pair_t<T>*>(tile);
  // Window sums at p0: P over [p0, p0 + W) of conj(r[i]) r[i + L]; the energies of
  // [p0, p0 + W) and [p0 + L, p0 + L + W).
  using S = sum_t<T>;
  S pre = 0, pim = 0, r1 = 0, r2 = 0;
  for (int i = lp0; i < lp0 + W; ++i) {
    S ar, ai, br, bi;
    load<T>(s, i, ar, ai);
    load<T>(s, i + L, br, bi);
    pre += ar * br + ai * bi;
    pim += ar * bi - ai * br;
    r1 += ar * ar + ai * ai;
    r2 += br * br + bi * bi;
  }
  const int end = static_cast<int>(min(p0 + RUN<T>, nof_pos) - tile0);
  for (int p = lp0;; ++p) {
    const double q = __dadd_rn(__dmul_rn(double(pre), double(pre)), __dmul_rn(double(pim), double(pim)));
    if (q > __dmul_rn(half_thr, __dmul_rn(double(r1), double(r2)))) {
      flags[(tile0 + p) / static_cast<long long>(BLOCK)] = 1; // the same value from every writer
    }
    if (p + 1 >= end) {
      break;
    }
    // Slide by one: sample p leaves the windows, p + W (and p + L + W) enter.
    S ar, ai, br, bi, cr, ci, dr, di;
    load<T>(s, p, ar, ai);
    load<T>(s, p + L, br, bi);
    load<T>(s, p + W, cr, ci);
    load<T>(s, p + W + L, dr, di);
    pre += (cr * dr + ci * di) - (ar * br + ai * bi);
    pim += (cr * di - ci * dr) - (ar * bi - ai * br);
    r1 += (cr * cr + ci * ci) - (ar * ar + ai * ai);
    r2 += (dr * dr + di * di) - (br * br + bi * bi);
  }
}

/// Thread blocks for nof_pos positions of samples of type T.
template <typename T>
unsigned grid_for(long long nof_pos)
{
  return static_cast<unsigned>((nof_pos + TILE<T> - 1) / TILE<T>);
}

/// Clears blocks on the device: each call reads its run of blocks on several
/// threads, copies each part in as it is read, and marks the run. (Reading the next
/// run ahead of the calls was tried and removed: on a capture of short bursts far
/// apart it made the whole decode several times slower, and over pure noise it gained
/// nothing; docs/decisions.md.)
class gpu_block_filter final : public block_filter {
public:
  gpu_block_filter(int device, float threshold)
      : device_(select(device)), half_thr_(0.5 * double(threshold)), pool_(std::max(1u, std::min(8u, std::thread::hardware_concurrency())))
  {
    buf_.h_raw = cuda::pinned_buffer<std::byte>(MAX_SAMPLES * 4);
    buf_.d_raw = cuda::device_buffer<std::byte>(MAX_SAMPLES * 4);
    buf_.h_flags = cuda::pinned_buffer<int>(candidate_search::FILTER_BLOCKS);
    buf_.d_flags = cuda::device_buffer<int>(candidate_search::FILTER_BLOCKS);
  }
  gpu_block_filter(const gpu_block_filter&) = delete;
  gpu_block_filter& operator=(const gpu_block_filter&) = delete;

  void mark(const transport::sample_source& src, uint64_t base, std::span<uint8_t> maybe) override
  {
    const std::size_t n = std::min(maybe.size(), candidate_search::FILTER_BLOCKS);
    if (!is_integer(src.type()) || base >= src.size()) {
      return; // not ours to clear: every block stays
    }
    if (!fill(buf_, src, base, n)) {
      return;
    }
    const int* flags = buf_.h_flags.data();
    for (std::size_t k = 0; k < n; ++k) {
      maybe[k] = flags[k] != 0 ? 1 : 0;
    }
  }

private:
  /// One run's buffers.
  struct buffers {
    cuda::pinned_buffer<std::byte> h_raw;
    cuda::device_buffer<std::byte> d_raw;
    cuda::pinned_buffer<int> h_flags;
    cuda::device_buffer<int> d_flags;
  };

  /// Makes `device` current, so that the members after device_ live on it.
  static int select(int device)
  {
    WHD_CUDA_CHECK(cudaSetDevice(device));
    return device;
  }

  /// Reads the n blocks from base into b and marks them (b.h_flags); false when too
  /// few samples are left to mark.
  bool fill(buffers& b, const transport::sample_source& src, uint64_t base, std::size_t n)
  {
    const datatype type = src.type();
    const std::size_t bps = bytes_per_sample(type);
    const auto samples = std::size_t(std::min<uint64_t>(n * BLOCK + L + W + L, src.size() - base));
    if (samples < std::size_t(L + W)) {
      return false;
    }
    // Read on several threads (one pread alone does not reach the host's rate), straight into pinned
    // memory; each part is copied in as soon as it is read.
    const std::size_t bytes = samples * bps;
    cudaStream_t st = stream_.get();
    const auto read_part = [&](unsigned part, unsigned parts) {
      const std::size_t lo = bytes * part / parts / bps * bps, hi = part + 1 == parts ? bytes : bytes * (part + 1) / parts / bps * bps;
      if (hi == lo) {
        return;
      }
      if (src.read_raw(base + lo / bps, std::span<std::byte>(b.h_raw.data() + lo, hi - lo)) * bps != hi - lo) {
        throw std::runtime_error("block filter: the capture read short");
      }
      WHD_CUDA_CHECK(cudaSetDevice(device_));
      WHD_CUDA_CHECK(cudaMemcpyAsync(b.d_raw.data() + lo, b.h_raw.data() + lo, hi - lo, cudaMemcpyHostToDevice, st));
    };
    try {
      pool_.run(pool_.size(), read_part);
    } catch (...) {
      (void)cudaStreamSynchronize(st); // no copy of these buffers outlives the run
      throw;
    }
    WHD_CUDA_CHECK(cudaSetDevice(device_));
    // Positions whose windows lie in what was read, and at most the blocks asked for.
    const auto nof_pos = static_cast<long long>(std::min<std::size_t>(samples - L - W + 1, n * BLOCK));
    WHD_CUDA_CHECK(cudaMemsetAsync(b.d_flags.data(), 0, n * sizeof(int), st));
    const auto nof_samples = static_cast<long long>(samples);
    if (type == datatype::ci8) {
      mark_kernel<<<grid_for<int8_t>(nof_pos), THREADS, 0, st>>>(reinterpret_cast<const int8_t*>(b.d_raw.data()), nof_samples, nof_pos,
                                                                 half_thr_, b.d_flags.data());
    } else {
      mark_kernel<<<grid_for<int16_t>(nof_pos), THREADS, 0, st>>>(reinterpret_cast<const int16_t*>(b.d_raw.data()), nof_samples,
                                                                  nof_pos, half_thr_, b.d_flags.data());
    }
    WHD_CUDA_CHECK_LAUNCH();
    WHD_CUDA_CHECK(cudaMemcpyAsync(b.h_flags.data(), b.d_flags.data(), n * sizeof(int), cudaMemcpyDeviceToHost, st));
    stream_.synchronize();
    return true;
  }

  int device_;
  double half_thr_;
  host_pool pool_;
  cuda::stream stream_;
  buffers buf_;
};

} // namespace

std::unique_ptr<block_filter> make_gpu_block_filter(int device, float threshold)
{
  return std::make_unique<gpu_block_filter>(device, threshold);
}

} // namespace whd::baseband
