/// @file sync.hpp
/// Frame detection, fine timing and CFO from the preamble (profile §4): the
/// host reference that every backend follows.
///
/// Detection: M(n) = |P(n)|^2 / (R1(n) R2(n)) with P(n) = sum_{i<N} conj(r[n+i]) r[n+i+576]
/// and R1, R2 the energies of the two windows. Two identical preamble symbols give
/// M ~ 1 on a plateau; noise gives M ~ 1/N. The first n with M(n) above the
/// threshold opens a search of one symbol for the maximum of M (the coarse point).
/// Fine timing: cross-correlation with the known preamble body after a coarse
/// CFO correction; the first path within G/2 before the peak, backed off into
/// the guard. CFO: arg P over the exact FFT windows of the two preamble symbols.
///
/// Non-finite samples (NaN or Inf, which a cf32 capture may hold and integer ones
/// cannot) are taken as 0 by every step here, so that one of them costs the
/// windows it lies in and not, through a running sum, everything after it.
#pragma once

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

/// Replaces every sample whose I or Q is NaN or infinite by 0.
/// @param[in,out] x samples, any length
/// @return the number of samples replaced
std::size_t zero_non_finite(std::span<cf32> x);

/// A coarse detection.
struct detection {
  uint64_t coarse = 0;   ///< argmax of M over one symbol after the first crossing
  float metric = 0.0f;   ///< M at `coarse`
  double cfo_cps = 0.0;  ///< coarse CFO [cycles/sample] from arg P(coarse)
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

/// Clears runs of the detector's blocks that cannot hold a crossing, so that long
/// silences are not scanned on the host (the GPU backend has one on its device).
/// It must be conservative: a block it clears holds no position whose metric
/// passes the threshold, so that detections are exactly those of the host scan.
class block_filter {
public:
  virtual ~block_filter() = default;
  /// Block k (k < maybe.size()) starts at sample base + k * detector::BLOCK of a ci8
  /// or ci16 capture file and holds its positions n < BLOCK with base + k * BLOCK +
  /// n + L + N <= src.size(); maybe[k] = 0 clears it, 1 leaves it to the scan.
  virtual void mark(const transport::capture_reader& src, uint64_t base, std::span<uint8_t> maybe) = 0;
};

/// Lag-576 detector over a source, block by block. Each block is read and summed
/// on its own (prefix sums restart at its first sample), so blocks are independent:
/// after a block without a crossing, the next ones are scanned ahead in parallel
/// (2, 4, ... up to rx_config::nof_threads at once), and the first crossing in
/// block order is taken, exactly as a scan of one block at a time would find it.
/// Silence and noise between frames are then scanned by every core; a frame that
/// follows closely costs one block as before.
class detector {
public:
  explicit detector(const rx_config& cfg);
  ~detector();
  detector(const detector&) = delete;
  detector& operator=(const detector&) = delete;
  /// First detection whose window starts at or after `from`; nullopt at the end of the
  /// source, or when rx_config::stop is raised (checked before each block of samples).
  /// `progress` (may be empty) is told how far the scan has gone.
  std::optional<detection> next(const transport::sample_source& src, uint64_t from, const progress_fn& progress = {});
  /// The last next() returned nullopt because rx_config::stop was raised, not because
  /// the source ended.
  bool stopped() const noexcept { return stopped_; }
  /// Long silences in ci8 and ci16 capture files go through `f` (not owned; null:
  /// none) a run of blocks at a time, and only the blocks it leaves are scanned.
  void set_block_filter(block_filter* f) noexcept { filter_ = f; }

  /// Metric positions per block; the scan reads BLOCK + 2 L + N samples a block.
  static constexpr std::size_t BLOCK = std::size_t(1) << 16;
  /// Blocks one block_filter::mark call covers.
  static constexpr std::size_t FILTER_BLOCKS = 256;

private:
  /// One block's buffers (one per thread scanning ahead).
  struct scratch {
    std::vector<cf32> buf;
    std::vector<double> sp_re, sp_im, se;
  };
  /// What scanning one block found.
  struct block_result {
    std::optional<detection> found;
    bool last = false; ///< the source ends inside this block: no block follows
  };
  block_result scan_block(const transport::sample_source& src, uint64_t base, scratch& w) const;

  rx_config cfg_;
  bool stopped_ = false;
  std::vector<scratch> scratch_;
  std::unique_ptr<host_pool> pool_;
  block_filter* filter_ = nullptr;
};

/// Fine timing and CFO for a detection. nullopt when the cross-correlation does not
/// show a preamble (a tone or DC offset can pass the detector) or the source ends.
std::optional<frame_sync> synchronize(const transport::sample_source& src, const detection& d, const rx_config& cfg);

} // namespace whd::baseband
