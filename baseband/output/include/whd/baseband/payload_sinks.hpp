/// @file payload_sinks.hpp
/// Where a receiver's payload (and soft output) goes: kept in memory, or written to
/// a file as it is delivered (whd-rx -o and --llr, whdrx's output file).
#pragma once

#include <whd/baseband/rx_types.hpp>
#include <whd/transport/enum_names.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace whd::transport {
class crew;
}

namespace whd::baseband {

/// A sink that keeps everything in memory (tests, small captures).
class memory_sink final : public payload_sink {
public:
  void write(std::span<const uint8_t> bytes) override { bytes_.insert(bytes_.end(), bytes.begin(), bytes.end()); }
  const std::vector<uint8_t>& bytes() const noexcept { return bytes_; }

private:
  std::vector<uint8_t> bytes_;
};

/// How a payload file takes large writes (whd-rx --payload-write).
enum class payload_write {
  /// pwrite on a disk's file system; on tmpfs, pwrite while the writes keep up and
  /// split for a write with more waiting behind it (payload_sink::behind). With the
  /// capture streaming beside the writes, pwrite beats the mapping both into tmpfs and
  /// into a disk's page cache; split beats pwrite where the writer holds the run up but
  /// loses where the reading does (its copiers take from the reading): so split only
  /// while writes wait (docs/decisions.md)
  automatic,
  /// the file grown sparse (ftruncate, after a check of the free space, so that a full
  /// disk is an error, not a SIGBUS), mapped, and copied into by several threads at
  /// once: page faults on a mapping run in parallel where writes to one file hold its
  /// inode lock
  map,
  /// one pwrite a write, the blocks allocated ahead (fallocate) on a disk's file
  /// system: into its page cache, writing into allocated blocks skips the block
  /// allocation that a copy into a sparse file pays page by page. Not on tmpfs, where
  /// fallocate makes the memory pages themselves, on the writer's thread, under the
  /// lock the writes take too, and ahead of need (the file grows by up to 1 GiB ahead,
  /// cut back at close): a plain pwrite is faster there
  pwrite,
  /// each large write shared as it goes: the calling thread pwrites pieces from its
  /// front (the path that holds the inode lock) while the other threads, at a lower
  /// priority so that they take only cores nothing else wants, copy pieces from its
  /// back into a mapping of the file grown sparse as for map (page faults take no inode
  /// lock); they meet where their speeds put them. For every write, even where the
  /// writes keep up: automatic uses it only where they do not
  split,
};

inline constexpr enum_names<payload_write, 4> PAYLOAD_WRITE_NAMES{{{payload_write::automatic, "auto"},
                                                                  {payload_write::map, "map"},
                                                                  {payload_write::pwrite, "pwrite"},
                                                                  {payload_write::split, "split"}}};
constexpr const char* to_string(payload_write m) { return name_of(PAYLOAD_WRITE_NAMES, m).data(); }
constexpr std::optional<payload_write> parse_payload_write(std::string_view s) { return parse_name(PAYLOAD_WRITE_NAMES, s); }

/// The payload written to a file as it is delivered (whd-rx -o, the benches'
/// end-to-end regions). Errors name the file and the system's reason.
///
/// Into a regular file, a large write (from PARALLEL_FROM bytes) goes in as
/// `payload_write` says; smaller writes are gathered in a buffer first. "-" is
/// standard output, written in order (a pipe); a reader that closed it is an error
/// like any other.
class payload_file_sink final : public payload_sink {
public:
  /// Writes of at least this many bytes are spread over the threads.
  static constexpr std::size_t PARALLEL_FROM = std::size_t(1) << 20;
  /// @param path the file (created or truncated), or "-" for standard output
  /// @param nof_threads threads a large mapped write is spread over (0: up to 8, half the cores)
  /// @param method how large writes go in (automatic: by the file's file system and
  ///        whether writes wait, see payload_write)
  /// @throws std::runtime_error when the file cannot be created
  explicit payload_file_sink(const std::string& path, unsigned nof_threads = 0, payload_write method = payload_write::automatic);
  ~payload_file_sink() override;
  payload_file_sink(const payload_file_sink&) = delete;
  payload_file_sink& operator=(const payload_file_sink&) = delete;
  /// @throws std::runtime_error when the bytes cannot be written (or after close)
  void write(std::span<const uint8_t> bytes) override;
  /// Under the automatic way on tmpfs: the next large write is split when true,
  /// pwritten when false.
  void behind(bool more_waiting) override { behind_ = more_waiting; }
  /// Writes what is buffered and closes the file; a second call does nothing. Errors
  /// the buffered writes meet only now (a full disk) are thrown here, not lost in a
  /// destructor.
  /// @throws std::runtime_error when the file cannot be finished
  void close();
  /// Bytes written so far (buffered ones included).
  uint64_t size() const noexcept { return offset_ + buffer_.size(); }
  /// How large writes go in, for a regular file: the way asked for, or the automatic
  /// choice (pwrite on a disk's file system; automatic on tmpfs, where it is pwrite
  /// or split write by write); pwrite once a mapping of the file was refused.
  payload_write method() const noexcept { return adaptive_ ? payload_write::automatic : method_; }
  /// A regular file, written at offsets; false for a pipe, a terminal or a device,
  /// written in order (the method then does not apply).
  bool positioned() const noexcept { return positioned_; }

private:
  void flush();
  /// The file grown to at least `end` for a write going in `way`, in growing steps:
  /// sparse for the mapping (map, split), allocated for pwrite (but on tmpfs:
  /// nothing, the writes make the pages).
  void reserve(uint64_t end, payload_write way);
  /// A large write copied into a mapping of the file by the threads (map), or shared
  /// between pwrite and the copies (split).
  void write_mapped(std::span<const uint8_t> bytes, payload_write way);
  /// A large write shared by pwrite (this thread, from the front) and copies into its
  /// mapping `dst` (the other threads, from the back).
  void write_split(std::span<const uint8_t> bytes, uint8_t* dst);
  /// Writes all of `bytes` at `offset` (pwrite) or in order (write), naming the file on failure.
  void put(std::span<const uint8_t> bytes, uint64_t offset) const;

  std::string path_;
  int fd_ = -1;
  bool owns_fd_ = true;   ///< false for standard output
  bool positioned_ = true; ///< a regular file: pwrite at offsets, several threads
  bool in_memory_ = false; ///< on tmpfs: pwrite allocates nothing ahead
  unsigned nof_threads_ = 1;
  payload_write method_ = payload_write::map; ///< never automatic: with adaptive_, pwrite
  bool adaptive_ = false; ///< automatic on tmpfs: split while behind_, else method_ (pwrite)
  bool behind_ = false;   ///< the last behind() heard
  uint64_t offset_ = 0;   ///< bytes handed to the file so far
  uint64_t reserved_ = 0; ///< bytes the file was grown to ahead of the writes (cut back at close)
  std::vector<uint8_t> buffer_;
  std::unique_ptr<transport::crew> crew_; ///< the threads of mapped writes, made at the first
};

} // namespace whd::baseband
