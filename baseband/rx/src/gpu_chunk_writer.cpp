// The GPU receiver's writer thread (gpu_chunk_writer.hpp).
#include "gpu_chunk_writer.hpp"

#include <span>

namespace whd::baseband::gpu {

chunk_writer::chunk_writer(payload_sink& sink, const llr_output& llr, slot_ring& ring, datatype type, receive_result& res,
                           std::mutex& res_m, stage_times& times)
    : sink_(sink), llr_(llr), ring_(ring), type_(type), res_(res), res_m_(res_m), times_(times), thread_([this] { loop(); })
{
}

void chunk_writer::push(chunk_slot* s)
{
  {
    std::lock_guard lk(m_);
    queue_.push_back(s);
  }
  cv_.notify_one();
}

void chunk_writer::finish()
{
  {
    std::lock_guard lk(m_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void chunk_writer::loop()
{
  for (;;) {
    chunk_slot* s = nullptr;
    {
      std::unique_lock lk(m_);
      cv_.wait(lk, [&] { return !queue_.empty() || done_; });
      if (queue_.empty()) {
        return;
      }
      s = queue_.front();
      queue_.pop_front();
    }
    if (!error_) {
      try {
        write(*s);
      } catch (...) {
        error_ = std::current_exception();
        ring_.fail(error_);
      }
    }
    ring_.release(*s);
  }
}

void chunk_writer::write(chunk_slot& s)
{
  {
    stage_timer t(times_.wait_gpu);
    s.done.synchronize();
  }
  stage_timer t(times_.write_sink);
  if (type_ == datatype::cf32_le) {
    std::lock_guard lk(res_m_);
    note_bad_samples(s);
  }
  // One write a chunk: QPSK symbols (84 of the 168 bytes of their slot) are packed
  // together first, so that the sink sees large writes. The soft values come packed
  // from the device (8 to 32 times the payload's bytes: packing them here bound the
  // writer on mixed modulations).
  write_packed(sink_, s, s.h_out.data(), OUT_STRIDE, [](const segment& seg) { return seg.bytes_per_symbol; });
  if (llr_.sink != nullptr) {
    llr_.sink->write(std::span<const uint8_t>(s.h_llr.data(), s.llr_bytes));
    res_.llr_bytes += s.llr_bytes;
  }
}

template <class F>
std::size_t chunk_writer::write_packed(payload_sink& to, const chunk_slot& s, const uint8_t* base, std::size_t stride, F per_symbol)
{
  bool full = true;
  std::size_t total = 0;
  for (const segment& seg : s.segments) {
    full = full && per_symbol(seg) == stride;
    total += seg.count * per_symbol(seg);
  }
  if (full) {
    to.write(std::span<const uint8_t>(base, s.count * stride));
    return total;
  }
  compact_.clear();
  for (const segment& seg : s.segments) {
    const uint8_t* at = base + seg.first * stride;
    const std::size_t n = per_symbol(seg);
    for (std::size_t i = 0; i < seg.count; ++i) {
      compact_.insert(compact_.end(), at + i * stride, at + i * stride + n);
    }
  }
  to.write(compact_);
  return total;
}

void chunk_writer::note_bad_samples(const chunk_slot& s)
{
  for (const segment& seg : s.segments) {
    frame_result& f = res_.frames[seg.result];
    for (std::size_t i = 0; i < seg.count; ++i) {
      const uint32_t n = s.h_bad[seg.first + i];
      if (n == 0) {
        continue;
      }
      f.bad_samples += n;
      const uint32_t d = seg.first_symbol + uint32_t(i);
      if (!f.bad_symbols.empty() && f.bad_symbols.back().first + f.bad_symbols.back().count == d) {
        ++f.bad_symbols.back().count;
      } else {
        f.bad_symbols.push_back({d, 1});
      }
    }
  }
}

} // namespace whd::baseband::gpu
