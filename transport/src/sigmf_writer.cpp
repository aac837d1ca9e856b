#include <whd/transport/capture.hpp>

#include "capture_fail.hpp"
#include "sample_codec.hpp"
#include "sigmf_meta.hpp"

#include <cerrno>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace whd::transport {

namespace {

using detail::fail;

/// Integer samples are converted through a scratch block of this many samples.
constexpr std::size_t SCRATCH_SAMPLES = 4096;

std::filesystem::path base_of(const std::filesystem::path& path)
{
  const std::string ext = path.extension().string();
  if (ext == ".sigmf-meta" || ext == ".sigmf-data" || ext == ".sigmf") {
    return std::filesystem::path(path).replace_extension();
  }
  return path;
}

std::filesystem::path with_suffix(std::filesystem::path base, const char* suffix)
{
  base += suffix;
  return base;
}

} // namespace

sigmf_writer::sigmf_writer(const std::filesystem::path& base, datatype type, double sample_rate_sps,
                           std::string description)
    : base_(base_of(base)), type_(type), rate_(sample_rate_sps), description_(std::move(description))
{
  if (!std::isfinite(rate_) || rate_ <= 0.0) {
    throw std::invalid_argument("sigmf_writer '" + data_path().string() + "': sample rate " + std::to_string(rate_) +
                                " is not a positive number of samples per second");
  }
  // A meta left from an earlier recording must not describe the new data file.
  std::error_code ec;
  std::filesystem::remove(meta_path(), ec);
  data_ = std::fopen(data_path().c_str(), "wb");
  if (data_ == nullptr) {
    fail(data_path(), "cannot be created: " + detail::errno_text(errno) +
                          "; check that its folder exists and is writable");
  }
  scratch_.resize(SCRATCH_SAMPLES * bytes_per_sample(type_));
}

sigmf_writer::~sigmf_writer()
{
  if (data_ == nullptr) {
    return;
  }
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "whd: %s\n", e.what());
  }
}

std::filesystem::path sigmf_writer::data_path() const { return with_suffix(base_, ".sigmf-data"); }

std::filesystem::path sigmf_writer::meta_path() const { return with_suffix(base_, ".sigmf-meta"); }

void sigmf_writer::write_bytes(const void* bytes, std::size_t n)
{
  if (std::fwrite(bytes, 1, n, data_) != n) {
    const int err = errno;
    failed_ = true;
    fail(data_path(), "write failed after " + std::to_string(nof_written_) + " samples: " + detail::errno_text(err) +
                          "; free disk space or write the recording elsewhere");
  }
}

void sigmf_writer::write(std::span<const cf32> samples, float scale)
{
  if (data_ == nullptr) {
    throw std::logic_error("sigmf_writer '" + data_path().string() + "': write after close()");
  }
  if (failed_) {
    fail(data_path(), "an earlier write failed; the recording is incomplete");
  }
  if (type_ == datatype::cf32_le && scale == 1.0f) {
    write_bytes(samples.data(), samples.size_bytes());
  } else {
    const std::size_t bps = bytes_per_sample(type_);
    for (std::size_t done = 0; done < samples.size(); done += SCRATCH_SAMPLES) {
      const auto block = samples.subspan(done, std::min(SCRATCH_SAMPLES, samples.size() - done));
      detail::encode(type_, block, scale, std::span(scratch_).first(block.size() * bps));
      write_bytes(scratch_.data(), block.size() * bps);
    }
  }
  nof_written_ += samples.size();
}

void sigmf_writer::add_annotation(annotation a) { annotations_.push_back(std::move(a)); }

void sigmf_writer::close()
{
  if (data_ == nullptr) {
    return;
  }
  std::FILE* f = std::exchange(data_, nullptr);
  // stdio reports a full disk at the latest when its buffer is flushed.
  int err = 0;
  if (std::fflush(f) != 0) {
    err = errno;
  }
  if (std::fclose(f) != 0 && err == 0) {
    err = errno;
  }
  if (failed_) {
    return;
  }
  if (err != 0) {
    failed_ = true;
    fail(data_path(), "write failed after " + std::to_string(nof_written_) + " samples: " + detail::errno_text(err) +
                          "; free disk space or write the recording elsewhere");
  }

  const std::string text = detail::sigmf_meta_text(type_, rate_, description_, annotations_);
  std::FILE* meta = std::fopen(meta_path().c_str(), "wb");
  if (meta == nullptr) {
    fail(meta_path(), "cannot be created: " + detail::errno_text(errno) +
                          "; check that its folder is writable (the data file is complete)");
  }
  err = 0;
  if (std::fwrite(text.data(), 1, text.size(), meta) != text.size() || std::fflush(meta) != 0) {
    err = errno;
  }
  if (std::fclose(meta) != 0 && err == 0) {
    err = errno;
  }
  if (err != 0) {
    fail(meta_path(), "write failed: " + detail::errno_text(err) + "; free disk space (the data file is complete)");
  }
}

} // namespace whd::transport
