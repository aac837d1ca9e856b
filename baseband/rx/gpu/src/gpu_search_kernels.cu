// Frame search on the GPU (gpu_search.hpp): the kernels and their host launchers.
// Built with -fmad=false (baseband/CMakeLists.txt); the double arithmetic that
// decides M also goes through the _rn intrinsics, which are never contracted, so the
// metric does not depend on that flag.
#include "gpu_search.hpp"

#include <cuda_fp16.h>

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace whd::baseband::gpu {

namespace {

constexpr int L = profile::SYMBOL_LEN; ///< lag between the two windows
constexpr int W = profile::N;          ///< window length
constexpr unsigned FULL = 0xFFFFFFFFu;
constexpr double TWO_PI_L = 2.0 * std::numbers::pi * double(L);

// ---------------------------------------------------------------- metric kernel

/// Threads of a metric block.
constexpr int THREADS = 256;
constexpr int NOF_WARPS = THREADS / 32;
/// Positions of a metric block. A multiple of 32, so that each warp's 32 positions
/// are one word of the crossing bitmask.
constexpr int TILE = 2048;
/// Samples the tile's positions read: each position's two windows.
constexpr int SPAN = TILE + L + W - 1;
/// Entries of the tile's prefix sums of P terms: Q[0 .. TILE + W - 1].
constexpr int Q_LEN = TILE + W;
/// Consecutive tile samples each thread sums in the scan. Odd, so that the threads of
/// a half-warp read 8-byte elements ITEMS apart from 16 different bank pairs.
constexpr int ITEMS = 13;
static_assert(ITEMS * THREADS >= SPAN && ITEMS % 2 == 1);
static_assert(TILE % THREADS == 0 && THREADS % 32 == 0 && TILE % 32 == 0);

/// A metric block's shared memory (dynamic: 91 KB).
struct metric_smem {
  float2 s[SPAN];            ///< the tile's samples
  double e[SPAN + 1];        ///< e[j] = sum_{i<j} |s[i]|^2
  double q_re[Q_LEN];        ///< q[j] = sum_{i<j} conj(s[i]) s[i + L]
  double q_im[Q_LEN];
  double warp_total[3][NOF_WARPS];
};

/// The terms of tile sample i: conj(s[i]) s[i + L] (0 where s[i + L] is past the
/// tile) and |s[i]|^2; all 0 past the tile. Products of two floats are exact in
/// double; for integer samples the sums are too.
__device__ __forceinline__ void lag_terms(const metric_smem& sm, int i, double& t_re, double& t_im, double& t_e)
{
  t_re = t_im = t_e = 0.0;
  if (i >= SPAN) {
    return;
  }
  const double ar = sm.s[i].x, ai = sm.s[i].y;
  t_e = __dadd_rn(__dmul_rn(ar, ar), __dmul_rn(ai, ai));
  if (i + L < SPAN) {
    const double br = sm.s[i + L].x, bi = sm.s[i + L].y;
    t_re = __dadd_rn(__dmul_rn(ar, br), __dmul_rn(ai, bi));
    t_im = __dsub_rn(__dmul_rn(ar, bi), __dmul_rn(ai, br));
  }
}

/// M from the window sums, as the definition writes it (gpu_search.hpp).
__device__ __forceinline__ double lag_metric(double pre, double pim, double r1, double r2)
{
  const double den = __dmul_rn(r1, r2);
  return den > 0.0 ? __ddiv_rn(__dadd_rn(__dmul_rn(pre, pre), __dmul_rn(pim, pim)), den) : 0.0;
}

/// M and the crossing bit of chunk positions [tile0 + b TILE, + TILE) for block b;
/// M is written for positions k in [p_lo, p_hi) only (the others' bits are 0), each of
/// whose windows lie inside the chunk's nof samples (the caller's precondition; samples
/// past nof read as 0). tile0 is a multiple of 32: a warp's positions are one word.
/// The window sums are differences of prefix sums over the tile: per-thread sums of
/// ITEMS consecutive terms, a block scan of those, then the prefixes written out.
__global__ void __launch_bounds__(THREADS, 2)
    metric_kernel(const float2* __restrict__ x, long long nof, long long tile0, long long p_lo, long long p_hi, double thr,
                  double* __restrict__ m_out, uint32_t* __restrict__ crossing)
{
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto& sm = *reinterpret_cast<metric_smem*>(smem_raw);
  const int tid = int(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  const long long k0 = tile0 + static_cast<long long>(blockIdx.x) * TILE;

  for (int i = tid; i < SPAN; i += THREADS) {
    const long long k = k0 + i;
    sm.s[i] = k < nof ? x[k] : make_float2(0.0f, 0.0f);
  }
  __syncthreads();

  // This thread's terms i0 .. i0 + ITEMS - 1: their sums, then the block's
  // exclusive scan of the sums.
  const int i0 = tid * ITEMS;
  double sum_re = 0.0, sum_im = 0.0, sum_e = 0.0;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    double t_re, t_im, t_e;
    lag_terms(sm, i0 + j, t_re, t_im, t_e);
    sum_re = __dadd_rn(sum_re, t_re);
    sum_im = __dadd_rn(sum_im, t_im);
    sum_e = __dadd_rn(sum_e, t_e);
  }
  double inc_re = sum_re, inc_im = sum_im, inc_e = sum_e; // inclusive within the warp
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const double u_re = __shfl_up_sync(FULL, inc_re, d);
    const double u_im = __shfl_up_sync(FULL, inc_im, d);
    const double u_e = __shfl_up_sync(FULL, inc_e, d);
    if (lane >= d) {
      inc_re = __dadd_rn(inc_re, u_re);
      inc_im = __dadd_rn(inc_im, u_im);
      inc_e = __dadd_rn(inc_e, u_e);
    }
  }
  double run_re = __shfl_up_sync(FULL, inc_re, 1);
  double run_im = __shfl_up_sync(FULL, inc_im, 1);
  double run_e = __shfl_up_sync(FULL, inc_e, 1);
  if (lane == 0) {
    run_re = run_im = run_e = 0.0;
  }
  if (lane == 31) {
    sm.warp_total[0][warp] = inc_re;
    sm.warp_total[1][warp] = inc_im;
    sm.warp_total[2][warp] = inc_e;
  }
  __syncthreads();
  for (int w = 0; w < warp; ++w) {
    run_re = __dadd_rn(run_re, sm.warp_total[0][w]);
    run_im = __dadd_rn(run_im, sm.warp_total[1][w]);
    run_e = __dadd_rn(run_e, sm.warp_total[2][w]);
  }
  if (tid == 0) {
    sm.e[0] = sm.q_re[0] = sm.q_im[0] = 0.0;
  }
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const int i = i0 + j;
    double t_re, t_im, t_e;
    lag_terms(sm, i, t_re, t_im, t_e);
    run_re = __dadd_rn(run_re, t_re);
    run_im = __dadd_rn(run_im, t_im);
    run_e = __dadd_rn(run_e, t_e);
    if (i < SPAN) {
      sm.e[i + 1] = run_e;
    }
    if (i + 1 < Q_LEN) {
      sm.q_re[i + 1] = run_re;
      sm.q_im[i + 1] = run_im;
    }
  }
  __syncthreads();

#pragma unroll 2
  for (int j = 0; j < TILE / THREADS; ++j) {
    const int n = j * THREADS + tid;
    const long long k = k0 + n;
    bool cross = false;
    if (k >= p_lo && k < p_hi) {
      const double pre = __dsub_rn(sm.q_re[n + W], sm.q_re[n]);
      const double pim = __dsub_rn(sm.q_im[n + W], sm.q_im[n]);
      const double r1 = __dsub_rn(sm.e[n + W], sm.e[n]);
      const double r2 = __dsub_rn(sm.e[n + L + W], sm.e[n + L]);
      const double m = lag_metric(pre, pim, r1, r2);
      m_out[k] = m;
      cross = m > thr;
    }
    const uint32_t bits = __ballot_sync(FULL, cross);
    if (lane == 0) {
      crossing[k >> 5] = bits; // k is lane 0's position: a multiple of 32
    }
  }
}

// ---------------------------------------------------------------- candidates

/// Whether every crossing bit of chunk positions [a, b] is set.
__device__ bool all_crossing(const uint32_t* crossing, long long a, long long b)
{
  for (long long w = a >> 5; w <= (b >> 5); ++w) {
    const int lo = w == (a >> 5) ? int(a & 31) : 0;
    const int hi = w == (b >> 5) ? int(b & 31) : 31; // inclusive
    const uint32_t want = (hi == 31 ? FULL : ((1u << (hi + 1)) - 1u)) & ~((1u << lo) - 1u);
    if ((crossing[w] & want) != want) {
      return false;
    }
  }
  return true;
}

/// Candidate bits of crossing word w_lo + t (thread t) restricted to chunk positions
/// [s_lo, s_hi), and their count. Bit b of word w is chunk position 32 w + b, capture
/// index first + 32 w + b. Reads the crossing words of positions [s_lo - L - 1, s_hi).
__global__ void __launch_bounds__(THREADS)
    candidate_mask_kernel(const uint32_t* __restrict__ crossing, unsigned long long first, long long s_lo, long long s_hi,
                          long long w_lo, int nof_words, uint32_t* __restrict__ cand_mask, uint32_t* __restrict__ cand_count)
{
  const int t = int(blockIdx.x) * THREADS + int(threadIdx.x);
  if (t >= nof_words) {
    return;
  }
  const long long w = w_lo + t;
  const uint32_t x = crossing[w];
  // Word 0 has no word before it: chunk position 0 is capture index 0 (an edge when
  // it crosses) or lies before the search range.
  const uint32_t before = w > 0 ? crossing[w - 1] >> 31 : 0u;
  uint32_t cand = x & ~((x << 1) | before); // edges: crossing, the position before not
  // A grid point: at most one per word, as L > 32.
  const unsigned long long g0 = first + 32ull * static_cast<unsigned long long>(w);
  const unsigned long long c = (g0 + L - 1) / L * L;
  if (c >= static_cast<unsigned long long>(L) && c < g0 + 32) {
    const int b = int(c - g0);
    const long long k = 32 * w + b;
    if (((x >> b) & 1u) != 0 && k >= L && all_crossing(crossing, k - L, k)) {
      cand |= 1u << b;
    }
  }
  const long long lo = std::max(s_lo - 32 * w, 0ll);  // 0 .. 31
  const long long hi = std::min(s_hi - 32 * w, 32ll); // 1 .. 32
  const uint32_t range = (hi == 32 ? FULL : ((1u << hi) - 1u)) & ~((1u << lo) - 1u);
  cand &= range;
  cand_mask[t] = cand;
  cand_count[t] = uint32_t(__popc(cand));
}

/// Writes the window of each candidate at its rank (cand_offset: exclusive prefix sum
/// of the counts), those of rank < max_candidates; the last word's thread writes the count.
__global__ void __launch_bounds__(THREADS)
    scatter_kernel(const uint32_t* __restrict__ cand_mask, const uint32_t* __restrict__ cand_offset, int nof_words,
                   unsigned long long first, long long w_lo, uint32_t max_candidates, sync_candidate* __restrict__ out,
                   search_count* __restrict__ count)
{
  const int t = int(blockIdx.x) * THREADS + int(threadIdx.x);
  if (t >= nof_words) {
    return;
  }
  uint32_t bits = cand_mask[t];
  uint32_t o = cand_offset[t];
  if (t == nof_words - 1) {
    const unsigned long long found = static_cast<unsigned long long>(o) + unsigned(__popc(bits));
    count->nof_candidates = uint32_t(std::min<unsigned long long>(found, max_candidates));
    count->overflow = found > max_candidates ? 1u : 0u;
    count->nof_found = found;
  }
  const unsigned long long g0 = first + 32ull * static_cast<unsigned long long>(w_lo + t);
  for (; bits != 0 && o < max_candidates; ++o) {
    const int b = __ffs(int(bits)) - 1;
    bits &= bits - 1u;
    out[o].window = g0 + unsigned(b);
  }
}

/// Warps of a refinement block.
constexpr int REFINE_THREADS = 256;
/// Refinement blocks at most (each warp loops over candidates).
constexpr int MAX_REFINE_BLOCKS = 1024;

/// Per candidate (one warp each): coarse, the first argmax of M over [c, min(c + L,
/// npos)); its metric; its CFO from a direct sum of P at coarse. The windows of
/// count->nof_candidates candidates are in `out`.
__global__ void __launch_bounds__(REFINE_THREADS)
    refine_kernel(const float2* __restrict__ x, const double* __restrict__ m, unsigned long long first,
                  unsigned long long npos, const search_count* __restrict__ count, sync_candidate* __restrict__ out)
{
  const int lane = int(threadIdx.x) & 31;
  const unsigned nof = count->nof_candidates;
  const unsigned warps = gridDim.x * (REFINE_THREADS / 32);
  for (unsigned i = (blockIdx.x * REFINE_THREADS + threadIdx.x) / 32; i < nof; i += warps) {
    const unsigned long long c = out[i].window;
    const long long k = static_cast<long long>(c - first);
    const long long end = static_cast<long long>(std::min(c + L, npos) - first);
    double best = -1.0; // M >= 0: lane 0 always holds a position (c < npos)
    long long best_k = k;
    for (long long j = k + lane; j < end; j += 32) {
      const double v = m[j];
      if (v > best) {
        best = v;
        best_k = j;
      }
    }
    // (value, -index) is a total order: the tree keeps the first maximum.
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
      const double ov = __shfl_down_sync(FULL, best, d);
      const long long ok = __shfl_down_sync(FULL, best_k, d);
      if (ov > best || (ov == best && ok < best_k)) {
        best = ov;
        best_k = ok;
      }
    }
    best = __shfl_sync(FULL, best, 0);
    best_k = __shfl_sync(FULL, best_k, 0);
    double pre = 0.0, pim = 0.0;
    for (int j = lane; j < W; j += 32) {
      const float2 a = x[best_k + j], b = x[best_k + j + L];
      const double ar = a.x, ai = a.y, br = b.x, bi = b.y;
      pre = __dadd_rn(pre, __dadd_rn(__dmul_rn(ar, br), __dmul_rn(ai, bi)));
      pim = __dadd_rn(pim, __dsub_rn(__dmul_rn(ar, bi), __dmul_rn(ai, br)));
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
      pre = __dadd_rn(pre, __shfl_xor_sync(FULL, pre, d));
      pim = __dadd_rn(pim, __shfl_xor_sync(FULL, pim, d));
    }
    if (lane == 0) {
      out[i].coarse = first + static_cast<unsigned long long>(best_k);
      out[i].metric = float(best);
      out[i].cfo_cps = __ddiv_rn(atan2(pim, pre), TWO_PI_L);
    }
  }
}

// ---------------------------------------------------------------- conversion

/// Samples converted per thread block and grid-stride step.
constexpr int CONVERT_THREADS = 256;
constexpr long long MAX_CONVERT_BLOCKS = 4096;

__device__ __forceinline__ float2 to_float2(char2 v, unsigned&) { return make_float2(float(v.x), float(v.y)); }
__device__ __forceinline__ float2 to_float2(short2 v, unsigned&) { return make_float2(float(v.x), float(v.y)); }
__device__ __forceinline__ float2 to_float2(float2 v, unsigned& nof_bad)
{
  if (!isfinite(v.x) || !isfinite(v.y)) {
    ++nof_bad;
    return make_float2(0.0f, 0.0f);
  }
  return v;
}

template <typename T>
__global__ void __launch_bounds__(CONVERT_THREADS)
    convert_kernel(const T* __restrict__ in, long long nof, float2* __restrict__ out, unsigned long long* nof_non_finite)
{
  unsigned nof_bad = 0;
  const long long stride = static_cast<long long>(gridDim.x) * CONVERT_THREADS;
  for (long long i = static_cast<long long>(blockIdx.x) * CONVERT_THREADS + threadIdx.x; i < nof; i += stride) {
    out[i] = to_float2(in[i], nof_bad);
  }
  nof_bad = __reduce_add_sync(FULL, nof_bad);
  if (nof_non_finite != nullptr && (threadIdx.x & 31) == 0 && nof_bad != 0) {
    atomicAdd(nof_non_finite, static_cast<unsigned long long>(nof_bad));
  }
}

template <typename T>
void launch_convert(const std::byte* d_raw, std::size_t nof, float2* d_out, unsigned long long* d_nof_non_finite,
                    cudaStream_t stream)
{
  if (reinterpret_cast<std::uintptr_t>(d_raw) % sizeof(T) != 0) {
    throw std::invalid_argument("convert_to_float2: the samples are not aligned to their size");
  }
  const auto blocks = static_cast<unsigned>(
      std::min<long long>(MAX_CONVERT_BLOCKS, (static_cast<long long>(nof) + CONVERT_THREADS - 1) / CONVERT_THREADS));
  convert_kernel<T><<<blocks, CONVERT_THREADS, 0, stream>>>(reinterpret_cast<const T*>(d_raw), static_cast<long long>(nof),
                                                            d_out, d_nof_non_finite);
  WHD_CUDA_CHECK_LAUNCH();
}

__device__ __forceinline__ float2 unpack(__half2 v, float scale)
{
  const float2 f = __half22float2(v);
  return make_float2(f.x * scale, f.y * scale);
}
__device__ __forceinline__ float2 unpack(char2 v, float scale)
{
  return v.x == -128 ? make_float2(__int_as_float(0x7fc00000), __int_as_float(0x7fc00000))
                     : make_float2(float(v.x) * scale, float(v.y) * scale);
}

template <typename T>
__global__ void __launch_bounds__(CONVERT_THREADS) unpack_link_kernel(const T* __restrict__ in, const float* __restrict__ scales,
                                                                      long long nof, float2* __restrict__ stored,
                                                                      float2* __restrict__ zeroed)
{
  const long long stride = static_cast<long long>(gridDim.x) * CONVERT_THREADS;
  for (long long i = static_cast<long long>(blockIdx.x) * CONVERT_THREADS + threadIdx.x; i < nof; i += stride) {
    const float2 v = unpack(in[i], scales[i / static_cast<long long>(transport::RUN_SCALE_BLOCK)]);
    stored[i] = v;
    zeroed[i] = isfinite(v.x) && isfinite(v.y) ? v : make_float2(0.0f, 0.0f);
  }
}

template <typename T>
void launch_unpack(const std::byte* d_link, const float* d_scales, std::size_t nof, float2* d_stored, float2* d_zeroed,
                   cudaStream_t stream)
{
  if (reinterpret_cast<std::uintptr_t>(d_link) % sizeof(T) != 0) {
    throw std::invalid_argument("unpack_link_run: the samples are not aligned to their size");
  }
  const auto blocks = static_cast<unsigned>(
      std::min<long long>(MAX_CONVERT_BLOCKS, (static_cast<long long>(nof) + CONVERT_THREADS - 1) / CONVERT_THREADS));
  unpack_link_kernel<T><<<blocks, CONVERT_THREADS, 0, stream>>>(reinterpret_cast<const T*>(d_link), d_scales,
                                                                static_cast<long long>(nof), d_stored, d_zeroed);
  WHD_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- launchers

/// Crossing words of a chunk of `samples` samples: those of the metric kernel's
/// whole tiles.
std::size_t crossing_words(std::size_t samples) { return (samples + TILE) / 32 + 2; }
/// Candidate words of a search range inside a chunk of `samples` samples.
std::size_t candidate_words(std::size_t samples) { return samples / 32 + 2; }

void launch_metric(const float2* x, long long nof, long long p_lo, long long p_hi, float thr, double* m, uint32_t* crossing,
                   cudaStream_t stream)
{
  const long long tile0 = p_lo / 32 * 32;
  const auto blocks = static_cast<unsigned>((p_hi - tile0 + TILE - 1) / TILE);
  metric_kernel<<<blocks, THREADS, sizeof(metric_smem), stream>>>(x, nof, tile0, p_lo, p_hi, double(thr), m, crossing);
  WHD_CUDA_CHECK_LAUNCH();
}

} // namespace

void convert_to_float2(const std::byte* d_raw, datatype type, std::size_t nof, float2* d_out,
                       unsigned long long* d_nof_non_finite, cudaStream_t stream)
{
  if (nof == 0) {
    return;
  }
  if (d_raw == nullptr || d_out == nullptr) {
    throw std::invalid_argument("convert_to_float2: null buffer");
  }
  switch (type) {
  case datatype::ci8: launch_convert<char2>(d_raw, nof, d_out, d_nof_non_finite, stream); return;
  case datatype::ci16_le: launch_convert<short2>(d_raw, nof, d_out, d_nof_non_finite, stream); return;
  case datatype::cf32_le: launch_convert<float2>(d_raw, nof, d_out, d_nof_non_finite, stream); return;
  }
  throw std::invalid_argument("convert_to_float2: unknown datatype");
}

void unpack_link_run(const std::byte* d_link, const float* d_scales, transport::link_format fmt, std::size_t nof, float2* d_stored,
                     float2* d_zeroed, cudaStream_t stream)
{
  if (nof == 0) {
    return;
  }
  if (d_link == nullptr || d_scales == nullptr || d_stored == nullptr || d_zeroed == nullptr) {
    throw std::invalid_argument("unpack_link_run: null buffer");
  }
  switch (fmt) {
  case transport::link_format::half: launch_unpack<__half2>(d_link, d_scales, nof, d_stored, d_zeroed, stream); return;
  case transport::link_format::int8: launch_unpack<char2>(d_link, d_scales, nof, d_stored, d_zeroed, stream); return;
  case transport::link_format::f32: break;
  }
  throw std::invalid_argument("unpack_link_run: f32 is not a packing");
}

candidate_search::candidate_search(std::size_t max_chunk_samples, std::size_t max_candidates, float detect_threshold)
    : max_chunk_(max_chunk_samples), threshold_(detect_threshold)
{
  if (max_chunk_samples == 0 || max_chunk_samples > (std::size_t(1) << 31)) {
    throw std::invalid_argument("candidate_search: max_chunk_samples must be in 1 .. 2^31, not " +
                                std::to_string(max_chunk_samples));
  }
  if (max_candidates == 0 || max_candidates > std::numeric_limits<uint32_t>::max()) {
    throw std::invalid_argument("candidate_search: max_candidates must be in 1 .. 2^32 - 1, not " +
                                std::to_string(max_candidates));
  }
  metric_ = cuda::device_buffer<double>(max_chunk_samples);
  crossing_ = cuda::device_buffer<uint32_t>(crossing_words(max_chunk_samples));
  const std::size_t words = candidate_words(max_chunk_samples);
  cand_mask_ = cuda::device_buffer<uint32_t>(words);
  cand_count_ = cuda::device_buffer<uint32_t>(words);
  cand_offset_ = cuda::device_buffer<uint32_t>(words);
  std::size_t temp_bytes = 0;
  WHD_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, cand_count_.data(), cand_offset_.data(), int(words)));
  scan_temp_ = cuda::device_buffer<std::byte>(std::max<std::size_t>(temp_bytes, 1));
  counts_ = cuda::device_buffer<search_count>(1);
  candidates_ = cuda::device_buffer<sync_candidate>(max_candidates);
  WHD_CUDA_CHECK(cudaFuncSetAttribute(metric_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sizeof(metric_smem))));
}

void candidate_search::run(const float2* d_samples, uint64_t first, std::size_t nof, uint64_t total, uint64_t search_lo,
                           uint64_t search_hi, cudaStream_t stream)
{
  constexpr auto UL = static_cast<uint64_t>(L), UW = static_cast<uint64_t>(W);
  const uint64_t npos = total >= UL + UW ? total - UL - UW + 1 : 0;
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("candidate_search::run: " + what + " (chunk [" + std::to_string(first) + ", +" +
                                std::to_string(nof) + "), total " + std::to_string(total) + ", search [" +
                                std::to_string(search_lo) + ", " + std::to_string(search_hi) + "))");
  };
  if (nof > max_chunk_) {
    fail("the chunk is longer than max_chunk_samples " + std::to_string(max_chunk_));
  }
  if (first > total || nof > total - first) {
    fail("the chunk ends past the capture");
  }
  if (search_lo > search_hi || search_hi > npos) {
    fail("the search range must satisfy search_lo <= search_hi <= npos = " + std::to_string(npos));
  }
  if (search_lo >= UL + 1 ? first > search_lo - (UL + 1) : first != 0) {
    fail("the chunk must start L + 1 samples before search_lo (or at 0)");
  }
  if (first + nof < std::min(total, search_hi + 2 * UL + UW)) {
    fail("the chunk must reach min(total, search_hi + 2 L + N)");
  }
  if (nof > 0 && d_samples == nullptr) {
    fail("null samples");
  }
  WHD_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, sizeof(search_count), stream));
  if (search_lo == search_hi) {
    return;
  }
  // Chunk positions: the search range; M over what its grid test looks back at (L
  // positions, which hold the one before an edge) and its argmaxes look ahead at
  // (L - 1 positions).
  const auto s_lo = static_cast<long long>(search_lo - first), s_hi = static_cast<long long>(search_hi - first);
  const uint64_t m_lo = search_lo >= UL ? search_lo - UL : 0;
  const uint64_t m_hi = std::min(npos, search_hi + UL - 1);
  launch_metric(d_samples, static_cast<long long>(nof), static_cast<long long>(m_lo - first),
                static_cast<long long>(m_hi - first), threshold_, metric_.data(), crossing_.data(), stream);

  const long long w_lo = s_lo / 32;
  const int nof_words = static_cast<int>((s_hi - 1) / 32 + 1 - w_lo);
  const auto word_blocks = static_cast<unsigned>((nof_words + THREADS - 1) / THREADS);
  candidate_mask_kernel<<<word_blocks, THREADS, 0, stream>>>(crossing_.data(), first, s_lo, s_hi, w_lo, nof_words,
                                                             cand_mask_.data(), cand_count_.data());
  WHD_CUDA_CHECK_LAUNCH();
  std::size_t temp_bytes = scan_temp_.size();
  WHD_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp_.data(), temp_bytes, cand_count_.data(), cand_offset_.data(),
                                               nof_words, stream));
  const auto max_candidates = static_cast<uint32_t>(candidates_.size());
  scatter_kernel<<<word_blocks, THREADS, 0, stream>>>(cand_mask_.data(), cand_offset_.data(), nof_words, first, w_lo,
                                                      max_candidates, candidates_.data(), counts_.data());
  WHD_CUDA_CHECK_LAUNCH();
  const auto refine_blocks = static_cast<unsigned>(
      std::min<std::size_t>(MAX_REFINE_BLOCKS, (candidates_.size() + REFINE_THREADS / 32 - 1) / (REFINE_THREADS / 32)));
  refine_kernel<<<refine_blocks, REFINE_THREADS, 0, stream>>>(d_samples, metric_.data(), first, npos, counts_.data(),
                                                              candidates_.data());
  WHD_CUDA_CHECK_LAUNCH();
}

void candidate_search::copy_results(search_results_host& out, cudaStream_t stream) const
{
  if (out.count.size() < 1 || out.candidates.size() < candidates_.size()) {
    throw std::invalid_argument("candidate_search::copy_results: the host buffers hold fewer than max_candidates");
  }
  WHD_CUDA_CHECK(cudaMemcpyAsync(out.count.data(), counts_.data(), sizeof(search_count), cudaMemcpyDeviceToHost, stream));
  WHD_CUDA_CHECK(cudaMemcpyAsync(out.candidates.data(), candidates_.data(), candidates_.size_bytes(),
                                 cudaMemcpyDeviceToHost, stream));
}

} // namespace whd::baseband::gpu
