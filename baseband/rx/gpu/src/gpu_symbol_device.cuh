// Device pieces of data-symbol decoding: link unpacking, CFO phase, pilot common
// phase, equalisation with demapping and bit packing, for groups of 64 threads
// (the fused kernel's group decodes two symbols, the cuFFT-based baseline chain's
// one). The baseline chain decodes from Y in shared memory
// (demap_bytes); the fused kernel from the bins each thread holds after its
// transform (the *_held pieces and pack_payload).
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

/// Sample `index` of a packed batch, times the window's scale (the fused kernel
/// scales later, on the pilots' rotation).
template <transport::link_format FMT>
__device__ __forceinline__ float2 load_sample(const void* samples, std::size_t index, float scale = 1.0f)
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

/// e^{-j 2 pi window_phase}: the common phase of symbol m's window, which the CPU takes
/// out of its samples and the fused kernel leaves in (its derotation, made from the
/// window's own pilots, takes it out with them; derotations of different windows are
/// compared without it).
__device__ __forceinline__ float2 window_rotation(const frame_params& fp, uint32_t m)
{
  float s, c;
  sincospif(-2.0f * window_phase(fp, m), &s, &c);
  return make_float2(c, s);
}

/// e^{-j 2 pi (base + cfo n)}: the derotation of sample n of a window.
__device__ __forceinline__ float2 derotation(float base, float cfo, int n)
{
  float s, c;
  sincospif(-2.0f * (base + cfo * float(n)), &s, &c);
  return make_float2(c, s);
}

/// Derotate v[j] = x[t + 64 j] (j = 0..7) by r_j = rot_t step^j, where rot_t =
/// e^{-j 2 pi cfo t} and step = e^{-j 2 pi cfo 64} come from double (frame_params);
/// the recurrence adds at most a few ulp.
__device__ __forceinline__ void derotate8(float2 (&v)[8], float2 rot_t, float2 step)
{
  float2 r = rot_t;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    v[j] = cmulf(v[j], r);
    r = cmulf(r, step);
  }
}

/// What lane l of a warp weighs its pilot with in pilot_rotation: conj(H) on pilot
/// l mod 16 and the sign of symbol m's pilot value (loaded apart from the
/// rotation, so that a kernel can issue the loads early).
struct pilot_weight {
  float2 hconj;
  float sign;
};

__device__ __forceinline__ pilot_weight load_pilot_weight(const frame_params& fp, uint32_t m, int lane)
{
  const int i = lane % profile::NOF_PILOTS;
  return {make_float2(fp.hconj_re[i], fp.hconj_im[i]), D_TONES.pn[m % profile::PN_PERIOD] ? -1.0f : 1.0f};
}

/// e^{-j theta} from the pilots, in every lane of the warp, and in `mag` the magnitude
/// of the weighted sum (refine_qpsk's pilot term). Lane l passes Y on pilot
/// l mod 16 and its weight. The xor butterfly adds in the order of a tree over lanes
/// 0..15 (p0 + p8 first, ..., the two halves last); each lane gets the same sum,
/// since a + b == b + a exactly.
__device__ __forceinline__ float2 pilot_rotation(float2 y_pilot, pilot_weight w, float& mag)
{
  static_assert(profile::NOF_PILOTS == 16, "the butterfly below reduces 16 lanes");
  float2 acc = cmulf(y_pilot, w.hconj);
#pragma unroll
  for (int off = 8; off > 0; off >>= 1) {
    acc.x += __shfl_xor_sync(0xffffffffu, acc.x, off);
    acc.y += __shfl_xor_sync(0xffffffffu, acc.y, off);
  }
  mag = sqrtf(acc.x * acc.x + acc.y * acc.y);
  return mag > 0.0f ? make_float2(w.sign * acc.x / mag, -w.sign * acc.y / mag) : make_float2(1.0f, 0.0f);
}

/// Symbol i's derotation for its decode (demap.hpp's PHASE_NEIGHBOURS): the unit
/// average of its own in b.rots and those of its neighbours in the batch (the entries
/// next to it of its frame, m - 1 and m + 1), summed in the CPU's order.
__device__ __forceinline__ float2 neighbour_rotation(const batch_view& b, std::size_t i, const symbol_desc& desc)
{
  static_assert(PHASE_NEIGHBOURS == 1);
  const uint32_t m = desc.number();
  float2 acc = make_float2(0.0f, 0.0f);
  if (i > 0) {
    const symbol_desc d = b.symbols[i - 1];
    if (d.frame == desc.frame && d.number() + 1 == m) {
      acc = b.rots[i - 1];
    }
  }
  const float2 own = b.rots[i];
  acc = make_float2(acc.x + own.x, acc.y + own.y);
  if (i + 1 < b.count) {
    const symbol_desc d = b.symbols[i + 1];
    if (d.frame == desc.frame && d.number() == m + 1) {
      const float2 next = b.rots[i + 1];
      acc = make_float2(acc.x + next.x, acc.y + next.y);
    }
  }
  float2 r;
  unit_rotation(acc.x, acc.y, r.x, r.y);
  return r;
}

/// Equalise, demap and pack one symbol's payload bytes (Y in natural bin order), B
/// bits a tone (2: QPSK, 4: 16-QAM): thread t writes bytes t, t + GROUP, ...
template <int B>
__device__ __forceinline__ void demap_bytes_of(const float2* y, const frame_params& fp, float2 rot, uint8_t* out, int t)
{
  constexpr int PER_BYTE = 8 / B; // tones a byte holds
  for (int byte = t; byte < profile::NOF_DATA / PER_BYTE; byte += GROUP) {
    unsigned bits = 0;
#pragma unroll
    for (int j = 0; j < PER_BYTE; ++j) {
      const int bin = D_TONES.data_bin[PER_BYTE * byte + j];
      const float2 z = cmulf(cmulf(y[bin], fp.inv[bin]), rot);
      bits = (bits << B) | (B == 4 ? demap_qam16(z.x, z.y) : demap_qpsk(z.x, z.y));
    }
    out[byte] = uint8_t(bits);
  }
}

/// demap_bytes_of for the frame's modulation.
__device__ __forceinline__ void demap_bytes(const float2* y, const frame_params& fp, float2 rot, uint8_t* out, int t)
{
  if (fp.mod == int(profile::modulation::qpsk)) {
    demap_bytes_of<2>(y, fp, rot, out, t);
  } else {
    demap_bytes_of<4>(y, fp, rot, out, t);
  }
}

// ---------------------------------------------------------------- bins held in registers
// After the fused kernel's transform, the thread of output lane L holds bins
// L + GROUP j in v[j], j = 0..7 (fft512_device.cuh's output_bin).

inline constexpr int SLOTS = 8; ///< bins a thread holds
/// The decided bit groups of one symbol in shared memory: byte d for data tone d,
/// then a spare byte that bins of no data tone write, rounded up to 16 bytes for
/// pack_payload's vector reads.
inline constexpr int SPARE_BYTE = profile::NOF_DATA;
inline constexpr int BITS_BYTES = (profile::NOF_DATA + 1 + 15) / 16 * 16;

/// Per lane L, what the bins L + GROUP j are.
struct lane_tones {
  alignas(16) uint16_t bits_at[GROUP][SLOTS]; ///< data tone d of the bin, else SPARE_BYTE
  int8_t pilot[GROUP];                        ///< 16 j + i when bin L + GROUP j is pilot i, else -1
  uint8_t data_slots;                         ///< bit j: some lane holds a data tone in slot j
  uint8_t pilot_slots;                        ///< bit j: some lane holds a pilot in slot j
};

constexpr lane_tones make_lane_tones()
{
  lane_tones l{};
  for (int lane = 0; lane < GROUP; ++lane) {
    l.pilot[lane] = -1;
    for (int j = 0; j < SLOTS; ++j) {
      l.bits_at[lane][j] = SPARE_BYTE;
    }
  }
  for (int d = 0; d < profile::NOF_DATA; ++d) {
    const int bin = profile::DATA_BIN[std::size_t(d)];
    l.bits_at[bin % GROUP][bin / GROUP] = uint16_t(d);
    l.data_slots = uint8_t(l.data_slots | (1u << (bin / GROUP)));
  }
  for (int i = 0; i < profile::NOF_PILOTS; ++i) {
    const int bin = profile::PILOT_BIN[std::size_t(i)];
    // One pilot per lane at most: the profile's pilots fall on different lanes.
    l.pilot[bin % GROUP] = l.pilot[bin % GROUP] < 0 ? int8_t(16 * (bin / GROUP) + i) : throw "two pilots in one lane";
    l.pilot_slots = uint8_t(l.pilot_slots | (1u << (bin / GROUP)));
  }
  return l;
}

static_assert(SLOTS * GROUP == profile::N && profile::NOF_PILOTS <= 16);
inline constexpr lane_tones LANE_TONES = make_lane_tones();
inline constexpr unsigned DATA_SLOTS = LANE_TONES.data_slots;
inline constexpr unsigned PILOT_SLOTS = LANE_TONES.pilot_slots;
static __device__ const lane_tones D_LANES = make_lane_tones();

/// Output lane L's row of the table, in registers.
struct held_tones {
  uint4 bits_at; ///< bits_at[L][j] in 16-bit halves, slot 0 lowest
  int pilot;     ///< pilot[L]
};

__device__ __forceinline__ held_tones load_held_tones(int lane)
{
  return {__ldg(reinterpret_cast<const uint4*>(D_LANES.bits_at[lane])), D_LANES.pilot[lane]};
}

/// Store Y of the pilot that the lane holds, if any, at pilots[i].
__device__ __forceinline__ void store_held_pilot(const float2 (&v)[SLOTS], const held_tones& h, float2* pilots)
{
  const int slot = h.pilot >> 4;
  float2 y = make_float2(0.0f, 0.0f);
#pragma unroll
  for (int j = 0; j < SLOTS; ++j) {
    if (((PILOT_SLOTS >> j) & 1u) != 0) {
      y.x = slot == j ? v[j].x : y.x;
      y.y = slot == j ? v[j].y : y.y;
    }
  }
  if (h.pilot >= 0) {
    pilots[h.pilot & 15] = y;
  }
}

/// v[j] <- v[j] * (1/H) on the held bins that can be data tones (the equalisation's
/// first product; 1/H is 0 on bins of no data tone).
__device__ __forceinline__ void equalise_held(float2 (&v)[SLOTS], const frame_params& fp, int lane)
{
  const float2* inv = fp.inv + lane;
#pragma unroll
  for (int j = 0; j < SLOTS; ++j) {
    if (((DATA_SLOTS >> j) & 1u) != 0) {
      v[j] = cmulf(v[j], inv[GROUP * j]);
    }
  }
}

/// Where the soft values of one symbol go (LLR = true in demap_held).
struct soft_target {
  const float2* inv; ///< 1/H of the lane's bins: [GROUP j] for slot j (the kernel's read order)
  float inv_noise;   ///< frame_params::llr_inv_noise
  uint8_t* out;      ///< the symbol's LLR slot (LLR_STRIDE values); null: no soft output
  llr_format form;
  float scale;
  /// A coded frame's symbol (profile 2): its soft values, int8 as the FEC decoder takes
  /// them, de-whitened, de-interleaved and demultiplexed into the frame's streams
  /// (fec::demultiplex_symbols, which the CPU runs); null for an uncoded symbol.
  coded_target coded = {};
};

/// Soft value i of data tone d of a coded symbol to its place in the frame's streams
/// (fec::demultiplex_symbols, per value).
template <int B>
__device__ __forceinline__ void store_coded(const float (&l)[B], int d, const coded_target& c)
{
  constexpr int NCBPS = B * profile::NOF_DATA;
  constexpr int ROWS = NCBPS / fec::INTERLEAVER_COLUMNS;
#pragma unroll
  for (int i = 0; i < B; ++i) {
    const int t = d * B + i;
    const int k = fec::INTERLEAVER_COLUMNS * (t % ROWS) + t / ROWS;
    const int8_t q = llr_to_int8(l[i], fec::LLR_SCALE);
    const bool flip = D_TONES.pn[(uint64_t(c.m) * NCBPS + uint64_t(t)) % profile::PN_PERIOD] != 0;
    c.streams[uint64_t(k % fec::NOF_ENCODERS) * c.ce + uint64_t(c.m) * (NCBPS / fec::NOF_ENCODERS) + uint64_t(k / fec::NOF_ENCODERS)] =
        flip ? int8_t(-q) : q;
  }
}

/// Store the B soft values of data tone d at values d B .. d B + B - 1 of `o.out`.
template <int B>
__device__ __forceinline__ void store_soft(const float (&l)[B], int d, const soft_target& o)
{
  static_assert(B == 2 || B == 4);
  if (o.coded.streams != nullptr) {
    store_coded(l, d, o.coded);
  }
  if (o.out == nullptr) {
    return;
  }
  if (o.form == llr_format::int8) {
    int8_t q[B];
#pragma unroll
    for (int i = 0; i < B; ++i) {
      q[i] = llr_to_int8(l[i], o.scale);
    }
    if constexpr (B == 4) {
      reinterpret_cast<char4*>(o.out)[d] = make_char4(q[0], q[1], q[2], q[3]);
    } else {
      reinterpret_cast<char2*>(o.out)[d] = make_char2(q[0], q[1]);
    }
  } else if (o.form == llr_format::f16) {
    __half2 h[B / 2];
#pragma unroll
    for (int i = 0; i < B / 2; ++i) {
      h[i] = __floats2half2_rn(fminf(fmaxf(l[2 * i], -LLR_F16_MAX), LLR_F16_MAX), fminf(fmaxf(l[2 * i + 1], -LLR_F16_MAX), LLR_F16_MAX));
    }
    if constexpr (B == 4) {
      reinterpret_cast<uint2*>(o.out)[d] = make_uint2(*reinterpret_cast<unsigned*>(&h[0]), *reinterpret_cast<unsigned*>(&h[1]));
    } else {
      reinterpret_cast<__half2*>(o.out)[d] = h[0];
    }
  } else {
    if constexpr (B == 4) {
      reinterpret_cast<float4*>(o.out)[d] = make_float4(l[0], l[1], l[2], l[3]);
    } else {
      reinterpret_cast<float2*>(o.out)[d] = make_float2(l[0], l[1]);
    }
  }
}

/// Rotate the equalised bins by the pilots' common phase and decide them: bin
/// L + GROUP j's bit group goes to bits[d] for data tone d (the spare byte for
/// bins of no data tone). With LLR, the same points' max-log LLRs (demap.hpp) go to
/// `soft`, weighted by the bin's |H|^2 over the frame's noise.
template <bool QAM16, bool LLR = false>
__device__ __forceinline__ void demap_held(const float2 (&v)[SLOTS], float2 rot, const held_tones& h, uint8_t* bits,
                                           const soft_target& soft = {})
{
  const unsigned pairs[4] = {h.bits_at.x, h.bits_at.y, h.bits_at.z, h.bits_at.w};
#pragma unroll
  for (int j = 0; j < SLOTS; ++j) {
    if (((DATA_SLOTS >> j) & 1u) != 0) {
      const unsigned d = (pairs[j / 2] >> (16 * (j % 2))) & 0xffffu;
      const float2 z = cmulf(v[j], rot);
      bits[d] = uint8_t(QAM16 ? demap_qam16(z.x, z.y) : demap_qpsk(z.x, z.y));
      if constexpr (LLR) {
        if (d < unsigned(profile::NOF_DATA)) {
          const float2 inv = soft.inv[GROUP * j];
          const float w = llr_weight(inv.x, inv.y, soft.inv_noise);
          float l[QAM16 ? 4 : 2];
          if constexpr (QAM16) {
            llr_qam16(z.x, z.y, w, l);
          } else {
            llr_qpsk(z.x, z.y, w, l);
          }
          store_soft(l, int(d), soft);
        }
      }
    }
  }
}

/// The QPSK symbols' derotations refined by their data tones (demap.hpp: QPSK_PHASE_STEPS
/// Newton steps, as the CPU's refine_qpsk_derotation; the sums in another order, so
/// the two differ by rounding). Symbol k's sums: each thread's held bins (1/H is 0 on
/// bins of no data tone, so they add nothing), a warp's xor butterfly, the two warps'
/// halves through `red` (a barrier a step). `pilot_mag[k]` is the magnitude of the
/// pilots' weighted sum in rot[k]'s scale. Whether a symbol is QPSK is its frame's, the
/// same in every thread, so all threads meet every barrier.
template <int K, class Sync>
__device__ __forceinline__ void refine_qpsk(const float2 (&v)[K][SLOTS], float2 (&rot)[K], const float (&pilot_mag)[K],
                                            const frame_params* const (&fp)[K], const float2* const (&inv)[K],
                                            float2 (*red)[K][2], int t, const Sync& sync)
{
  bool qpsk[K];
  float delta[K];
  bool any = false;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    qpsk[k] = fp[k]->mod == int(profile::modulation::qpsk);
    delta[k] = 0.0f;
    any = any || qpsk[k];
  }
  if (!any) {
    return;
  }
#pragma unroll 1
  for (int step = 0; step < QPSK_PHASE_STEPS; ++step) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (!qpsk[k]) {
        continue;
      }
      float c, s;
      small_rotation(delta[k], c, s);
      const float2 r = cmulf(rot[k], make_float2(c, -s));
      const float inv_noise = fp[k]->llr_inv_noise;
      float d1 = 0.0f, d2 = 0.0f;
#pragma unroll
      for (int j = 0; j < SLOTS; ++j) {
        if (((DATA_SLOTS >> j) & 1u) != 0) {
          const float2 h = inv[k][GROUP * j];
          const float2 z = cmulf(v[k][j], r);
          add_qpsk_phase_terms(z.x, z.y, llr_weight(h.x, h.y, inv_noise), d1, d2);
        }
      }
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        d1 += __shfl_xor_sync(0xffffffffu, d1, off);
        d2 += __shfl_xor_sync(0xffffffffu, d2, off);
      }
      if ((t & 31) == 0) {
        red[step][k][t >> 5] = make_float2(d1, d2);
      }
    }
    sync();
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (qpsk[k]) {
        const float2 a = red[step][k][0], b = red[step][k][1];
        delta[k] = qpsk_phase_step(a.x + b.x, a.y + b.y, 2.0f * fp[k]->llr_inv_noise * pilot_mag[k], delta[k]);
      }
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (qpsk[k]) {
      float c, s;
      small_rotation(delta[k], c, s);
      rot[k] = cmulf(rot[k], make_float2(c, -s));
    }
  }
}

/// Pack one symbol's bit groups bits[0..NOF_DATA) (shared memory, 16-byte aligned)
/// into its payload, each group MSB first in data-tone order: thread t < 21 (QPSK)
/// or 42 (16-QAM) writes the 32-bit word t of `out` (4-byte aligned).
template <bool QAM16>
__device__ __forceinline__ void pack_payload(const uint8_t* bits, uint8_t* out, int t)
{
  constexpr int WORDS = profile::bytes_per_symbol(QAM16 ? profile::modulation::qam16 : profile::modulation::qpsk) / 4;
  if (t >= WORDS) {
    return;
  }
  unsigned word;
  if constexpr (QAM16) {
    static_assert(WORDS * 8 == profile::NOF_DATA);
    const uint2 q = *reinterpret_cast<const uint2*>(bits + 8 * t);
    // Bytes g0 g1 g2 g3 -> (g0 << 4 | g1) in byte 0 and (g2 << 4 | g3) in byte 2.
    const unsigned a = (q.x << 4) | (q.x >> 8);
    const unsigned b = (q.y << 4) | (q.y >> 8);
    word = __byte_perm(a, b, 0x6420);
  } else {
    static_assert(WORDS * 16 == profile::NOF_DATA);
    const uint4 q = *reinterpret_cast<const uint4*>(bits + 16 * t);
    // Bytes g0 g1 g2 g3 of 2 bits each -> g0 g1 g2 g3 as one byte, in the top byte
    // of the product (the lower partial products stay below bit 24).
    constexpr unsigned GATHER = (1u << 30) | (1u << 20) | (1u << 10) | 1u;
    const unsigned lo = __byte_perm(q.x * GATHER, q.y * GATHER, 0x0073);
    const unsigned hi = __byte_perm(q.z * GATHER, q.w * GATHER, 0x0073);
    word = __byte_perm(lo, hi, 0x5410);
  }
  reinterpret_cast<uint32_t*>(out)[t] = word;
}

} // namespace whd::baseband::gpu
