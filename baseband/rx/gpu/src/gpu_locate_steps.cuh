/// @file gpu_locate_steps.cuh
/// The GPU candidate locator's steps (gpu_locate.hpp, gpu_locate_kernels.cu) as
/// device functions, each run by the whole block of THREADS threads on one
/// candidate, in order, with shared memory (shared_mem) between them:
///   1. fine_timing_step: the lag window, the cross-correlation with the preamble
///      body, the peak, the validation, the first path, start and fft0;
///   2. fine_cfo_step: the three windows from fft0 (non-finite samples counted and
///      zeroed), the fine CFO, each sample's derotation;
///   3. transform_step: one 512-point transform per window;
///   4. header_step: the channel estimate, SNR, the pilots' phase, the header;
/// then frame_params_step writes an accepted frame's parameters for the fused kernel.
/// Each step is what the host does (sync.cpp synchronize, frame_locator::locate,
/// estimate_channel, header_soft), its sums in the host's order; the file that
/// includes this one is built with -fmad=false, as the kernel is (baseband/rx/CMakeLists.txt).
/// Every branch is the same for all the block's threads (it depends on the
/// candidate and on shared memory only), so each step may be called alone by a
/// block in a small kernel (tests/baseband/gpu_locate_steps_test.cu).
#pragma once

#include "gpu_locate.hpp"

#include <whd/baseband/channel_taps.hpp>
#include "gpu_symbol_decoder.hpp"

#include <whd/baseband/profile.hpp>
#include <whd/fft/fft512_device.cuh>

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace whd::baseband::gpu::locate_steps {

namespace p = profile;

using fft_algo = fft::fft512_default_algo; ///< Stockham, shared-memory exchanges, table twiddles

constexpr int THREADS = 256;                ///< threads per candidate
constexpr int GROUP = fft_algo::THREADS;    ///< threads per transform
constexpr int NOF_WINDOWS = 3;              ///< preamble 0, preamble 1, header
constexpr int NOF_GROUPS = THREADS / GROUP;  ///< every group runs a transform (the last one's is discarded)
static_assert(NOF_WINDOWS * GROUP <= THREADS && NOF_GROUPS * GROUP == THREADS);
constexpr int N = p::N;
constexpr int G = p::G;
constexpr int L = p::SYMBOL_LEN;
constexpr int SEARCH = 2 * G;               ///< lags either side of coarse + G (synchronize)
constexpr int MAX_LAGS = 2 * SEARCH + 1;
constexpr int MAX_LAG_SAMPLES = MAX_LAGS + N - 1;
constexpr int HEAD = 2 * L + N;             ///< the three FFT windows from fft0
constexpr int SCRATCH = fft::scratch_float2<fft_algo>();
constexpr int MAX_TAPS = p::NOF_USED / 2;   ///< channel_smoother's limit
static_assert(MAX_TAPS + 2 * 32 <= THREADS, "one thread per tap, apart from warp 0");
static_assert(p::HEADER_BITS <= THREADS);
static_assert(p::NOF_USED <= 2 * THREADS);

/// The profile's tone tables as one constant-initialised block.
struct tone_tables {
  int16_t used_bin[p::NOF_USED];
  float preamble[p::NOF_USED];      ///< T[u]
  int16_t pilot_bin[p::NOF_PILOTS];
  int16_t pilot_used[p::NOF_PILOTS];
  int16_t data_bin[p::NOF_DATA];
  int16_t data_used[p::NOF_DATA];
  uint8_t data_pn[p::NOF_DATA];     ///< p[d]
  int16_t bin_used[p::N];           ///< the used tone of a data bin, -1 on every other bin
};

constexpr tone_tables make_tone_tables()
{
  tone_tables t{};
  for (int u = 0; u < p::NOF_USED; ++u) {
    t.used_bin[u] = p::USED_BIN[std::size_t(u)];
    t.preamble[u] = p::preamble_value(u);
  }
  for (int i = 0; i < p::NOF_PILOTS; ++i) {
    t.pilot_bin[i] = p::PILOT_BIN[std::size_t(i)];
    t.pilot_used[i] = p::PILOT_USED[std::size_t(i)];
  }
  for (int b = 0; b < p::N; ++b) {
    t.bin_used[b] = -1;
  }
  for (int d = 0; d < p::NOF_DATA; ++d) {
    t.data_bin[d] = p::DATA_BIN[std::size_t(d)];
    t.data_used[d] = p::DATA_USED[std::size_t(d)];
    t.data_pn[d] = uint8_t(p::pn(d));
    t.bin_used[p::DATA_BIN[std::size_t(d)]] = p::DATA_USED[std::size_t(d)];
  }
  return t;
}

/// One device copy per translation unit (no relocatable device code needed).
static __device__ const tone_tables D_TABLES = make_tone_tables();

/// Set-up and per-run arguments of the kernel.
struct locate_args {
  const float2* samples;      ///< chunk [first, first + nof)
  uint64_t first, nof, total;
  const sync_candidate* cands;
  const uint32_t* count;
  uint32_t max_candidates;
  const float2* body;         ///< N
  const double2* basis;       ///< NOF_USED x nof_taps, row-major
  int nof_taps;
  int min_taps;               ///< the fewest taps a frame keeps (channel_taps.hpp)
  double body_energy;
  float validate_threshold;
  float first_path_fraction;
  int timing_backoff;
  located_candidate* out;
  frame_params* params;
};

// ---------------------------------------------------------------- small pieces

/// 1 when I or Q is NaN or infinite (all exponent bits set), as sync.cpp tests it.
__device__ __forceinline__ bool non_finite(float2 v)
{
  return ((__float_as_uint(v.x) & 0x7F800000u) == 0x7F800000u) || ((__float_as_uint(v.y) & 0x7F800000u) == 0x7F800000u);
}

/// a * b as GCC's complex<float> product (-fcx-limited-range): (ar br - ai bi, ar bi + ai br).
__device__ __forceinline__ float2 cmul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
__device__ __forceinline__ float2 conjf2(float2 a) { return make_float2(a.x, -a.y); }
/// std::norm of a complex<float>: in float.
__device__ __forceinline__ float normf2(float2 a) { return a.x * a.x + a.y * a.y; }

/// frame_locator.cpp's derotation(): e^{-j 2 pi cycles}, reduced in double first.
__device__ __forceinline__ float2 derotation(double cycles)
{
  const double ph = -2.0 * std::numbers::pi * remainder(cycles, 1.0);
  double s, c;
  sincos(ph, &s, &c);
  return make_float2(float(c), float(s));
}

/// conj(h) / |h|^2 in float, 0 where h is 0 (estimate_channel's inverse).
__device__ __forceinline__ float2 inverse(float2 h)
{
  const float mag2 = normf2(h);
  return mag2 > 0.0f ? make_float2(h.x / mag2, -h.y / mag2) : make_float2(0.0f, 0.0f);
}

// ---------------------------------------------------------------- shared memory

/// Step 1: the lag window and the per-lag results.
struct sync_stage {
  float2 body[N];
  float2 r[MAX_LAG_SAMPLES];
  double pow_xc[MAX_LAGS];
  double energy[MAX_LAGS];
  double norm_xc[MAX_LAGS];
};
/// Step 2 and the transforms' inputs: the three windows and each sample's derotation.
struct window_stage {
  float2 head[HEAD];
  float2 rot[N];
};
/// Step 4: the channel on the used tones and the header's soft bits.
struct tone_stage {
  float2 h[p::NOF_USED];
  double2 proj[MAX_TAPS]; ///< Q^H h
  float soft[p::HEADER_BITS];
  double2 power[p::NOF_USED]; ///< the SNR's terms: |h[u]|^2 and |y0 - y1|^2 on tone u, in double
  float x[p::NOF_USED];       ///< the header symbol's known value on tone u (header_tone_values)
};
/// What thread 0 decides, for everyone.
struct decisions {
  uint64_t start, fft0;
  double cfo_cps;
  double sig, diff;
  int taps;                 ///< the taps the channel was projected on (0: plain LS)
  float2 base[NOF_WINDOWS]; ///< each window's derotation at its first sample
  float2 pilot_rot;
  double around, elsewhere; ///< the validation's sums
  double warp_max[THREADS / 32];
  int warp_arg[THREADS / 32];
  int peak;
  unsigned bad;
  locate_outcome status;
  bool go_on;
};
/// The block's shared memory: the stages one after the other in one union (a barrier
/// separates the last read of one from the first write of the next), the transforms'
/// scratch and outputs apart (a group of 64 may still load its window while another
/// group's transform writes). Before the transforms, their outputs' place holds the
/// terms of the sums that run in order on one thread (made by all threads first, so
/// that the one thread only adds).
struct shared_mem {
  union {
    sync_stage s;
    window_stage w;
    tone_stage t;
  } u;
  float2 scratch[NOF_GROUPS][SCRATCH];
  union {
    float2 y[NOF_WINDOWS][N];
    double energy_terms[N + MAX_LAGS - 1]; ///< step 1: |r[i]|^2 (i < N), then each slide's change
    double2 cfo_terms[N];                  ///< step 2: the fine CFO's products
  } v;
  decisions d;
};
static_assert(sizeof(shared_mem) <= 48 * 1024, "static shared memory of one block");

/// Writes thread 0's verdict on a candidate that ends before its frame_params.
static __device__ void write_early(const locate_args& a, uint32_t c, const decisions& d)
{
  located_candidate o{};
  o.status = d.status;
  o.header = p::header_status::ok;
  o.start = d.start;
  o.fft0 = d.fft0;
  a.out[c] = o;
}

// ---------------------------------------------------------------- the steps

/// Step 1, fine timing (synchronize): candidate `c` of `a`. Clears sm.d.bad for
/// step 2. Returns false when the candidate ends here (its verdict written by
/// thread 0: no sync, cut off, or needs more samples); true with sm.d.start and
/// sm.d.fft0 set otherwise.
__device__ __forceinline__ bool fine_timing_step(const locate_args& a, const uint32_t c, shared_mem& sm)
{
  const int tid = int(threadIdx.x);
  const sync_candidate cand = a.cands[c];
  const uint64_t centre = cand.coarse + uint64_t(G);
  const uint64_t lag0 = centre > uint64_t(SEARCH) ? centre - uint64_t(SEARCH) : 0;
  const int nof_lags = int(centre + uint64_t(SEARCH) - lag0) + 1;
  const int nof_r = nof_lags + N - 1;
  if (lag0 + uint64_t(nof_r) > a.total || lag0 < a.first || lag0 + uint64_t(nof_r) > a.first + a.nof) {
    if (tid == 0) {
      decisions d{};
      d.status = lag0 + uint64_t(nof_r) > a.total ? locate_outcome::no_sync : locate_outcome::needs_more;
      write_early(a, c, d);
    }
    return false;
  }
  {
    const float2* src = a.samples + (lag0 - a.first);
    for (int i = tid; i < N; i += THREADS) {
      sm.u.s.body[i] = a.body[i];
    }
    for (int i = tid; i < nof_r; i += THREADS) {
      float2 v = src[i];
      if (non_finite(v)) {
        v = make_float2(0.0f, 0.0f);
      }
      sm.u.s.r[i] = cmul(v, derotation(cand.cfo_cps * double(i)));
    }
  }
  if (tid == 0) {
    sm.d.bad = 0;
  }
  __syncthreads();
  {
    // The sliding energy's terms as the host makes them (float norms, a slide's change
    // in float), by every thread; the last thread then adds them in the host's order.
    double* terms = sm.v.energy_terms;
    for (int i = tid; i < N + nof_lags - 1; i += THREADS) {
      terms[i] = i < N ? double(normf2(sm.u.s.r[i])) : double(normf2(sm.u.s.r[i]) - normf2(sm.u.s.r[i - N]));
    }
  }
  __syncthreads();
  if (tid == THREADS - 1) {
    // The sliding energy as the host updates it (its terms' double sum, in order), on
    // the last warp, which has the fewest lags; before its lag, which nothing waits on.
    const double* terms = sm.v.energy_terms;
    double e = 0.0;
    for (int i = 0; i < N; ++i) {
      e += terms[i];
    }
    for (int t = 0; t + 1 < nof_lags; ++t) {
      sm.u.s.energy[t] = e;
      e += terms[N + t];
    }
    sm.u.s.energy[nof_lags - 1] = e;
  }
  for (int t = tid; t < nof_lags; t += THREADS) {
    // In the host's order (sync.cpp, xcorr_power): four partial sums over n mod 4,
    // each in order, added as (s0 + s1) + (s2 + s3).
    double re[4] = {}, im[4] = {};
    const float2* r = sm.u.s.r + t;
    for (int n = 0; n < N; n += 4) {
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 x = sm.u.s.body[n + k], b = r[n + k];
        re[k] += double(x.x) * b.x + double(x.y) * b.y;
        im[k] += double(x.x) * b.y - double(x.y) * b.x;
      }
    }
    const double sre = (re[0] + re[1]) + (re[2] + re[3]);
    const double sim = (im[0] + im[1]) + (im[2] + im[3]);
    sm.u.s.pow_xc[t] = sre * sre + sim * sim;
  }
  __syncthreads();
  for (int t = tid; t < nof_lags; t += THREADS) {
    const double e = sm.u.s.energy[t];
    sm.u.s.norm_xc[t] = e > 0.0 ? sm.u.s.pow_xc[t] / (a.body_energy * e) : 0.0;
  }
  {
    // The first maximum of the cross-correlation's power, as std::max_element: a
    // reduction over the block (a maximum is exact; equal values keep the lower lag).
    double best = -1.0; // below every power
    int arg = MAX_LAGS;
    for (int t = tid; t < nof_lags; t += THREADS) {
      const double v = sm.u.s.pow_xc[t];
      if (v > best) {
        best = v;
        arg = t;
      }
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) {
      const double ob = __shfl_down_sync(0xffffffffu, best, off);
      const int oa = __shfl_down_sync(0xffffffffu, arg, off);
      if (ob > best || (ob == best && oa < arg)) {
        best = ob;
        arg = oa;
      }
    }
    if ((tid & 31) == 0) {
      sm.d.warp_max[tid / 32] = best;
      sm.d.warp_arg[tid / 32] = arg;
    }
  }
  __syncthreads();
  if (tid == 0 || tid == 32) {
    double best = sm.d.warp_max[0]; // warp 0 holds lag 0: every other warp's is compared
    int peak = sm.d.warp_arg[0];
    for (int w = 1; w < THREADS / 32; ++w) {
      const double v = sm.d.warp_max[w];
      const int arg_w = sm.d.warp_arg[w];
      if (v > best || (v == best && arg_w < peak)) {
        best = v;
        peak = arg_w;
      }
    }
    // The validation's two sums, each in the host's order (lags ascending), on two
    // warps at once.
    const int lo = peak >= G / 2 ? peak - G / 2 : 0;
    const int hi = min(nof_lags - 1, peak + G / 2);
    double sum = 0.0;
    if (tid == 0) {
      for (int t = lo; t <= hi; ++t) {
        sum += sm.u.s.norm_xc[t];
      }
      sm.d.around = sum;
      sm.d.peak = peak;
    } else {
      for (int t = 0; t < lo; ++t) {
        sum += sm.u.s.norm_xc[t];
      }
      for (int t = hi + 1; t < nof_lags; ++t) {
        sum += sm.u.s.norm_xc[t];
      }
      sm.d.elsewhere = sum;
    }
  }
  __syncthreads();
  if (tid == 0) {
    decisions& d = sm.d;
    const double* pow_xc = sm.u.s.pow_xc;
    const int peak = d.peak;
    const int lo = peak >= G / 2 ? peak - G / 2 : 0;
    const int hi = min(nof_lags - 1, peak + G / 2);
    const double around = d.around, elsewhere = d.elsewhere;
    const int nof_around = hi - lo + 1;
    const double floor_per_lag = elsewhere / double(nof_lags - nof_around);
    const double rho = around - floor_per_lag * double(nof_around);
    d.start = d.fft0 = 0;
    d.cfo_cps = 0.0;
    d.status = locate_outcome::no_sync;
    d.go_on = false;
    if (rho >= double(a.validate_threshold)) {
      int first_path = peak;
      for (int t = lo; t < peak; ++t) {
        if (pow_xc[t] >= double(a.first_path_fraction) * pow_xc[peak]) {
          first_path = t;
          break;
        }
      }
      const uint64_t body0 = lag0 + uint64_t(first_path);
      if (body0 >= uint64_t(max(G, a.timing_backoff))) {
        d.start = body0 - uint64_t(G);
        d.fft0 = body0 - uint64_t(a.timing_backoff);
        const uint64_t end = d.fft0 + uint64_t(HEAD);
        if (d.fft0 + uint64_t(N + L) > a.total) {
          d.status = locate_outcome::no_sync; // synchronize's fine-CFO read is short
          d.start = d.fft0 = 0;
        } else if (end > a.total) {
          d.status = locate_outcome::cut_off;
        } else if (d.fft0 < a.first || end > a.first + a.nof) {
          d.status = locate_outcome::needs_more;
        } else {
          d.go_on = true;
        }
      }
    }
  }
  __syncthreads();
  if (!sm.d.go_on) {
    if (tid == 0) {
      write_early(a, c, sm.d);
    }
    return false;
  }
  return true;
}

/// Step 2, the three windows and the fine CFO (synchronize, frame_locator::locate):
/// the 2L + N samples from `fft0` (in the chunk of `a`) into sm.u.w.head, non-finite
/// ones zeroed and counted into sm.d.bad (which must be 0 before, step 1 clears it)
/// where they lie inside a window; the CFO [cycles/sample] from arg P over the two
/// preamble windows, returned and in sm.d.cfo_cps; each sample's derotation in
/// sm.u.w.rot and each window's at its first sample (from `start`) in sm.d.base.
__device__ __forceinline__ double fine_cfo_step(const locate_args& a, const uint64_t start, const uint64_t fft0, shared_mem& sm)
{
  const int tid = int(threadIdx.x);
  {
    // The stage-1 arrays are dead: everyone passed the barrier after thread 0's last read.
    const float2* src = a.samples + (fft0 - a.first);
    unsigned bad = 0;
    for (int i = tid; i < HEAD; i += THREADS) {
      float2 v = src[i];
      if (non_finite(v)) {
        v = make_float2(0.0f, 0.0f);
        bad += (i % L) < N ? 1u : 0u; // inside window i / L; the guards between do not count
      }
      sm.u.w.head[i] = v;
    }
    bad = __reduce_add_sync(0xffffffffu, bad);
    if ((tid & 31) == 0 && bad != 0) {
      atomicAdd(&sm.d.bad, bad);
    }
  }
  __syncthreads();
  for (int i = tid; i < N; i += THREADS) {
    // arg P over the two preamble windows: its terms by every thread, as the host makes them.
    const float2 x = sm.u.w.head[i], b = sm.u.w.head[i + L];
    sm.v.cfo_terms[i] = make_double2(double(x.x) * b.x + double(x.y) * b.y, double(x.x) * b.y - double(x.y) * b.x);
  }
  __syncthreads();
  if (tid == 0) {
    // Their sums in the host's order.
    double pre = 0.0, pim = 0.0;
    for (int i = 0; i < N; ++i) {
      const double2 t = sm.v.cfo_terms[i];
      pre += t.x;
      pim += t.y;
    }
    sm.d.cfo_cps = atan2(pim, pre) / (2.0 * std::numbers::pi * double(L));
  }
  __syncthreads();
  const double cfo = sm.d.cfo_cps;
  for (int i = tid; i < N; i += THREADS) {
    sm.u.w.rot[i] = derotation(cfo * double(i));
  }
  if (tid < NOF_WINDOWS) {
    sm.d.base[tid] = derotation(cfo * double(fft0 + uint64_t(tid) * uint64_t(L) - start));
  }
  __syncthreads();
  return cfo;
}

/// Step 3: the windows of sm.u.w.head derotated (sm.u.w.rot, sm.d.base) and
/// transformed, one 512-point forward FFT per window by a group of GROUP threads,
/// into sm.v.y in natural bin order.
__device__ __forceinline__ void transform_step(shared_mem& sm)
{
  const int tid = int(threadIdx.x);
  // Every group transforms, with block-wide barriers: the group without a window
  // transforms zeros into its own scratch and keeps nothing. (With a named barrier
  // per group and that group idle, compute-sanitizer's racecheck reported hazards
  // across the block-wide barriers that follow.)
  {
    const int g = tid / GROUP;
    const int t = tid % GROUP;
    const bool window = g < NOF_WINDOWS;
    const float2 base = window ? sm.d.base[g] : make_float2(0.0f, 0.0f);
    const float2* x = sm.u.w.head + (window ? g : 0) * L;
    float2 v[fft_algo::VALUES];
#pragma unroll
    for (int j = 0; j < fft_algo::VALUES; ++j) {
      const int i = fft_algo::input_index(t, j);
      v[j] = window ? cmul(x[i], cmul(sm.u.w.rot[i], base)) : make_float2(0.0f, 0.0f);
    }
    fft::fft512_forward<fft_algo>(v, t, sm.scratch[g], fft::block_sync{});
    if (window) {
#pragma unroll
      for (int j = 0; j < fft_algo::VALUES; ++j) {
        sm.v.y[g][fft_algo::output_bin(t, j)] = v[j];
      }
    }
  }
  __syncthreads();
}

/// The channel on the used tones in sm.u.t.h projected on a.basis's first taps, as many
/// as chosen_taps keeps with the noise measure sm.d.diff x `diff_scale` (channel_smoother::
/// apply), the count into sm.d.taps (0 unprojected). Every thread calls it.
__device__ __forceinline__ void smooth_channel(const locate_args& a, shared_mem& sm, const double diff_scale)
{
  const int tid = int(threadIdx.x);
  float2* h = sm.u.t.h;
  if (tid == 0) {
    sm.d.taps = 0;
  }
  const int nof_taps = a.nof_taps;
  if (nof_taps > 0) {
    // Q^H h, one thread per tap (warps 2.., apart from thread 0's sums), in double
    // and in the host's order (u ascending).
    if (const int l = tid - 2 * 32; l >= 0 && l < nof_taps) {
      double pr = 0.0, pi = 0.0;
      for (int u = 0; u < p::NOF_USED; ++u) {
        const double2 q = a.basis[u * nof_taps + l];
        const double hr = h[u].x, hi = h[u].y;
        // conj(q) * h as GCC's complex<double> product.
        pr += q.x * hr - (-q.y) * hi;
        pi += q.x * hi + (-q.y) * hr;
      }
      sm.u.t.proj[l] = make_double2(pr, pi);
    }
    __syncthreads();
    if (tid == 0) {
      // The taps kept (channel_smoother::apply's chosen_taps, from the same sums).
      const double2* proj = sm.u.t.proj;
      sm.d.taps = chosen_taps([proj](int l) { return proj[l].x * proj[l].x + proj[l].y * proj[l].y; }, nof_taps, a.min_taps,
                              sm.d.diff * diff_scale);
    }
    __syncthreads();
    const int keep = sm.d.taps;
    for (int u = tid; u < p::NOF_USED; u += THREADS) {
      double ar = 0.0, ai = 0.0;
      const double2* q = a.basis + u * nof_taps;
      for (int l = 0; l < keep; ++l) {
        const double2 qa = q[l], pa = sm.u.t.proj[l];
        ar += qa.x * pa.x - qa.y * pa.y;
        ai += qa.x * pa.y + qa.y * pa.x;
      }
      h[u] = make_float2(float(ar), float(ai));
    }
  }
}

/// Step 4, channel (estimate_channel) and header (header_soft, profile::decide_header) from
/// the transforms in sm.v.y: the channel on the used tones into sm.u.t.h (smoothed
/// with a.basis where a.nof_taps > 0), the SNR's sums into sm.d.sig and sm.d.diff,
/// and candidate `c`'s verdict written to a.out[c] by thread 0. Returns whether the
/// header was accepted.
__device__ __forceinline__ bool header_step(const locate_args& a, const uint32_t c, const uint64_t start, const uint64_t fft0,
                                            const double cfo, shared_mem& sm)
{
  const int tid = int(threadIdx.x);
  const float2* y0 = sm.v.y[0];
  const float2* y1 = sm.v.y[1];
  const float2* y2 = sm.v.y[2];
  float2* h = sm.u.t.h; // the window stage is dead: everyone passed the barrier after the loads
  for (int u = tid; u < p::NOF_USED; u += THREADS) {
    const int b = D_TABLES.used_bin[u];
    const float f = 0.5f * D_TABLES.preamble[u];
    const float2 s = make_float2(y0[b].x + y1[b].x, y0[b].y + y1[b].y);
    h[u] = make_float2(s.x * f, s.y * f);
    // The SNR's terms, as the host makes them; thread 0 adds them in order below.
    sm.u.t.power[u] = make_double2(double(normf2(h[u])), double(normf2(make_float2(y0[b].x - y1[b].x, y0[b].y - y1[b].y))));
  }
  __syncthreads();
  if (tid == 0) {
    double sig = 0.0, diff = 0.0;
    for (int u = 0; u < p::NOF_USED; ++u) {
      const double2 t = sm.u.t.power[u];
      sig += t.x;
      diff += t.y;
    }
    sm.d.sig = sig;
    sm.d.diff = diff;
  }
  smooth_channel(a, sm, 1.0);
  __syncthreads();
  if (tid == 0) {
    // The pilots' common phase of the header symbol (pilot_derotation).
    float2 acc = make_float2(0.0f, 0.0f);
    for (int i = 0; i < p::NOF_PILOTS; ++i) {
      const float2 z = cmul(y2[D_TABLES.pilot_bin[i]], conjf2(h[D_TABLES.pilot_used[i]]));
      acc = make_float2(acc.x + z.x, acc.y + z.y);
    }
    const float pv = p::pilot_value(p::HEADER_SYMBOL);
    acc = make_float2(acc.x * pv, acc.y * pv);
    // std::abs of a complex<float> is glibc's cabsf (hypotf): sqrt in double, rounded once.
    const float mag = float(sqrt(double(acc.x) * double(acc.x) + double(acc.y) * double(acc.y)));
    sm.d.pilot_rot = mag > 0.0f ? make_float2(acc.x / mag, -acc.y / mag) : make_float2(1.0f, 0.0f);
  }
  __syncthreads();
  if (tid < p::HEADER_BITS) {
    // Maximum-ratio combining of bit tid's repetitions, in the host's order (d ascending).
    const float2 rot = sm.d.pilot_rot;
    float acc = 0.0f;
    for (int d = tid; d < p::NOF_DATA; d += p::HEADER_BITS) {
      const float2 z = cmul(y2[D_TABLES.data_bin[d]], conjf2(h[D_TABLES.data_used[d]]));
      const float soft = z.x * rot.x - z.y * rot.y;
      acc += D_TABLES.data_pn[d] != 0 ? -soft : soft;
    }
    sm.u.t.soft[tid] = acc;
  }
  __syncthreads();
  if (tid == 0) {
    p::header_fields f{};
    const p::header_status hs = p::decide_header(sm.u.t.soft, f).status;
    // estimate_channel's SNR.
    const double noise = sm.d.diff / (2.0 * p::NOF_USED);
    const double signal = fmax(sm.d.sig / p::NOF_USED - noise / 2.0, 0.0);
    const double snr = noise > 0.0 ? signal / noise * double(p::NOF_USED) / p::N : 1e15;
    located_candidate o{};
    o.status = hs == p::header_status::ok ? locate_outcome::accepted : locate_outcome::rejected;
    o.header = hs;
    o.start = start;
    o.fft0 = fft0;
    o.cfo_cps = cfo;
    o.snr_dB = snr > 0.0 ? fmin(10.0 * log10(snr), 150.0) : -150.0;
    o.bad_samples = sm.d.bad;
    o.nd = f.nd;
    o.seq = f.seq;
    o.mod = hs == p::header_status::ok ? p::modulation_of_mode(f.mod_field) : p::modulation::qpsk;
    o.mode = hs == p::header_status::ok ? f.mod_field : uint8_t(0);
    a.out[c] = o;
    sm.d.go_on = hs == p::header_status::ok;
    sm.d.status = o.status;
  }
  __syncthreads();
  return sm.d.go_on;
}

/// Step 5, for an accepted header (add_header_to_channel): the header symbol as a third
/// training symbol. Its known tone values from the decided fields, the window's common
/// phase against the channel of step 4 (thread 0, u ascending, as the host sums), the
/// three symbols averaged and projected again with the noise of three.
__device__ __forceinline__ void header_channel_step(const locate_args& a, const uint32_t c, shared_mem& sm)
{
  const int tid = int(threadIdx.x);
  const float2* y0 = sm.v.y[0];
  const float2* y1 = sm.v.y[1];
  const float2* y2 = sm.v.y[2];
  float2* h = sm.u.t.h;
  float* hbits = sm.u.t.soft; // the soft values are spent: the decided bits, 0 or 1
  if (tid == 0) {
    const located_candidate& o = a.out[c];
    const auto bits = p::header_bits(p::header_fields{o.mode, o.nd, o.seq});
    for (int j = 0; j < p::HEADER_BITS; ++j) {
      hbits[j] = float(bits[std::size_t(j)]);
    }
  }
  __syncthreads();
  for (int d = tid; d < p::NOF_DATA; d += THREADS) {
    const bool one = (hbits[d % p::HEADER_BITS] != 0.0f) != (D_TABLES.data_pn[d] != 0);
    sm.u.t.x[D_TABLES.data_used[d]] = one ? -1.0f : 1.0f;
  }
  if (tid < p::NOF_PILOTS) {
    sm.u.t.x[D_TABLES.pilot_used[tid]] = p::pilot_value(p::HEADER_SYMBOL);
  }
  __syncthreads();
  if (tid == 0) {
    float2 acc = make_float2(0.0f, 0.0f);
    for (int u = 0; u < p::NOF_USED; ++u) {
      const float2 y = y2[D_TABLES.used_bin[u]];
      const float x = sm.u.t.x[u];
      const float2 z = cmul(make_float2(y.x * x, y.y * x), conjf2(h[u]));
      acc = make_float2(acc.x + z.x, acc.y + z.y);
    }
    // std::abs of a complex<float>: sqrt in double, rounded once (as header_step's).
    const float mag = float(sqrt(double(acc.x) * double(acc.x) + double(acc.y) * double(acc.y)));
    sm.d.pilot_rot = mag > 0.0f ? make_float2(acc.x / mag, -acc.y / mag) : make_float2(1.0f, 0.0f);
  }
  __syncthreads();
  const float2 rot = sm.d.pilot_rot;
  for (int u = tid; u < p::NOF_USED; u += THREADS) {
    const int b = D_TABLES.used_bin[u];
    const float f = 0.5f * D_TABLES.preamble[u];
    const float2 s = make_float2(y0[b].x + y1[b].x, y0[b].y + y1[b].y);
    const float2 pre = make_float2(s.x * f, s.y * f);
    const float x = sm.u.t.x[u];
    const float2 g = cmul(make_float2(y2[b].x * x, y2[b].y * x), rot);
    const float2 t = make_float2(pre.x * 2.0f + g.x, pre.y * 2.0f + g.y);
    h[u] = make_float2(t.x * (1.0f / 3.0f), t.y * (1.0f / 3.0f));
  }
  __syncthreads();
  smooth_channel(a, sm, 2.0 / 3.0);
  __syncthreads();
}

/// The fused kernel's parameters of accepted candidate `c` into a.params[c]
/// (gpu_receiver.cpp make_frame_params), from the channel of step 4.
__device__ __forceinline__ void frame_params_step(const locate_args& a, const uint32_t c, const uint64_t start, const uint64_t fft0,
                                                  const double cfo, shared_mem& sm)
{
  const int tid = int(threadIdx.x);
  const float2* h = sm.u.t.h;
  frame_params& fp = a.params[c];
  if (tid == 0) {
    fp.cfo_cps = cfo;
    fp.window_offset = double(fft0 - start);
    fp.mod = int32_t(a.out[c].mod);
    fp.llr_inv_noise = llr_inv_noise(sm.d.sig, sm.d.diff, sm.d.taps, a.out[c].mod == p::modulation::qpsk, 3);
    const float2 step = derotation(cfo * 64.0);
    fp.step_re = step.x;
    fp.step_im = step.y;
  }
  for (int b = tid; b < N; b += THREADS) {
    const int u = D_TABLES.bin_used[b];
    fp.inv[b] = u >= 0 ? inverse(h[u]) : make_float2(0.0f, 0.0f);
    // inv_held[64 j + t] = inv[held_lane(t) + 64 j]
    const int hb = held_lane(b % 64) + 64 * (b / 64);
    const int hu = D_TABLES.bin_used[hb];
    fp.inv_held[b] = hu >= 0 ? inverse(h[hu]) : make_float2(0.0f, 0.0f);
  }
  if (tid < p::NOF_PILOTS) {
    const float2 hp = h[D_TABLES.pilot_used[tid]];
    fp.hconj_re[tid] = hp.x;
    fp.hconj_im[tid] = -hp.y;
  }
  if (tid < 64) {
    const float2 r = derotation(cfo * double(tid));
    fp.rot_re[tid] = r.x;
    fp.rot_im[tid] = r.y;
  }
}

} // namespace whd::baseband::gpu::locate_steps
