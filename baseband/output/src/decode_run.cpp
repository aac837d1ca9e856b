#include <whd/baseband/decode_run.hpp>

#include <ctime>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <whd/baseband/profile.hpp>

#include <algorithm>
#include <cstdint>
#include <future>

namespace whd::baseband {

std::optional<std::string> unusable_capture_size(const transport::capture_info& info)
{
  constexpr auto L = uint64_t(profile::SYMBOL_LEN);
  if (info.nof_samples == 0) {
    return std::string("is empty: there are no samples to decode; check that the recording finished and that this "
                       "is the right file");
  }
  if (info.nof_samples < L) {
    return "holds " + std::to_string(info.nof_samples) + " " + std::string(whd::to_string(info.type)) +
           " samples, fewer than one OFDM symbol (" + std::to_string(L) +
           "), so no frame can be in it; check that the recording finished and that this is the right file";
  }
  return std::nullopt;
}

std::optional<std::string> cut_short_warning(const transport::capture_info& info)
{
  const uint64_t reach = info.annotations_reach;
  if (reach <= info.nof_samples) {
    return std::nullopt;
  }
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on a chain of + starting from "'".
  std::string s(1, '\'');
  s.append(info.meta_path.string()).append("': its annotations reach sample ").append(std::to_string(reach));
  s.append(" but '").append(info.data_path.string()).append("' holds ").append(std::to_string(info.nof_samples));
  s.append(" samples: the data file looks cut short; frames past its end are reported truncated or not at all");
  return s;
}

std::optional<std::string> bad_samples_warning(const receive_result& res)
{
  const auto frames = std::count_if(res.frames.begin(), res.frames.end(), [](const auto& f) { return f.bad_samples > 0; });
  const auto failures = std::count_if(res.header_failures.begin(), res.header_failures.end(),
                                      [](const auto& h) { return h.bad_samples > 0; });
  if (frames == 0 && failures == 0) {
    return std::nullopt;
  }
  return std::to_string(frames) + " frame(s) and " + std::to_string(failures) +
         " rejected header(s) held NaN or infinite samples, decoded as 0: their bits may be wrong (see bad_samples and "
         "bad_symbols in the report)";
}

std::optional<std::string> truth_shift_warning(const receive_result& res, const truth_comparison& truth)
{
  if (res.header_failures.empty() || truth.decoded_bytes >= truth.expected_bytes) {
    return std::nullopt;
  }
  return std::to_string(res.header_failures.size()) + " header failure(s) and " +
         std::to_string(truth.expected_bytes - truth.decoded_bytes) +
         " byte(s) fewer than the truth: the truth is compared as one stream, so where a failed header was a frame of "
         "the truth's, the payload after it meets the next frame's truth, and the bit errors from there on are not the "
         "receiver's";
}

void tee_sink::write(std::span<const uint8_t> bytes)
{
  constexpr std::size_t PARALLEL_FROM = std::size_t(1) << 16;
  if (first_ != nullptr && second_ != nullptr && bytes.size() >= PARALLEL_FROM) {
    auto other = std::async(std::launch::async, [&] { second_->write(bytes); });
    try {
      first_->write(bytes);
    } catch (...) {
      other.wait();
      throw;
    }
    other.get();
    return;
  }
  if (first_ != nullptr) {
    first_->write(bytes);
  }
  if (second_ != nullptr) {
    second_->write(bytes);
  }
}

void tee_sink::behind(bool more_waiting)
{
  for (payload_sink* s : {first_, second_}) {
    if (s != nullptr) {
      s->behind(more_waiting);
    }
  }
}

std::optional<double> seconds_since_process_start()
{
  // Field 22 of /proc/self/stat: the start time in clock ticks after boot; the
  // command name (field 2) may hold spaces, so fields are counted after its ')'.
  std::ifstream f("/proc/self/stat");
  std::string line;
  if (!std::getline(f, line)) {
    return std::nullopt;
  }
  const auto close = line.rfind(')');
  if (close == std::string::npos) {
    return std::nullopt;
  }
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  unsigned long long start_ticks = 0;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) {
      start_ticks = std::stoull(field);
    }
  }
  struct timespec now {};
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (start_ticks == 0 || hz <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &now) != 0) {
    return std::nullopt;
  }
  const double up = double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
  return std::max(0.0, up - double(start_ticks) / double(hz));
}

nlohmann::json make_run_report(const std::string& capture, const transport::capture_info& info, const receive_result& res,
                               std::string_view backend, double seconds, const std::optional<truth_comparison>& truth,
                               const std::optional<run_seconds>& split, double sample_rate_sps, bool with_frames)
{
  const input_description in{capture, std::string(whd::to_string(info.type)), info.nof_samples, info.sample_rate_sps};
  uint64_t channel_bits = 0; // raw_gbps: the data symbols' bits, coded or not
  for (const frame_result& f : res.frames) {
    channel_bits += uint64_t(f.symbols) * uint64_t(profile::bits_per_symbol(f.mod));
  }
  const timing_description timing{std::string(backend), "end-to-end", seconds, res.data_symbols, channel_bits,
                                  res.payload_bytes * 8};
  nlohmann::json r = make_report(in, res, timing, truth, with_frames);
  if (split) {
    auto& t = r["timing"];
    const double rate = sample_rate_sps > 0.0 ? sample_rate_sps : info.sample_rate_sps.value_or(profile::SAMPLE_RATE_SPS);
    const double air = double(info.nof_samples) / rate;
    t["setup_seconds"] = split->setup;
    t["decode_seconds"] = std::max(0.0, split->wall - split->setup);
    t["wall_seconds"] = split->wall;
    t["air_seconds"] = air;
    t["x_realtime_air"] = split->wall > 0.0 ? air / split->wall : 0.0;
    t["regions"] = {{"seconds", "capture opened to payload written (ns_per_symbol, x_realtime and raw_gbps use it)"},
                    {"setup_seconds", "process start to the first samples handed to the backend (CUDA context, allocations)"},
                    {"decode_seconds", "the rest of the run: first samples handed over to payload written"},
                    {"wall_seconds", "process start to payload written: what the user waited for"},
                    {"x_realtime_air", "air_seconds (capture samples / sample rate) over wall_seconds"}};
  }
  return r;
}

nlohmann::json llr_report(const llr_output& llr, const receive_result& res, const std::string& path)
{
  nlohmann::json j{{"file", path},
                   {"format", to_string(llr.format)},
                   {"values", res.llr_bytes / llr_value_bytes(llr.format)},
                   {"bytes", res.llr_bytes},
                   {"definition", "one value per payload bit, in payload order: LLR = ln P(b=0)/P(b=1), max-log over the "
                                  "profile's constellation, weighted by the tone's |H|^2 over the frame's noise (positive: 0)"}};
  if (llr.format == llr_format::int8) {
    j["scale"] = llr.scale;
    j["int8"] = "round(LLR x scale), saturated to +-127";
  } else {
    j["scale"] = 1.0;
  }
  return j;
}

} // namespace whd::baseband
