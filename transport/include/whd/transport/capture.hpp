/// @file capture.hpp
/// Captures on disk (profile §6): SigMF recordings and raw interleaved I/Q,
/// read by random access (pread) so files larger than memory work, and written
/// as SigMF.
#pragma once

#include <whd/transport/sample_types.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace whd::transport {

/// A capture that cannot be used: the message names the file and the problem.
class capture_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One SigMF annotation (`core:sample_start`, `core:sample_count`, `core:label`, `core:comment`).
struct annotation {
  uint64_t sample_start = 0;
  uint64_t sample_count = 0;
  std::string label;
  std::string comment;
};

/// What a capture is: where its samples are, their type and how many.
struct capture_info {
  std::filesystem::path data_path;         ///< file holding the samples
  std::filesystem::path meta_path;         ///< `.sigmf-meta`, empty for raw captures
  datatype type = datatype::cf32_le;       ///< sample format on disk
  std::optional<double> sample_rate_sps;   ///< `core:sample_rate` when recorded
  uint64_t nof_samples = 0;                ///< complex samples in the data file
  std::vector<annotation> annotations;     ///< SigMF annotations (for people and tests only), when kept
  uint64_t annotations_reach = 0;          ///< largest sample_start + sample_count of the annotations
                                           ///< (saturated at 2^64 - 1), 0 without any: kept or not
};

/// What open_capture keeps of a SigMF meta's annotations. Either way each one is
/// checked as SigMF requires, with the same errors; a receiver needs only how far
/// they reach (whether the data file was cut short), and 100 000 of them, one a
/// frame, made into strings cost it time before its first sample.
enum class annotation_use {
  keep,       ///< capture_info::annotations holds them all
  reach_only, ///< capture_info::annotations stays empty
};

/// Identify and validate a capture.
/// `path` may be `NAME.sigmf-meta`, `NAME.sigmf-data`, `NAME.sigmf` or `NAME` (with
/// NAME.sigmf-meta beside it), or a raw file whose extension names its format
/// (`.cf32`/`.cfile`, `.ci16`/`.sc16`, `.ci8`/`.sc8`). `format` overrides the
/// extension of a raw file (and must agree with a SigMF meta's datatype).
/// An empty data file is valid (0 samples); whether that is an error is the caller's call.
/// @throws capture_error naming the file, the problem and what to do: missing file,
///   meta that is not JSON (with the parser's position) or lacks `global` /
///   `core:datatype`, unsupported datatype (the message lists the supported ones),
///   unknown extension without a format, data size not a whole number of samples,
///   `format` disagreeing with the meta, a directory, a SigMF archive (`.sigmf` tar).
/// `annotations` says whether each annotation is kept or only annotations_reach.
capture_info open_capture(const std::filesystem::path& path, std::optional<datatype> format = std::nullopt,
                          annotation_use annotations = annotation_use::keep);

/// Random-access source of complex samples, as cf32 or as stored. Two
/// implementations: a file (capture_reader) and memory (memory_source, for tests,
/// generators and the Python module).
class sample_source {
public:
  virtual ~sample_source() = default;
  /// Number of samples.
  virtual uint64_t size() const = 0;
  /// How the samples are stored (what read_raw returns).
  virtual datatype type() const = 0;
  /// Read samples [first, first + out.size()) as cf32 (integers as they are, no
  /// scaling). Returns the number read: fewer only at the end of the source.
  /// Safe to call from several threads at once.
  virtual std::size_t read(uint64_t first, std::span<cf32> out) const = 0;
  /// Read samples [first, ...) as stored (type()), so that they can cross the link
  /// unconverted. `out.size()` must be whole samples.
  /// @return the number of samples (not bytes) read: fewer only at the end
  /// @throws std::invalid_argument when `out.size()` is not whole samples
  virtual std::size_t read_raw(uint64_t first, std::span<std::byte> out) const = 0;
  /// Samples [first, end) will not be read again: a file's mapped pages may leave the
  /// resident set (a no-op where nothing is held for them).
  virtual void release(uint64_t first, uint64_t end) const = 0;
};

/// A capture file read with pread; memory use is the caller's buffers only.
class capture_reader final : public sample_source {
public:
  /// Open `info.data_path` (normally from open_capture) for reading.
  /// @throws capture_error naming the file when it cannot be opened or is a directory
  explicit capture_reader(capture_info info);
  ~capture_reader() override;
  capture_reader(const capture_reader&) = delete;
  capture_reader& operator=(const capture_reader&) = delete;

  /// The capture being read.
  const capture_info& info() const noexcept { return info_; }
  /// info().nof_samples.
  uint64_t size() const override { return info_.nof_samples; }
  /// info().type.
  datatype type() const override { return info_.type; }
  /// See sample_source::read. Converts in blocks on the caller's stack (cf32 is read
  /// straight into `out`). Past the end, or where the file became shorter since it
  /// was opened, returns a short count.
  /// @throws capture_error naming the file when the read itself fails (EIO)
  std::size_t read(uint64_t first, std::span<cf32> out) const override;
  /// Read the samples' bytes as stored (for link packing that forwards ci8 as is).
  /// `out.size()` must be a multiple of bytes_per_sample(info().type).
  /// @return the number of samples (not bytes) read: fewer only at the end
  /// @throws std::invalid_argument when `out.size()` is not whole samples;
  ///   capture_error when the read fails
  std::size_t read_raw(uint64_t first, std::span<std::byte> out) const override;
  /// The data file's bytes, mapped read-only on first use (thread-safe), so that
  /// link packing copies each sample once, from the page cache to pinned memory.
  /// Empty when the file cannot be mapped (callers then use read_raw). A file
  /// truncated by someone else while mapped raises SIGBUS, as with any mapping.
  std::span<const std::byte> mapped() const;
  /// Tell the kernel that samples [first, end) of the mapping will not be read
  /// again: their pages leave this process's resident set (the page cache keeps
  /// them, and a later read maps them again), so a run over a capture larger than
  /// memory does not hold every page it has read. Whole pages inside the range
  /// only; does nothing before mapped() or when the file is not mapped.
  void release_mapped(uint64_t first, uint64_t end) const;
  /// release_mapped.
  void release(uint64_t first, uint64_t end) const override { release_mapped(first, end); }

private:
  capture_info info_;
  int fd_ = -1;
  mutable std::once_flag map_once_;
  mutable const std::byte* map_ = nullptr;
  mutable std::size_t map_bytes_ = 0;
};

/// Samples held in memory.
class memory_source final : public sample_source {
public:
  /// Take ownership of `samples`.
  explicit memory_source(std::vector<cf32> samples) : samples_(std::move(samples)) {}
  /// samples().size().
  uint64_t size() const override { return samples_.size(); }
  /// cf32_le.
  datatype type() const override { return datatype::cf32_le; }
  /// See sample_source::read; copies, never throws.
  std::size_t read(uint64_t first, std::span<cf32> out) const override;
  /// The samples' bytes (cf32, as held).
  std::size_t read_raw(uint64_t first, std::span<std::byte> out) const override;
  /// Nothing to release.
  void release(uint64_t, uint64_t) const override {}
  /// The samples held.
  const std::vector<cf32>& samples() const noexcept { return samples_; }

private:
  std::vector<cf32> samples_;
};

/// A window of a source: samples [first, first + samples.size()); the first
/// `nof_new` are new, the rest overlap the next chunk.
struct chunk {
  uint64_t first = 0;            ///< source index of samples[0]
  std::span<const cf32> samples; ///< new samples, then the look-ahead
  std::size_t nof_new = 0;       ///< samples[0, nof_new) are new; the rest come again in the next chunk
  bool last = false;             ///< no chunk follows
};

/// Walks a source in chunks of `chunk_samples` new samples, each followed by
/// `overlap_samples` of look-ahead, so that anything shorter than the overlap
/// that starts in one chunk is whole in it. Memory: one buffer of
/// chunk_samples + overlap_samples.
class chunk_reader {
public:
  /// @param source read from sample 0 on; must outlive the reader
  /// @param chunk_samples new samples per chunk (fewer only in the last), > 0
  /// @param overlap_samples look-ahead after each chunk's new samples (fewer at the end)
  /// @throws std::invalid_argument when chunk_samples is 0
  chunk_reader(const sample_source& source, std::size_t chunk_samples, std::size_t overlap_samples);
  /// Next chunk; false when the source is exhausted (at once for an empty source).
  /// `out.samples` points into the reader's buffer and stays valid until the next call.
  /// A source that returns fewer samples than its size() promised (a file cut while
  /// being read) ends the walk: that chunk is `last` and all its samples are new.
  bool next(chunk& out);

private:
  const sample_source& source_;
  std::size_t chunk_samples_;
  std::size_t overlap_samples_;
  uint64_t pos_ = 0;
  std::vector<cf32> buffer_;
  std::size_t nof_valid_ = 0; ///< samples of the previous chunk in buffer_; its overlap is reused
};

/// Streams samples into a SigMF recording (`base.sigmf-data` + `base.sigmf-meta`),
/// converting to `type`. Integer types are written as round(sample * scale),
/// saturated. The meta (SigMF 1.x core) is written by close().
class sigmf_writer {
public:
  /// Create (truncate) `base.sigmf-data` and remove a stale `base.sigmf-meta`.
  /// @param base path without extension (a trailing .sigmf-meta, .sigmf-data or .sigmf is dropped)
  /// @param type datatype written to disk
  /// @param sample_rate_sps `core:sample_rate`, > 0
  /// @param description `core:description`, omitted when empty
  /// @throws capture_error naming the data file when it cannot be created;
  ///   std::invalid_argument for a sample rate that is not a positive number
  sigmf_writer(const std::filesystem::path& base, datatype type, double sample_rate_sps, std::string description);
  /// Closes (writing the meta) if close() was not called; errors are printed to stderr.
  ~sigmf_writer();
  sigmf_writer(const sigmf_writer&) = delete;
  sigmf_writer& operator=(const sigmf_writer&) = delete;

  /// Append samples; `scale` multiplies each sample before conversion. cf32 stores
  /// sample * scale; ci16/ci8 store round(sample * scale) (half away from zero),
  /// saturated to the type's range, NaN as 0.
  /// @throws capture_error naming the data file when the write fails (disk full);
  ///   std::logic_error after close()
  void write(std::span<const cf32> samples, float scale = 1.0f);
  /// Record an annotation; the meta lists them sorted by sample_start.
  void add_annotation(annotation a);
  /// Close the data file and write the meta. Does nothing the second time. After a
  /// failed write the data file is closed and no meta is written.
  /// @throws capture_error naming the file that could not be written
  void close();
  /// Samples appended so far.
  uint64_t samples_written() const noexcept { return nof_written_; }
  /// `base.sigmf-data`.
  std::filesystem::path data_path() const;
  /// `base.sigmf-meta`.
  std::filesystem::path meta_path() const;

private:
  void write_bytes(const void* bytes, std::size_t n);

  std::filesystem::path base_;
  datatype type_;
  double rate_;
  std::string description_;
  std::vector<annotation> annotations_;
  std::FILE* data_ = nullptr;
  uint64_t nof_written_ = 0;
  std::vector<std::byte> scratch_;
  bool failed_ = false; ///< a write failed: the recording is incomplete, no meta
};

} // namespace whd::transport
