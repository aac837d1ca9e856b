/// @file block_scan.hpp
/// The metric of one block of the frame search on the host (sync.hpp,
/// candidate_search): M(n) and the crossings M(n) > threshold of its positions,
/// two ways that give the same crossings. Private to the receive chain.
///
/// - in_order: for any samples (cf32 captures). Prefix sums over the block,
///   summed in order, so that every window sum is the one the definition names.
/// - integer: for integer samples (ci8, ci16, which the readers give as exact
///   integers in float). Every window sum is then an exact integer below 2^53,
///   whatever the order of its additions, so it is built from sums over chunks of
///   RUN samples, and a run of RUN positions whose metric a bound from those chunk
///   sums keeps at or below the threshold is cleared without its positions.
///
/// Both compute M of a position that is not cleared with the same double expression
/// over the same window sums, so that M is bit for bit the same. A cleared position's
/// M is stored as 0: its M is at most the threshold, so that it can never be the
/// maximum of a candidate's window, which opens on a crossing. The two may clear
/// different positions: m[] agrees wherever either has a crossing, and each
/// position's stored M is either 0 or its M.
#pragma once

#include <whd/baseband/profile.hpp>
#include <whd/transport/sample_types.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace whd::baseband {

class block_scan {
public:
  /// Positions of a run: cleared or computed together, and the samples of a chunk.
  static constexpr std::size_t RUN = 64;

  /// Buffers for blocks of up to max_positions positions, allocated here once.
  explicit block_scan(std::size_t max_positions);

  /// Samples a block of nof_pos positions reads: its two windows, nof_pos + L + N - 1.
  static std::size_t nof_samples(std::size_t nof_pos) noexcept { return nof_pos + profile::SYMBOL_LEN + profile::N - 1; }

  /// Where the caller puts a block's nof_samples(nof_pos) samples before a scan,
  /// nof_samples(max_positions) of them (the scan may write past them: padding).
  std::span<cf32> samples() noexcept { return {buf_.data(), nof_samples(max_pos_)}; }

  /// M and crossings of positions [0, nof_pos) of the samples, for any samples:
  /// non-finite ones are first replaced by 0 (sync.hpp).
  /// @param[in] nof_pos    positions, at most max_positions
  /// @param[in] threshold  a crossing is M > double(threshold) (rx_config::detect_threshold)
  /// @param[out] m         nof_pos metrics (0 for a cleared position)
  /// @param[out] cross     nof_pos crossings, 1 or 0
  void in_order(std::size_t nof_pos, float threshold, double* m, uint8_t* cross);
  /// in_order of two blocks at once, each in its own scan: the same M and crossings,
  /// bit for bit, as a.in_order(nof_a, ...) and b.in_order(nof_b, ...). A block's
  /// prefix sums are chains of additions, each waiting for the one before; the two
  /// blocks' chains are independent and run side by side, so that one's latency
  /// hides the other's.
  static void in_order(block_scan& a, std::size_t nof_a, double* m_a, uint8_t* cross_a, block_scan& b, std::size_t nof_b,
                       double* m_b, uint8_t* cross_b, float threshold);

  /// As in_order, for samples that are all integers: the same crossings, and the
  /// same M wherever either crosses.
  /// @param[in] type  how they were stored: ci8 (magnitudes at most 2^7) or ci16_le
  ///                  (at most 2^15)
  void integer(datatype type, std::size_t nof_pos, float threshold, double* m, uint8_t* cross);

private:
  /// in_order's second half: M and crossings from the prefix sums.
  void metrics_in_order(std::size_t nof_pos, float threshold, double* m, uint8_t* cross) const;

  /// Four sums (or their steps) for each position of a run.
  struct run_sums {
    double re[RUN], im[RUN], r1[RUN], r2[RUN];
  };

  std::size_t max_pos_;
  std::vector<cf32> buf_;
  std::vector<double> sp_re_, sp_im_, se_; ///< in_order: prefix sums; integer: chunk sums
  run_sums steps_{}, sums_{};               ///< integer: a run's window sums and what they add
};

} // namespace whd::baseband
