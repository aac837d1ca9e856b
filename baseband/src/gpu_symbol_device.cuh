// Device pieces of data-symbol decoding shared by the fused kernel and the
// cuFFT-based baseline chain: link unpacking, CFO phase, pilot common phase,
// equalisation with demapping and bit packing. 64 threads (one group) per symbol.
#pragma once

#include "gpu_symbol_decoder.hpp"

#include <whd/baseband/demap.hpp>

#include <cuda_fp16.h>

namespace whd::baseband::gpu {

inline constexpr int GROUP = 64; ///< threads per symbol

/// The profile's tone tables and PN sequence, as one constant-initialised block.
struct tone_tables {
  int16_t data_bin[profile::NOF_DATA];
  int16_t data_used[profile::NOF_DATA];
  int16_t pilot_bin[profile::NOF_PILOTS];
  uint8_t pn[profile::PN_PERIOD];
};

constexpr tone_tables make_tone_tables()
{
  tone_tables t{};
  for (int d = 0; d < profile::NOF_DATA; ++d) {
    t.data_bin[d] = profile::DATA_BIN[std::size_t(d)];
    t.data_used[d] = profile::DATA_USED[std::size_t(d)];
  }
  for (int i = 0; i < profile::NOF_PILOTS; ++i) {
    t.pilot_bin[i] = profile::PILOT_BIN[std::size_t(i)];
  }
  for (int i = 0; i < profile::PN_PERIOD; ++i) {
    t.pn[i] = profile::PN[std::size_t(i)];
  }
  return t;
}

/// One device copy per translation unit (no relocatable device code needed).
static __device__ const tone_tables D_TONES = make_tone_tables();

__device__ __forceinline__ float2 cmulf(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

/// Sample `index` of a packed batch, times the window's scale.
template <transport::link_format FMT>
__device__ __forceinline__ float2 load_sample(const void* samples, std::size_t index, float scale)
{
  float2 x;
  if constexpr (FMT == transport::link_format::f32) {
    x = static_cast<const float2*>(samples)[index];
  } else if constexpr (FMT == transport::link_format::half) {
    x = __half22float2(static_cast<const __half2*>(samples)[index]);
  } else {
    const char2 c = static_cast<const char2*>(samples)[index];
    x = make_float2(float(c.x), float(c.y));
  }
  return make_float2(x.x * scale, x.y * scale);
}

/// Phase [cycles] of a symbol window's first sample, reduced in double as the CPU does.
__device__ __forceinline__ float window_phase(const frame_params& fp, uint32_t m)
{
  double cyc = fp.cfo_cps * (fp.window_offset + double(m) * profile::SYMBOL_LEN);
  cyc -= rint(cyc);
  return float(cyc);
}

/// e^{-j 2 pi (base + cfo n)}: the derotation of sample n of a window.
__device__ __forceinline__ float2 derotation(float base, float cfo, int n)
{
  float s, c;
  sincospif(-2.0f * (base + cfo * float(n)), &s, &c);
  return make_float2(c, s);
}

/// Derotate v[j] = x[t + 64 j] (j = 0..7): one sincospif for the window's phase,
/// the frame's per-thread start and step from double, and products; the
/// recurrence adds at most a few ulp.
__device__ __forceinline__ void derotate8(float2 (&v)[8], float base, const frame_params& fp, int t)
{
  float s, c;
  sincospif(-2.0f * base, &s, &c);
  float2 r = cmulf(make_float2(c, s), make_float2(fp.rot_re[t], fp.rot_im[t]));
  const float2 step = make_float2(fp.step_re, fp.step_im);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    v[j] = cmulf(v[j], r);
    r = cmulf(r, step);
  }
}

/// e^{-j theta} from the pilots of symbol m (Y in natural bin order, in shared
/// memory). Called by all 64 threads of the group; the result is written to *rot
/// by thread 0; the caller synchronises before reading it.
__device__ __forceinline__ void pilot_rotation(const float2* y, const frame_params& fp, uint32_t m, int t, float2* rot)
{
  if (t < 32) {
    float2 acc = make_float2(0.0f, 0.0f);
    if (t < profile::NOF_PILOTS) {
      acc = cmulf(y[D_TONES.pilot_bin[t]], make_float2(fp.hconj_re[t], fp.hconj_im[t]));
    }
#pragma unroll
    for (int off = 8; off > 0; off >>= 1) {
      acc.x += __shfl_down_sync(0xffffffffu, acc.x, off);
      acc.y += __shfl_down_sync(0xffffffffu, acc.y, off);
    }
    if (t == 0) {
      const float sign = D_TONES.pn[m % profile::PN_PERIOD] ? -1.0f : 1.0f;
      const float mag = sqrtf(acc.x * acc.x + acc.y * acc.y);
      *rot = mag > 0.0f ? make_float2(sign * acc.x / mag, -sign * acc.y / mag) : make_float2(1.0f, 0.0f);
    }
  }
}

/// Equalise, demap and pack one symbol's payload bytes (Y in natural bin order).
__device__ __forceinline__ void demap_bytes(const float2* y, const frame_params& fp, float2 rot, uint8_t* out, int t)
{
  auto equalised = [&](int d) { return cmulf(cmulf(y[D_TONES.data_bin[d]], make_float2(fp.inv_re[d], fp.inv_im[d])), rot); };
  if (fp.mod == int(profile::modulation::qpsk)) {
    for (int byte = t; byte < profile::NOF_DATA / 4; byte += GROUP) {
      unsigned bits = 0;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 z = equalised(4 * byte + j);
        bits = (bits << 2) | demap_qpsk(z.x, z.y);
      }
      out[byte] = uint8_t(bits);
    }
  } else {
    for (int byte = t; byte < profile::NOF_DATA / 2; byte += GROUP) {
      unsigned bits = 0;
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const float2 z = equalised(2 * byte + j);
        bits = (bits << 4) | demap_qam16(z.x, z.y);
      }
      out[byte] = uint8_t(bits);
    }
  }
}

} // namespace whd::baseband::gpu
