// The data symbols of a chunk's decode (gpu_chunk_symbols.hpp).
#include "gpu_chunk_symbols.hpp"
#include "gpu_symbol_run.hpp"

#include <whd/baseband/demap.hpp>

#include <algorithm>
#include <stdexcept>

namespace whd::baseband::gpu {

void open_frames::list(chunk_slot& s, coded_span_cache& spans)
{
  constexpr uint64_t L = CHUNK_L;
  s.count = 0;
  s.out_bytes = 0;
  s.llr_bytes = 0;
  s.segments.clear();
  s.coded_symbols = 0;
  s.coded_frames = 0;
  s.coded_bytes = 0;
  s.coded_ends.clear();
  const std::size_t llr_value = s.llr_stride_bytes / LLR_STRIDE; // bytes a soft value takes (0: none)
  std::size_t nof_carried = 0;
  const uint64_t end = s.first + s.nof;
  for (open_frame& o : open_) {
    if (o.carried) {
      if (nof_carried == MAX_CARRIED) {
        break; // the rest go on in the next chunk
      }
      s.h_carry[nof_carried] = *o.carried;
      o.params = uint32_t(s.max_candidates + nof_carried);
      ++nof_carried;
    }
    // A symbol is listed where its window and its next neighbour's lie in the chunk
    // (or it is the frame's last), with the halo symbols either side of the run: the
    // neighbour before where the frame began in an earlier chunk, the one after where
    // it goes on (demap.hpp). Two slots are kept for a symbol and the halo after it.
    static_assert(PHASE_NEIGHBOURS == 1, "one halo symbol either side");
    const uint64_t m0 = o.next;
    const std::size_t listed_from = s.count;
    const uint64_t run_end = listed_run_end(o.fft0, m0, o.end, end); // [m0, run_end), capacity aside
    // Each symbol is listed while two slots are left (itself and a halo after it).
    auto room = [&] { return s.count + 2 <= s.max_symbols ? uint64_t(s.max_symbols - s.count - 1) : uint64_t(0); };
    auto add_halo = [&](uint64_t m) {
      s.h_offsets[s.count] = uint32_t(o.fft0 + m * L - s.first);
      s.h_desc[s.count] = {o.params, uint32_t(m) | symbol_desc::HALO};
      s.h_out_offsets[s.count] = uint32_t(s.out_bytes);
      if (llr_value != 0) {
        s.h_llr_offsets[s.count] = uint32_t(s.llr_bytes);
      }
      ++s.count;
    };
    if (m0 > profile::FIRST_DATA_SYMBOL && run_end > m0 && room() > 0) {
      // The earlier chunk stopped where m0 + 1's window passed its end, so m0 - 1's
      // lies 2 L past this chunk's first position.
      if (o.fft0 + (m0 - 1) * L < s.first) {
        throw std::logic_error("GPU backend: a halo symbol's window begins before its chunk");
      }
      add_halo(m0 - 1);
    }
    const std::size_t first = s.count;
    const auto n = std::size_t(std::min(run_end - m0, room()));
    {
      const std::size_t out_step = o.coded ? 0 : o.bytes_per_symbol;
      const std::size_t llr_step = o.bytes_per_symbol * 8 * llr_value;
      const auto off0 = uint32_t(o.fft0 + m0 * L - s.first);
      const auto out0 = uint32_t(s.out_bytes), llr0 = uint32_t(s.llr_bytes);
      uint32_t* offsets = s.h_offsets.data() + first;
      symbol_desc* desc = s.h_desc.data() + first;
      uint32_t* outs = s.h_out_offsets.data() + first;
      for (std::size_t i = 0; i < n; ++i) {
        offsets[i] = off0 + uint32_t(i * L);
        desc[i] = {o.params, uint32_t(m0 + i)};
        outs[i] = out0 + uint32_t(i * out_step);
      }
      if (llr_value != 0) {
        uint32_t* llrs = s.h_llr_offsets.data() + first;
        for (std::size_t i = 0; i < n; ++i) {
          llrs[i] = llr0 + uint32_t(i * llr_step);
        }
      }
      s.count += n;
      s.out_bytes += n * out_step;
      s.llr_bytes += n * llr_step;
      o.next += n;
    }
    const std::size_t last = s.count;
    if (last > first && o.next < o.end) {
      add_halo(o.next); // its window lies in the chunk: fits(o.next) held for the last listed
    }
    if (last > first) {
      s.segments.push_back({first, last - first, o.result, uint32_t(m0 - profile::FIRST_DATA_SYMBOL)});
    }
    if (s.count > listed_from) {
      // The frame's target (a halo symbol's too): where a coded frame's soft values go
      // (none for an uncoded frame, or a coded one whose FEC does not run).
      s.h_coded[o.params] = o.coded && last > first ? coded_target{list_coded(s, o, first, last, spans), o.geo.ce, 0u, 0u} : coded_target{};
      s.coded_frames = std::max<std::size_t>(s.coded_frames, std::size_t(o.params) + 1);
    }
    if (o.next < o.end && !o.carried) {
      // Goes on past this chunk: its parameters come to the host once.
      o.carried = std::make_unique<frame_params>();
      WHD_CUDA_CHECK(cudaSetDevice(s.device));
      WHD_CUDA_CHECK(cudaMemcpyAsync(o.carried.get(), s.locate.d_frame_params() + o.params, sizeof(frame_params), cudaMemcpyDeviceToHost,
                                     s.stream.get()));
      s.stream.synchronize();
    }
  }
  std::erase_if(open_, [](const open_frame& o) { return o.next == o.end; });
  s.nof_carried = nof_carried;
}

int8_t* open_frames::list_coded(chunk_slot& s, open_frame& o, std::size_t first, std::size_t last, coded_span_cache& spans)
{
  s.coded_symbols += last - first;
  const bool ends_here = o.next == o.end;
  int8_t* streams = nullptr;
  if (o.fec) {
    if (!o.span && ends_here && o.next - profile::FIRST_DATA_SYMBOL == last - first) {
      // Begins and ends in this chunk: gathered in the chunk's own buffer.
      streams = s.d_coded_streams.data() + s.coded_bytes;
      s.coded_bytes += fec::NOF_ENCODERS * o.geo.ce;
    } else {
      if (!o.span) {
        o.span = spans.take(s.device, fec::NOF_ENCODERS * o.geo.ce, o.geo.info_bytes);
      }
      streams = o.span->d_streams.data();
    }
  }
  if (ends_here && o.fec) {
    coded_end e;
    e.result = o.result;
    e.g = o.geo;
    e.d_streams = streams;
    e.out_at = s.out_bytes;
    if (o.span) {
      e.d_info = o.span->d_info.data();
      e.span = std::move(o.span);
    } else {
      e.d_info = s.d_out.data() + s.out_bytes; // L <= the frame's symbols' bytes: the chunk's output holds it
      s.out_bytes += o.geo.info_bytes;
    }
    s.coded_ends.push_back(std::move(e));
  }
  return streams;
}

} // namespace whd::baseband::gpu
