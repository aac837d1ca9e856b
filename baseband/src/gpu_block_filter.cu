#include <whd/baseband/gpu_receiver.hpp>

#include "host_pool.hpp"

#include <whd/transport/cuda.hpp>

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <vector>

namespace whd::baseband {

namespace {

constexpr std::size_t BLOCK = detector::BLOCK;
constexpr int L = profile::SYMBOL_LEN;
constexpr int W = profile::N;
/// Positions one thread sweeps (its window sums slide along them).
constexpr int RUN = 64;
constexpr int THREADS = 128;
/// Samples a call reads at most: its blocks and the last position's two windows.
constexpr std::size_t MAX_SAMPLES = detector::FILTER_BLOCKS * BLOCK + L + W + L;

/// One sample's I and Q as integers.
template <typename T>
__device__ __forceinline__ void load(const T* s, long long i, long long& re, long long& im)
{
  re = s[2 * i];
  im = s[2 * i + 1];
}

/// flags[k] = 1 when a position of block k may cross. Positions p < nof_pos are
/// those whose two windows lie in the samples read.
template <typename T>
__global__ void __launch_bounds__(THREADS) mark_kernel(const T* s, long long nof_pos, double half_thr, int* flags)
{
  const long long p0 = (static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x) * RUN;
  if (p0 >= nof_pos) {
    return;
  }
  // Window sums at p0: P over [p0, p0 + W) of conj(r[i]) r[i + L]; the energies of
  // [p0, p0 + W) and [p0 + L, p0 + L + W).
  long long pre = 0, pim = 0, r1 = 0, r2 = 0;
  for (int i = 0; i < W; ++i) {
    long long ar, ai, br, bi;
    load(s, p0 + i, ar, ai);
    load(s, p0 + i + L, br, bi);
    pre += ar * br + ai * bi;
    pim += ar * bi - ai * br;
    r1 += ar * ar + ai * ai;
    r2 += br * br + bi * bi;
  }
  const long long end = min(p0 + RUN, nof_pos);
  bool maybe = false;
  for (long long p = p0;; ++p) {
    const double q = __dadd_rn(__dmul_rn(double(pre), double(pre)), __dmul_rn(double(pim), double(pim)));
    maybe |= q > __dmul_rn(half_thr, __dmul_rn(double(r1), double(r2)));
    if (p + 1 >= end) {
      break;
    }
    // Slide by one: sample p leaves the windows, p + W (and p + L + W) enter.
    long long ar, ai, br, bi, cr, ci, dr, di;
    load(s, p, ar, ai);
    load(s, p + L, br, bi);
    load(s, p + W, cr, ci);
    load(s, p + W + L, dr, di);
    pre += (cr * dr + ci * di) - (ar * br + ai * bi);
    pim += (cr * di - ci * dr) - (ar * bi - ai * br);
    r1 += (cr * cr + ci * ci) - (ar * ar + ai * ai);
    r2 += (dr * dr + di * di) - (br * br + bi * bi);
  }
  if (maybe) {
    flags[p0 / static_cast<long long>(BLOCK)] = 1; // the same value from every writer
  }
}

class gpu_block_filter final : public block_filter {
public:
  gpu_block_filter(int device, float threshold)
      : device_(select(device)), half_thr_(0.5 * double(threshold)), pool_(std::max(1u, std::min(8u, std::thread::hardware_concurrency())))
  {
    h_raw_ = cuda::pinned_buffer<std::byte>(MAX_SAMPLES * 4);
    d_raw_ = cuda::device_buffer<std::byte>(MAX_SAMPLES * 4);
    h_flags_ = cuda::pinned_buffer<int>(detector::FILTER_BLOCKS);
    d_flags_ = cuda::device_buffer<int>(detector::FILTER_BLOCKS);
  }

  void mark(const transport::capture_reader& src, uint64_t base, std::span<uint8_t> maybe) override
  {
    const std::size_t n = std::min(maybe.size(), detector::FILTER_BLOCKS);
    const datatype type = src.info().type;
    if (!is_integer(type) || base >= src.size()) {
      return; // not ours to clear: every block stays
    }
    const std::size_t bps = bytes_per_sample(type);
    const auto samples = std::size_t(std::min<uint64_t>(n * BLOCK + L + W + L, src.size() - base));
    if (samples < std::size_t(L + W)) {
      return;
    }
    // Read on several threads (one pread moves some 10 GB/s), straight into pinned memory.
    const std::size_t bytes = samples * bps;
    pool_.run(pool_.size(), [&](unsigned part, unsigned parts) {
      const std::size_t lo = bytes * part / parts / bps * bps, hi = part + 1 == parts ? bytes : bytes * (part + 1) / parts / bps * bps;
      if (hi > lo && src.read_raw(base + lo / bps, std::span<std::byte>(h_raw_.data() + lo, hi - lo)) * bps != hi - lo) {
        throw std::runtime_error("block filter: the capture read short");
      }
    });
    // Positions whose windows lie in what was read, and at most the blocks asked for.
    const auto nof_pos = static_cast<long long>(std::min<std::size_t>(samples - L - W + 1, n * BLOCK));
    WHD_CUDA_CHECK(cudaSetDevice(device_));
    cudaStream_t st = stream_.get();
    WHD_CUDA_CHECK(cudaMemcpyAsync(d_raw_.data(), h_raw_.data(), bytes, cudaMemcpyHostToDevice, st));
    WHD_CUDA_CHECK(cudaMemsetAsync(d_flags_.data(), 0, n * sizeof(int), st));
    const long long threads = (nof_pos + RUN - 1) / RUN;
    const auto grid = static_cast<unsigned>((threads + THREADS - 1) / THREADS);
    if (type == datatype::ci8) {
      mark_kernel<<<grid, THREADS, 0, st>>>(reinterpret_cast<const int8_t*>(d_raw_.data()), nof_pos, half_thr_, d_flags_.data());
    } else {
      mark_kernel<<<grid, THREADS, 0, st>>>(reinterpret_cast<const int16_t*>(d_raw_.data()), nof_pos, half_thr_, d_flags_.data());
    }
    WHD_CUDA_CHECK_LAUNCH();
    WHD_CUDA_CHECK(cudaMemcpyAsync(h_flags_.data(), d_flags_.data(), n * sizeof(int), cudaMemcpyDeviceToHost, st));
    stream_.synchronize();
    for (std::size_t k = 0; k < n; ++k) {
      maybe[k] = h_flags_[k] != 0 ? 1 : 0;
    }
  }

private:
  /// Makes `device` current, so that the members after device_ live on it.
  static int select(int device)
  {
    WHD_CUDA_CHECK(cudaSetDevice(device));
    return device;
  }

  int device_;
  double half_thr_;
  host_pool pool_;
  cuda::stream stream_;
  cuda::pinned_buffer<std::byte> h_raw_;
  cuda::device_buffer<std::byte> d_raw_;
  cuda::pinned_buffer<int> h_flags_;
  cuda::device_buffer<int> d_flags_;
};

} // namespace

std::unique_ptr<block_filter> make_gpu_block_filter(int device, float threshold)
{
  return std::make_unique<gpu_block_filter>(device, threshold);
}

} // namespace whd::baseband
