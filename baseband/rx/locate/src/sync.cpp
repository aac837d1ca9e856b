#include <whd/baseband/sync.hpp>

#include "block_scan.hpp"
#include "cycles.hpp"
#include "host_pool.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numbers>
#include <thread>
#include <utility>

namespace whd::baseband {

namespace p = profile;

const std::array<cf32, p::N>& preamble_body()
{
  static const std::array<cf32, p::N> body = [] {
    // Direct float64 synthesis of §2, once: x[n] = 1/sqrt(352) sum_u T[u] e^{+j 2 pi k n / N}.
    std::array<cf32, p::N> x{};
    const double scale = 1.0 / std::sqrt(double(p::NOF_USED));
    for (int n = 0; n < p::N; ++n) {
      double re = 0.0, im = 0.0;
      for (int u = 0; u < p::NOF_USED; ++u) {
        const double ph = 2.0 * std::numbers::pi * double(p::USED_K[std::size_t(u)]) * n / p::N;
        re += p::preamble_value(u) * std::cos(ph);
        im += p::preamble_value(u) * std::sin(ph);
      }
      x[std::size_t(n)] = cf32(float(re * scale), float(im * scale));
    }
    return x;
  }();
  return body;
}


namespace {
/// Whether the source's samples are integers: a ci8 or ci16 capture.
bool integer_samples(const transport::sample_source& src) { return is_integer(src.type()); }

constexpr std::size_t L = p::SYMBOL_LEN;
constexpr std::size_t W = p::N;

/// P(n) summed in order over the window, double (the CFO of a candidate).
std::pair<double, double> lag_product(const transport::sample_source& src, uint64_t n)
{
  std::array<cf32, W + L> r{};
  src.read(n, r);
  zero_non_finite(r);
  double pre = 0.0, pim = 0.0;
  for (std::size_t i = 0; i < W; ++i) {
    const cf32 a = r[i], b = r[i + L];
    pre += double(a.real()) * b.real() + double(a.imag()) * b.imag();
    pim += double(a.real()) * b.imag() - double(a.imag()) * b.real();
  }
  return {pre, pim};
}
} // namespace

struct candidate_search::scratch {
  block_scan scan{BLOCK};
  std::unique_ptr<block_scan> next; ///< the second of a pair of float blocks, made when first needed
};

candidate_search::candidate_search(const rx_config& cfg)
    : cfg_(cfg), pool_(std::make_unique<host_pool>(cfg.nof_threads ? cfg.nof_threads : std::max(1u, std::thread::hardware_concurrency()),
                                                  "whd-search"))
{
  scratch_.resize(pool_->size());
  for (auto& w : scratch_) {
    w = std::make_unique<scratch>();
  }
}

candidate_search::~candidate_search() = default;

uint64_t candidate_search::nof_positions(uint64_t nof_samples) { return nof_samples >= L + W ? nof_samples - L - W + 1 : 0; }

namespace {
/// Reads block `block`'s samples into `scan`; false (its positions cleared) when the
/// source became shorter than its size said: nothing past it crosses.
bool read_block(const transport::sample_source& src, uint64_t block, std::size_t nof_pos, block_scan& scan, double* m, uint8_t* cross)
{
  const std::size_t want = block_scan::nof_samples(nof_pos);
  if (src.read(block * candidate_search::BLOCK, scan.samples().first(want)) == want) {
    return true;
  }
  std::fill(m, m + nof_pos, 0.0);
  std::fill(cross, cross + nof_pos, uint8_t(0));
  return false;
}
} // namespace

void candidate_search::scan_float_pair(const transport::sample_source& src, uint64_t block, std::size_t nof_pos, std::size_t nof_next,
                                       scratch& w, double* m, uint8_t* cross) const
{
  if (!w.next) {
    w.next = std::make_unique<block_scan>(BLOCK);
  }
  const bool first = read_block(src, block, nof_pos, w.scan, m, cross);
  const bool second = read_block(src, block + 1, nof_next, *w.next, m + BLOCK, cross + BLOCK);
  if (first && second) {
    block_scan::in_order(w.scan, nof_pos, m, cross, *w.next, nof_next, m + BLOCK, cross + BLOCK, cfg_.detect_threshold);
  } else if (first) {
    w.scan.in_order(nof_pos, cfg_.detect_threshold, m, cross);
  } else if (second) {
    w.next->in_order(nof_next, cfg_.detect_threshold, m + BLOCK, cross + BLOCK);
  }
}

void candidate_search::scan_block(const transport::sample_source& src, uint64_t block, std::size_t nof_pos, bool integer, scratch& w,
                                  double* m, uint8_t* cross) const
{
  if (!read_block(src, block, nof_pos, w.scan, m, cross)) {
    return;
  }
  // Integer samples (a ci8 or ci16 capture) make every window sum an exact integer,
  // whatever the order of its additions: the scan that sums chunks and clears runs
  // from a bound on them. Other samples are summed in order, one after the other.
  if (integer) {
    w.scan.integer(src.type(), nof_pos, cfg_.detect_threshold, m, cross);
  } else {
    w.scan.in_order(nof_pos, cfg_.detect_threshold, m, cross);
  }
}

std::vector<detection> candidate_search::find(const transport::sample_source& src, uint64_t lo, uint64_t hi)
{
  std::vector<detection> out;
  const uint64_t npos = nof_positions(src.size());
  hi = std::min(hi, npos);
  if (lo >= hi) {
    return out;
  }
  // Blocks from the one holding lo - L - 1 (a candidate's edge and grid rules look
  // back that far) to the one holding the last position of the last window.
  const uint64_t first_block = (lo > L ? lo - L - 1 : 0) / BLOCK;
  const uint64_t end_pos = std::min(npos, hi + L);
  const uint64_t end_block = (end_pos + BLOCK - 1) / BLOCK;
  const uint64_t base = first_block * BLOCK;
  const auto nof = std::size_t(end_pos - base);
  metric_.resize(nof);
  cross_.resize(nof);
  const auto nof_blocks = std::size_t(end_block - first_block);
  maybe_.assign(nof_blocks, 1);
  const bool integer = integer_samples(src);
  if (filter_ != nullptr && integer) {
    for (std::size_t k = 0; k < nof_blocks; k += FILTER_BLOCKS) {
      const std::size_t n = std::min(FILTER_BLOCKS, nof_blocks - k);
      filter_->mark(src, (first_block + k) * BLOCK, std::span<uint8_t>(maybe_.data() + k, n));
    }
  }
  // Blocks are taken from a shared counter, so that a thread held up (by the decode
  // beside the search, or by the system) holds up no block but its own: one at a
  // time, or two at a time for samples that are not integers, whose scan is bound by
  // its chains of additions and runs two blocks' chains side by side. Every block's
  // M is the same either way.
  const std::size_t step = integer ? 1 : 2;
  const auto parts = unsigned(std::min<std::size_t>(scratch_.size(), (nof_blocks + step - 1) / step));
  const auto block_len = [&](std::size_t k) { return std::min<std::size_t>(BLOCK, nof - k * BLOCK); };
  const auto one = [&](std::size_t k, scratch& w) {
    const std::size_t off = k * BLOCK;
    if (maybe_[k] == 0) {
      std::fill_n(metric_.data() + off, block_len(k), 0.0);
      std::fill_n(cross_.data() + off, block_len(k), uint8_t(0));
    } else {
      scan_block(src, first_block + k, block_len(k), integer, w, metric_.data() + off, cross_.data() + off);
    }
  };
  std::atomic<std::size_t> next_block{0};
  pool_->run(parts, [&](unsigned part, unsigned) {
    scratch& w = *scratch_[part];
    for (std::size_t k; (k = next_block.fetch_add(step, std::memory_order_relaxed)) < nof_blocks;) {
      if (step == 2 && k + 1 < nof_blocks && maybe_[k] != 0 && maybe_[k + 1] != 0) {
        scan_float_pair(src, first_block + k, block_len(k), block_len(k + 1), w, metric_.data() + k * BLOCK, cross_.data() + k * BLOCK);
        continue;
      }
      for (std::size_t j = k; j < std::min(k + step, nof_blocks); ++j) {
        one(j, w);
      }
    }
  });
  // Edges and the grid along runs, and each candidate's peak within its window and
  // its CFO: block by block on the pool (done in one pass on one thread, they had
  // left the cores idle for about an eighth of each region's time on frames of a few
  // symbols, at 16 threads). A crossing's run opened just after the last quiet
  // position before it, or at `base` if none since (a run already open at `base` is
  // at least as old as base): each block learns it from the blocks before it.
  const auto end = std::size_t(hi - base); // positions [0, end) of the arrays are searched
  const std::size_t nof_pass = (end + BLOCK - 1) / BLOCK;
  std::vector<uint64_t> opened(nof_pass); // where a run open at each block's first position opened
  uint64_t after_quiet = base;
  for (std::size_t k = 0; k < nof_pass; ++k) {
    opened[k] = after_quiet;
    for (std::size_t i = std::min(end, (k + 1) * BLOCK); i > k * BLOCK; --i) {
      if (cross_[i - 1] == 0) {
        after_quiet = base + i;
        break;
      }
    }
  }
  const auto peak_and_cfo = [&](detection& d) {
    const std::size_t i = std::size_t(d.window - base);
    const std::size_t last = std::size_t(std::min(d.window + L, npos) - base);
    std::size_t best = i;
    for (std::size_t k = i + 1; k < last; ++k) {
      if (metric_[k] > metric_[best]) {
        best = k;
      }
    }
    d.coarse = base + best;
    d.metric = float(metric_[best]);
    const auto [pre, pim] = lag_product(src, d.coarse);
    d.cfo_cps = std::atan2(pim, pre) / (2.0 * std::numbers::pi * double(L));
  };
  std::vector<std::vector<detection>> found(nof_pass);
  std::atomic<std::size_t> next{0};
  pool_->run(unsigned(std::min<std::size_t>(pool_->size(), nof_pass)), [&](unsigned, unsigned) {
    for (std::size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < nof_pass;) {
      const std::size_t stop = std::min(end, (k + 1) * BLOCK);
      uint64_t run = opened[k];
      for (std::size_t i = k * BLOCK; i < stop; ++i) {
        if (cross_[i] == 0) {
          // Skip the quiet positions eight at a time (most of a capture).
          uint64_t word = 0;
          while (i + 8 <= stop && (std::memcpy(&word, cross_.data() + i, 8), word == 0)) {
            i += 8;
          }
          while (i < stop && cross_[i] == 0) {
            ++i;
          }
          if (i >= stop) {
            break;
          }
        }
        const uint64_t n = base + i;
        const bool edge = n == 0 || (n > base && cross_[i - 1] == 0);
        if (edge) {
          run = n;
        }
        if (n < lo || !(edge || (n % L == 0 && n >= run + L))) {
          continue;
        }
        detection d;
        d.window = n;
        peak_and_cfo(d);
        found[k].push_back(d);
      }
    }
  });
  std::size_t total = 0;
  for (const auto& f : found) {
    total += f.size();
  }
  out.reserve(total);
  for (const auto& f : found) {
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

namespace {
constexpr int SEARCH = 2 * p::G;                 // lags searched either side of coarse + G
constexpr std::size_t MAX_LAGS = 2 * SEARCH + 1; // the lags of one candidate
/// Lags whose cross-correlation sums are computed together, one per vector lane.
constexpr std::size_t XC_LAGS = 8;
constexpr std::size_t XC_BLOCKS = (MAX_LAGS + XC_LAGS - 1) / XC_LAGS;
/// Samples the lags of a candidate need, as many as whole blocks of lags read.
constexpr std::size_t XC_SAMPLES = XC_BLOCKS * XC_LAGS + W - 1;

/// The preamble body as doubles (exact), real and imaginary parts apart.
struct body_doubles {
  std::array<double, W> re{}, im{};
};
const body_doubles& preamble_body_doubles()
{
  static const body_doubles b = [] {
    body_doubles d;
    const auto& x = preamble_body();
    for (std::size_t n = 0; n < W; ++n) {
      d.re[n] = x[n].real();
      d.im[n] = x[n].imag();
    }
    return d;
  }();
  return b;
}

/// XC_LAGS doubles: one AVX-512 register, two AVX2 or four SSE2 ones.
typedef double lag_lanes __attribute__((vector_size(XC_LAGS * sizeof(double))));

/// The cross-correlation sums sum_n conj(x[n]) r[t + n] over N samples for lags
/// t of [0, nof_blocks * XC_LAGS), in double: for each lag four partial sums
/// (n mod 4), each in order of n, added as (s0 + s1) + (s2 + s3). Every term is
/// ar br + ai bi (or ar bi - ai br) of floats widened to double, whose products are
/// exact: the lags of a block share the loads of x, one lag a vector lane, and
/// every lag's sums are the very additions of the one-lag loop they replace (no
/// contraction into fused multiply-adds: sync.cpp is built without it).
/// @param[in] x_re, x_im the preamble body, N each
/// @param[in] r_re, r_im the samples, nof_blocks * XC_LAGS + N - 1 each
/// @param[out] s_re, s_im the sums, nof_blocks * XC_LAGS each
__attribute__((target_clones("avx512f", "avx2", "default"))) void xcorr_sums(const double* x_re, const double* x_im, const double* r_re,
                                                                           const double* r_im, std::size_t nof_blocks, double* s_re,
                                                                           double* s_im)
{
  for (std::size_t blk = 0; blk < nof_blocks; ++blk) {
    const double* br_at = r_re + blk * XC_LAGS;
    const double* bi_at = r_im + blk * XC_LAGS;
    lag_lanes re[4] = {}, im[4] = {};
    for (std::size_t n = 0; n < W; n += 4) {
      for (std::size_t k = 0; k < 4; ++k) {
        const double ar = x_re[n + k], ai = x_im[n + k];
        lag_lanes br, bi;
        std::memcpy(&br, br_at + n + k, sizeof br);
        std::memcpy(&bi, bi_at + n + k, sizeof bi);
        re[k] += ar * br + ai * bi;
        im[k] += ar * bi - ai * br;
      }
    }
    const lag_lanes sre = (re[0] + re[1]) + (re[2] + re[3]);
    const lag_lanes sim = (im[0] + im[1]) + (im[2] + im[3]);
    std::memcpy(s_re + blk * XC_LAGS, &sre, sizeof sre);
    std::memcpy(s_im + blk * XC_LAGS, &sim, sizeof sim);
  }
}
} // namespace

std::optional<frame_sync> synchronize(const transport::sample_source& src, const detection& d, const rx_config& cfg)
{
  // Window: lags tau in [coarse + G - SEARCH, coarse + G + SEARCH], each needing N
  // samples, clipped at the capture's first sample: a frame at sample 0 has its
  // detection plateau at coarse = 0..G, and must be searched, not skipped.
  const uint64_t centre = d.coarse + p::G;
  const uint64_t first = centre > uint64_t(SEARCH) ? centre - uint64_t(SEARCH) : 0;
  const auto nof_lags = std::size_t(centre + uint64_t(SEARCH) - first) + 1;
  std::array<cf32, MAX_LAGS + W - 1> r_all;
  const std::span<cf32> r(r_all.data(), nof_lags + W - 1);
  if (src.read(first, r) != r.size()) {
    return std::nullopt;
  }
  zero_non_finite(r);
  // Coarse CFO correction (the phase reference does not matter for |xc|), and the
  // samples as doubles for the cross-correlation, zero past the last lag's.
  std::array<double, XC_SAMPLES> r_re, r_im;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const double ph = -2.0 * std::numbers::pi * remainder_one(d.cfo_cps * double(i));
    r[i] *= cf32(float(std::cos(ph)), float(std::sin(ph)));
    r_re[i] = r[i].real();
    r_im[i] = r[i].imag();
  }
  std::fill(r_re.begin() + std::ptrdiff_t(r.size()), r_re.end(), 0.0);
  std::fill(r_im.begin() + std::ptrdiff_t(r.size()), r_im.end(), 0.0);
  static const double ex = [] {
    double sum = 0.0;
    for (const cf32& v : preamble_body()) {
      sum += std::norm(v);
    }
    return sum;
  }();
  const auto& x = preamble_body_doubles();
  std::array<double, XC_BLOCKS * XC_LAGS> s_re, s_im;
  xcorr_sums(x.re.data(), x.im.data(), r_re.data(), r_im.data(), (nof_lags + XC_LAGS - 1) / XC_LAGS, s_re.data(), s_im.data());
  std::array<double, MAX_LAGS> pow_xc, energy;
  double e = 0.0;
  for (int i = 0; i < p::N; ++i) {
    e += std::norm(r[std::size_t(i)]);
  }
  for (std::size_t t = 0; t < nof_lags; ++t) {
    pow_xc[t] = s_re[t] * s_re[t] + s_im[t] * s_im[t];
    energy[t] = e;
    if (t + 1 < nof_lags) {
      e += std::norm(r[t + p::N]) - std::norm(r[t]);
    }
  }
  const std::size_t peak = std::size_t(std::max_element(pow_xc.begin(), pow_xc.begin() + std::ptrdiff_t(nof_lags)) - pow_xc.begin());
  // Validation: the preamble's energy around the peak, normalised per lag, above
  // the floor of the other lags searched. A preamble concentrates its
  // cross-correlation within the delay spread around the peak; a tone correlates
  // equally at every lag (|xc|^2 = |X(f)|^2 whatever the lag), so summed over the
  // G + 1 lags around the peak without the floor removed, a tone at about one
  // frequency in nine passes the threshold (up to 0.84 against 0.3): the header
  // that follows is noise, and the receiver would report a header failure every
  // few symbols of a capture with a spur, or, once in 2^16 / 8 (CRC and a valid
  // modulation field), accept a false frame of random length.
  std::array<double, MAX_LAGS> norm_xc;
  for (std::size_t t = 0; t < nof_lags; ++t) {
    norm_xc[t] = energy[t] > 0.0 ? pow_xc[t] / (ex * energy[t]) : 0.0;
  }
  const std::size_t lo = peak >= p::G / 2 ? peak - p::G / 2 : 0;
  const std::size_t hi = std::min(nof_lags - 1, peak + p::G / 2);
  double around = 0.0, elsewhere = 0.0;
  for (std::size_t t = 0; t < nof_lags; ++t) {
    (t >= lo && t <= hi ? around : elsewhere) += norm_xc[t];
  }
  const std::size_t nof_around = hi - lo + 1; // at most G + 1 of the 4 G + 1 lags
  const double floor_per_lag = elsewhere / double(nof_lags - nof_around);
  const double rho = around - floor_per_lag * double(nof_around);
  if (!(rho >= cfg.validate_threshold)) {
    return std::nullopt;
  }
  std::size_t first_path = peak;
  for (std::size_t t = lo; t < peak; ++t) {
    if (pow_xc[t] >= cfg.first_path_fraction * pow_xc[peak]) {
      first_path = t;
      break;
    }
  }
  frame_sync s;
  const uint64_t body0 = first + first_path; // first path's preamble-0 body
  if (body0 < uint64_t(std::max(p::G, cfg.timing_backoff))) {
    return std::nullopt; // the capture starts inside the first guard: not a whole preamble
  }
  s.start = body0 - p::G;
  s.fft0 = body0 - uint64_t(cfg.timing_backoff);
  // Fine CFO over the two FFT windows.
  std::array<cf32, W + L> w;
  if (src.read(s.fft0, w) != w.size()) {
    return std::nullopt;
  }
  zero_non_finite(w);
  double pre = 0.0, pim = 0.0;
  for (int i = 0; i < p::N; ++i) {
    const cf32 a = w[std::size_t(i)], b = w[std::size_t(i + p::SYMBOL_LEN)];
    pre += double(a.real()) * b.real() + double(a.imag()) * b.imag();
    pim += double(a.real()) * b.imag() - double(a.imag()) * b.real();
  }
  s.cfo_cps = std::atan2(pim, pre) / (2.0 * std::numbers::pi * double(p::SYMBOL_LEN));
  return s;
}

} // namespace whd::baseband
