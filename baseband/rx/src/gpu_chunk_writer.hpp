/// @file gpu_chunk_writer.hpp
/// The GPU receiver's writer: a thread that takes decoded chunks in capture order,
/// waits for the device, notes non-finite samples in the frames' results and writes
/// the payload to the sink, one write a chunk; then it releases the chunk's slot.
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
  /// Starts the thread. `res_m` guards `res.frames` against the walk's appends;
  /// the writer's stage times go to times.wait_first_chunk, wait_chunk, wait_gpu,
  /// write_sink and hand_over. On an error the writer fails the ring (acquire()
  /// rethrows it) and goes on releasing slots without writing.
  chunk_writer(payload_sink& sink, const llr_output& llr, const frames_fn& on_frames, slot_ring& ring, datatype type, receive_result& res, std::mutex& res_m,
               stage_times& times);
  ~chunk_writer() { finish(); }
  chunk_writer(const chunk_writer&) = delete;
  chunk_writer& operator=(const chunk_writer&) = delete;

  /// The next chunk in capture order, its decode enqueued and its `done` recorded.
  void push(chunk_slot* s);
  /// Writes what was pushed, then stops the thread.
  void finish();
  /// Frames [handed, end) of the result to rx_config::on_frames (copied under the
  /// result's lock, handed over outside it); called by the writer after each chunk
  /// (its final_frames) and by the receiver once the writer has finished.
  void hand_over(std::size_t end);
  /// The writer's error, if any (after finish()).
  std::exception_ptr error() const noexcept { return error_; }

private:
  void loop();
  void write(chunk_slot& s);
  /// The chunk's payload (and soft values) to the sinks, its bad samples noted.
  void write_sinks(chunk_slot& s);
  void note_bad_samples(const chunk_slot& s);

  payload_sink& sink_;
  llr_output llr_;
  const frames_fn& on_frames_;
  std::size_t handed_ = 0;            ///< frames handed to on_frames_
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
  std::jthread thread_; ///< last: started once the rest is made
};

} // namespace whd::baseband::gpu
