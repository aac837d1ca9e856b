/// @file gpu_chunk_writer.hpp
/// The GPU receiver's writer: a thread that takes decoded chunks in capture order,
/// waits for the device (then frees the slot's input for the next chunk to be read
/// into), notes non-finite samples in the frames' results and writes the payload to
/// the sink, one write a chunk; then it frees the slot's output.
/// The frames made whole by each write go to rx_config::on_frames from a second
/// thread, so that the writer's next write does not wait for them (on captures of
/// many tiny frames, handing them to the report took a large share of the writer's run).
/// Internal to the receive chain.
#pragma once

#include "gpu_chunk.hpp"

#include <whd/baseband/receiver.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace whd::baseband::gpu {

class chunk_writer {
public:
  /// Starts the threads. `res_m` guards `res.frames` against the walk's appends;
  /// the writer's stage times go to times.wait_first_chunk, wait_chunk, wait_gpu,
  /// write_sink, and the handing thread's to hand_over. On an error the writer fails
  /// the ring (acquire() rethrows it) and goes on releasing slots without writing; so
  /// does a throw from on_frames, after which no more frames are handed over.
  chunk_writer(payload_sink& sink, const llr_output& llr, const frames_fn& on_frames, slot_ring& ring, datatype type, receive_result& res, std::mutex& res_m,
               stage_times& times, coded_span_cache& spans);
  ~chunk_writer() { finish(); }
  chunk_writer(const chunk_writer&) = delete;
  chunk_writer& operator=(const chunk_writer&) = delete;

  /// The next chunk in capture order, its decode enqueued and its `done` recorded.
  void push(chunk_slot* s);
  /// Writes what was pushed and hands over the frames it made whole, then stops the
  /// threads.
  void finish();
  /// Frames [handed, end) of the result to rx_config::on_frames (copied under the
  /// result's lock, handed over outside it); called by the handing thread as the writer
  /// posts each chunk's final_frames, and by the receiver once the writer has finished.
  void hand_over(std::size_t end);
  /// The writer's error, else the handing thread's, if any (after finish()).
  std::exception_ptr error() const noexcept { return error_ ? error_ : hand_error_; }

private:
  void loop();
  void write(chunk_slot& s);
  /// The chunk's payload (and soft values) to the sinks, its bad samples noted.
  void write_sinks(chunk_slot& s);
  void note_bad_samples(const chunk_slot& s);
  /// Frames [0, end) are whole: the handing thread is to hand them over.
  void post(std::size_t end);
  void hand_loop();

  payload_sink& sink_;
  coded_span_cache& spans_; ///< where the spans of coded frames written go back
  llr_output llr_;
  const frames_fn& on_frames_;
  std::size_t handed_ = 0;            ///< frames handed to on_frames_ (by the handing thread, then the caller)
  std::vector<frame_result> to_hand_; ///< their copies, made under the result's lock
  slot_ring& ring_;
  datatype type_;
  receive_result& res_;
  std::mutex& res_m_;
  stage_times& times_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<chunk_slot*> queue_;
  bool done_ = false;
  std::exception_ptr error_;
  std::mutex hand_m_;
  std::condition_variable hand_cv_;
  std::size_t hand_want_ = 0; ///< frames posted as whole
  bool hand_done_ = false;
  std::exception_ptr hand_error_;
  std::jthread hand_thread_; ///< started in the body, once the rest is made
  std::jthread thread_;
};

} // namespace whd::baseband::gpu
