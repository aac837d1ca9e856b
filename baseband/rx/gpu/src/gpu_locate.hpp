/// @file gpu_locate.hpp
/// Locating frame candidates on the GPU, a batch at a time (profile §4): for every
/// candidate of the search (gpu_sync_types.hpp) what `synchronize` and
/// `frame_locator::locate` do on the host for one detection (sync.hpp,
/// frame_locator.hpp): fine timing and its validation, fine CFO, the three FFT
/// windows (two preamble, header), the channel estimate and its smoothing, the
/// header decision and parse, the non-finite count; then the decode parameters of
/// the fused data kernel (frame_params, gpu_symbol_decoder.hpp). Private to the
/// receive chain.
///
/// Agreement with the host. The kernels follow the host's order of operations
/// wherever it is cheap (sequential double sums, the same rounding points, no fused
/// multiply-add: the file is built with -fmad=false) so that timing and header
/// decisions are the host's except at exact near-ties; what differs is the FFT
/// (the project's device transform against liquid-dsp's) and the device's double
/// sin/cos/atan2/log10 (within 2 ulp of glibc's), so CFO, channel and SNR agree to
/// rounding, not bit for bit.
#pragma once

#include "gpu_sync_types.hpp"

#include <whd/baseband/locate_outcome.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/baseband/rx_types.hpp>
#include <whd/transport/cuda.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace whd::baseband::gpu {

struct frame_params; // gpu_symbol_decoder.hpp

/// One candidate as located; plain data, copied back as it is.
struct located_candidate {
  uint64_t start;       ///< first preamble sample, guard included (first path) [capture sample index]
  uint64_t fft0;        ///< first sample of preamble symbol 0's FFT window [capture sample index]
  double cfo_cps;       ///< fine CFO [cycles/sample] (accepted, rejected; 0 otherwise)
  double snr_dB;        ///< preamble SNR as estimate_channel states it [dB] (accepted, rejected)
  uint64_t bad_samples; ///< non-finite samples in the three FFT windows, taken as 0 (accepted, rejected)
  uint32_t nd;          ///< data symbols announced by the header (accepted; as parsed when rejected)
  /// What the other fields mean: accepted, every field (and the candidate's
  /// frame_params are written); rejected, start, fft0, cfo, snr, bad and the header's
  /// fields as parsed; cut_off, start and fft0; needs_more, none (run it again on a
  /// chunk holding [coarse - lookback(), coarse + lookahead())).
  locate_outcome status;
  profile::header_status header; ///< ok, or why the header was rejected
  profile::modulation mod;       ///< accepted only
  uint8_t mode;         ///< the header's mode field h[0..3] (accepted only; profile 2 §1)
  uint8_t seq;          ///< frame sequence number (accepted; as parsed when rejected)
};
static_assert(std::is_trivially_copyable_v<located_candidate>);

/// Locates a batch of candidates on the device: one block of 256 threads per
/// candidate, the preamble body, the smoother's basis and the outputs allocated and
/// uploaded once by the constructor; run() only enqueues.
///
/// Device memory: 4 KB of preamble body, NOF_USED x channel_taps x 16 B of basis
/// (270 KB for 48 taps), and per candidate slot 48 B of result plus one frame_params
/// (about 9.4 KB).
class candidate_locator {
public:
  /// @param cfg            the thresholds, timing back-off and channel taps every backend shares
  /// @param max_candidates candidates one run() may locate, 1 .. 2^31 - 1
  /// @throws std::invalid_argument on a bad size or tap count; cuda_error when allocation fails
  candidate_locator(const rx_config& cfg, std::size_t max_candidates);
  ~candidate_locator();
  candidate_locator(const candidate_locator&) = delete;
  candidate_locator& operator=(const candidate_locator&) = delete;

  /// Enqueues the location of candidates [0, min(*d_count, max_candidates())) on
  /// `stream` (no allocation, no sync): afterwards d_located()[i] holds candidate i's
  /// result and, where it is accepted, d_frame_params()[i] its decode parameters. Slots at
  /// and past the count, and the frame_params of candidates not accepted, are left as they were.
  /// The outputs are reused: runs of one object must be ordered (one stream).
  /// @param[in] d_samples capture samples [first, first + nof) as float2 (device); non-finite
  ///                      samples are allowed and taken as 0 where they are read, as on the host
  /// @param[in] first     capture index of d_samples[0]
  /// @param[in] nof       samples in the chunk
  /// @param[in] total     samples in the whole capture (first + nof <= total)
  /// @param[in] d_cands   the candidates (device), at least min(*d_count, max_candidates()) of them
  /// @param[in] d_count   the number of candidates (device, one value; e.g. the search's
  ///                      search_count::nof_candidates)
  /// @throws std::invalid_argument when first + nof > total or a pointer is null
  void run(const float2* d_samples, uint64_t first, std::size_t nof, uint64_t total, const sync_candidate* d_cands,
           const uint32_t* d_count, cudaStream_t stream);

  /// The last run's results (device, max_candidates() slots).
  const located_candidate* d_located() const noexcept { return located_.data(); }
  /// The last run's decode parameters (device, max_candidates() slots; slot i valid
  /// where candidate i is accepted).
  const frame_params* d_frame_params() const noexcept { return params_.data(); }
  /// The same slots, writable: a receiver puts there the parameters of frames that go
  /// on from an earlier chunk (slots the run leaves as they were).
  frame_params* d_frame_params() noexcept { return params_.data(); }
  /// Candidate slots of the outputs: the most one run() locates.
  std::size_t max_candidates() const noexcept { return located_.size(); }

  /// Samples before a candidate's coarse point that locating it may read.
  uint64_t lookback() const noexcept;
  /// Samples from a candidate's coarse point to the end of what locating it may read:
  /// a candidate with coarse - lookback() >= first (or first == 0) and coarse +
  /// lookahead() <= first + nof is never needs_more.
  uint64_t lookahead() const noexcept;

private:
  rx_config cfg_;
  double body_energy_;                     ///< sum |x[n]|^2 of the preamble body, as synchronize sums it
  int nof_taps_;                           ///< smoother taps (0: plain LS)
  int min_taps_;                           ///< the fewest a frame keeps
  cuda::device_buffer<float2> body_;       ///< preamble_body(), N samples
  cuda::device_buffer<double2> basis_;     ///< channel_smoother::basis(), NOF_USED x nof_taps_ row-major
  cuda::device_buffer<located_candidate> located_;
  cuda::device_buffer<frame_params> params_;
};

} // namespace whd::baseband::gpu
