// Fuzz target: the capture reader over a file of any bytes, raw or SigMF, in each
// format. The samples read must be the file's bytes decoded as the profile says
// (§6: little-endian I then Q, integers as they are), however they are read:
// whole, at an offset, raw, or in chunks with look-ahead.
#include "fuzz_check.hpp"
#include "fuzz_targets.hpp"

#include <whd/transport/capture.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace whd::fuzz {

namespace {

/// The profile's decoding of sample k, written out independently of the reader.
cf32 reference_sample(datatype t, const uint8_t* bytes, std::size_t k)
{
  switch (t) {
  case datatype::cf32_le: {
    float iq[2];
    std::memcpy(iq, bytes + 8 * k, 8);
    return {iq[0], iq[1]};
  }
  case datatype::ci16_le: {
    const uint8_t* b = bytes + 4 * k;
    const auto i = int16_t(uint16_t(b[0] | (b[1] << 8)));
    const auto q = int16_t(uint16_t(b[2] | (b[3] << 8)));
    return {float(i), float(q)};
  }
  case datatype::ci8: return {float(int8_t(bytes[2 * k])), float(int8_t(bytes[2 * k + 1]))};
  }
  return {};
}

/// Bitwise equality (NaN payloads and -0 included).
bool same(cf32 a, cf32 b) { return std::memcmp(&a, &b, sizeof a) == 0; }

} // namespace

int capture_reader_one(const uint8_t* data, std::size_t size)
{
  if (size < 3) {
    return 0;
  }
  constexpr datatype TYPES[] = {datatype::cf32_le, datatype::ci16_le, datatype::ci8};
  const datatype type = TYPES[data[0] % 3];
  const bool sigmf = (data[0] / 3) % 2 == 1;
  const uint8_t a = data[1], b = data[2];
  const uint8_t* bytes = data + 3;
  const std::size_t nof_bytes = size - 3;
  const auto& dir = scratch_dir();
  std::filesystem::path path;
  if (sigmf) {
    const std::string meta = std::string(R"({"global": {"core:datatype": ")") + std::string(to_string(type)) +
                             R"(", "core:version": "1.0.0"}, "captures": [{"core:sample_start": 0}]})";
    write_file(dir / "r.sigmf-meta", reinterpret_cast<const uint8_t*>(meta.data()), meta.size());
    path = dir / "r.sigmf-data";
  } else {
    path = dir / (std::string("r") + (type == datatype::cf32_le ? ".cf32" : type == datatype::ci16_le ? ".ci16" : ".ci8"));
  }
  write_file(path, bytes, nof_bytes);
  const std::size_t bps = bytes_per_sample(type);
  transport::capture_info info;
  try {
    info = transport::open_capture(path);
  } catch (const transport::capture_error& e) {
    check(nof_bytes % bps != 0, "only a size that is not whole samples is refused", e.what());
    return 0;
  }
  check(nof_bytes % bps == 0, "a size that is not whole samples is refused");
  check(info.type == type, "the format is the extension's or the meta's");
  const std::size_t n = nof_bytes / bps;
  check(info.nof_samples == n, "the sample count is the file's size over the sample size");

  const transport::capture_reader reader(info);
  // Whole, with room to spare: exactly n samples.
  std::vector<cf32> all(n + 3, cf32(-7.0f, 7.0f));
  check(reader.read(0, all) == n, "a read to the end returns what is there");
  for (std::size_t k = 0; k < n; ++k) {
    check(same(all[k], reference_sample(type, bytes, k)), "sample as the profile decodes it", std::to_string(k));
  }
  check(same(all[n], cf32(-7.0f, 7.0f)), "nothing is written past what was read");
  // At an offset, and past the end.
  const std::size_t first = n ? a % (n + 2) : a % 2;
  std::vector<cf32> part(b);
  const std::size_t got = reader.read(first, part);
  check(got == (first >= n ? 0 : std::min<std::size_t>(b, n - first)), "a read at an offset returns what is there");
  for (std::size_t k = 0; k < got; ++k) {
    check(same(part[k], all[first + k]), "a read at an offset agrees with the whole");
  }
  // Raw bytes.
  std::vector<std::byte> raw(nof_bytes);
  check(reader.read_raw(0, raw) == n && (n == 0 || std::memcmp(raw.data(), bytes, nof_bytes) == 0),
        "raw bytes are the file's");
  // Chunks with look-ahead: the new samples, put end to end, are the whole.
  const std::size_t chunk_samples = 1 + a % 61, overlap = b % 37;
  transport::chunk_reader chunks(reader, chunk_samples, overlap);
  transport::chunk c;
  uint64_t next = 0;
  bool last_seen = false;
  while (chunks.next(c)) {
    check(!last_seen, "no chunk after the last");
    check(c.first == next, "chunks follow each other");
    check(c.nof_new <= c.samples.size() && c.samples.size() <= c.nof_new + overlap, "a chunk's look-ahead is bounded");
    check(c.first + c.samples.size() <= n, "a chunk lies inside the capture");
    for (std::size_t k = 0; k < c.samples.size(); ++k) {
      check(same(c.samples[k], all[c.first + k]), "chunk samples agree with the whole");
    }
    next += c.nof_new;
    last_seen = c.last;
  }
  check(next == n && (n == 0 || last_seen), "the chunks cover the capture and the last says so");
  return 0;
}

} // namespace whd::fuzz
