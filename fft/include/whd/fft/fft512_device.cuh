/// @file fft512_device.cuh
/// The 512-point transform as a device function, for kernels that hold the samples in
/// registers already (the fused receiver) and for the batched kernel.
///
/// Contract: 64 threads cooperate on one transform; thread t (0..63) holds
/// `float2 v[8]` with v[j] = x[A::input_index(t, j)] (= x[t + 64 j]). After
/// fft512_forward<A> it holds v[j] = Y[A::output_bin(t, j)] with
/// Y[b] = sum_n x[n] exp(-2 pi i b n / 512) (unnormalised, as FFTW's forward);
/// fft512_inverse<A> computes sum_n x[n] exp(+2 pi i b n / 512) (unnormalised:
/// inverse(forward(x)) = 512 x). The 64 threads must call it together, with the same
/// scratch, and are two whole warps ([64 k, 64 k + 64) of the block) for the shuffle
/// variants.
///
/// Scratch: scratch_float2<A, X>() float2 (at most 576, 4608 bytes) of shared memory per
/// transform, 8-byte aligned. It is written first, so a caller that reuses it for another
/// transform must put a barrier between the last call and the next.
#pragma once

#include <whd/fft/fft512_structure.hpp>

namespace whd::fft {

/// How the shuffle variants (exchange::shfl) do their second exchange, the 8x8
/// transpose inside groups of 8 lanes.
enum class lane_transpose : std::uint8_t {
  /// Warp shuffles: no scratch beyond A::SCRATCH_FLOAT2; about 100 instructions a warp
  /// (24 shuffles and their selects).
  shuffles,
  /// Through the warp's own rows of the scratch (detail::warp_xpose) with __syncwarp:
  /// about 20 instructions a warp, for a scratch of 576 float2. Stockham only.
  warp_rows,
};

/// Shared-memory scratch of one transform of algorithm A with transpose X, in float2.
template <class A, lane_transpose X = lane_transpose::shuffles>
__host__ __device__ constexpr int scratch_float2()
{
  const bool rows = A::EXCHANGE == exchange::shfl && X == lane_transpose::warp_rows;
  return rows && detail::warp_xpose::SCRATCH > A::SCRATCH_FLOAT2 ? detail::warp_xpose::SCRATCH : A::SCRATCH_FLOAT2;
}

/// The default algorithm for kernels that fuse the transform: Stockham, shared-memory
/// exchanges, table twiddles (the batched default for cf32; see fft512_variant for
/// measured choices).
using fft512_default_algo = fft512_algo<ordering::stockham, exchange::smem, twiddle::table>;

/// Barrier over the whole block (__syncthreads): every thread of the block must call
/// the transform at the same point.
struct block_sync {
  __device__ void operator()() const { __syncthreads(); }
};

/// Barrier over the 64 threads of one transform only: hardware barrier `id` (1..15;
/// 0 is __syncthreads') with a count of 64. Use it when other warps of the block are
/// elsewhere; each concurrently running transform of a block needs its own id.
struct transform_sync {
  int id;
  __device__ void operator()() const { asm volatile("bar.sync %0, 64;" ::"r"(id) : "memory"); }
};

namespace detail {

/// The device copy of the twiddle table (one per translation unit, so no relocatable
/// device code is needed to use this header).
static __device__ const twiddle_table D_TWIDDLES = make_twiddle_table();

/// The device's twiddle source: table reads through the read-only cache, and W512^e
/// from sincospif (at most 1 ulp, CUDA math API).
struct device_twiddle_source {
  __device__ static const float2* table() { return D_TWIDDLES.w; }
  __device__ static float2 load(const float2* p) { return __ldg(p); }
  __device__ static float2 exact(int e)
  {
    float s = 0.0f, c = 0.0f;
    sincospif(static_cast<float>(e) * (1.0f / 256.0f), &s, &c);
    return make_cf(c, -s);
  }
};

/// The 8x8 transpose inside groups of 8 lanes (see xpose_send), by warp shuffles.
__device__ __forceinline__ void transpose8_shfl(float2 (&v)[8], int lane)
{
  WHD_UNROLL
  for (int k = 4; k > 0; k >>= 1) {
    WHD_UNROLL
    for (int j = 0; j < 8; ++j) {
      if ((j & k) == 0) {
        const float2 s = xpose_send(v, lane, k, j);
        float2 r;
        r.x = __shfl_xor_sync(0xffffffffu, s.x, k);
        r.y = __shfl_xor_sync(0xffffffffu, s.y, k);
        xpose_recv(v, lane, k, j, r);
      }
    }
  }
}

/// One transform's half of a shared-memory exchange X: its 8 values written to the
/// scratch at X's places (exchange_write), or read back from them (exchange_read).
/// A barrier between the two is the caller's.
template <class X>
__device__ __forceinline__ void exchange_write(const float2 (&v)[8], int t, float2* scratch)
{
  float2* w = scratch + X::write_base(t);
  WHD_UNROLL
  for (int j = 0; j < 8; ++j) {
    w[X::write_offset(j)] = v[j];
  }
}

template <class X>
__device__ __forceinline__ void exchange_read(float2 (&v)[8], int t, const float2* scratch)
{
  const float2* r = scratch + X::read_base(t);
  WHD_UNROLL
  for (int j = 0; j < 8; ++j) {
    v[j] = r[X::read_offset(j)];
  }
}

/// The same transpose through the warp's own rows of the scratch (warp_xpose).
__device__ __forceinline__ void transpose8_warp_rows(float2 (&v)[8], int t, float2* scratch)
{
  __syncwarp(); // the warp's reads of the first exchange are done before its rows change
  exchange_write<warp_xpose>(v, t, scratch);
  __syncwarp();
  exchange_read<warp_xpose>(v, t, scratch);
}

/// The forward transform; the sequence mirrors host_emulate (fft512_structure.hpp).
template <class A, lane_transpose XP, class Sync>
__device__ __forceinline__ void fft512_run(float2 (&v)[8], int t, float2* scratch, Sync sync)
{
  using TW = twiddles<A::TWIDDLE, device_twiddle_source>;
  using X1 = typename A::x1;
  using X2 = typename A::x2;
  A::template pass1<TW>(v, t);
  exchange_write<X1>(v, t, scratch);
  sync();
  exchange_read<X1>(v, t, scratch);
  A::template pass2<TW>(v, t);
  if constexpr (A::EXCHANGE == exchange::smem) {
    sync(); // every read of the first exchange is done before the scratch is reused
    exchange_write<X2>(v, t, scratch);
    sync();
    exchange_read<X2>(v, t, scratch);
  } else if constexpr (XP == lane_transpose::warp_rows) {
    static_assert(x1_reads_stay_in_warp_rows<X1>(), "warp rows need a first exchange whose reads stay in each warp's rows");
    transpose8_warp_rows(v, t, scratch);
  } else {
    transpose8_shfl(v, t & 7);
  }
  A::template pass3<TW>(v, t);
}

/// One shared-memory exchange of K transforms (transform k at scratch + k * stride):
/// every transform is written, one barrier, every transform is read back.
template <class X, int K, class Sync>
__device__ __forceinline__ void exchange_many(float2 (&v)[K][8], int t, float2* scratch, int stride, Sync sync)
{
  WHD_UNROLL
  for (int k = 0; k < K; ++k) {
    exchange_write<X>(v[k], t, scratch + k * stride);
  }
  sync();
  WHD_UNROLL
  for (int k = 0; k < K; ++k) {
    exchange_read<X>(v[k], t, scratch + k * stride);
  }
}

/// One radix-8 step of K transforms with shared twiddles: each transform's eight
/// values through dft8, then value j times w[j].
template <int K>
__device__ __forceinline__ void dft8_twiddle_many(float2 (&v)[K][8], const float2 (&w)[8])
{
  WHD_UNROLL
  for (int k = 0; k < K; ++k) {
    dft8(v[k]);
    WHD_UNROLL
    for (int j = 1; j < 8; ++j) {
      v[k][j] = cmul(v[k][j], w[j]);
    }
  }
}

/// K transforms at once by the same 64 threads (Stockham only): the twiddles are read
/// once for all K, and one barrier serves all K first exchanges. Transform k uses
/// scratch + k * stride. Each step's arithmetic is pass1/pass2/pass3's, so every
/// transform's result is bit-identical to fft512_run's.
template <class A, lane_transpose XP, class Sync, int K>
__device__ __forceinline__ void fft512_run_many(float2 (&v)[K][8], int t, float2* scratch, int stride, Sync sync)
{
  static_assert(A::ORDER == ordering::stockham, "the shared twiddles are Stockham's");
  using TW = twiddles<A::TWIDDLE, device_twiddle_source>;
  using X1 = typename A::x1;
  using X2 = typename A::x2;
  {
    float2 w[8];
    TW::stockham1(t, w);
    dft8_twiddle_many(v, w);
  }
  exchange_many<X1>(v, t, scratch, stride, sync);
  {
    float2 w[8];
    TW::stockham2(t & 7, w);
    dft8_twiddle_many(v, w);
  }
  if constexpr (A::EXCHANGE == exchange::smem) {
    sync(); // every transform's first exchange is read before the scratch is written again
    exchange_many<X2>(v, t, scratch, stride, sync);
  } else if constexpr (XP == lane_transpose::warp_rows) {
    static_assert(x1_reads_stay_in_warp_rows<X1>(), "warp rows need a first exchange whose reads stay in each warp's rows");
    WHD_UNROLL
    for (int k = 0; k < K; ++k) {
      transpose8_warp_rows(v[k], t, scratch + k * stride);
    }
  } else {
    WHD_UNROLL
    for (int k = 0; k < K; ++k) {
      transpose8_shfl(v[k], t & 7);
    }
  }
  WHD_UNROLL
  for (int k = 0; k < K; ++k) {
    dft8(v[k]);
  }
}

} // namespace detail

/// K forward transforms by the same 64 threads (Stockham algorithms): v[k] as in
/// fft512_forward, transform k with the scratch at scratch + k * stride (stride >=
/// scratch_float2<A, X>()). One barrier and one set of twiddle reads serve all K; the
/// results are bit-identical to K calls of fft512_forward.
template <class A, int K, class Sync = block_sync, lane_transpose X = lane_transpose::shuffles>
__device__ __forceinline__ void fft512_forward_many(float2 (&v)[K][8], int t, float2* scratch, int stride, Sync sync = {})
{
  detail::fft512_run_many<A, X>(v, t, scratch, stride, sync);
}

/// Forward 512-point transform of the values in registers (see the file comment).
/// @param[in,out] v        this thread's 8 values: x[A::input_index(t, j)] in,
///                         Y[A::output_bin(t, j)] out
/// @param[in]     t        this thread's index in the transform, 0..63
/// @param[in]     scratch  the transform's shared memory, scratch_float2<A, X>() float2
/// @param[in]     sync     the barrier over the transform's threads
template <class A = fft512_default_algo, class Sync = block_sync, lane_transpose X = lane_transpose::shuffles>
__device__ __forceinline__ void fft512_forward(float2 (&v)[8], int t, float2* scratch, Sync sync = {})
{
  detail::fft512_run<A, X>(v, t, scratch, sync);
}

/// Inverse (unnormalised) transform, conj(forward(conj(x))): same index maps as the
/// forward one (v[j] = X[A::input_index(t, j)] in, x[A::output_bin(t, j)] out).
template <class A = fft512_default_algo, class Sync = block_sync, lane_transpose X = lane_transpose::shuffles>
__device__ __forceinline__ void fft512_inverse(float2 (&v)[8], int t, float2* scratch, Sync sync = {})
{
  WHD_UNROLL
  for (int j = 0; j < 8; ++j) {
    v[j] = detail::conj(v[j]);
  }
  detail::fft512_run<A, X>(v, t, scratch, sync);
  WHD_UNROLL
  for (int j = 0; j < 8; ++j) {
    v[j] = detail::conj(v[j]);
  }
}

} // namespace whd::fft
