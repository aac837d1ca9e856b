// The GPU receiver's writer thread (gpu_chunk_writer.hpp).
#include "gpu_chunk_writer.hpp"

#include <algorithm>
#include <span>

namespace whd::baseband::gpu {

chunk_writer::chunk_writer(payload_sink& sink, const llr_output& llr, const frames_fn& on_frames, slot_ring& ring, datatype type,
                           receive_result& res, std::mutex& res_m, stage_times& times, coded_span_cache& spans)
    : sink_(sink), spans_(spans), llr_(llr), on_frames_(on_frames), ring_(ring), type_(type), res_(res), res_m_(res_m), times_(times)
{
  if (on_frames_) {
    hand_thread_ = std::jthread([this] {
      transport::name_this_thread("whd-hand-over");
      hand_loop();
    });
  }
  try {
    thread_ = std::jthread([this] {
      transport::name_this_thread("whd-writer");
      loop();
    });
  } catch (...) {
    finish(); // the handing thread stops
    throw;
  }
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
  {
    std::lock_guard lk(hand_m_);
    hand_done_ = true;
  }
  hand_cv_.notify_all();
  if (hand_thread_.joinable()) {
    hand_thread_.join(); // after handing over every frame posted
  }
}

void chunk_writer::loop()
{
  for (bool first = true;; first = false) {
    chunk_slot* s = nullptr;
    {
      stage_timer t(first ? times_.wait_first_chunk : times_.wait_chunk);
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
    if (error_) {
      ring_.release(*s);
    } else {
      ring_.release_output(*s); // its input may already hold the next chunk
    }
  }
}

void chunk_writer::write(chunk_slot& s)
{
  {
    stage_timer t(times_.wait_gpu);
    s.done.synchronize();
  }
  if (s.release_by_writer) {
    ring_.release_input(s); // the next chunk may be read into it while this one is written
  }
  {
    stage_timer t(times_.write_sink);
    write_sinks(s);
  }
  post(s.final_frames);
}

void chunk_writer::post(std::size_t end)
{
  if (!on_frames_) {
    return;
  }
  {
    std::lock_guard lk(hand_m_);
    hand_want_ = std::max(hand_want_, end);
  }
  hand_cv_.notify_one();
}

void chunk_writer::hand_loop()
{
  for (;;) {
    std::size_t end = 0;
    {
      std::unique_lock lk(hand_m_);
      hand_cv_.wait(lk, [&] { return hand_want_ > handed_ || hand_done_; });
      if (hand_want_ <= handed_) {
        return; // done, and every frame posted is handed over
      }
      end = hand_want_;
    }
    try {
      stage_timer t(times_.hand_over);
      hand_over(end);
    } catch (...) {
      hand_error_ = std::current_exception();
      ring_.fail(hand_error_); // the run stops as on a failed write
      return;
    }
  }
}

void chunk_writer::write_sinks(chunk_slot& s)
{
  if (type_ == datatype::cf32_le || !s.coded_ends.empty()) {
    std::lock_guard lk(res_m_);
    if (type_ == datatype::cf32_le) {
      note_bad_samples(s);
    }
    for (std::size_t i = 0; i < s.coded_ends.size(); ++i) {
      frame_result& f = res_.frames[s.coded_ends[i].result];
      f.rs_corrected = s.h_rs[2 * i];
      f.rs_failed = s.h_rs[2 * i + 1];
    }
  }
  // One write a chunk. The payload and the soft values come packed from the device
  // (packing them here bound the writer on mixed modulations). The sinks hear first
  // whether more chunks wait for this thread: whether they are what holds it up.
  bool more_waiting = false;
  {
    std::lock_guard lk(m_);
    more_waiting = !queue_.empty();
  }
  sink_.behind(more_waiting);
  // The chunk's payload, with the L bytes of each coded frame that spans chunks where
  // it ends (its span's, not the chunk's own output); the spans go back for reuse.
  std::size_t at = 0;
  for (gpu::coded_end& e : s.coded_ends) {
    if (!e.span) {
      continue;
    }
    sink_.write(std::span<const uint8_t>(s.h_out.data() + at, e.out_at - at));
    sink_.write(std::span<const uint8_t>(e.span->h_info.data(), e.g.info_bytes));
    at = e.out_at;
    spans_.give(std::move(e.span));
  }
  sink_.write(std::span<const uint8_t>(s.h_out.data() + at, s.out_bytes - at));
  if (llr_.sink != nullptr) {
    llr_.sink->behind(more_waiting);
    llr_.sink->write(std::span<const uint8_t>(s.h_llr.data(), s.llr_bytes));
    res_.llr_bytes += s.llr_bytes;
  }
}

void chunk_writer::hand_over(std::size_t end)
{
  if (!on_frames_ || end <= handed_) {
    return;
  }
  {
    std::lock_guard lk(res_m_);
    to_hand_.assign(res_.frames.begin() + std::ptrdiff_t(handed_), res_.frames.begin() + std::ptrdiff_t(end));
  }
  handed_ = end;
  on_frames_(to_hand_);
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
