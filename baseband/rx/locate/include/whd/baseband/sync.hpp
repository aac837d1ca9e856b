/// @file sync.hpp
/// Frame detection, fine timing and CFO from the preamble (profile §4): the
/// host reference that every backend follows.
///
/// Detection: M(n) = |P(n)|^2 / (R1(n) R2(n)) with P(n) = sum_{i<N} conj(r[n+i]) r[n+i+576]
/// and R1, R2 the energies of the two windows. Two identical preamble symbols give
/// M ~ 1 on a plateau; noise gives M ~ 1/N. A run of positions above the threshold
/// opens a search of one symbol for the maximum of M (the coarse point): see
/// candidate_search for the exact definition, which every backend follows.
/// Fine timing: cross-correlation with the known preamble body after a coarse
/// CFO correction; the first path within G/2 before the peak, backed off into
/// the guard. CFO: arg P over the exact FFT windows of the two preamble symbols.
///
/// Non-finite samples (NaN or Inf, which a cf32 capture may hold and integer ones
/// cannot) are taken as 0 by every step here, so that one of them costs the
/// windows it lies in and not, through a running sum, everything after it.
#pragma once

#include <whd/baseband/non_finite.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/baseband/rx_types.hpp>
#include <whd/transport/capture.hpp>
#include <whd/transport/sample_types.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace whd::baseband {

/// The preamble symbol's 512 body samples, as transmitted (profile §2, unit-free).
const std::array<cf32, profile::N>& preamble_body();

/// A candidate frame start (see candidate_search).
struct detection {
  uint64_t window = 0;   ///< where the candidate's search window opens (a crossing)
  uint64_t coarse = 0;   ///< first argmax of M over [window, window + L) (the coarse point)
  float metric = 0.0f;   ///< M at `coarse`
  double cfo_cps = 0.0;  ///< coarse CFO [cycles/sample]: arg P(coarse) / (2 pi L), P summed in order
};

/// Where a frame is and how it is rotated.
struct frame_sync {
  uint64_t start = 0;    ///< first preamble sample, guard included (first path)
  uint64_t fft0 = 0;     ///< first sample of preamble symbol 0's FFT window
  double cfo_cps = 0.0;  ///< CFO [cycles/sample], corrected as exp(-j 2 pi cfo (n - start))
};

/// First sample of symbol m's FFT window.
inline uint64_t fft_window(const frame_sync& s, uint64_t m) { return s.fft0 + m * profile::SYMBOL_LEN; }

class host_pool;

/// Clears runs of the search's blocks that cannot hold a crossing, so that long
/// silences are not scanned on the host (the GPU backend has one on its device).
/// It must be conservative: a block it clears holds no position whose metric
/// passes the threshold, so that detections are exactly those of the host scan.
class block_filter {
public:
  virtual ~block_filter() = default;
  /// Block k (k < maybe.size()) starts at sample base + k * candidate_search::BLOCK of a ci8
  /// or ci16 capture and holds its positions n < BLOCK with base + k * BLOCK +
  /// n + L + N <= src.size(); maybe[k] = 0 clears it, 1 leaves it to the scan.
  virtual void mark(const transport::sample_source& src, uint64_t base, std::span<uint8_t> maybe) = 0;
};

/// The frame search (profile §4), defined so that it is a pure function of the
/// capture: every backend finds the same candidates, in parallel, wherever it
/// starts looking.
///
/// Positions n with n + L + N <= size(). M(n) = |P(n)|^2 / (R1(n) R2(n)) in double
/// (0 where the energies are 0); n crosses when M(n) > rx_config::detect_threshold.
/// Its sums are prefix sums over the block of BLOCK positions that holds n (blocks
/// on a fixed grid from sample 0), summed in order, of terms each made first in
/// double (conj(r[i]) r[i+L] as re = ar br + ai bi, im = ar bi - ai br; |r[i]|^2);
/// for integer captures (ci8, ci16) every sum is an exact integer, so any order
/// gives the same M.
/// A candidate window opens at c where
///   - c crosses and c - 1 does not (or c = 0): the edge of a run of crossings, or
///   - c crosses, c is a multiple of L, and so do all of [c - L, c]: every symbol
///     along a long run (a tone, a DC offset, a preamble inside one).
/// Its coarse point is the first maximum of M over [c, c + L) (clipped at the last
/// position), and its CFO is arg P(coarse) / (2 pi L) with P(coarse) summed in order
/// over the window (i = 0..N-1, double).
///
/// Which candidates become frames is decided by the walk over them in order (see
/// frame_walk in frame_locator.hpp), not here.
class candidate_search {
public:
  explicit candidate_search(const rx_config& cfg);
  ~candidate_search();
  candidate_search(const candidate_search&) = delete;
  candidate_search& operator=(const candidate_search&) = delete;

  /// Every candidate whose window opens in [lo, hi), in ascending order. Blocks are
  /// scanned in parallel over rx_config::nof_threads. Memory: 9 bytes a position of
  /// [lo - L - 1, hi + L), so callers keep hi - lo to a few million.
  std::vector<detection> find(const transport::sample_source& src, uint64_t lo, uint64_t hi);
  /// Long silences in ci8 and ci16 capture files go through `f` (not owned; null:
  /// none) FILTER_BLOCKS blocks at a time, and only the blocks it leaves are scanned.
  void set_block_filter(block_filter* f) noexcept { filter_ = f; }
  /// Positions that can be searched in a source of `nof_samples` samples.
  static uint64_t nof_positions(uint64_t nof_samples);

  /// Metric positions per block of the grid.
  static constexpr std::size_t BLOCK = std::size_t(1) << 16;
  /// Blocks one block_filter::mark call covers at most.
  static constexpr std::size_t FILTER_BLOCKS = 256;

private:
  struct scratch;
  /// M and the crossings of the first nof_pos positions of grid block `block`.
  void scan_block(const transport::sample_source& src, uint64_t block, std::size_t nof_pos, bool integer, scratch& w, double* m,
                  uint8_t* cross) const;
  /// The same for blocks `block` and `block + 1` (nof_pos and nof_next positions) of
  /// samples that are not integers, scanned side by side (block_scan::in_order).
  void scan_float_pair(const transport::sample_source& src, uint64_t block, std::size_t nof_pos, std::size_t nof_next, scratch& w,
                       double* m, uint8_t* cross) const;

  rx_config cfg_;
  std::vector<std::unique_ptr<scratch>> scratch_;
  std::unique_ptr<host_pool> pool_;
  block_filter* filter_ = nullptr;
  std::vector<double> metric_; ///< M over the blocks of the last find()
  std::vector<uint8_t> cross_; ///< crossings over the same positions
  std::vector<uint8_t> maybe_; ///< the block filter's verdicts
};

/// Fine timing and CFO for a detection. nullopt when the cross-correlation does not
/// show a preamble (a tone or DC offset can pass the detector) or the source ends.
std::optional<frame_sync> synchronize(const transport::sample_source& src, const detection& d, const rx_config& cfg);

} // namespace whd::baseband
