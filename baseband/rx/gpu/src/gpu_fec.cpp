// The GPU receiver's FEC stage (gpu_fec.hpp).
#include "gpu_fec.hpp"

#include <algorithm>

namespace whd::baseband::gpu {

void gpu_fec::run(const std::vector<coded_end>& ends, uint32_t* d_rs, cudaStream_t stream, cudaEvent_t viterbi_done)
{
  if (ends.empty()) {
    return;
  }
  fec::gpu_coded_capacity need{ends.size(), 0, 0, 0};
  frames_.clear();
  for (const coded_end& e : ends) {
    need.max_coded_bits += e.g.coded_bits();
    need.max_tiles += fec::NOF_ENCODERS * fec::nof_tiles(e.g.nin);
    need.max_codewords += e.g.codewords;
    frames_.push_back({e.g, e.d_streams, e.d_info});
  }
  if (!decoder_ || need.max_frames > cap_.max_frames || need.max_coded_bits > cap_.max_coded_bits ||
      need.max_tiles > cap_.max_tiles || need.max_codewords > cap_.max_codewords) {
    // Half as much again as asked, so that a capture's growing frames remake it rarely.
    const auto more = [](uint64_t have, uint64_t want) { return std::max(have, want + want / 2); };
    cap_ = {std::size_t(more(cap_.max_frames, need.max_frames)), more(cap_.max_coded_bits, need.max_coded_bits),
            more(cap_.max_tiles, need.max_tiles), more(cap_.max_codewords, need.max_codewords)};
    decoder_.reset(); // its memory goes before the larger one's comes
    decoder_ = std::make_unique<fec::gpu_coded_decoder>(cap_);
  }
  static_assert(sizeof(fec::rs_stats) == 2 * sizeof(uint32_t), "RS counts cross as (corrected, failed) pairs");
  decoder_->run(frames_, reinterpret_cast<fec::rs_stats*>(d_rs), cuda::stream_ref(stream), viterbi_done);
}

} // namespace whd::baseband::gpu
