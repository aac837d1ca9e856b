// The device parameters of a located frame (gpu_symbol_decoder.hpp's frame_params):
// its CFO rotations, 1/H by bin and in the transform's lane order, conj(H) on the
// pilots. Made on the host only for a frame the device did not locate itself (the
// fallback of gpu_receiver.cpp) and by the benches; the locate kernel writes the
// same fields on the device.
#include "gpu_symbol_decoder.hpp"

namespace whd::baseband::gpu {

frame_params make_frame_params(const located_frame& f)
{
  frame_params fp{};
  fp.cfo_cps = f.sync.cfo_cps;
  fp.window_offset = double(f.sync.fft0 - f.sync.start);
  fp.mod = int32_t(f.info.mod);
  fp.llr_inv_noise = f.channel->llr_inv_noise;
  for (int d = 0; d < profile::NOF_DATA; ++d) {
    const cf32 inv = f.channel->inv[std::size_t(profile::DATA_USED[std::size_t(d)])];
    fp.inv[profile::DATA_BIN[std::size_t(d)]] = float2{inv.real(), inv.imag()};
  }
  for (int j = 0; j < profile::N / 64; ++j) {
    for (int t = 0; t < 64; ++t) {
      fp.inv_held[64 * j + t] = fp.inv[held_lane(t) + 64 * j];
    }
  }
  for (int i = 0; i < profile::NOF_PILOTS; ++i) {
    const cf32 h = f.channel->h[std::size_t(profile::PILOT_USED[std::size_t(i)])];
    fp.hconj_re[i] = h.real();
    fp.hconj_im[i] = -h.imag();
  }
  for (int t = 0; t < 64; ++t) {
    const cf32 r = derotation(f.sync.cfo_cps * t);
    fp.rot_re[t] = r.real();
    fp.rot_im[t] = r.imag();
  }
  const cf32 step = derotation(f.sync.cfo_cps * 64.0);
  fp.step_re = step.real();
  fp.step_im = step.imag();
  return fp;
}

} // namespace whd::baseband::gpu
