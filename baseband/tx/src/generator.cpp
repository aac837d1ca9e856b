#include <whd/baseband/generator.hpp>
#include <whd/fec/coded_tx.hpp>

#include <algorithm>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

namespace whd::baseband {

namespace p = whd::profile;

namespace {

/// Payload bytes: seeded random, or a file read in order and from its start again
/// when it runs out.
class payload_source {
public:
  payload_source(const std::filesystem::path& path, uint64_t seed) : rng_(seed)
  {
    if (path.empty()) {
      return;
    }
    file_.open(path, std::ios::binary);
    if (!file_) {
      throw std::runtime_error("cannot open the payload file " + path.string());
    }
    if (std::filesystem::file_size(path) == 0) {
      throw std::runtime_error("the payload file " + path.string() + " is empty");
    }
    path_ = path;
  }

  void next(std::span<uint8_t> out)
  {
    if (!file_.is_open()) {
      for (auto& b : out) {
        if (nof_cached_ == 0) {
          cache_ = rng_();
          nof_cached_ = 8;
        }
        b = static_cast<uint8_t>(cache_ >> 56);
        cache_ <<= 8;
        --nof_cached_;
      }
      return;
    }
    std::size_t done = 0;
    while (done < out.size()) {
      file_.read(reinterpret_cast<char*>(out.data() + done), static_cast<std::streamsize>(out.size() - done));
      const auto got = static_cast<std::size_t>(file_.gcount());
      done += got;
      if (done < out.size()) {
        if (file_.bad() || (got == 0 && !file_.eof())) {
          throw std::runtime_error("cannot read the payload file " + path_.string());
        }
        file_.clear();
        file_.seekg(0);
      }
    }
  }

private:
  std::ifstream file_;
  std::filesystem::path path_;
  std::mt19937_64 rng_;
  uint64_t cache_ = 0;
  int nof_cached_ = 0;
};

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

/// The clean (unimpaired) samples of the capture, in order: silence, frames, silence.
class clean_stream {
public:
  clean_stream(const capture_config& cfg, const capture_plan& plan, capture_sink& sink)
      : cfg_(cfg), plan_(plan), sink_(sink), payload_(cfg.payload_path, plan.seeds.payload),
        silence_left_(cfg.lead_samples)
  {
  }

  /// Fill `out` with the next samples.
  void fill(std::span<cf32> out)
  {
    std::size_t k = 0;
    while (k < out.size()) {
      const std::size_t room = out.size() - k;
      if (silence_left_ > 0) {
        const auto n = static_cast<std::size_t>(std::min<uint64_t>(silence_left_, room));
        std::fill_n(out.begin() + static_cast<std::ptrdiff_t>(k), n, cf32{});
        silence_left_ -= n;
        k += n;
        continue;
      }
      if (in_frame_) {
        if (sym_off_ == symbol_.size()) {
          if (m_ == p::FIRST_DATA_SYMBOL + static_cast<long long>(spec_.nd)) {
            end_frame();
            continue;
          }
          build_symbol();
        }
        const std::size_t n = std::min(room, symbol_.size() - sym_off_);
        std::copy_n(symbol_.begin() + static_cast<std::ptrdiff_t>(sym_off_), n,
                    out.begin() + static_cast<std::ptrdiff_t>(k));
        sym_off_ += n;
        k += n;
        continue;
      }
      if (next_frame_ < cfg_.nof_frames) {
        begin_frame();
        continue;
      }
      // Past the tail: only reached if asked for more than the capture holds.
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(k), out.end(), cf32{});
      break;
    }
  }

  /// The capture has ended (possibly cut): complete the truth of a frame cut off
  /// (a coded frame's went whole when it began).
  void finish()
  {
    if (!in_frame_ || !truth_wanted_ || spec_.mcs != p::NO_MCS) {
      return;
    }
    for (; m_ < p::FIRST_DATA_SYMBOL + static_cast<long long>(spec_.nd); ++m_) {
      if (m_ >= p::FIRST_DATA_SYMBOL) {
        draw_payload();
      }
    }
  }

private:
  void begin_frame()
  {
    frame_index_ = next_frame_++;
    spec_ = spec_of(cfg_, frame_index_);
    // Listed frames are a prefix of the transmitted ones (starts increase).
    const bool is_listed = frame_index_ < plan_.frames.size();
    truth_wanted_ = is_listed && !spec_.corrupt_header;
    if (is_listed) {
      sink_.frame(plan_.frames[static_cast<std::size_t>(frame_index_)]);
    }
    in_frame_ = true;
    m_ = 0;
    sym_off_ = symbol_.size();
    bytes_.resize(static_cast<std::size_t>(p::bytes_per_symbol(spec_.mod)));
    if (spec_.mcs != p::NO_MCS) {
      // A coded frame: its information bytes drawn at once, its symbols' bytes the
      // coded bits (profile 2 §2).
      const fec::frame_geometry geo = fec::geometry(spec_.mcs, spec_.nd);
      info_.resize(geo.info_bytes);
      payload_.next(info_);
      if (truth_wanted_) {
        sink_.truth(info_);
      }
      coded_ = fec::encode_frame(geo, info_);
    }
  }

  void end_frame()
  {
    in_frame_ = false;
    silence_left_ = next_frame_ < cfg_.nof_frames ? cfg_.gap_samples : cfg_.tail_samples.value_or(cfg_.gap_samples);
  }

  void draw_payload()
  {
    payload_.next(bytes_);
    if (truth_wanted_) {
      sink_.truth(bytes_);
    }
  }

  void build_symbol()
  {
    if (m_ >= p::FIRST_DATA_SYMBOL && spec_.mcs != p::NO_MCS) {
      const auto at = static_cast<std::size_t>(m_ - p::FIRST_DATA_SYMBOL) * bytes_.size();
      std::copy_n(coded_.begin() + static_cast<std::ptrdiff_t>(at), bytes_.size(), bytes_.begin());
    } else if (m_ >= p::FIRST_DATA_SYMBOL) {
      draw_payload();
    }
    modulator_.frame_symbol(spec_, m_, bytes_, symbol_);
    ++m_;
    sym_off_ = 0;
  }

  const capture_config& cfg_;
  const capture_plan& plan_;
  capture_sink& sink_;
  payload_source payload_;
  modulator modulator_;
  uint64_t silence_left_;
  uint64_t next_frame_ = 0;
  uint64_t frame_index_ = 0;
  bool in_frame_ = false;
  bool truth_wanted_ = false;
  frame_spec spec_;
  long long m_ = 0;
  std::array<cf32, p::SYMBOL_LEN> symbol_{};
  std::size_t sym_off_ = 0;
  std::vector<uint8_t> bytes_;
  std::vector<uint8_t> info_;  ///< a coded frame's information bytes
  std::vector<uint8_t> coded_; ///< a coded frame's channel bytes, Nd x bytes per symbol
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
    r.payload_bytes = f.mcs != p::NO_MCS ? fec::geometry(f.mcs, f.nd).info_bytes : frame_payload_bytes(f);
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
  impairment_chain chain(cfg.impairments, plan.seeds);
  clean_stream clean(cfg, plan, sink);
  sink.begin(plan);
  std::vector<cf32> block(std::min<uint64_t>(cfg.block_samples, std::max<uint64_t>(plan.nof_samples, 1)));
  for (uint64_t pos = 0; pos < plan.nof_samples;) {
    const auto n = static_cast<std::size_t>(std::min<uint64_t>(block.size(), plan.nof_samples - pos));
    const std::span<cf32> part(block.data(), n);
    clean.fill(part);
    chain.run(pos, part);
    sink.samples(pos, part);
    pos += n;
  }
  clean.finish();
  sink.end();
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
