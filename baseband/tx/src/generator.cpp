#include <whd/baseband/generator.hpp>
#include <whd/fec/coded_tx.hpp>
#include <whd/transport/at_once.hpp>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace whd::baseband {

namespace p = whd::profile;

namespace {

uint64_t checked_add(uint64_t a, uint64_t b)
{
  if (a > UINT64_MAX - b) {
    throw std::invalid_argument("the capture would be longer than 2^64 samples");
  }
  return a + b;
}

frame_spec spec_of(const capture_config& cfg, uint64_t i)
{
  frame_spec f;
  f.mod = cfg.mods[i % cfg.mods.size()];
  f.nd = cfg.nds[i % cfg.nds.size()];
  if (!cfg.mcs.empty() && cfg.mcs[i % cfg.mcs.size()] != p::NO_MCS) {
    f.mcs = cfg.mcs[i % cfg.mcs.size()];
    f.mod = fec::modulation_of_mcs(f.mcs);
  }
  f.seq = static_cast<uint8_t>((cfg.first_seq + i) & 0xFFu);
  f.corrupt_header = std::find(cfg.corrupt_header_frames.begin(), cfg.corrupt_header_frames.end(), i) !=
                     cfg.corrupt_header_frames.end();
  return f;
}

uint64_t payload_bytes_of(const frame_spec& f)
{
  return f.mcs != p::NO_MCS ? fec::geometry(f.mcs, f.nd).info_bytes : frame_payload_bytes(f);
}

/// The frames that begin inside the capture (those whose samples are made), where
/// they lie and what preparing each takes.
struct capture_layout {
  std::vector<uint64_t> starts;       ///< first sample of each
  std::vector<uint64_t> ends;         ///< one past its last sample (on air, before the cut)
  std::vector<uint64_t> prep_bytes;   ///< bytes its prepared_frame holds
  std::vector<uint64_t> file_offsets; ///< where its payload begins in the payload file (empty: random payloads)
  uint64_t file_size = 0;             ///< of the payload file
};

capture_layout lay_out(const capture_config& cfg, const capture_plan& plan)
{
  capture_layout l;
  const bool from_file = !cfg.payload_path.empty();
  if (from_file) {
    const std::ifstream probe(cfg.payload_path, std::ios::binary);
    std::error_code ec;
    l.file_size = std::filesystem::file_size(cfg.payload_path, ec);
    if (!probe || ec) {
      throw std::runtime_error("cannot open the payload file " + cfg.payload_path.string());
    }
    if (l.file_size == 0) {
      throw std::runtime_error("the payload file " + cfg.payload_path.string() + " is empty");
    }
  }
  uint64_t pos = cfg.lead_samples;
  uint64_t offset = 0;
  for (uint64_t i = 0; i < cfg.nof_frames && pos < plan.nof_samples; ++i) {
    const frame_spec f = spec_of(cfg, i);
    const uint64_t payload = payload_bytes_of(f);
    l.starts.push_back(pos);
    pos += frame_samples(f.nd); // no overflow: plan_capture checked the sums
    l.ends.push_back(pos);
    l.prep_bytes.push_back(frame_payload_bytes(f) + (f.mcs != p::NO_MCS ? payload : 0));
    if (from_file) {
      l.file_offsets.push_back(offset);
      offset = (offset + payload % l.file_size) % l.file_size;
    }
    pos += i + 1 < cfg.nof_frames ? cfg.gap_samples : cfg.tail_samples.value_or(cfg.gap_samples);
  }
  return l;
}

/// A frame ready to be modulated: its payload drawn (or read) and coded.
struct prepared_frame {
  frame_spec spec;
  std::vector<uint8_t> info;    ///< a coded frame's L information bytes
  std::vector<uint8_t> channel; ///< the bytes its data symbols carry, Nd x bytes per symbol

  /// The bytes the truth file holds for it.
  std::span<const uint8_t> truth() const { return spec.mcs != p::NO_MCS ? info : channel; }
};

/// Frame i's payload bytes: its own random stream (8 bytes per 64-bit draw, most
/// significant first), or the payload file from where the frames before it left it,
/// from its start again when it runs out.
void fill_payload(const capture_config& cfg, const capture_plan& plan, const capture_layout& l, uint64_t i,
                  std::span<uint8_t> out)
{
  if (cfg.payload_path.empty()) {
    std::mt19937_64 rng(derive_stream_seed(plan.seeds.payload, i));
    uint64_t word = 0;
    int left = 0;
    for (auto& b : out) {
      if (left == 0) {
        word = rng();
        left = 8;
      }
      b = static_cast<uint8_t>(word >> 56);
      word <<= 8;
      --left;
    }
    return;
  }
  std::ifstream file(cfg.payload_path, std::ios::binary);
  uint64_t at = l.file_offsets[static_cast<std::size_t>(i)];
  for (std::size_t done = 0; done < out.size();) {
    const auto n = static_cast<std::size_t>(std::min<uint64_t>(out.size() - done, l.file_size - at));
    file.seekg(static_cast<std::streamoff>(at));
    file.read(reinterpret_cast<char*>(out.data() + done), static_cast<std::streamsize>(n));
    if (!file || static_cast<std::size_t>(file.gcount()) != n) {
      throw std::runtime_error("cannot read the payload file " + cfg.payload_path.string());
    }
    done += n;
    at = 0;
  }
}

prepared_frame prepare_frame(const capture_config& cfg, const capture_plan& plan, const capture_layout& l, uint64_t i)
{
  prepared_frame f;
  f.spec = spec_of(cfg, i);
  if (f.spec.mcs != p::NO_MCS) {
    // A coded frame: its symbols carry the coded bits of its information bytes
    // (profile 2 §2).
    const fec::frame_geometry geo = fec::geometry(f.spec.mcs, f.spec.nd);
    f.info.resize(geo.info_bytes);
    fill_payload(cfg, plan, l, i, f.info);
    f.channel = fec::encode_frame(geo, f.info);
  } else {
    f.channel.resize(static_cast<std::size_t>(frame_payload_bytes(f.spec)));
    fill_payload(cfg, plan, l, i, f.channel);
  }
  return f;
}

/// One thread's tools for making blocks: a modulator (a liquid plan is one thread's)
/// and buffers.
struct block_tools {
  modulator mod;
  std::vector<cf32> clean;
  std::array<cf32, p::SYMBOL_LEN> symbol{};
};

/// The clean samples [first, first + out.size()): silence, and the symbols of
/// `frames` (the layout's frames from `first_frame` on) that fall there.
void make_clean(const capture_layout& l, uint64_t first_frame, std::span<const std::shared_ptr<const prepared_frame>> frames,
                uint64_t first, std::span<cf32> out, block_tools& tools)
{
  std::fill(out.begin(), out.end(), cf32{});
  const uint64_t end = first + out.size();
  for (std::size_t j = 0; j < frames.size(); ++j) {
    const prepared_frame& f = *frames[j];
    const uint64_t start = l.starts[static_cast<std::size_t>(first_frame + j)];
    const uint64_t lo = std::max(first, start);
    const uint64_t hi = std::min(end, l.ends[static_cast<std::size_t>(first_frame + j)]);
    const auto bps = static_cast<std::size_t>(p::bytes_per_symbol(f.spec.mod));
    for (uint64_t m = lo < hi ? (lo - start) / p::SYMBOL_LEN : UINT64_MAX; m != UINT64_MAX && start + m * p::SYMBOL_LEN < hi;
         ++m) {
      std::span<const uint8_t> bytes;
      if (m >= p::FIRST_DATA_SYMBOL) {
        bytes = std::span<const uint8_t>(f.channel).subspan(static_cast<std::size_t>(m - p::FIRST_DATA_SYMBOL) * bps, bps);
      }
      tools.mod.frame_symbol(f.spec, static_cast<long long>(m), bytes, tools.symbol);
      const uint64_t sym = start + m * p::SYMBOL_LEN;
      const uint64_t a = std::max(lo, sym);
      const uint64_t b = std::min(hi, sym + p::SYMBOL_LEN);
      std::copy(tools.symbol.begin() + static_cast<std::ptrdiff_t>(a - sym),
                tools.symbol.begin() + static_cast<std::ptrdiff_t>(b - sym),
                out.begin() + static_cast<std::ptrdiff_t>(a - first));
    }
  }
}

/// Frames prepared ahead of the blocks that need them hold at most this many bytes
/// (a frame the next block needs is prepared whatever it holds).
constexpr uint64_t PREPARE_AHEAD_BYTES = uint64_t(256) << 20;

/// Makes a capture's blocks on a pool of threads and hands them to the sink in order
/// on the calling thread. Block k (samples [k B, (k + 1) B), B = block_samples) is
/// made from the clean samples before the channel alone, so it is the same whichever
/// thread makes it and whenever. At most `window_` blocks are made ahead of the sink,
/// and frames are prepared (payload, coding) a little ahead of the blocks, within
/// PREPARE_AHEAD_BYTES, and dropped once the sink has had their last block.
class capture_engine {
public:
  capture_engine(const capture_config& cfg, const capture_plan& plan)
      : cfg_(cfg), plan_(plan), layout_(lay_out(cfg, plan)), chain_(cfg.impairments, plan.seeds),
        history_(chain_.taps().size() - 1), block_(cfg.block_samples),
        nof_blocks_((plan.nof_samples + block_ - 1) / block_), ready_(layout_.starts.size())
  {
    const unsigned wanted = cfg.nof_threads ? cfg.nof_threads : std::max(1u, std::thread::hardware_concurrency());
    nof_threads_ = static_cast<unsigned>(
        std::max<uint64_t>(1, std::min<uint64_t>(wanted, nof_blocks_ + layout_.starts.size())));
    window_ = 4 * static_cast<std::size_t>(nof_threads_);
    ring_.resize(window_);
    ring_done_.assign(window_, 0);
  }

  void run(capture_sink& sink)
  {
    sink.begin(plan_);
    {
      std::vector<std::jthread> threads;
      // Stops and joins the threads however this block is left (a sink that throws).
      struct stopper {
        capture_engine& e;
        std::vector<std::jthread>& threads;
        ~stopper()
        {
          {
            const std::lock_guard lk(e.m_);
            e.stop_ = true;
          }
          e.work_cv_.notify_all();
          threads.clear();
        }
      } stop{*this, threads};
      for (unsigned t = 0; t < nof_threads_; ++t) {
        threads.emplace_back([this] { work(); });
      }
      feed(sink);
    }
    if (error_) {
      std::rethrow_exception(error_);
    }
    sink.end();
  }

private:
  /// [first, last) of the layout's frames block k is made from (the channel's
  /// history included).
  std::pair<uint64_t, uint64_t> frames_of(uint64_t k) const
  {
    const uint64_t a = k * block_;
    const uint64_t b = std::min<uint64_t>(a + block_, plan_.nof_samples);
    const uint64_t from = a >= history_ ? a - history_ : 0;
    const auto lo = std::upper_bound(layout_.ends.begin(), layout_.ends.end(), from) - layout_.ends.begin();
    const auto hi = std::lower_bound(layout_.starts.begin(), layout_.starts.end(), b) - layout_.starts.begin();
    return {static_cast<uint64_t>(lo), static_cast<uint64_t>(std::max(lo, hi))};
  }

  /// The last block frame f reaches, its channel tail included.
  uint64_t last_block_of(uint64_t f) const
  {
    const uint64_t last = std::min(plan_.nof_samples - 1, layout_.ends[static_cast<std::size_t>(f)] - 1 + history_);
    return last / block_;
  }

  /// Whether to prepare frame next_prep_ now (under m_).
  bool should_prepare() const
  {
    if (next_prep_ >= layout_.starts.size()) {
      return false;
    }
    if (next_block_ < nof_blocks_ && next_prep_ < frames_of(next_block_).second) {
      return true; // the next block needs it
    }
    if (held_bytes_ + layout_.prep_bytes[static_cast<std::size_t>(next_prep_)] > PREPARE_AHEAD_BYTES) {
      return false;
    }
    const uint64_t window_end = std::min<uint64_t>(delivered_ + window_, nof_blocks_);
    return window_end > 0 && next_prep_ < frames_of(window_end - 1).second + nof_threads_;
  }

  void work() noexcept
  {
    transport::name_this_thread("whd-tx");
    try {
      block_tools tools;
      std::unique_lock lk(m_);
      while (!stop_) {
        if (should_prepare()) {
          const uint64_t f = next_prep_++;
          held_bytes_ += layout_.prep_bytes[static_cast<std::size_t>(f)];
          lk.unlock();
          auto frame = std::make_shared<const prepared_frame>(prepare_frame(cfg_, plan_, layout_, f));
          lk.lock();
          ready_[static_cast<std::size_t>(f)] = std::move(frame);
          work_cv_.notify_all();
          continue;
        }
        if (next_block_ < nof_blocks_ && next_block_ < delivered_ + window_) {
          const auto [lo, hi] = frames_of(next_block_);
          const auto first = ready_.begin() + static_cast<std::ptrdiff_t>(lo);
          const auto last = ready_.begin() + static_cast<std::ptrdiff_t>(hi);
          if (std::all_of(first, last, [](const auto& f) { return f != nullptr; })) {
            const uint64_t k = next_block_++;
            const std::vector<std::shared_ptr<const prepared_frame>> frames(first, last);
            lk.unlock();
            make_block(k, lo, frames, tools);
            lk.lock();
            ring_done_[static_cast<std::size_t>(k % window_)] = 1;
            done_cv_.notify_all();
            continue;
          }
        }
        work_cv_.wait(lk);
      }
    } catch (...) {
      {
        const std::lock_guard lk(m_);
        if (!error_) {
          error_ = std::current_exception();
        }
        stop_ = true;
      }
      work_cv_.notify_all();
      done_cv_.notify_all();
    }
  }

  void make_block(uint64_t k, uint64_t first_frame, std::span<const std::shared_ptr<const prepared_frame>> frames,
                  block_tools& tools)
  {
    const uint64_t a = k * block_;
    const auto n = static_cast<std::size_t>(std::min<uint64_t>(block_, plan_.nof_samples - a));
    const uint64_t from = a >= history_ ? a - history_ : 0;
    const auto zeros = static_cast<std::size_t>(history_ - (a - from)); // before sample 0
    tools.clean.assign(n + history_, cf32{});
    make_clean(layout_, first_frame, frames, from, std::span<cf32>(tools.clean).subspan(zeros), tools);
    auto& out = ring_[static_cast<std::size_t>(k % window_)];
    out.resize(n);
    chain_.apply(a, tools.clean, out);
  }

  /// Hands the blocks, the frame records and the truth to the sink in order.
  void feed(capture_sink& sink)
  {
    std::size_t next_listed = 0;
    for (uint64_t k = 0; k < nof_blocks_; ++k) {
      const auto slot = static_cast<std::size_t>(k % window_);
      {
        std::unique_lock lk(m_);
        done_cv_.wait(lk, [&] { return ring_done_[slot] != 0 || error_ != nullptr; });
        if (error_) {
          return;
        }
      }
      const uint64_t end = std::min<uint64_t>((k + 1) * block_, plan_.nof_samples);
      for (; next_listed < plan_.frames.size() && plan_.frames[next_listed].start < end; ++next_listed) {
        const frame_record& rec = plan_.frames[next_listed];
        sink.frame(rec);
        if (rec.header_ok) {
          std::shared_ptr<const prepared_frame> f;
          {
            const std::lock_guard lk(m_);
            f = ready_[next_listed]; // block k needed it: made, and kept until after block k
          }
          sink.truth(f->truth());
        }
      }
      sink.samples(k * block_, ring_[slot]);
      {
        const std::lock_guard lk(m_);
        ring_done_[slot] = 0;
        delivered_ = k + 1;
        for (; evicted_ < next_prep_ && last_block_of(evicted_) <= k; ++evicted_) {
          held_bytes_ -= layout_.prep_bytes[static_cast<std::size_t>(evicted_)];
          ready_[static_cast<std::size_t>(evicted_)].reset();
        }
      }
      work_cv_.notify_all();
    }
  }

  const capture_config& cfg_;
  const capture_plan& plan_;
  const capture_layout layout_;
  const impairment_chain chain_;
  const std::size_t history_; ///< the channel's memory: taps - 1 samples
  const uint64_t block_;
  const uint64_t nof_blocks_;
  unsigned nof_threads_ = 1;
  std::size_t window_ = 1; ///< blocks made ahead of the sink, at most

  std::mutex m_; ///< guards what follows, but for the blocks' samples while made or fed
  std::condition_variable work_cv_; ///< workers: a frame prepared, a block fed, stop
  std::condition_variable done_cv_; ///< the feeder: a block made, an error
  std::vector<std::shared_ptr<const prepared_frame>> ready_; ///< prepared frames not yet dropped
  uint64_t next_prep_ = 0;   ///< the next frame to prepare
  uint64_t next_block_ = 0;  ///< the next block to make
  uint64_t delivered_ = 0;   ///< blocks the sink has had
  uint64_t evicted_ = 0;     ///< frames dropped (all before it)
  uint64_t held_bytes_ = 0;  ///< prep_bytes of frames prepared (or being prepared) and not dropped
  std::vector<std::vector<cf32>> ring_; ///< block k in ring_[k % window_]
  std::vector<char> ring_done_;
  bool stop_ = false;
  std::exception_ptr error_;
};

} // namespace

capture_plan plan_capture(const capture_config& cfg)
{
  if (cfg.mods.empty()) {
    throw std::invalid_argument("the modulation list is empty");
  }
  if (cfg.nds.empty()) {
    throw std::invalid_argument("the Nd list is empty");
  }
  for (auto nd : cfg.nds) {
    if (nd < 1 || nd > p::MAX_ND) {
      throw std::invalid_argument("Nd must be 1.." + std::to_string(p::MAX_ND) + " (20 header bits), got " +
                                  std::to_string(nd));
    }
  }
  for (auto m : cfg.mods) {
    if (m != p::modulation::qpsk && m != p::modulation::qam16) {
      throw std::invalid_argument("unknown modulation");
    }
  }
  for (int m : cfg.mcs) {
    if (m != p::NO_MCS && !fec::mcs_defined(m)) {
      throw std::invalid_argument("MCS " + std::to_string(m) + " is not defined by profile 2 (0, 1, 2, 7)");
    }
  }
  for (auto i : cfg.corrupt_header_frames) {
    if (i >= cfg.nof_frames) {
      throw std::invalid_argument("cannot corrupt the header of frame " + std::to_string(i) + ": the capture has " +
                                  std::to_string(cfg.nof_frames) + " frames (numbered from 0)");
    }
  }
  if (cfg.block_samples == 0) {
    throw std::invalid_argument("the block size must be > 0");
  }

  capture_plan plan;
  plan.seeds = derive_seeds(cfg.seed);
  const impairment_chain chain(cfg.impairments, plan.seeds);
  plan.taps = chain.taps();
  plan.complex_gain = chain.complex_gain();
  plan.signal_power = chain.signal_power();
  plan.noise_power = chain.noise_power();

  std::vector<frame_record> all;
  all.reserve(static_cast<std::size_t>(std::min<uint64_t>(cfg.nof_frames, 1u << 20)));
  uint64_t pos = cfg.lead_samples;
  for (uint64_t i = 0; i < cfg.nof_frames; ++i) {
    const frame_spec f = spec_of(cfg, i);
    frame_record r;
    r.index = i;
    r.start = pos;
    r.nd = f.nd;
    r.mod = f.mod;
    r.mcs = f.mcs;
    r.payload_bytes = payload_bytes_of(f);
    r.seq = f.seq;
    r.header_ok = !f.corrupt_header;
    all.push_back(r);
    pos = checked_add(pos, frame_samples(f.nd));
    pos = checked_add(pos, i + 1 < cfg.nof_frames ? cfg.gap_samples : cfg.tail_samples.value_or(cfg.gap_samples));
  }
  if (cfg.nof_frames == 0) {
    pos = checked_add(pos, cfg.tail_samples.value_or(cfg.gap_samples));
  }
  plan.nof_samples_uncut = pos;
  if (cfg.cut_samples > pos) {
    throw std::invalid_argument("cannot cut " + std::to_string(cfg.cut_samples) + " samples from a capture of " +
                                std::to_string(pos));
  }
  plan.nof_samples = pos - cfg.cut_samples;

  // A frame is listed when its preamble and header are whole in the capture: a
  // receiver can then find it and read its header (§4, a frame cut off is reported
  // truncated). Frames cut before the end of their header are not transmitted frames
  // a receiver could report.
  constexpr uint64_t header_end = static_cast<uint64_t>(p::FIRST_DATA_SYMBOL) * p::SYMBOL_LEN;
  for (auto& r : all) {
    if (r.start + header_end <= plan.nof_samples) {
      r.samples_present = std::min(frame_samples(r.nd), plan.nof_samples - r.start);
      if (r.header_ok) {
        plan.truth_bytes += r.payload_bytes;
      }
      plan.frames.push_back(r);
    } else {
      ++plan.nof_frames_dropped;
    }
  }
  return plan;
}

capture_plan generate_capture(const capture_config& cfg, capture_sink& sink)
{
  const capture_plan plan = plan_capture(cfg);
  capture_engine engine(cfg, plan);
  engine.run(sink);
  return plan;
}

void memory_capture::samples(uint64_t first, std::span<const cf32> block)
{
  if (first != samples_.size()) {
    throw std::logic_error("memory_capture: samples out of order");
  }
  samples_.insert(samples_.end(), block.begin(), block.end());
}

} // namespace whd::baseband
