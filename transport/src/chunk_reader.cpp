#include <whd/transport/capture.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace whd::transport {

namespace {
/// pos_ once the walk has ended.
constexpr uint64_t END = std::numeric_limits<uint64_t>::max();
} // namespace

chunk_reader::chunk_reader(const sample_source& source, std::size_t chunk_samples, std::size_t overlap_samples)
    : source_(source), chunk_samples_(chunk_samples), overlap_samples_(overlap_samples)
{
  if (chunk_samples_ == 0) {
    throw std::invalid_argument("chunk_reader: chunk_samples must be at least 1");
  }
  buffer_.resize(chunk_samples_ + overlap_samples_);
}

bool chunk_reader::next(chunk& out)
{
  const uint64_t size = source_.size();
  if (pos_ >= size) {
    pos_ = END;
    return false;
  }
  const auto want = static_cast<std::size_t>(std::min<uint64_t>(buffer_.size(), size - pos_));

  // The previous chunk's look-ahead is this chunk's start: move it to the front
  // rather than read it again.
  std::size_t have = 0;
  if (nof_valid_ > chunk_samples_) {
    have = std::min(nof_valid_ - chunk_samples_, want);
    const auto from = buffer_.begin() + static_cast<std::ptrdiff_t>(chunk_samples_);
    std::copy(from, from + static_cast<std::ptrdiff_t>(have), buffer_.begin());
  }
  if (have < want) {
    have += source_.read(pos_ + have, std::span(buffer_).subspan(have, want - have));
  }
  nof_valid_ = have;
  if (have == 0) {
    pos_ = END;
    return false;
  }

  const bool cut_short = have < want;
  out.first = pos_;
  out.samples = std::span<const cf32>(buffer_.data(), have);
  out.nof_new = cut_short ? have : std::min(chunk_samples_, have);
  out.last = cut_short || pos_ + out.nof_new >= size;
  pos_ = out.last ? END : pos_ + out.nof_new;
  return true;
}

} // namespace whd::transport
