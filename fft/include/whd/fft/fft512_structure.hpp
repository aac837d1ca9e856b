/// @file fft512_structure.hpp
/// The structure of the 512-point transform, written once as __host__ __device__
/// code: butterflies, the register passes, the load/save patterns of the exchanges
/// (with their bank-conflict swizzles and the folded bit reversal), the twiddle
/// indices and tables. The GPU runs it through fft512_device.cuh; CI, which has no
/// GPU, runs the same functions on the host (host_emulate below).
///
/// Layout of one transform: 64 threads t = 0..63, each holding 8 complex values v[j].
/// Every variant loads v[j] = x[input_index(t, j)] = x[t + 64 j] and, after three
/// passes of three radix-2 stages each, holds Y[output_bin(t, j)] in v[j], where
/// Y[b] = sum_n x[n] exp(-2 pi i b n / 512) (forward, unnormalised, as FFTW).
///
/// Needs only <vector_types.h> (float2) from CUDA, so plain C++ can include it.
#pragma once

#include <whd/fft/variant.hpp>

#include <vector_types.h>

#include <type_traits>

#ifdef __CUDACC__
/// Lets a __host__ __device__ template call host-only or device-only policies
/// (the twiddle sources) without nvcc's cross-execution-space diagnostics.
#define WHD_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define WHD_EXEC_CHECK_DISABLE
#endif
#ifdef __CUDA_ARCH__
/// Full unrolling in device code, so that register arrays are indexed by constants.
#define WHD_UNROLL _Pragma("unroll")
#else
#define WHD_UNROLL
#endif

namespace whd::fft {

/// Size of one transform, as a local constant of this header (fft512.hpp's N is the
/// public one; the tests assert they agree).
inline constexpr int FFT_POINTS = THREADS_PER_TRANSFORM * VALUES_PER_THREAD;
static_assert(FFT_POINTS == 512);

namespace detail {

// ---------------------------------------------------------------- complex arithmetic

__host__ __device__ constexpr float2 make_cf(float re, float im) { return float2{re, im}; }
__host__ __device__ constexpr float2 cadd(float2 a, float2 b) { return float2{a.x + b.x, a.y + b.y}; }
__host__ __device__ constexpr float2 csub(float2 a, float2 b) { return float2{a.x - b.x, a.y - b.y}; }
__host__ __device__ constexpr float2 cmul(float2 a, float2 b)
{
  return float2{a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
__host__ __device__ constexpr float2 conj(float2 a) { return float2{a.x, -a.y}; }
/// a * (-i) = a * W4^1: a swap and a sign, no multiply.
__host__ __device__ constexpr float2 mul_neg_i(float2 a) { return float2{a.y, -a.x}; }

/// 1/sqrt(2) rounded to float.
inline constexpr float RSQRT2 = 0.70710678118654752440f;

/// a * W8^1 = a * (1 - i)/sqrt(2).
__host__ __device__ constexpr float2 mul_w8(float2 a) { return float2{(a.x + a.y) * RSQRT2, (a.y - a.x) * RSQRT2}; }
/// a * W8^3 = a * (-1 - i)/sqrt(2).
__host__ __device__ constexpr float2 mul_w8_3(float2 a)
{
  return float2{(a.y - a.x) * RSQRT2, -(a.x + a.y) * RSQRT2};
}

// ---------------------------------------------------------------- bit reversal

/// Reverse the low 3 bits of x (an involution).
__host__ __device__ constexpr int rev3(int x) { return ((x & 1) << 2) | (x & 2) | ((x >> 2) & 1); }
/// Reverse the low 6 bits of x.
__host__ __device__ constexpr int rev6(int x) { return (rev3(x & 7) << 3) | rev3(x >> 3); }

/// v[rev3(i)] <- v[i]. With constant indices after unrolling this is only a renaming
/// of registers: it costs no instruction.
__host__ __device__ constexpr void permute_rev3(float2 (&v)[8])
{
  const float2 t1 = v[1], t3 = v[3];
  v[1] = v[4];
  v[4] = t1;
  v[3] = v[6];
  v[6] = t3;
}

// ---------------------------------------------------------------- butterflies

/// In-place 8-point DFT, natural order in and out: y[k] = sum_j v[j] W8^{jk}.
/// Three radix-2 decimation-in-frequency stages of four butterflies each, then the
/// bit reversal of the outputs as a register renaming.
__host__ __device__ constexpr void dft8(float2 (&v)[8])
{
  // stage 1: span 4, twiddles W8^j
  {
    const float2 a0 = v[0], a1 = v[1], a2 = v[2], a3 = v[3];
    v[0] = cadd(a0, v[4]);
    v[1] = cadd(a1, v[5]);
    v[2] = cadd(a2, v[6]);
    v[3] = cadd(a3, v[7]);
    v[4] = csub(a0, v[4]);
    v[5] = mul_w8(csub(a1, v[5]));
    v[6] = mul_neg_i(csub(a2, v[6]));
    v[7] = mul_w8_3(csub(a3, v[7]));
  }
  // stage 2: span 2 inside each half, twiddles W4^j
  WHD_UNROLL
  for (int h = 0; h < 8; h += 4) {
    const float2 a0 = v[h], a1 = v[h + 1];
    v[h] = cadd(a0, v[h + 2]);
    v[h + 1] = cadd(a1, v[h + 3]);
    v[h + 2] = csub(a0, v[h + 2]);
    v[h + 3] = mul_neg_i(csub(a1, v[h + 3]));
  }
  // stage 3: span 1
  WHD_UNROLL
  for (int q = 0; q < 8; q += 2) {
    const float2 a = v[q];
    v[q] = cadd(a, v[q + 1]);
    v[q + 1] = csub(a, v[q + 1]);
  }
  permute_rev3(v);
}

/// Three radix-2 decimation-in-time stages on r[q], q the low three bits of the
/// position inside the set. Stage k (k = 0, 1, 2) pairs q with q + 2^k and multiplies
/// the second input by u_k * W_{2^{k+1}}^{q mod 2^k}, where u0 = W512^{4c},
/// u1 = W512^{2c}, u2 = W512^{c} are the set's base twiddles (c = 0 for the first set).
/// With IDENTITY the base twiddles are 1 and only the constant rotations remain.
template <bool IDENTITY>
__host__ __device__ constexpr void dit_set(float2 (&r)[8], float2 u0, float2 u1, float2 u2)
{
  // stage 0: pairs (q, q+1), twiddle u0
  WHD_UNROLL
  for (int q = 0; q < 8; q += 2) {
    const float2 b = IDENTITY ? r[q + 1] : cmul(r[q + 1], u0);
    r[q + 1] = csub(r[q], b);
    r[q] = cadd(r[q], b);
  }
  // stage 1: pairs (q, q+2), twiddle u1 * W4^{q mod 2}
  WHD_UNROLL
  for (int h = 0; h < 8; h += 4) {
    const float2 b0 = IDENTITY ? r[h + 2] : cmul(r[h + 2], u1);
    const float2 b1 = mul_neg_i(IDENTITY ? r[h + 3] : cmul(r[h + 3], u1));
    r[h + 2] = csub(r[h], b0);
    r[h] = cadd(r[h], b0);
    r[h + 3] = csub(r[h + 1], b1);
    r[h + 1] = cadd(r[h + 1], b1);
  }
  // stage 2: pairs (q, q+4), twiddle u2 * W8^q
  {
    const float2 p0 = IDENTITY ? r[4] : cmul(r[4], u2);
    const float2 p1 = IDENTITY ? r[5] : cmul(r[5], u2);
    const float2 p2 = IDENTITY ? r[6] : cmul(r[6], u2);
    const float2 p3 = IDENTITY ? r[7] : cmul(r[7], u2);
    const float2 b0 = p0;
    const float2 b1 = mul_w8(p1);
    const float2 b2 = mul_neg_i(p2);
    const float2 b3 = mul_w8_3(p3);
    r[4] = csub(r[0], b0);
    r[0] = cadd(r[0], b0);
    r[5] = csub(r[1], b1);
    r[1] = cadd(r[1], b1);
    r[6] = csub(r[2], b2);
    r[2] = cadd(r[2], b2);
    r[7] = csub(r[3], b3);
    r[3] = cadd(r[3], b3);
  }
}

/// w[k] = w1^k for k = 1..7 from w1, w2 = w1^2, w4 = w1^4 (each correctly rounded):
/// at most two products deep, so each power stays within a few ulp.
__host__ __device__ constexpr void powers_from_124(float2 w1, float2 w2, float2 w4, float2 (&w)[8])
{
  w[0] = make_cf(1.0f, 0.0f);
  w[1] = w1;
  w[2] = w2;
  w[4] = w4;
  w[3] = cmul(w1, w2);
  w[5] = cmul(w1, w4);
  w[6] = cmul(w2, w4);
  w[7] = cmul(w[3], w4);
}

// ---------------------------------------------------------------- twiddle tables

/// cos and sin of an angle.
struct cos_sin {
  double c;
  double s;
};

/// cos and sin of 2 pi num/den in double, usable in constant expressions: octant
/// reduction in integers, then Taylor series on |angle| <= pi/4 (error ~1e-16).
constexpr cos_sin cos_sin_turns(long long num, long long den)
{
  constexpr double PI_4 = 0.78539816339744830961566084581988;
  const long long m = ((num % den) + den) % den;
  const long long a = 8 * m;
  const long long o = a / den;
  const long long rem = a - o * den;
  long long q = 0;
  double d = 0.0;
  if (o % 2 == 0) {
    q = o / 2;
    d = PI_4 * (static_cast<double>(rem) / static_cast<double>(den));
  } else {
    q = (o + 1) / 2;
    d = -PI_4 * (static_cast<double>(den - rem) / static_cast<double>(den));
  }
  const double d2 = d * d;
  double c = 1.0, s = d, tc = 1.0, ts = d;
  for (int n = 1; n <= 12; ++n) {
    tc *= -d2 / static_cast<double>((2 * n - 1) * (2 * n));
    ts *= -d2 / static_cast<double>((2 * n) * (2 * n + 1));
    c += tc;
    s += ts;
  }
  switch (q % 4) {
  case 0: return {c, s};
  case 1: return {-s, c};
  case 2: return {-c, -s};
  default: return {s, -c};
  }
}

/// W512^e = exp(-2 pi i e / 512), computed in double, rounded once to float.
constexpr float2 w512_rounded(int e)
{
  const cos_sin cs = cos_sin_turns(e, FFT_POINTS);
  return make_cf(static_cast<float>(cs.c), static_cast<float>(-cs.s));
}

/// Offsets into the twiddle table.
inline constexpr int TW_W512 = 0;                    ///< [e]: W512^e, e = 0..511
inline constexpr int TW_STOCKHAM1 = TW_W512 + 512;   ///< [(k-1)*64 + t]: W512^{t k}, k = 1..7
inline constexpr int TW_STOCKHAM2 = TW_STOCKHAM1 + 7 * 64; ///< [(k-1)*8 + m]: W512^{8 m k}
inline constexpr int TW_TABLE_SIZE = TW_STOCKHAM2 + 7 * 8;

/// The twiddle table: every factor the variants read, each rounded once from double.
/// The Stockham parts are laid out by thread so that a warp reads consecutive words.
struct twiddle_table {
  float2 w[TW_TABLE_SIZE];
};

constexpr twiddle_table make_twiddle_table()
{
  twiddle_table t{};
  for (int e = 0; e < 512; ++e) {
    t.w[TW_W512 + e] = w512_rounded(e);
  }
  for (int k = 1; k < 8; ++k) {
    for (int i = 0; i < 64; ++i) {
      t.w[TW_STOCKHAM1 + (k - 1) * 64 + i] = w512_rounded((i * k) % 512);
    }
    for (int m = 0; m < 8; ++m) {
      t.w[TW_STOCKHAM2 + (k - 1) * 8 + m] = w512_rounded((8 * m * k) % 512);
    }
  }
  return t;
}

/// The table as a host constant (the device copy lives in fft512_device.cuh).
inline constexpr twiddle_table TWIDDLE_TABLE = make_twiddle_table();

/// Twiddle policies over a source of raw factors. Src provides table() (the table's
/// first word), load(pointer) (a table read) and exact(e) (W512^e to within an ulp,
/// from the table or from sincospif). Table reads go through one per-thread pointer
/// and constant offsets.
template <twiddle W, class Src>
struct twiddles;

template <class Src>
struct twiddles<twiddle::table, Src> {
  WHD_EXEC_CHECK_DISABLE
  __host__ __device__ static float2 w512(int e) { return Src::load(Src::table() + TW_W512 + e); }
  WHD_EXEC_CHECK_DISABLE
  __host__ __device__ static void stockham1(int t, float2 (&w)[8])
  {
    const float2* row = Src::table() + TW_STOCKHAM1 + t;
    WHD_UNROLL
    for (int k = 1; k < 8; ++k) {
      w[k] = Src::load(row + (k - 1) * 64);
    }
  }
  WHD_EXEC_CHECK_DISABLE
  __host__ __device__ static void stockham2(int m, float2 (&w)[8])
  {
    const float2* row = Src::table() + TW_STOCKHAM2 + m;
    WHD_UNROLL
    for (int k = 1; k < 8; ++k) {
      w[k] = Src::load(row + (k - 1) * 8);
    }
  }
};

template <class Src>
struct twiddles<twiddle::sincos, Src> {
  WHD_EXEC_CHECK_DISABLE
  __host__ __device__ static float2 w512(int e) { return Src::exact(e); }
  WHD_EXEC_CHECK_DISABLE
  __host__ __device__ static void stockham1(int t, float2 (&w)[8])
  {
    powers_from_124(Src::exact(t), Src::exact((2 * t) & 511), Src::exact((4 * t) & 511), w);
  }
  WHD_EXEC_CHECK_DISABLE
  __host__ __device__ static void stockham2(int m, float2 (&w)[8])
  {
    powers_from_124(Src::exact(8 * m), Src::exact((16 * m) & 511), Src::exact((32 * m) & 511), w);
  }
};

/// The host's source: the constant table for both policies.
struct host_twiddle_source {
  static const float2* table() { return TWIDDLE_TABLE.w; }
  static float2 load(const float2* p) { return *p; }
  static float2 exact(int e) { return TWIDDLE_TABLE.w[TW_W512 + e]; }
};

// ---------------------------------------------------------------- exchange patterns
// An exchange moves the 512 values of a transform between register passes. Thread t
// stores its slot j at logical position write(t, j) and the next pass loads its slot j
// from read(t, j); the shared-memory word of position p is phys(p), a padding that
// makes every warp's 8-byte accesses conflict-free per half-warp (tests/fft check this
// for every slot). Because p is made of disjoint bit fields of t and j, phys splits
// into a per-thread base and a per-slot constant: phys(write(t, j)) =
// write_base(t) + write_offset(j), so the device computes one base per exchange and
// addresses the slots by immediate offsets (the tests check the split).

/// Stockham, pass 1 -> pass 2: thread t = n1 holds k2 in slot j; pass 2 thread
/// t = m1 + 8 k2 loads n1 = m1 + 8 m2 into slot m2. Padding 8 words per 64.
struct stockham_x1 {
  static constexpr int SCRATCH = 568;
  __host__ __device__ static constexpr int write(int t, int j) { return t + 64 * j; }
  __host__ __device__ static constexpr int read(int t, int j) { return (t & 7) + 8 * j + 64 * (t >> 3); }
  __host__ __device__ static constexpr int phys(int p) { return p + 8 * (p >> 6); }
  __host__ __device__ static constexpr int write_base(int t) { return t; }
  __host__ __device__ static constexpr int write_offset(int j) { return 72 * j; }
  __host__ __device__ static constexpr int read_base(int t) { return (t & 7) + 72 * (t >> 3); }
  __host__ __device__ static constexpr int read_offset(int j) { return 8 * j; }
};

/// DIT, set 1 -> set 2: thread t holds positions 8 rev6(t) + q of the bit-reversed
/// array in slot q; set 2 thread t = a + 8 b holds positions 64 a + b + 8 q.
/// Padding 1 word per 32.
struct dit_x1 {
  static constexpr int SCRATCH = 527;
  __host__ __device__ static constexpr int write(int t, int j) { return 8 * rev6(t) + j; }
  __host__ __device__ static constexpr int read(int t, int j) { return 64 * (t & 7) + (t >> 3) + 8 * j; }
  __host__ __device__ static constexpr int phys(int p) { return p + (p >> 5); }
  __host__ __device__ static constexpr int write_base(int t) { return 8 * rev6(t) + (rev6(t) >> 2); }
  __host__ __device__ static constexpr int write_offset(int j) { return j; }
  __host__ __device__ static constexpr int read_base(int t) { return 66 * (t & 7) + (t >> 3); }
  __host__ __device__ static constexpr int read_offset(int j) { return 8 * j + (j >> 2); }
};

/// Both orderings, pass 2 -> pass 3: thread t = a + 8 b holds 64 a + b + 8 j in slot j;
/// pass 3 thread t holds t + 64 j. The same move, inside groups of 8 lanes, is an 8x8
/// transpose: the shuffle variants do it with xpose_* below instead.
struct common_x2 {
  static constexpr int SCRATCH = 527;
  __host__ __device__ static constexpr int write(int t, int j) { return 64 * (t & 7) + (t >> 3) + 8 * j; }
  __host__ __device__ static constexpr int read(int t, int j) { return t + 64 * j; }
  __host__ __device__ static constexpr int phys(int p) { return p + (p >> 5); }
  __host__ __device__ static constexpr int write_base(int t) { return 66 * (t & 7) + (t >> 3); }
  __host__ __device__ static constexpr int write_offset(int j) { return 8 * j + (j >> 2); }
  __host__ __device__ static constexpr int read_base(int t) { return t + (t >> 5); }
  __host__ __device__ static constexpr int read_offset(int j) { return 66 * j; }
};

/// 8x8 transpose across the 8 lanes of a group by three xor-shuffle stages (k = 4,
/// 2, 1): at stage k, lane l exchanges slot pair (j, j^k), j & k == 0, with lane l^k
/// so that bit k of the lane and bit k of the slot trade places. Per pair: a
/// conditional swap, one shuffle, a conditional swap back. xpose_send gives the value
/// to shuffle; xpose_recv takes the partner's value.
__host__ __device__ constexpr float2 xpose_send(float2 (&v)[8], int lane, int k, int j)
{
  if ((lane & k) != 0) {
    const float2 s = v[j];
    v[j] = v[j ^ k];
    v[j ^ k] = s;
  }
  return v[j ^ k];
}
__host__ __device__ constexpr void xpose_recv(float2 (&v)[8], int lane, int k, int j, float2 received)
{
  v[j ^ k] = received;
  if ((lane & k) != 0) {
    const float2 s = v[j];
    v[j] = v[j ^ k];
    v[j ^ k] = s;
  }
}

/// The same transposes (common_x2's move inside groups of 8 lanes) through shared
/// memory, each warp in rows of its own: thread t writes slot j at row t mod 32,
/// column j, and reads slot j from row 8 ((t mod 32) >> 3) + j, column t mod 8. Rows
/// of 9 float2 (one pad) keep every half-warp conflict-free; warp w's rows start at
/// 288 w. A warp may overwrite its rows as soon as its own reads of the previous
/// exchange are done, where those reads stayed inside its rows
/// (x1_reads_stay_in_warp_rows): only __syncwarp, no barrier.
struct warp_xpose {
  static constexpr int ROW = 9;
  static constexpr int WARP_ROWS = 32 * ROW;
  static constexpr int SCRATCH = 2 * WARP_ROWS;
  __host__ __device__ static constexpr int write_base(int t) { return WARP_ROWS * (t >> 5) + ROW * (t & 31); }
  __host__ __device__ static constexpr int write_offset(int j) { return j; }
  __host__ __device__ static constexpr int read_base(int t) { return WARP_ROWS * (t >> 5) + 8 * ROW * ((t & 31) >> 3) + (t & 7); }
  __host__ __device__ static constexpr int read_offset(int j) { return ROW * j; }
};

/// Whether every read of exchange X1 by warp w of a transform falls in that warp's
/// rows of warp_xpose, [288 w, 288 w + 288): true for Stockham's first exchange, false
/// for DIT's.
template <class X1>
constexpr bool x1_reads_stay_in_warp_rows()
{
  for (int t = 0; t < THREADS_PER_TRANSFORM; ++t) {
    for (int j = 0; j < VALUES_PER_THREAD; ++j) {
      const int p = X1::read_base(t) + X1::read_offset(j);
      const int lo = warp_xpose::WARP_ROWS * (t >> 5);
      if (p < lo || p >= lo + warp_xpose::WARP_ROWS) {
        return false;
      }
    }
  }
  return true;
}

} // namespace detail

// ---------------------------------------------------------------- the algorithms

/// One algorithm of the 512-point transform: ordering, exchange and twiddle source.
/// All index logic is here, shared by the device function and the host emulation.
template <ordering O, exchange E, twiddle W>
struct fft512_algo {
  static constexpr ordering ORDER = O;
  static constexpr exchange EXCHANGE = E;
  static constexpr twiddle TWIDDLE = W;
  /// Threads per transform and complex values per thread.
  static constexpr int THREADS = THREADS_PER_TRANSFORM;
  static constexpr int VALUES = VALUES_PER_THREAD;
  using x1 = std::conditional_t<O == ordering::dit, detail::dit_x1, detail::stockham_x1>;
  using x2 = detail::common_x2;
  /// Shared-memory scratch of one transform, in float2 (512 values plus padding).
  static constexpr int SCRATCH_FLOAT2 = x1::SCRATCH > x2::SCRATCH ? x1::SCRATCH : x2::SCRATCH;
  /// Barriers one transform takes.
  static constexpr int NOF_BARRIERS = E == exchange::smem ? 3 : 1;

  /// Input sample that thread t loads into v[j] (all variants: t + 64 j, so a warp
  /// reads 32 consecutive samples per slot).
  __host__ __device__ static constexpr int input_index(int t, int j) { return input_base(t) + input_offset(j); }
  /// input_index split into a per-thread base and a per-slot constant.
  __host__ __device__ static constexpr int input_base(int t) { return t; }
  __host__ __device__ static constexpr int input_offset(int j) { return THREADS * j; }
  /// The output column of thread t: it ends holding bins out_lane(t) + 64 j.
  __host__ __device__ static constexpr int out_lane(int t)
  {
    return E == exchange::smem ? t : (t >> 3) + 8 * (t & 7);
  }
  /// Output bin held in v[j] by thread t after the forward transform.
  __host__ __device__ static constexpr int output_bin(int t, int j) { return output_base(t) + output_offset(j); }
  /// output_bin split into a per-thread base and a per-slot constant.
  __host__ __device__ static constexpr int output_base(int t) { return out_lane(t); }
  __host__ __device__ static constexpr int output_offset(int j) { return THREADS * j; }

  /// Pass 1 on the values just loaded (v[j] = x[t + 64 j]).
  template <class TW>
  __host__ __device__ static void pass1(float2 (&v)[8], int t)
  {
    if constexpr (O == ordering::stockham) {
      detail::dft8(v);
      float2 w[8];
      TW::stockham1(t, w);
WHD_UNROLL
      for (int k = 1; k < 8; ++k) {
        v[k] = detail::cmul(v[k], w[k]);
      }
    } else {
      // v[j] holds bit-reversed position 8 rev6(t) + rev3(j): put slots in position order.
      detail::permute_rev3(v);
      const float2 one = detail::make_cf(1.0f, 0.0f);
      detail::dit_set<true>(v, one, one, one);
    }
  }

  /// Pass 2 after the first exchange.
  template <class TW>
  __host__ __device__ static void pass2(float2 (&v)[8], int t)
  {
    if constexpr (O == ordering::stockham) {
      detail::dft8(v);
      float2 w[8];
      TW::stockham2(t & 7, w);
WHD_UNROLL
      for (int k = 1; k < 8; ++k) {
        v[k] = detail::cmul(v[k], w[k]);
      }
    } else {
      const int c = 8 * (t >> 3);
      detail::dit_set<false>(v, TW::w512(4 * c), TW::w512(2 * c), TW::w512(c));
    }
  }

  /// Pass 3 after the second exchange; leaves bins out_lane(t) + 64 j in v[j].
  template <class TW>
  __host__ __device__ static void pass3(float2 (&v)[8], int t)
  {
    if constexpr (O == ordering::stockham) {
      detail::dft8(v);
    } else {
      const int c = out_lane(t);
      detail::dit_set<false>(v, TW::w512(4 * c), TW::w512(2 * c), TW::w512(c));
    }
  }
};

/// The host emulation of one transform by 64 threads: the device function's sequence
/// (fft512_device.cuh), each step run for all threads before the next, which is what
/// the barriers guarantee on the GPU. v[t][j] starts as x[input_index(t, j)] and ends
/// as Y[output_bin(t, j)]. Inverse: conj(F(conj(x))), unnormalised.
template <class A>
void host_emulate(float2 (&v)[THREADS_PER_TRANSFORM][VALUES_PER_THREAD], bool inverse = false)
{
  using TW = detail::twiddles<A::TWIDDLE, detail::host_twiddle_source>;
  using X1 = typename A::x1;
  using X2 = typename A::x2;
  constexpr int T = THREADS_PER_TRANSFORM;
  constexpr int V = VALUES_PER_THREAD;
  float2 scratch[A::SCRATCH_FLOAT2]{};
  if (inverse) {
    for (auto& row : v) {
      for (auto& x : row) {
        x = detail::conj(x);
      }
    }
  }
  for (int t = 0; t < T; ++t) {
    A::template pass1<TW>(v[t], t);
    for (int j = 0; j < V; ++j) {
      scratch[X1::write_base(t) + X1::write_offset(j)] = v[t][j];
    }
  }
  // barrier
  for (int t = 0; t < T; ++t) {
    for (int j = 0; j < V; ++j) {
      v[t][j] = scratch[X1::read_base(t) + X1::read_offset(j)];
    }
    A::template pass2<TW>(v[t], t);
  }
  if constexpr (A::EXCHANGE == exchange::smem) {
    // barrier
    for (int t = 0; t < T; ++t) {
      for (int j = 0; j < V; ++j) {
        scratch[X2::write_base(t) + X2::write_offset(j)] = v[t][j];
      }
    }
    // barrier
    for (int t = 0; t < T; ++t) {
      for (int j = 0; j < V; ++j) {
        v[t][j] = scratch[X2::read_base(t) + X2::read_offset(j)];
      }
    }
  } else {
    // the warp shuffles: every lane of an 8-lane group sends, then every lane receives
    for (int g = 0; g < T; g += 8) {
      for (int k = 4; k > 0; k >>= 1) {
        for (int j = 0; j < V; ++j) {
          if ((j & k) != 0) {
            continue;
          }
          float2 sent[8];
          for (int l = 0; l < 8; ++l) {
            sent[l] = detail::xpose_send(v[g + l], l, k, j);
          }
          for (int l = 0; l < 8; ++l) {
            detail::xpose_recv(v[g + l], l, k, j, sent[l ^ k]);
          }
        }
      }
    }
  }
  for (int t = 0; t < T; ++t) {
    A::template pass3<TW>(v[t], t);
  }
  if (inverse) {
    for (auto& row : v) {
      for (auto& x : row) {
        x = detail::conj(x);
      }
    }
  }
}

} // namespace whd::fft
