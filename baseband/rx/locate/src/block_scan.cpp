#include "block_scan.hpp"

#include <whd/baseband/non_finite.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace whd::baseband {

namespace {
constexpr std::size_t L = profile::SYMBOL_LEN;
constexpr std::size_t W = profile::N;
constexpr std::size_t RUN = block_scan::RUN;
static_assert(W % RUN == 0 && L % RUN == 0, "windows and the lag are whole chunks");
constexpr std::size_t W_CHUNKS = W / RUN; // chunks of a window
constexpr std::size_t L_CHUNKS = L / RUN; // chunks of the lag

/// Whether a position of [n0, n1) may have a metric above 2 * half_thr: false
/// when every |P|^2 is at most half_thr times the energies' product. Built for
/// AVX2 as well, where it vectorises (the baseline x86-64 build does not).
__attribute__((target_clones("avx2", "default"))) bool may_cross(const double* sp_re, const double* sp_im, const double* se,
                                                                 std::size_t n0, std::size_t n1, double half_thr)
{
  int64_t maybe = 0; // 64 bits wide like the doubles, so the loop vectorises
  for (std::size_t n = n0; n < n1; ++n) {
    const double pre = sp_re[n + W] - sp_re[n];
    const double pim = sp_im[n + W] - sp_im[n];
    const double den = (se[n + W] - se[n]) * (se[n + L + W] - se[n + L]);
    maybe += int64_t(pre * pre + pim * pim > half_thr * den);
  }
  return maybe != 0;
}

typedef float f32x4 __attribute__((vector_size(4 * sizeof(float))));
typedef double f64x4 __attribute__((vector_size(4 * sizeof(double))));

// I and Q of each sample swapped, in GCC's spelling or clang's (the fuzz build's).
#if defined(__clang__)
#define WHD_SWAP_IQ4(v) __builtin_shufflevector(v, v, 1, 0, 3, 2)
#define WHD_SWAP_IQ8(v) __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6)
#else
typedef int64_t i64x4 __attribute__((vector_size(4 * sizeof(int64_t))));
typedef int32_t i32x8 __attribute__((vector_size(8 * sizeof(int32_t))));
#define WHD_SWAP_IQ4(v) __builtin_shuffle(v, i64x4{1, 0, 3, 2})
#define WHD_SWAP_IQ8(v) __builtin_shuffle(v, i32x8{1, 0, 3, 2, 5, 4, 7, 6})
#endif

/// Sums over chunks c = 0..nof_chunks-1 of RUN samples i of conj(r[i]) r[i+L]
/// (c_re, c_im) and |r[i]|^2 (c_e), of integer samples: every product and sum is an
/// exact integer in double, so the lanes add in any order. Built for AVX2 as well.
/// @param[in] r  nof_chunks * RUN + L samples
__attribute__((target_clones("avx2", "default"))) void chunk_sums(const cf32* r, std::size_t nof_chunks, double* c_re, double* c_im,
                                                                  double* c_e)
{
  const auto* f = reinterpret_cast<const float*>(r);
  for (std::size_t c = 0; c < nof_chunks; ++c) {
    const float* a_at = f + 2 * c * RUN;
    const float* b_at = a_at + 2 * L;
    // Two samples a vector (I, Q, I, Q); two vectors a step for independent additions.
    f64x4 re[2] = {}, im[2] = {}, e[2] = {};
    for (std::size_t i = 0; i < 2 * RUN; i += 8) {
      for (std::size_t k = 0; k < 2; ++k) {
        f32x4 a4, b4;
        std::memcpy(&a4, a_at + i + 4 * k, sizeof a4);
        std::memcpy(&b4, b_at + i + 4 * k, sizeof b4);
        const f64x4 a = __builtin_convertvector(a4, f64x4);
        const f64x4 b = __builtin_convertvector(b4, f64x4);
        re[k] += a * b;                          // ar br, ai bi
        im[k] += a * WHD_SWAP_IQ4(b); // ar bi, ai br
        e[k] += a * a;
      }
    }
    const f64x4 sre = re[0] + re[1], sim = im[0] + im[1], se = e[0] + e[1];
    c_re[c] = (sre[0] + sre[1]) + (sre[2] + sre[3]);
    c_im[c] = (sim[0] + sim[2]) - (sim[1] + sim[3]);
    c_e[c] = (se[0] + se[1]) + (se[2] + se[3]);
  }
}

typedef float f32x8 __attribute__((vector_size(8 * sizeof(float))));

/// chunk_sums for samples of magnitude at most 2^7 (ci8), in float: every product
/// is an integer of at most 2^14 and every sum of a chunk's at most 2^22 < 2^24, so
/// float is exact too, and holds twice the lanes without widening (which GCC splits
/// into halves for the vectors of chunk_sums).
__attribute__((target_clones("avx2", "default"))) void chunk_sums_small(const cf32* r, std::size_t nof_chunks, double* c_re, double* c_im,
                                                                        double* c_e)
{
  const auto* f = reinterpret_cast<const float*>(r);
  for (std::size_t c = 0; c < nof_chunks; ++c) {
    const float* a_at = f + 2 * c * RUN;
    const float* b_at = a_at + 2 * L;
    // Four samples a vector; two vectors a step for independent additions.
    f32x8 re[2] = {}, im[2] = {}, e[2] = {};
    for (std::size_t i = 0; i < 2 * RUN; i += 16) {
      for (std::size_t k = 0; k < 2; ++k) {
        f32x8 a, b;
        std::memcpy(&a, a_at + i + 8 * k, sizeof a);
        std::memcpy(&b, b_at + i + 8 * k, sizeof b);
        re[k] += a * b;
        im[k] += a * WHD_SWAP_IQ8(b);
        e[k] += a * a;
      }
    }
    const f32x8 sre = re[0] + re[1], sim = im[0] + im[1], se = e[0] + e[1];
    c_re[c] = double(((sre[0] + sre[1]) + (sre[2] + sre[3])) + ((sre[4] + sre[5]) + (sre[6] + sre[7])));
    c_im[c] = double(((sim[0] + sim[2]) + (sim[4] + sim[6])) - ((sim[1] + sim[3]) + (sim[5] + sim[7])));
    c_e[c] = double(((se[0] + se[1]) + (se[2] + se[3])) + ((se[4] + se[5]) + (se[6] + se[7])));
  }
}

/// What the sums of P, R1 and R2 add from position n to n + 1, j = n - n0 < nof, of
/// integer samples r[j] = sample n0 + j (exact). Built for AVX2 as well, where it
/// vectorises.
__attribute__((target_clones("avx2", "default"))) void slide_terms(const cf32* r, std::size_t nof, double* d_re, double* d_im, double* d_r1,
                                                                   double* d_r2)
{
  const auto* f = reinterpret_cast<const float*>(r);
  for (std::size_t j = 0; j < nof; ++j) {
    const double ar = f[2 * j], ai = f[2 * j + 1];                                 // leaves P and R1
    const double br = f[2 * (j + L)], bi = f[2 * (j + L) + 1];                     // leaves P and R2
    const double cr = f[2 * (j + W)], ci = f[2 * (j + W) + 1];                     // enters P and R1
    const double dr = f[2 * (j + W + L)], di = f[2 * (j + W + L) + 1];             // enters P and R2
    d_re[j] = (cr * dr + ci * di) - (ar * br + ai * bi);
    d_im[j] = (cr * di - ci * dr) - (ar * bi - ai * br);
    d_r1[j] = (cr * cr + ci * ci) - (ar * ar + ai * ai);
    d_r2[j] = (dr * dr + di * di) - (br * br + bi * bi);
  }
}

/// M and the crossings of nof positions from their window sums, as every backend
/// computes M (sync.hpp: den > 0 ? (pre^2 + pim^2) / den : 0, den = R1 R2), for
/// integer sums: den is 0 or at least 1. Without a branch or a select on a
/// comparison, so that the loop vectorises (built for AVX2 as well; GCC does not
/// if-convert a select on a comparison that may trap): with some = 1 where den >= 1
/// and 0 where den is 0, the quotient is taken by den + (1 - some), which is den
/// exactly or 1 (no lane divides by 0), and multiplied by some: the quotient exactly,
/// or +0 as the branch gives.
__attribute__((target_clones("avx2", "default"))) void run_metrics(const double* pre, const double* pim, const double* r1, const double* r2,
                                                                   std::size_t nof, double thr, double* m, uint8_t* cross)
{
  for (std::size_t j = 0; j < nof; ++j) {
    const double den = r1[j] * r2[j];
    const double some = double(int64_t(den >= 1.0));
    const double q = (pre[j] * pre[j] + pim[j] * pim[j]) / (den + (1.0 - some));
    m[j] = q * some;
    cross[j] = uint8_t(m[j] > thr);
  }
}

/// M as every backend computes it from the window sums (sync.hpp).
inline double metric(double pre, double pim, double r1, double r2)
{
  const double den = r1 * r2;
  return den > 0.0 ? (pre * pre + pim * pim) / den : 0.0;
}
} // namespace

block_scan::block_scan(std::size_t max_positions) : max_pos_(max_positions)
{
  const std::size_t nof_runs = (max_pos_ + RUN - 1) / RUN;
  // integer() reads whole chunks up to the last run's bound: nof_runs + W/RUN + L/RUN
  // chunks and their lag (zeros past the block's samples).
  buf_.resize(std::max(nof_samples(max_pos_), nof_runs * RUN + W + 2 * L));
  const std::size_t sums = std::max(nof_samples(max_pos_) + 1, nof_runs + W_CHUNKS + L_CHUNKS);
  sp_re_.resize(sums);
  sp_im_.resize(sums);
  se_.resize(sums);
}

namespace {
/// Sample i's terms of the three prefix sums: conj(a) b and |a|^2 in double (each
/// product exact), b the sample L after a, 0 past the block's `got` samples.
struct prefix_terms {
  double re, im, e;
};
inline prefix_terms terms_at(const cf32* buf, std::size_t i, std::size_t got)
{
  const cf32 a = buf[i];
  const cf32 b = i + L < got ? buf[i + L] : cf32{};
  return {double(a.real()) * b.real() + double(a.imag()) * b.imag(), double(a.real()) * b.imag() - double(a.imag()) * b.real(),
          double(a.real()) * a.real() + double(a.imag()) * a.imag()};
}

/// The prefix sums [from + 1, got] of a block of `got` samples, on from those at
/// `from` (sp[0] = 0 when from = 0). The running sums stay in registers: each is a
/// chain of additions, one a sample.
inline void prefix_sums(const cf32* buf, std::size_t from, std::size_t got, double* sp_re, double* sp_im, double* se)
{
  if (from == 0) {
    sp_re[0] = sp_im[0] = se[0] = 0.0;
  }
  double s_re = sp_re[from], s_im = sp_im[from], s_e = se[from];
  for (std::size_t i = from; i < got; ++i) {
    const prefix_terms t = terms_at(buf, i, got);
    sp_re[i + 1] = s_re += t.re;
    sp_im[i + 1] = s_im += t.im;
    se[i + 1] = s_e += t.e;
  }
}
} // namespace

void block_scan::in_order(std::size_t nof_pos, float threshold, double* m, uint8_t* cross)
{
  const std::size_t got = nof_samples(nof_pos);
  // A NaN would make every prefix sum after it NaN, and the metric of every
  // position of the block with it.
  zero_non_finite(std::span<cf32>(buf_.data(), got));
  double* sp_re = sp_re_.data();
  double* sp_im = sp_im_.data();
  double* se = se_.data();
  const cf32* buf = buf_.data();
  // Each term is made first and then added to its sum: one addition in each sum's
  // chain a sample instead of two, which halved this loop's time (it is bound by
  // the chain).
  prefix_sums(buf, 0, got, sp_re, sp_im, se);
  metrics_in_order(nof_pos, threshold, m, cross);
}

void block_scan::in_order(block_scan& a, std::size_t nof_a, double* m_a, uint8_t* cross_a, block_scan& b, std::size_t nof_b,
                          double* m_b, uint8_t* cross_b, float threshold)
{
  const std::size_t got_a = nof_samples(nof_a);
  const std::size_t got_b = nof_samples(nof_b);
  zero_non_finite(std::span<cf32>(a.buf_.data(), got_a));
  zero_non_finite(std::span<cf32>(b.buf_.data(), got_b));
  double* a_re = a.sp_re_.data();
  double* a_im = a.sp_im_.data();
  double* a_e = a.se_.data();
  double* b_re = b.sp_re_.data();
  double* b_im = b.sp_im_.data();
  double* b_e = b.se_.data();
  const cf32* a_buf = a.buf_.data();
  const cf32* b_buf = b.buf_.data();
  // Each sum gets the same terms in the same order as in the scan of one block.
  const std::size_t both = std::min(got_a, got_b);
  double sa_re = 0.0, sa_im = 0.0, sa_e = 0.0, sb_re = 0.0, sb_im = 0.0, sb_e = 0.0;
  a_re[0] = a_im[0] = a_e[0] = 0.0;
  b_re[0] = b_im[0] = b_e[0] = 0.0;
  for (std::size_t i = 0; i < both; ++i) {
    const prefix_terms ta = terms_at(a_buf, i, got_a);
    const prefix_terms tb = terms_at(b_buf, i, got_b);
    a_re[i + 1] = sa_re += ta.re;
    b_re[i + 1] = sb_re += tb.re;
    a_im[i + 1] = sa_im += ta.im;
    b_im[i + 1] = sb_im += tb.im;
    a_e[i + 1] = sa_e += ta.e;
    b_e[i + 1] = sb_e += tb.e;
  }
  prefix_sums(a_buf, both, got_a, a_re, a_im, a_e);
  prefix_sums(b_buf, both, got_b, b_re, b_im, b_e);
  a.metrics_in_order(nof_a, threshold, m_a, cross_a);
  b.metrics_in_order(nof_b, threshold, m_b, cross_b);
}

void block_scan::metrics_in_order(std::size_t nof_pos, float threshold, double* m, uint8_t* cross) const
{
  const double* sp_re = sp_re_.data();
  const double* sp_im = sp_im_.data();
  const double* se = se_.data();
  // A position whose |P|^2 is at most half the threshold times the energies has a
  // metric at most the threshold whatever the rounding, without the division. Runs
  // of positions are cleared that way (a loop that vectorises); only a run holding
  // a position that may cross gets the metric itself.
  const double thr = double(threshold);
  const double half_thr = 0.5 * thr;
  const bool clear_runs = threshold >= 0.0f;
  for (std::size_t n0 = 0; n0 < nof_pos; n0 += RUN) {
    const std::size_t n1 = std::min(nof_pos, n0 + RUN);
    if (clear_runs && !may_cross(sp_re, sp_im, se, n0, n1, half_thr)) {
      std::fill(m + n0, m + n1, 0.0);
      std::fill(cross + n0, cross + n1, uint8_t(0));
      continue;
    }
    for (std::size_t n = n0; n < n1; ++n) {
      m[n] = metric(sp_re[n + W] - sp_re[n], sp_im[n + W] - sp_im[n], se[n + W] - se[n], se[n + L + W] - se[n + L]);
      cross[n] = m[n] > thr ? 1 : 0;
    }
  }
}

void block_scan::integer(datatype type, std::size_t nof_pos, float threshold, double* m, uint8_t* cross)
{
  // Chunk c holds samples [c RUN, (c + 1) RUN); run k holds positions [k RUN, (k + 1) RUN),
  // whose windows start in chunk k (P, R1) and k + L_CHUNKS (R2). The bound of run k reads
  // chunk sums up to k + W_CHUNKS + L_CHUNKS, and those read samples past the block's:
  // zeros, which no window of the block's positions holds.
  const std::size_t nof_runs = (nof_pos + RUN - 1) / RUN;
  const std::size_t nof_chunks = nof_runs + W_CHUNKS + L_CHUNKS;
  cf32* buf = buf_.data();
  std::fill(buf + nof_samples(nof_pos), buf + nof_chunks * RUN + L, cf32{});
  double* c_re = sp_re_.data();
  double* c_im = sp_im_.data();
  double* c_e = se_.data();
  if (type == datatype::ci8) {
    chunk_sums_small(buf, nof_chunks, c_re, c_im, c_e);
  } else {
    chunk_sums(buf, nof_chunks, c_re, c_im, c_e);
  }

  const double thr = double(threshold);
  const double half_thr = 0.5 * thr;
  const bool clear_runs = threshold >= 0.0f;
  for (std::size_t k = 0; k < nof_runs; ++k) {
    const std::size_t n0 = k * RUN;
    const std::size_t n1 = std::min(nof_pos, n0 + RUN);
    // The window sums at the run's first position, exact (integers).
    double pre = 0.0, pim = 0.0, r1 = 0.0, r2 = 0.0;
    for (std::size_t c = k; c < k + W_CHUNKS; ++c) {
      pre += c_re[c];
      pim += c_im[c];
      r1 += c_e[c];
      r2 += c_e[c + L_CHUNKS];
    }
    // The run's positions n = n0 + j, j < RUN, move their windows by j samples: out
    // of the leaving chunks (k for P and R1, k + L_CHUNKS for R2), into the entering
    // ones (k + W_CHUNKS for P). So
    //   |P(n)| <= |P(n0)| + sum_i |r[i]| |r[i + L]| over chunks k and k + W_CHUNKS,
    //   each sum at most sqrt(E(c) E(c + L_CHUNKS)) (Cauchy-Schwarz, E a chunk's energy),
    //   R1(n) >= R1(n0) - E(k) >= 0, R2(n) >= R2(n0) - E(k + L_CHUNKS) >= 0.
    // Where p_hi^2 <= thr/2 r1_lo r2_lo, every M(n) <= thr: each side is within a
    // relative 2^-48 of its value in exact arithmetic (some ten roundings of 2^-53:
    // the energies' differences are exact, the sqrt and products round), so the exact
    // |P(n)|^2 / (R1(n) R2(n)) is at most thr/2 (1 + 2^-47), and M, that ratio
    // through four more roundings, at most thr/2 (1 + 2^-46) < thr. With an energy
    // bound of 0, only p_hi = 0 clears: then every P(n) = 0 and M(n) = 0, not > thr >= 0.
    if (clear_runs) {
      const double edges = std::sqrt(c_e[k] * c_e[k + L_CHUNKS]) + std::sqrt(c_e[k + W_CHUNKS] * c_e[k + W_CHUNKS + L_CHUNKS]);
      const double p_hi = std::sqrt(pre * pre + pim * pim) + edges;
      const double r1_lo = r1 - c_e[k];
      const double r2_lo = r2 - c_e[k + L_CHUNKS];
      if (p_hi * p_hi <= half_thr * (r1_lo * r2_lo)) {
        std::fill(m + n0, m + n1, 0.0);
        std::fill(cross + n0, cross + n1, uint8_t(0));
        continue;
      }
    }
    // Every position of the run: its window sums slid one sample at a time, exact.
    const std::size_t nof = n1 - n0;
    run_sums& d = steps_;
    run_sums& at = sums_;
    slide_terms(buf + n0, nof, d.re, d.im, d.r1, d.r2);
    at.re[0] = pre;
    at.im[0] = pim;
    at.r1[0] = r1;
    at.r2[0] = r2;
    for (std::size_t j = 1; j < nof; ++j) {
      at.re[j] = at.re[j - 1] + d.re[j - 1];
      at.im[j] = at.im[j - 1] + d.im[j - 1];
      at.r1[j] = at.r1[j - 1] + d.r1[j - 1];
      at.r2[j] = at.r2[j - 1] + d.r2[j - 1];
    }
    run_metrics(at.re, at.im, at.r1, at.r2, nof, thr, m + n0, cross + n0);
  }
}

} // namespace whd::baseband
