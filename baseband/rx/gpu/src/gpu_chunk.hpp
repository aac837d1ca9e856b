/// @file gpu_chunk.hpp
/// The GPU receiver's unit of work: a chunk of the capture as stored, with the
/// buffers of its search, locate stage and decode (chunk_slot), and the ring of
/// slots over the streams and GPUs that chunks go through in turn (slot_ring).
/// Internal to the receive chain.
#pragma once

#include "gpu_coded.hpp"
#include "gpu_fec.hpp"
#include "gpu_locate.hpp"
#include "gpu_search.hpp"
#include "gpu_symbol_decoder.hpp"
#include "host_pool.hpp"
#include "stage_timer.hpp"

#include <whd/baseband/gpu_receiver.hpp>
#include <whd/transport/cuda.hpp>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace whd::baseband::gpu {

inline constexpr uint64_t CHUNK_L = profile::SYMBOL_LEN;
/// Samples a chunk holds before its first searched position: a candidate's edge
/// and grid rules look L + 1 back.
inline constexpr uint64_t HALO_BEFORE = CHUNK_L + 1;
/// Samples a chunk holds after its last searched position: the candidate's window
/// (L), the cross-correlation's lags and the preamble and header windows.
inline constexpr uint64_t HALO_AFTER = 4 * CHUNK_L + profile::N;
/// Positions searched per chunk when gpu_config::symbols_per_batch is 0.
inline constexpr uint64_t AUTO_CHUNK_POSITIONS = uint64_t(1) << 24;
/// Frames whose data go on into the next chunk (frames do not overlap: one or two).
inline constexpr std::size_t MAX_CARRIED = 4;

/// Seconds spent per stage in one run.
struct stage_times {
  double setup = 0, read = 0, wait_located = 0, fetch = 0, walk = 0, host_locate = 0, wait_output = 0, list = 0, enqueue = 0, wait_slot = 0,
         wait_first_chunk = 0, wait_chunk = 0, wait_gpu = 0, write_sink = 0, hand_over = 0, drain = 0;
};

/// A run of consecutive data symbols of one frame inside a chunk's decode.
struct segment {
  std::size_t first = 0; ///< first symbol slot of the chunk's decode
  std::size_t count = 0;
  std::size_t result = 0;    ///< index of the frame in receive_result::frames
  uint32_t first_symbol = 0; ///< data symbol number (0 = the frame's first) of the first slot
};

class slot_ring;

/// One chunk in flight on one GPU: the capture's samples as stored, the search, the
/// locate stage and the decode, with their buffers (allocated once).
struct chunk_slot {
  /// `link`: how a cf32 chunk crosses (f32: as stored; half or int8: packed by the
  /// reading threads, transport::pack_cf32_run); integer chunks cross as stored.
  chunk_slot(int dev, uint64_t positions, std::size_t max_candidates, datatype type, transport::link_format link,
             const rx_config& cfg);

  /// The samples the locate stage and the window gather read: cf32 chunks as
  /// stored (so that non-finite samples are counted), the others converted.
  const float2* located_input(datatype type) const
  {
    return type == datatype::cf32_le ? reinterpret_cast<const float2*>(d_raw.data()) : d_x.data();
  }
  /// Whether the chunk crosses packed (a cf32 chunk over a half or int8 link).
  bool packed() const noexcept { return link != transport::link_format::f32; }

  int device;
  transport::link_format link; ///< f32 unless packed()
  uint64_t capacity;       ///< samples a chunk holds at most
  /// Data symbols whose windows fit in a chunk, and the halo symbols (symbol_desc::HALO)
  /// either side of the runs of the frames that cross its ends.
  std::size_t max_symbols;
  std::size_t max_candidates;
  cuda::stream stream;
  cuda::pinned_buffer<std::byte> h_raw;   ///< as it crosses: as stored, or packed
  cuda::pinned_buffer<float> h_scales;    ///< packed: one scale per RUN_SCALE_BLOCK samples
  cuda::device_buffer<std::byte> d_link;  ///< packed: h_raw's copy on the device
  cuda::device_buffer<float> d_scales_in; ///< packed: h_scales' copy
  cuda::device_buffer<std::byte> d_raw;   ///< as stored (packed: unpacked to cf32, marks as NaN)
  cuda::device_buffer<float2> d_x; ///< the chunk as float2 (non-finite samples as 0)
  candidate_search search;
  candidate_locator locate;
  cuda::pinned_buffer<search_count> h_count;
  cuda::pinned_buffer<sync_candidate> h_cands;
  cuda::pinned_buffer<located_candidate> h_located;
  cuda::event located;
  // The decode.
  cuda::pinned_buffer<uint32_t> h_offsets;
  cuda::pinned_buffer<symbol_desc> h_desc;
  cuda::device_buffer<uint32_t> d_offsets;
  cuda::device_buffer<symbol_desc> d_desc;
  cuda::device_buffer<float2> d_win;
  cuda::device_buffer<float2> d_rots; ///< the decode's derotations (batch_view::rots)
  cuda::device_buffer<float> d_scales;
  cuda::device_buffer<uint32_t> d_bad;
  cuda::pinned_buffer<uint32_t> h_bad;
  /// The payload, packed in order: symbol i's bytes from h_out_offsets[i] (a QPSK
  /// symbol takes 84 bytes, a 16-QAM one OUT_STRIDE), out_bytes in all. The device
  /// writes it so, and only those bytes cross back: the writer hands them to the
  /// sink as they are (packing them on the host had bound the writer on mixed
  /// modulations).
  cuda::device_buffer<uint8_t> d_out;
  cuda::pinned_buffer<uint8_t> h_out;
  cuda::pinned_buffer<uint32_t> h_out_offsets;
  cuda::device_buffer<uint32_t> d_out_offsets;
  std::size_t out_bytes = 0;
  /// Whether every symbol takes OUT_STRIDE bytes (h_out_offsets[i] = i OUT_STRIDE,
  /// and the offsets need not cross); never with coded symbols (they take none).
  bool out_strided() const noexcept { return coded_symbols == 0 && out_bytes == count * OUT_STRIDE; }
  cuda::pinned_buffer<frame_params> h_carry;
  /// Soft values (rx_config::llr; empty without): up to LLR_STRIDE values a symbol,
  /// packed in payload order (each symbol's at its h_llr_offsets entry).
  std::size_t llr_stride_bytes = 0;
  cuda::device_buffer<uint8_t> d_llr;
  cuda::pinned_buffer<uint8_t> h_llr;
  cuda::pinned_buffer<uint32_t> h_llr_offsets;
  cuda::device_buffer<uint32_t> d_llr_offsets;
  std::size_t llr_bytes = 0; ///< the chunk's soft values, bytes
  /// Coded frames (profile 2). Each frame's target (h_coded, d_coded: the kernel's
  /// demultiplexing), by its index in the chunk's frame parameters (symbol_desc::frame;
  /// coded_frames entries used), passed to the decode where coded_symbols > 0; the soft
  /// values of frames that begin and end in this chunk gather in d_coded_streams, one
  /// frame after another (coded_bytes used), those of frames that go on past a chunk in
  /// their span.
  cuda::device_buffer<int8_t> d_coded_streams;
  std::size_t coded_bytes = 0;
  cuda::pinned_buffer<coded_target> h_coded;
  cuda::device_buffer<coded_target> d_coded;
  std::size_t coded_frames = 0;
  std::size_t coded_symbols = 0;
  /// The frames whose FEC this chunk runs (their last symbol is in it), in result
  /// order, and RS's counts of each (corrected, failed) as they come back.
  std::vector<coded_end> coded_ends;
  cuda::device_buffer<uint32_t> d_rs;
  cuda::pinned_buffer<uint32_t> h_rs;
  gpu_fec fec; ///< their FEC (its scratch made at the first coded frame)
  /// Where the chunk has coded frames that end in it, their FEC and the copies back
  /// run on this stream, after `decoded`: the next chunk's copy in, search and locate
  /// on `stream` do not wait for them (the FEC reads only the output half and its own
  /// buffers).
  cuda::stream fec_stream;
  /// Recorded after every decode: a coded frame's soft values from this chunk are in
  /// its streams (a spanning frame's FEC waits for every slot's).
  cuda::event decoded{false};
  /// The chunk's outputs are on the host.
  cuda::event done{false};
  // What the chunk holds.
  uint64_t first = 0, nof = 0, lo = 0, hi = 0;
  std::size_t count = 0;       ///< data symbols decoded from it
  std::size_t nof_carried = 0; ///< frame parameters carried in from earlier chunks
  std::vector<segment> segments;
  /// Frames of the result that are whole once this chunk is written: those before
  /// the first frame still open after it (every frame walked, if none is).
  std::size_t final_frames = 0;
  /// The slot's two halves, each held from its hand-out to its release: the input
  /// (what the reading thread fills and the device's search, locate and decode read:
  /// free once the decode is done; released then by a host function on the stream for
  /// a chunk with coded symbols, else by the writer when it takes the chunk) and the
  /// output (what the walk lists and the writer writes: free once the writer has
  /// written it).
  bool input_held = false;
  bool output_held = false;
  bool release_by_writer = false; ///< the writer releases the input (see above)
  slot_ring* ring = nullptr; ///< the ring whose release_input_after() was called last
};

/// Slots a capture of `nof_chunks` chunks runs with: streams x GPUs, or fewer.
std::size_t slots_for(const gpu_config& gcfg, uint64_t nof_chunks);

/// The chunk's samples as stored, preaded into its pinned buffer by the pool
/// (packed on the way, a megabyte at a time, when the slot is packed()).
void read_chunk(const transport::sample_source& src, datatype type, chunk_slot& s, host_pool& pool);

/// The slots of every stream of every GPU, handed out in turn: a slot's input is held
/// from acquire() until the device has decoded the chunk, its output from
/// hold_output() until the writer has written it, so at most size() chunks are in
/// flight and the next chunk is read into a slot while the writer still writes the
/// one before from it.
/// A capture of fewer chunks than streams x GPUs gets as many slots as it has chunks.
/// (Slots made on the reading thread as first needed, while earlier chunks were
/// decoded, cost more decode than they saved in set-up: allocation stalls the stream
/// work.)
///
/// The GPUs after the first may start later (gpu_config::start): their contexts,
/// peer access and slots are made on a thread of the ring's while the first GPU
/// decodes, and take chunks once made. Until then their slots are null and no
/// chunk goes to them.
class slot_ring {
public:
  slot_ring() = default;
  slot_ring(const slot_ring&) = delete;
  slot_ring& operator=(const slot_ring&) = delete;
  /// Waits for a start of further GPUs under way.
  ~slot_ring();

  /// Slots for chunks of `positions` searched positions of `type`, as many as there
  /// are streams x GPUs or `nof_chunks`, whichever is fewer; when device or pinned
  /// memory is too short, the chunk is halved (down to 64 symbols) and gcfg.notice
  /// says so. Only the GPUs started so far get their slots now (the first alone
  /// before start_further). `cfg` must outlive the ring. Returns the positions per
  /// chunk it settled on.
  uint64_t make(uint64_t positions, uint64_t nof_chunks, datatype type, transport::link_format link, const rx_config& cfg,
                const gpu_config& gcfg);
  bool empty() const noexcept { return slots_.empty(); }
  /// Slots made for this many chunks or more (a later capture of as many reuses them).
  std::size_t size() const noexcept { return slots_.size(); }
  /// The slots of the GPUs started so far.
  std::vector<chunk_slot*> started_slots();
  /// GPUs started so far (their contexts and slots made; 1 before any start).
  int started_gpus();

  /// Opens the ring for a run of `nof_chunks` chunks: the first slot is next, none is
  /// held, the counts of chunks per GPU and of waits start at 0.
  void open(uint64_t nof_chunks);
  /// The next slot, its input held, once its input is released; null after close();
  /// rethrows the error given to fail(). Called from one thread (the reader). Each
  /// GPU's slots are taken in turn; which GPU's, gpu_config::spread says (when_busy:
  /// the first GPU whose next slot is free, passing over a GPU only while that slot's
  /// chunk is still on the GPU; a slot the host holds is waited for). Starts the
  /// further GPUs when gpu_config::start says so.
  chunk_slot* acquire();
  /// Holds `s`'s output (for the chunk just read into it), once the writer has
  /// released it; rethrows the error given to fail(). Called from one thread (the walk).
  void hold_output(chunk_slot& s);
  /// The chunk's decode is done: its input may take the next chunk.
  void release_input(chunk_slot& s);
  /// Releases `s`'s input once the work enqueued on its stream so far is done (a host
  /// function on the stream: no thread waits for it).
  void release_input_after(chunk_slot& s);
  /// The chunk is written (its input released before): the walk may list the next.
  void release_output(chunk_slot& s);
  /// Both halves (the writer, having given up on the chunk after an error: the ring
  /// has failed, so a later chunk's input released here is never reused).
  void release(chunk_slot& s);
  /// acquire() returns null from now on (the walk is over).
  void close();
  /// acquire() rethrows `e` from now on (the writer failed).
  void fail(std::exception_ptr e);
  /// Lines for the log's detail on the run since open(): the GPUs that took chunks,
  /// and whether the further GPUs were started and why.
  std::vector<std::string> notes();
  /// Chunks each GPU took since open().
  std::vector<uint64_t> chunks_per_gpu();

private:
  /// The GPU of slot i (slot i is on GPU i mod nof_gpus_).
  int gpu_of(std::size_t i) const noexcept { return int(i % std::size_t(nof_gpus_)); }
  /// GPU g's next slot in turn.
  std::size_t next_of(int g) const noexcept;
  /// Under m_: whether to start the further GPUs now (gpu_config::start), and if so
  /// whether the reader waits for them; records why in the notes.
  void consider_start(std::unique_lock<std::mutex>& lk);
  /// Starts the GPUs after the started ones and makes their slots (on the starter
  /// thread, or the reader's for a start after a set number of chunks); publishes
  /// them, or records why not.
  void start_further();
  /// Waits for the work on every slot's streams (throws on a CUDA error when `check`).
  void settle(bool check);
  /// Under m_: seconds the reader has waited on chunks still on their GPUs.
  void add_behind(double seconds) noexcept { behind_seconds_ += seconds; }

  std::vector<std::unique_ptr<chunk_slot>> slots_; ///< null for a GPU not yet started
  // What make() made the slots for, for the slots of GPUs started later.
  uint64_t per_ = 0;
  std::size_t max_cands_ = 0;
  datatype type_ = datatype::cf32_le;
  transport::link_format link_ = transport::link_format::f32;
  const rx_config* cfg_ = nullptr;
  gpu_config gcfg_;

  std::size_t next_ = 0;          ///< in_turn: the next slot
  std::vector<std::size_t> turn_; ///< when_busy: each GPU's next slot, counted among its own
  int nof_gpus_ = 1;              ///< GPUs the slots are spread over (started or not)
  int started_ = 1;               ///< GPUs whose slots are made
  int up_ = 1;                    ///< GPUs started (contexts, peer access), kept for later runs' slots
  bool start_asked_ = false;      ///< a start of the further GPUs was begun (under way, done or failed: not begun again)
  // This run's counts (since open()).
  uint64_t nof_chunks_ = 0;
  uint64_t acquired_ = 0;
  double behind_seconds_ = 0.0;
  std::vector<uint64_t> chunks_per_gpu_;
  std::vector<std::string> notes_;
  std::mutex m_;
  std::condition_variable free_cv_;
  bool closed_ = false;
  std::exception_ptr error_;
  std::thread starter_; ///< the start of further GPUs (joined by the next make() or the destructor)
};

} // namespace whd::baseband::gpu
