/// @file plain_liquid_chain.hpp
/// The baseline the CPU and GPU receivers are measured against: the least a
/// liquid-dsp user would write to turn located OFDM symbols into bits. For each
/// data symbol: skip the guard (read the N samples of its FFT window), liquid's
/// fft_execute (512 points), and liquid's modemcf_demodulate on each of the 336
/// data tones, the indices packed MSB first into payload bytes (profile §4).
/// No CFO derotation, no channel equalisation, no pilot phase: its bits are not
/// the payload of an impaired capture, and only its speed is compared.
#pragma once

#include <whd/baseband/frame_locator.hpp>
#include <whd/transport/capture.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace whd::rx_bench {

/// The plain liquid-dsp chain over a fixed set of located frames.
class plain_liquid_chain {
public:
  explicit plain_liquid_chain(const std::vector<baseband::located_frame>& frames);

  /// Data symbols decoded by run().
  uint64_t nof_symbols() const noexcept { return nof_symbols_; }
  /// Bytes run() writes.
  uint64_t payload_bytes() const noexcept { return payload_bytes_; }
  /// Bits per symbol averaged over the frames (for raw Gbps).
  int bits_per_symbol() const noexcept;

  /// Decode every data symbol of the frames with `nof_threads` threads (each with
  /// its own liquid FFT plan and modem), reading windows from `src`.
  /// @param[out] out payload_bytes() bytes, frame after frame
  void run(const transport::sample_source& src, unsigned nof_threads, std::span<uint8_t> out) const;

private:
  /// A frame's data symbols: their first FFT window, count, modulation and output offset.
  struct run_desc {
    uint64_t first_window = 0;
    uint64_t count = 0;
    profile::modulation mod = profile::modulation::qpsk;
    uint64_t first_symbol = 0; ///< index of its first symbol over all frames
    uint64_t out_offset = 0;   ///< first output byte
  };
  std::vector<run_desc> runs_;
  uint64_t nof_symbols_ = 0;
  uint64_t payload_bytes_ = 0;
};

} // namespace whd::rx_bench
