// The GPU candidate locator (gpu_locate.hpp): one kernel, one block of 256 threads
// per candidate, going through the host's steps in order with shared memory between
// them (each a device function of gpu_locate_steps.cuh):
//   1. fine timing (sync.cpp synchronize): the up to 4G+1 + N-1 = 768 samples of the
//      lag window, non-finite zeroed, derotated by the coarse CFO; one thread per lag
//      sums the cross-correlation with the preamble body sequentially in double; the
//      sliding energy's terms made by every thread and added in the host's order by
//      one; the peak by a block-wide argmax (exact); the validation's two sums on two
//      warps; thread 0 the rho, the first path, start and fft0;
//   2. the 2L + N = 1664 samples from fft0 (two preamble windows and the header
//      window), non-finite ones counted in the windows and zeroed; the fine CFO's
//      products made by every thread and added in order by thread 0; each sample's
//      derotation in double as the host;
//   3. three groups of 64 threads run the project's 512-point device FFT, one window each;
//   4. LS channel, smoother projection in double (one thread per tap, then one per
//      tone), 1/H, SNR (its terms by every thread, added in order by thread 0), the
//      pilots' phase, the header's maximum-ratio combining and profile::decide_header;
//   5. an accepted header as a third training symbol (add_header_to_channel): its
//      common phase summed in order by thread 0, the three symbols averaged, the
//      projection again; then the frame_params of the frame.
//
// Work per candidate: reads 6 KB (lag window) + 13 KB (header windows) of samples, the
// 4 KB body from shared memory 257 times, and the smoother basis twice (2 x 270 KB at
// 48 taps, shared by every candidate, so from L2; twice more for an accepted frame); writes
// 9.4 KB of frame_params.
// About 1.1 M double operations for the cross-correlation (257 lags x 512 x 8), 0.27 M
// for the smoother, 1,300 double sincos and three FFTs (some 70 k float operations).
// Nsight Compute put half the warps' stalls at barriers behind the sums kept in the
// host's order on one thread; made by every thread, their terms leave the one thread
// only the additions. The sums stay sequential, as the host's, rather than parallel reductions
// that would not reproduce its rounding: GPU = CPU rests on it.
//
// Built with -fmad=false (baseband/rx/CMakeLists.txt): no multiply-add contraction, as on
// the host (x86-64 without FMA).
#include "gpu_locate.hpp"
#include "gpu_locate_steps.cuh"

#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/sync.hpp>
#include <whd/baseband/tone_math.hpp>
#include <whd/fft/fft512_device.cuh>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>

namespace whd::baseband::gpu {

namespace {

using namespace locate_steps;

// ---------------------------------------------------------------- the kernel

/// Candidate c, by the whole block, through the steps of gpu_locate_steps.cuh.
__device__ __forceinline__ void locate_one(const locate_args& a, const uint32_t c, shared_mem& sm)
{
  if (!fine_timing_step(a, c, sm)) {
    return;
  }
  const uint64_t start = sm.d.start;
  const uint64_t fft0 = sm.d.fft0;
  const double cfo = fine_cfo_step(a, start, fft0, sm);
  transform_step(sm);
  if (!header_step(a, c, start, fft0, cfo, sm)) {
    return;
  }
  header_channel_step(a, c, sm);
  frame_params_step(a, c, start, fft0, cfo, sm);
}

/// The candidates of a run, a block at a time: as many blocks as stay resident
/// (the count is known on the device only), each taking every gridDim.x-th candidate.
__global__ void __launch_bounds__(THREADS) locate_kernel(const locate_args a)
{
  __shared__ shared_mem sm;
  const uint32_t n = min(*a.count, a.max_candidates);
  for (uint32_t c = blockIdx.x; c < n; c += gridDim.x) {
    locate_one(a, c, sm);
    __syncthreads(); // the next candidate's first writes after this one's last reads
  }
}

/// The kernel's grid: the blocks that stay resident on the current device at once
/// (a grid of one block per candidate slot costs a wave of empty blocks per few
/// hundred slots: the count is on the device).
void launch_locate(const locate_args& a, cudaStream_t stream)
{
  if (a.max_candidates == 0) {
    return;
  }
  static const unsigned resident = [] {
    int dev = 0, sms = 0, per_sm = 0;
    WHD_CUDA_CHECK(cudaGetDevice(&dev));
    WHD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    WHD_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, locate_kernel, THREADS, 0));
    return unsigned(std::max(1, sms * per_sm));
  }();
  locate_kernel<<<dim3(unsigned(std::min<std::size_t>(a.max_candidates, resident))), dim3(THREADS), 0, stream>>>(a);
  WHD_CUDA_CHECK_LAUNCH();
}

} // namespace

candidate_locator::candidate_locator(const rx_config& cfg, std::size_t max_candidates) : cfg_(cfg), body_energy_(0.0), nof_taps_(0), min_taps_(0)
{
  if (max_candidates == 0 || max_candidates > std::size_t(std::numeric_limits<int32_t>::max())) {
    throw std::invalid_argument("candidate_locator: max_candidates must be 1 .. 2^31 - 1");
  }
  // The preamble body and its energy, summed as synchronize sums it.
  const auto& x = preamble_body();
  std::vector<float2> body(x.size());
  for (std::size_t n = 0; n < x.size(); ++n) {
    body[n] = make_float2(x[n].real(), x[n].imag());
    body_energy_ += std::norm(x[n]);
  }
  body_ = cuda::device_buffer<float2>(body.size());
  WHD_CUDA_CHECK(cudaMemcpy(body_.data(), body.data(), body_.size_bytes(), cudaMemcpyHostToDevice));
  // The smoother the host locator builds (throws on a bad tap count, as the host does).
  if (const auto sm = make_channel_smoother(cfg); sm != nullptr) {
    const auto& q = sm->basis();
    static_assert(sizeof(std::complex<double>) == sizeof(double2));
    std::vector<double2> basis(q.size());
    std::memcpy(basis.data(), q.data(), q.size() * sizeof(double2));
    nof_taps_ = sm->nof_taps();
    min_taps_ = sm->min_taps();
    basis_ = cuda::device_buffer<double2>(basis.size());
    WHD_CUDA_CHECK(cudaMemcpy(basis_.data(), basis.data(), basis_.size_bytes(), cudaMemcpyHostToDevice));
  }
  located_ = cuda::device_buffer<located_candidate>(max_candidates);
  params_ = cuda::device_buffer<frame_params>(max_candidates);
}

candidate_locator::~candidate_locator() = default;

uint64_t candidate_locator::lookback() const noexcept
{
  // The lag window opens at coarse + G - 2G; fft0 may lie timing_backoff before it.
  return uint64_t(SEARCH - G) + uint64_t(std::max(0, cfg_.timing_backoff));
}

uint64_t candidate_locator::lookahead() const noexcept
{
  // The lag window ends at coarse + G + 2G + N; the header window at fft0 + 2L + N,
  // with fft0 at most the last lag, coarse + G + 2G, less timing_backoff.
  const int64_t last_lag = G + SEARCH;
  return uint64_t(std::max<int64_t>(last_lag + N, last_lag - cfg_.timing_backoff + HEAD));
}

void candidate_locator::run(const float2* d_samples, uint64_t first, std::size_t nof, uint64_t total, const sync_candidate* d_cands,
                            const uint32_t* d_count, cudaStream_t stream)
{
  if (first > total || nof > total - first) {
    throw std::invalid_argument("candidate_locator::run: the chunk reaches past the capture (first + nof > total)");
  }
  if ((d_samples == nullptr && nof > 0) || d_cands == nullptr || d_count == nullptr) {
    throw std::invalid_argument("candidate_locator::run: null device pointer");
  }
  locate_args a{};
  a.samples = d_samples;
  a.first = first;
  a.nof = nof;
  a.total = total;
  a.cands = d_cands;
  a.count = d_count;
  a.max_candidates = uint32_t(max_candidates());
  a.body = body_.data();
  a.basis = basis_.data();
  a.nof_taps = nof_taps_;
  a.min_taps = min_taps_;
  a.body_energy = body_energy_;
  a.validate_threshold = cfg_.validate_threshold;
  a.first_path_fraction = cfg_.first_path_fraction;
  a.timing_backoff = cfg_.timing_backoff;
  a.out = located_.data();
  a.params = params_.data();
  launch_locate(a, stream);
}

} // namespace whd::baseband::gpu
