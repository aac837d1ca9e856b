// Fuzz target: the SigMF meta reader, through open_capture as whd-rx calls it.
// Every input either opens (and then the capture agrees with its data file) or is
// refused with a capture_error whose message names the file; nothing else may
// escape, and the message stays of a readable size.
#include "fuzz_check.hpp"
#include "fuzz_targets.hpp"

#include <whd/transport/capture.hpp>

#include <cmath>
#include <string>
#include <string_view>

namespace whd::fuzz {

int sigmf_meta_one(const uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const auto& dir = scratch_dir();
  const auto meta = dir / "m.sigmf-meta";
  const auto samples = dir / "m.sigmf-data";
  const std::size_t data_bytes = data[0];
  write_file(meta, data + 1, size - 1);
  write_file(samples, nullptr, data_bytes);
  try {
    const transport::capture_info info = transport::open_capture(meta);
    check(info.meta_path == meta && info.data_path == samples, "the capture is the meta's recording");
    check(info.nof_samples * bytes_per_sample(info.type) == data_bytes, "samples times their size is the data file's size");
    check(!info.sample_rate_sps || (std::isfinite(*info.sample_rate_sps) && *info.sample_rate_sps > 0.0),
          "a sample rate is a positive number");
    for (const auto& a : info.annotations) {
      check(a.label.size() < size && a.comment.size() < size, "annotations come from the meta");
    }
  } catch (const transport::capture_error& e) {
    const std::string_view what = e.what();
    check(what.starts_with("'" + meta.string() + "'") || what.starts_with("'" + samples.string() + "'"),
          "the message names the file first", std::string(what.substr(0, 300)));
    check(what.size() < 1000, "the message is of a readable size, whatever the meta", std::to_string(what.size()) + " bytes");
  }
  return 0;
}

} // namespace whd::fuzz
