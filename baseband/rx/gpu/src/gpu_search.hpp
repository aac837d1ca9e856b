/// @file gpu_search.hpp
/// Frame search on the GPU, batched over a chunk of the capture (profile §4: the
/// lag-576 repetition of the two preamble symbols). Private to the receive chain.
///
/// The definition, a pure function of the capture (the CPU reference follows the
/// same), with L = profile::SYMBOL_LEN, N = profile::N and `total` samples r[]
/// (non-finite samples taken as 0):
/// - positions n with n + L + N <= total, npos = total - L - N + 1 (0 if negative);
/// - M(n) = |P(n)|^2 / (R1(n) R2(n)) in double, P(n) = sum_{i<N} conj(r[n+i]) r[n+i+L],
///   R1(n) = sum_{i<N} |r[n+i]|^2, R2(n) = sum_{i<N} |r[n+L+i]|^2, and
///   M = den > 0 ? (pre*pre + pim*pim) / den : 0 with den = R1 R2;
/// - crossing(n) := M(n) > double(threshold);
/// - candidate window starts c, ascending and unique: an edge, crossing(c) and
///   (c == 0 or !crossing(c - 1)); or a grid point, crossing(c), c % L == 0, c >= L
///   and crossing(k) for every k in [c - L, c] (a long run of crossings, a tone or a
///   DC offset, yields one candidate per symbol);
/// - per candidate: coarse = the first argmax of M over [c, min(c + L, npos)),
///   metric = float(M(coarse)), cfo_cps = atan2(Im P, Re P)(coarse) / (2 pi L).
///
/// Exactness. Integer samples (ci8, ci16: exact integers in float2) make every window
/// sum an exact integer below 2^53, whatever the order of the additions, and M is then
/// taken with IEEE double multiply, add and divide without fused multiply-add (the
/// kernels use the _rn intrinsics and their file is built with -fmad=false): crossing,
/// windows and coarse are bit for bit those of a CPU computing the same expression, and
/// the metric too. For cf32 samples the window sums are differences of per-tile prefix
/// sums, so they may differ from a direct sum in the last bits: only near-ties of M
/// (against the threshold, or between two positions of an argmax) can come out
/// differently. cfo_cps comes from a direct sum of P at the coarse point (exact for
/// integers) and the device's atan2 (within 2 ulp of the host's).
///
/// Cost per sample of the chunk (position), on the metric kernel that dominates:
/// global memory 8 B read (float2; the tile's halo of L + N samples, 53 % more, comes
/// mostly from L2) and 8 B written (M as double) plus 1 bit (crossing); about 75
/// double-precision instructions (the terms of P, R1 and R2 on 1.53 tile samples per
/// position, their prefix scan twice, four differences, two squares, a product and a
/// correctly rounded division); shared memory some 110 B. On an H100 (3.35 TB/s, about
/// 17 T FP64 instructions/s, 30 TB/s shared) each of these alone allows some 200 G
/// samples/s: the kernel is expected to be bound by latency and occupancy (two blocks
/// of 256 threads per SM, 91 KB of shared memory each) well above the 25 G samples/s
/// that 10x real time needs. The candidate kernels read 1 bit per position plus
/// 12 B per 32 positions; the refinement reads L doubles and 2 N samples per candidate.
/// None of this is measured yet.
#pragma once

#include "gpu_sync_types.hpp"

#include <whd/baseband/profile.hpp>
#include <whd/transport/cuda.hpp>
#include <whd/transport/link_pack.hpp>
#include <whd/transport/sample_types.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace whd::baseband::gpu {

/// How many candidates one run found.
struct search_count {
  uint32_t nof_candidates; ///< candidates written: min(nof_found, max_candidates)
  uint32_t overflow;       ///< 1 when nof_found > max_candidates (the last ones are dropped), else 0
  uint64_t nof_found;      ///< candidates in the search range, also those not written
};
static_assert(std::is_trivially_copyable_v<search_count>);

/// Converts samples as stored in a capture (profile §6) into float2 on the device.
/// Integer samples become exact integers (no scaling: the receiver is gain-invariant);
/// cf32 samples whose I or Q is NaN or infinite become 0 (profile §6, sync.hpp).
/// @param[in] d_raw      nof samples of `type`, little-endian, aligned to their size (device)
/// @param[in] type       the stored datatype
/// @param[in] nof        samples to convert
/// @param[out] d_out     nof float2 (device)
/// @param[in,out] d_nof_non_finite  if not null, the cf32 samples zeroed are added to
///                       it (device); untouched for integer types
/// @param[in] stream     enqueued there, no sync
/// @throws std::invalid_argument on a misaligned pointer or an unknown type
void convert_to_float2(const std::byte* d_raw, datatype type, std::size_t nof, float2* d_out,
                       unsigned long long* d_nof_non_finite, cudaStream_t stream);

/// Unpacks a run of cf32 samples packed for the link (transport::pack_cf32_run, half
/// or int8) into float2 on the device, twice: as they were stored (a non-finite
/// sample's mark as NaN, for the stages that count them) and with those samples as
/// 0 (for the search).
/// @param[in] d_link    nof packed samples (device)
/// @param[in] d_scales  transport::run_scales(nof) scales (device)
/// @param[out] d_stored nof float2, marks as NaN (device)
/// @param[out] d_zeroed nof float2, marks as 0 (device)
/// @throws std::invalid_argument for f32 (not a packing) or a misaligned pointer
void unpack_link_run(const std::byte* d_link, const float* d_scales, transport::link_format fmt, std::size_t nof, float2* d_stored,
                     float2* d_zeroed, cudaStream_t stream);

/// Host copy of one run's results (pinned, so that the copy is asynchronous).
struct search_results_host {
  explicit search_results_host(std::size_t max_candidates) : count(1), candidates(max_candidates) {}
  cuda::pinned_buffer<search_count> count;          ///< one entry
  cuda::pinned_buffer<sync_candidate> candidates;   ///< max_candidates entries, count[0].nof_candidates valid
  /// The valid candidates, once the copy has completed (the stream synchronised).
  std::span<const sync_candidate> found() const noexcept { return {candidates.data(), count[0].nof_candidates}; }
};

/// Finds every candidate of a range of window starts in a chunk of the capture, on the
/// device: M for the positions the range needs (metric kernel), candidate flags and
/// their compaction in ascending order, then coarse, metric and CFO per candidate (one
/// warp each). Everything is allocated by the constructor; run() only enqueues.
class candidate_search {
public:
  /// @param max_chunk_samples  largest chunk run() accepts [samples], 1 .. 2^31
  /// @param max_candidates     candidates kept per run, >= 1 (more are counted and flagged)
  /// @param detect_threshold   threshold of M (crossing: M > double(threshold)), as rx_config
  /// Device memory: about 8.4 B per max_chunk_samples (M as double, the bitmasks)
  /// plus 32 B per candidate; the metric kernel's 91 KB of dynamic shared memory is
  /// enabled here, on the current device, where run() must be called.
  /// @throws std::invalid_argument on bad sizes; cuda_error when allocation fails
  candidate_search(std::size_t max_chunk_samples, std::size_t max_candidates, float detect_threshold);
  candidate_search(const candidate_search&) = delete;
  candidate_search& operator=(const candidate_search&) = delete;

  /// Enqueues the search of window starts c, search_lo <= c < search_hi, on `stream`:
  /// afterwards d_count() and d_candidates() hold the candidates found, ascending.
  /// No allocation, no sync. The buffers are reused: the next run overwrites them, so
  /// runs of one object must be ordered (enqueued on one stream, or the results
  /// copied out before the next run starts on another).
  /// @param[in] d_samples  capture samples [first, first + nof) as float2 (device; see
  ///                       convert_to_float2), non-finite ones already zeroed by the caller
  /// @param[in] first      capture index of d_samples[0]
  /// @param[in] nof        samples in the chunk, <= max_chunk_samples
  /// @param[in] total      samples in the whole capture (positions: n + L + N <= total)
  /// @param[in] search_lo, search_hi  the window starts searched [capture sample index]
  /// Preconditions (checked, std::invalid_argument): search_lo <= search_hi <= npos;
  /// first <= search_lo - (L + 1), or first == 0 when search_lo < L + 1 (the edge and grid
  /// tests look back L + 1 positions); first + nof >= min(total, search_hi + 2 L + N)
  /// (the argmax looks one symbol ahead, each position two windows); first + nof <= total.
  void run(const float2* d_samples, uint64_t first, std::size_t nof, uint64_t total, uint64_t search_lo,
           uint64_t search_hi, cudaStream_t stream);

  /// The last run's count (device, one entry).
  const search_count* d_count() const noexcept { return counts_.data(); }
  /// The last run's candidates (device, max_candidates() entries, d_count()->nof_candidates valid).
  const sync_candidate* d_candidates() const noexcept { return candidates_.data(); }
  /// Enqueues the copy of count and all max_candidates() slots into `out` (pinned) on
  /// `stream`, after the run enqueued there; valid once the stream is synchronised.
  /// @throws std::invalid_argument when `out` holds fewer than max_candidates() slots
  void copy_results(search_results_host& out, cudaStream_t stream) const;

  std::size_t max_chunk_samples() const noexcept { return max_chunk_; }
  std::size_t max_candidates() const noexcept { return candidates_.size(); }
  float detect_threshold() const noexcept { return threshold_; }

private:
  std::size_t max_chunk_;
  float threshold_;
  cuda::device_buffer<double> metric_;          ///< M per chunk position (local index n - first)
  cuda::device_buffer<uint32_t> crossing_;      ///< crossing bit per chunk position, 32 a word
  cuda::device_buffer<uint32_t> cand_mask_;     ///< candidate bits per word of the search range
  cuda::device_buffer<uint32_t> cand_count_;    ///< popcount of each cand_mask_ word
  cuda::device_buffer<uint32_t> cand_offset_;   ///< exclusive prefix sum of cand_count_
  cuda::device_buffer<std::byte> scan_temp_;    ///< cub::DeviceScan temporary storage
  cuda::device_buffer<search_count> counts_;
  cuda::device_buffer<sync_candidate> candidates_;
};

} // namespace whd::baseband::gpu
