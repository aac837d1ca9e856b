#include <whd/baseband/report.hpp>

#include <algorithm>
#include <bit>

namespace whd::baseband {

truth_comparison compare_with_truth(std::span<const uint8_t> decoded, std::span<const uint8_t> expected)
{
  truth_comparison c;
  c.expected_bytes = expected.size();
  c.decoded_bytes = decoded.size();
  const std::size_t n = std::min(decoded.size(), expected.size());
  for (std::size_t i = 0; i < n; ++i) {
    c.bit_errors += uint64_t(std::popcount(unsigned(decoded[i] ^ expected[i])));
  }
  c.compared_bits = uint64_t(n) * 8;
  c.missing_bits = uint64_t(std::max(decoded.size(), expected.size()) - n) * 8;
  return c;
}

nlohmann::json timing_json(const timing_description& t)
{
  nlohmann::json j;
  j["backend"] = t.backend;
  j["region"] = t.region;
  j["data_symbols"] = t.data_symbols;
  j["seconds"] = t.seconds;
  if (t.data_symbols > 0 && t.seconds > 0.0) {
    const double ns = t.seconds * 1e9 / double(t.data_symbols);
    j["ns_per_symbol"] = ns;
    j["x_realtime"] = profile::SYMBOL_PERIOD_NS / ns;
    // Bits per data symbol times symbols per second (mixed modulations: their mean).
    j["raw_gbps"] = double(t.payload_bits) / t.seconds / 1e9;
  } else {
    j["ns_per_symbol"] = nullptr;
    j["x_realtime"] = nullptr;
    j["raw_gbps"] = nullptr;
  }
  return j;
}

nlohmann::json make_report(const input_description& in, const receive_result& res, const timing_description& t,
                           const std::optional<truth_comparison>& truth)
{
  nlohmann::json r;
  r["profile"] = profile::VERSION;
  r["input"] = {{"path", in.path}, {"datatype", in.datatype}, {"samples", in.samples}};
  if (in.sample_rate_sps) {
    r["input"]["sample_rate"] = *in.sample_rate_sps;
  }
  r["frames"] = nlohmann::json::array();
  for (const auto& f : res.frames) {
    auto bad_symbols = nlohmann::json::array();
    for (const auto& run : f.bad_symbols) {
      bad_symbols.push_back({run.first, run.count});
    }
    r["frames"].push_back({{"start", f.start},
                           {"mod", profile::to_string(f.mod)},
                           {"nd", f.nd},
                           {"seq", f.seq},
                           {"symbols", f.symbols},
                           {"truncated", f.truncated},
                           {"cfo_hz", f.cfo_Hz},
                           {"snr_db", f.snr_dB},
                           {"payload_offset", f.payload_offset},
                           {"payload_bytes", f.payload_bytes},
                           {"bad_samples", f.bad_samples},
                           {"bad_symbols", std::move(bad_symbols)}});
  }
  r["header_failures"] = nlohmann::json::array();
  for (const auto& h : res.header_failures) {
    r["header_failures"].push_back({{"start", h.start}, {"reason", profile::to_string(h.reason)}, {"bad_samples", h.bad_samples}});
  }
  r["payload_bytes"] = res.payload_bytes;
  r["interrupted"] = res.interrupted;
  r["timing"] = timing_json(t);
  if (truth) {
    r["truth"] = {{"path", truth->path},
                  {"expected_bytes", truth->expected_bytes},
                  {"decoded_bytes", truth->decoded_bytes},
                  {"compared_bits", truth->compared_bits},
                  {"bit_errors", truth->bit_errors},
                  {"missing_bits", truth->missing_bits},
                  {"ber", truth->ber()}};
  }
  return r;
}

} // namespace whd::baseband
