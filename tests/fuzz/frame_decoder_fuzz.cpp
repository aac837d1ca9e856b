// Fuzz target: frame location and decoding by the CPU receiver over samples of any
// value (NaN, infinities and huge numbers in cf32; the full range in integers).
// Whatever the samples, the result must describe a payload laid out as the profile
// says (§4, §9): frames in capture order, whole symbols, contiguous offsets,
// truncation only at the end, finite CFO and SNR, and a report that serialises.
#include "fuzz_check.hpp"
#include "fuzz_targets.hpp"

#include <whd/baseband/frame_locator.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/baseband/receiver.hpp>
#include <whd/baseband/report.hpp>
#include <whd/transport/capture.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace whd::fuzz {

int frame_decoder_one(const uint8_t* data, std::size_t size)
{
  namespace p = profile;
  namespace bb = baseband;
  if (size < 2) {
    return 0;
  }
  constexpr datatype TYPES[] = {datatype::ci8, datatype::ci16_le, datatype::cf32_le};
  const datatype type = TYPES[data[0] % 3];
  const std::size_t bps = bytes_per_sample(type);
  const std::size_t n = (size - 2) / bps;
  std::vector<cf32> x(n);
  const uint8_t* s = data + 2;
  for (std::size_t k = 0; k < n; ++k) {
    switch (type) {
    case datatype::ci8: x[k] = cf32(float(int8_t(s[2 * k])), float(int8_t(s[2 * k + 1]))); break;
    case datatype::ci16_le: {
      int16_t iq[2];
      std::memcpy(iq, s + 4 * k, 4);
      x[k] = cf32(float(iq[0]), float(iq[1]));
      break;
    }
    case datatype::cf32_le: std::memcpy(&x[k], s + 8 * k, 8); break;
    }
  }
  const transport::memory_source src(std::move(x));
  bb::rx_config cfg;
  cfg.nof_threads = 1;
  cfg.symbols_per_batch = 1 + data[1] % 5;
  // The batch size is a set-up parameter: one receiver per value, made once.
  static std::unique_ptr<bb::receiver> receivers[5];
  auto& receiver = receivers[cfg.symbols_per_batch - 1];
  if (!receiver) {
    receiver = bb::make_cpu_receiver(cfg);
  }
  bb::memory_sink sink;
  const bb::receive_result res = receiver->run(src, sink);

  check(res.nof_samples == n, "the result counts the samples");
  check(!res.interrupted, "nothing stops the run");
  uint64_t offset = 0, symbols = 0, previous_start = 0;
  for (std::size_t i = 0; i < res.frames.size(); ++i) {
    const auto& f = res.frames[i];
    const std::string at = "frame " + std::to_string(i) + " at " + std::to_string(f.start);
    check(i == 0 || f.start > previous_start, "frames in capture order", at);
    previous_start = f.start;
    // The preamble and header windows (each ends timing_backoff samples before its
    // symbol) lie inside; the header's last samples need not.
    const uint64_t slack = uint64_t(cfg.timing_backoff);
    check(f.start + uint64_t(p::FIRST_DATA_SYMBOL) * p::SYMBOL_LEN <= n + slack, "a frame's preamble and header are inside", at);
    check(f.nd >= 1 && f.nd <= p::MAX_ND, "Nd as the header allows", at);
    check(f.symbols <= f.nd && f.truncated == (f.symbols < f.nd), "symbols and truncation agree", at);
    check(!f.truncated || i + 1 == res.frames.size(), "only the last frame is truncated", at);
    // A symbol is decoded when its FFT window, which ends timing_backoff samples
    // before the symbol, lies inside the capture.
    check(f.start + (uint64_t(p::FIRST_DATA_SYMBOL) + f.symbols) * p::SYMBOL_LEN <= n + slack,
          "decoded symbols are inside the capture", at);
    check(f.payload_offset == offset, "payload offsets are contiguous", at);
    check(f.payload_bytes == bb::payload_bytes_of(f), "whole symbols, or a coded frame's L bytes (none when truncated)", at);
    check(f.mcs == p::mcs_of_mode(p::mode_of_mcs(f.mcs)) || f.mcs == p::NO_MCS, "a coded frame's MCS is its mode's", at);
    check(f.rs_failed == 0 || f.mcs != p::NO_MCS, "only coded frames count RS failures", at);
    check(std::isfinite(f.cfo_Hz) && std::isfinite(f.snr_dB), "CFO and SNR are numbers", at);
    check(std::abs(f.cfo_Hz) <= cfg.sample_rate_sps / (2.0 * p::SYMBOL_LEN) * 1.0000001, "CFO within the estimator's range", at);
    uint64_t marked = 0, next_free = 0;
    for (const auto& r : f.bad_symbols) {
      check(r.count >= 1 && r.first >= next_free && r.first + uint64_t(r.count) <= f.symbols,
            "bad symbol runs are ordered, disjoint, inside the frame", at);
      next_free = uint64_t(r.first) + r.count + 1; // runs are maximal: a gap between two
      marked += r.count;
    }
    check(f.bad_samples <= (uint64_t(p::FIRST_DATA_SYMBOL) + f.symbols) * p::N, "bad samples are window samples", at);
    check(marked <= f.bad_samples, "a marked symbol holds a bad sample", at);
    check(type == datatype::cf32_le || f.bad_samples == 0, "integers are never bad samples", at);
    offset += f.payload_bytes;
    symbols += f.symbols;
  }
  for (const auto& h : res.header_failures) {
    check(h.start + uint64_t(p::FIRST_DATA_SYMBOL) * p::SYMBOL_LEN <= n + uint64_t(cfg.timing_backoff),
          "a failed header's windows are inside", std::to_string(h.start));
    check(h.reason != p::header_status::ok, "a failure has a reason");
    check(h.bad_samples <= uint64_t(p::FIRST_DATA_SYMBOL) * p::N, "bad samples are window samples");
  }
  check(res.payload_bytes == offset && sink.bytes().size() == offset, "the payload is the frames' bytes");
  check(res.data_symbols == symbols, "data symbols counted");
  const auto report = bb::make_report({"fuzz", std::string(to_string(type)), n, std::nullopt}, res,
                                      {"cpu", "end-to-end", 1.0, res.data_symbols, res.payload_bytes * 8});
  check(report.dump().size() > 0, "the report serialises");
  return 0;
}

} // namespace whd::fuzz
