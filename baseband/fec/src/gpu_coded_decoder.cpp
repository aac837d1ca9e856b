#include <whd/fec/gpu_coded_decoder.hpp>

#include "gpu_fec_kernels.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace whd::fec {

namespace {

constexpr uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

unsigned log2_of(int pin)
{
  unsigned l = 0;
  while ((1 << l) < pin) {
    ++l;
  }
  if ((1 << l) != pin) {
    throw std::invalid_argument("gpu_coded_decoder: a puncturing period's input bits must be a power of 2");
  }
  return l;
}

} // namespace

gpu_coded_decoder::gpu_coded_decoder(const gpu_coded_capacity& cap) : cap_(cap)
{
  if (cap.max_frames == 0 || cap.max_coded_bits == 0 || cap.max_tiles == 0 || cap.max_codewords == 0) {
    throw std::invalid_argument("gpu_coded_decoder: every capacity must be at least 1");
  }
  int device = 0, sms = 0;
  WHD_CUDA_CHECK(cudaGetDevice(&device));
  WHD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // A thread decodes a pair of tiles at a time; a launch holds as many threads as
  // the device runs at once (or as the capacity's pairs need), each reusing its slot.
  const uint64_t needed_blocks = ceil_div(ceil_div(cap.max_tiles, 2), gpu::VITERBI_THREADS);
  for (const viterbi_form f : VITERBI_FORMS) {
    const uint64_t resident = uint64_t(sms) * uint64_t(std::max(gpu::viterbi_blocks_per_sm(f), 1));
    viterbi_blocks_[int(f)] = unsigned(std::min(resident, needed_blocks));
  }
  // The decisions' scratch for the default form's threads; use_form() grows it for a
  // form that holds more.
  use_form(form_);
  // 8 Q <= nin <= Ce = Nd Ncbps / 8 bytes a frame.
  decoded_ = cuda::device_buffer<uint8_t>(cap.max_coded_bits / 8 + 1);
  h_desc_ = cuda::pinned_buffer<std::byte>((cap.max_frames + 1) * sizeof(gpu::frame_desc));
  d_desc_ = cuda::device_buffer<std::byte>((cap.max_frames + 1) * sizeof(gpu::frame_desc));
}

void gpu_coded_decoder::use_form(viterbi_form f)
{
  form_ = f;
  const uint64_t slots = uint64_t(viterbi_blocks_[int(f)]) * gpu::VITERBI_THREADS;
  if (slots > slots_) {
    dec_ = cuda::device_buffer<uint4>(); // the old freed before the new is had
    dec_ = cuda::device_buffer<uint4>(slots * gpu::DEC_STEPS);
    slots_ = slots;
  }
}

std::size_t gpu_coded_decoder::device_bytes() const noexcept
{
  return dec_.size_bytes() + decoded_.size_bytes() + d_desc_.size_bytes();
}

void gpu_coded_decoder::run(std::span<const gpu_coded_frame> frames, rs_stats* d_rs, cuda::stream_ref stream, cudaEvent_t viterbi_done)
{
  const std::size_t n = frames.size();
  if (n > cap_.max_frames) {
    throw std::length_error("gpu_coded_decoder: " + std::to_string(n) + " frames, capacity " + std::to_string(cap_.max_frames));
  }
  if (n == 0) {
    if (viterbi_done != nullptr) {
      WHD_CUDA_CHECK(cudaEventRecord(viterbi_done, stream));
    }
    return;
  }
  if (d_rs == nullptr) {
    throw std::invalid_argument("gpu_coded_decoder: no device array for the RS counts");
  }
  uint64_t coded = 0, tiles = 0, words = 0;
  viterbi_form form = form_;
  for (const gpu_coded_frame& f : frames) {
    if (!gpu::viterbi_form_handles(form, f.g.punct)) {
      form = viterbi_form::plain_3;
    }
    if (f.d_streams == nullptr || f.d_info == nullptr) {
      throw std::invalid_argument("gpu_coded_decoder: a frame without its device soft values or information bytes");
    }
    coded += f.g.coded_bits();
    tiles += NOF_ENCODERS * nof_tiles(f.g.nin);
    words += f.g.codewords;
  }
  if (coded > cap_.max_coded_bits || tiles > cap_.max_tiles || words > cap_.max_codewords) {
    throw std::length_error("gpu_coded_decoder: the frames need " + std::to_string(coded) + " coded bits, " + std::to_string(tiles) +
                            " tiles, " + std::to_string(words) + " codewords; capacity " + std::to_string(cap_.max_coded_bits) +
                            ", " + std::to_string(cap_.max_tiles) + ", " + std::to_string(cap_.max_codewords));
  }
  // The previous run's upload must be done before its descriptors are overwritten.
  if (upload_pending_) {
    uploaded_.synchronize();
    upload_pending_ = false;
  }
  auto* desc = reinterpret_cast<gpu::frame_desc*>(h_desc_.data());
  uint64_t items = 0, word = 0, decoded = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const frame_geometry& g = frames[i].g;
    gpu::frame_desc& d = desc[i];
    d.streams = frames[i].d_streams;
    d.decoded = decoded_.data() + decoded;
    d.info = frames[i].d_info;
    d.ce = g.ce;
    d.nin = g.nin;
    d.q = g.q;
    d.codewords = g.codewords;
    d.last_k = g.last_k;
    d.pattern = gpu::pattern_table(g.punct);
    d.pin_log2 = log2_of(g.punct.pin);
    d.pout = uint32_t(g.punct.pout);
    d.item_first = items;
    d.word_first = word;
    items += (NOF_ENCODERS / 2) * nof_tiles(g.nin);
    word += g.codewords;
    decoded += NOF_ENCODERS * g.q;
  }
  desc[n] = gpu::frame_desc{};
  desc[n].item_first = items;
  desc[n].word_first = word;
  auto* d_desc = reinterpret_cast<const gpu::frame_desc*>(d_desc_.data());
  WHD_CUDA_CHECK(cudaMemcpyAsync(d_desc_.data(), h_desc_.data(), (n + 1) * sizeof(gpu::frame_desc), cudaMemcpyHostToDevice, stream));
  uploaded_.record(stream);
  upload_pending_ = true;
  WHD_CUDA_CHECK(cudaMemsetAsync(d_rs, 0, n * sizeof(rs_stats), stream));
  // At most the blocks whose threads have a decisions slot (a run that falls back to
  // another form than the one chosen may hold fewer blocks than that form could).
  const auto grid = unsigned(std::min({uint64_t(viterbi_blocks_[int(form)]), slots_ / gpu::VITERBI_THREADS,
                                       ceil_div(items, gpu::VITERBI_THREADS)}));
  gpu::launch_viterbi(d_desc, int(n), items, grid, dec_.data(), form, stream);
  if (viterbi_done != nullptr) {
    WHD_CUDA_CHECK(cudaEventRecord(viterbi_done, stream));
  }
  gpu::launch_rs(d_desc, int(n), word, d_rs, stream);
}

} // namespace whd::fec
