// The FEC of coded frames on the device (gpu_fec.hpp): a thread per Viterbi tile, a
// thread per RS codeword. Both follow the CPU's definitions step for step, so that the
// information bytes equal the CPU's.
#include "gpu_fec.hpp"

#include <whd/fec/viterbi.hpp>

#include <algorithm>
#include <array>

namespace whd::baseband::gpu {

namespace {

constexpr int VITERBI_THREADS = 128;
constexpr int RS_THREADS = 128;
constexpr int GF_NN = 255; ///< GF(256)'s nonzero elements; A0 = NN stands for log(0)

/// GF(256) with x^8 + x^4 + x^3 + x^2 + 1 (0x11D): alpha^i and log, libfec's tables
/// (alpha_to[255] = 0, index_of[0] = 255).
struct gf_tables {
  uint8_t alpha_to[256];
  uint8_t index_of[256];
};

constexpr gf_tables make_gf()
{
  gf_tables t{};
  unsigned sr = 1;
  for (int i = 0; i < GF_NN; ++i) {
    t.index_of[sr] = uint8_t(i);
    t.alpha_to[i] = uint8_t(sr);
    sr <<= 1;
    if (sr & 0x100u) {
      sr ^= fec::RS_FIELD_POLY;
    }
  }
  t.index_of[0] = uint8_t(GF_NN);
  t.alpha_to[GF_NN] = 0;
  return t;
}

__constant__ gf_tables D_GF = make_gf();

__device__ __forceinline__ int modnn(int x)
{
  while (x >= GF_NN) {
    x -= GF_NN;
    x = (x >> 8) + (x & GF_NN);
  }
  return x;
}

/// The job a flat index (tile or codeword) belongs to: the last j with at[j] <= i.
__device__ __forceinline__ int job_of(const uint64_t* at, int njobs, uint64_t i)
{
  int lo = 0, hi = njobs; // at[lo] <= i < at[hi]
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (at[mid] <= i ? lo : hi) = mid;
  }
  return lo;
}

/// Parity of r & g.
__device__ __forceinline__ constexpr unsigned parity7(unsigned v) { return (v ^ (v >> 1) ^ (v >> 2) ^ (v >> 3) ^ (v >> 4) ^ (v >> 5) ^ (v >> 6)) & 1u; }

/// One tile per thread, as fec::decode_tile_reference: int32 metrics (exact over a
/// tile), ties to decision 0, traceback from state 0 at a stream's end, else from the
/// largest metric (lowest state among equals). Decisions go to dec[step][thread].
__global__ void __launch_bounds__(VITERBI_THREADS) viterbi_kernel(const fec_job* jobs, const uint64_t* tiles_at, int njobs,
                                                                    uint64_t first_tile, uint64_t ntiles, uint64_t* dec)
{
  const uint64_t tid = uint64_t(blockIdx.x) * VITERBI_THREADS + threadIdx.x;
  if (tid >= ntiles) {
    return;
  }
  const uint64_t g = first_tile + tid;
  const int j = job_of(tiles_at, njobs, g);
  const fec_job& job = jobs[j];
  const uint64_t per_stream = fec::nof_tiles(job.nin);
  const uint64_t r = g - tiles_at[j];
  const auto e = unsigned(r / per_stream);
  const uint64_t k = r % per_stream;
  const fec::tile_span t = fec::tile_of(job.nin, k);
  const int8_t* c = job.streams + uint64_t(e) * job.ce;

  int m[fec::NOF_STATES];
  const bool from_start = t.run_first == 0;
#pragma unroll
  for (int s = 0; s < fec::NOF_STATES; ++s) {
    m[s] = s == 0 ? 0 : from_start ? fec::START_OTHER : 0;
  }
  for (uint64_t n = t.run_first; n < t.run_end; ++n) {
    // Depunctured on the fly: the outputs of step n that its period kept.
    int l[3] = {0, 0, 0};
    const uint64_t period = n / job.pin;
    const auto jj = unsigned(n - period * job.pin);
    if (period < job.periods) {
      for (unsigned i = 0; i < job.pout; ++i) {
        if (job.input[i] == jj) {
          l[job.which[i]] = c[period * job.pout + i];
        }
      }
    }
    const int b0 = l[0] + l[1] + l[2], b1 = l[0] + l[1] - l[2], b2 = l[0] - l[1] + l[2], b3 = l[0] - l[1] - l[2];
    int nm[fec::NOF_STATES];
    uint32_t lo = 0, hi = 0;
#pragma unroll
    for (int b = 0; b < fec::NOF_STATES / 2; ++b) {
      const unsigned r2 = 2u * unsigned(b);
      const unsigned code = parity7(r2 & 0133u) << 2 | parity7(r2 & 0171u) << 1 | parity7(r2 & 0165u);
      const int mm = code == 0 ? b0 : code == 1 ? b1 : code == 2 ? b2 : code == 3 ? b3 : code == 4 ? -b3 : code == 5 ? -b2 : code == 6 ? -b1 : -b0;
      const int a = m[2 * b] + mm, bb = m[2 * b + 1] - mm;
      const int cc = m[2 * b] - mm, d = m[2 * b + 1] + mm;
      nm[b] = bb > a ? bb : a;
      nm[b + 32] = d > cc ? d : cc;
      lo |= uint32_t(bb > a) << b;
      hi |= uint32_t(d > cc) << b;
    }
    dec[(n - t.run_first) * ntiles + tid] = uint64_t(hi) << 32 | lo;
#pragma unroll
    for (int s = 0; s < fec::NOF_STATES; ++s) {
      m[s] = nm[s];
    }
  }
  unsigned state = 0;
  if (t.run_end != job.nin) {
    int best = m[0];
#pragma unroll
    for (int s = 1; s < fec::NOF_STATES; ++s) {
      if (m[s] > best) {
        best = m[s];
        state = unsigned(s);
      }
    }
  }
  const uint64_t want = 8 * job.q;
  const uint64_t end = t.out_end < want ? t.out_end : want;
  uint8_t* out = job.decoded + uint64_t(e) * job.q;
  unsigned acc = 0;
  for (uint64_t n = t.run_end; n-- > t.out_first;) {
    if (n < end) {
      acc |= (state >> 5) << (7 - (n & 7));
      if ((n & 7) == 0) {
        out[n >> 3] = uint8_t(acc);
        acc = 0;
      }
    }
    const uint64_t d = dec[(n - t.run_first) * ntiles + tid];
    state = ((state & 31u) << 1) | unsigned((d >> state) & 1u);
  }
}

/// One RS codeword per thread: gathered from the encoders' bytes (un-parsing), decoded
/// as libfec's decode_rs (reed_solomon.hpp: more than 4 corrections are a failure, the
/// codeword left as received), its message bytes to the frame's information bytes.
__global__ void __launch_bounds__(RS_THREADS) rs_kernel(const fec_job* jobs, const uint64_t* words_at, int njobs, uint64_t nwords,
                                                        uint32_t* rs)
{
  const uint64_t w = uint64_t(blockIdx.x) * RS_THREADS + threadIdx.x;
  if (w >= nwords) {
    return;
  }
  const int jn = job_of(words_at, njobs, w);
  const fec_job& job = jobs[jn];
  const uint64_t cw = w - words_at[jn];
  const int kk = int(cw + 1 < job.codewords ? uint64_t(fec::RS_K) : job.last_k);
  const int n = kk + fec::RS_PARITY;
  const int pad = GF_NN - n;
  const uint64_t at = cw * fec::RS_N;
  uint8_t data[fec::RS_N];
  for (int b = 0; b < n; ++b) {
    const uint64_t i = at + uint64_t(b);
    data[b] = job.decoded[(i % fec::NOF_ENCODERS) * job.q + i / fec::NOF_ENCODERS];
  }
  constexpr int NROOTS = fec::RS_PARITY;
  constexpr int A0 = GF_NN;
  const uint8_t* alpha_to = D_GF.alpha_to;
  const uint8_t* index_of = D_GF.index_of;
  int s[NROOTS];
  for (int i = 0; i < NROOTS; ++i) {
    s[i] = data[0];
  }
  for (int jj = 1; jj < n; ++jj) {
    for (int i = 0; i < NROOTS; ++i) {
      s[i] = s[i] == 0 ? data[jj] : data[jj] ^ alpha_to[modnn(index_of[s[i]] + (1 + i))];
    }
  }
  int syn_error = 0;
  for (int i = 0; i < NROOTS; ++i) {
    syn_error |= s[i];
    s[i] = index_of[s[i]];
  }
  int count = 0;
  int root[NROOTS], loc[NROOTS];
  int lambda[NROOTS + 1], omega[NROOTS + 1];
  int deg_lambda = 0;
  if (syn_error != 0) {
    int b[NROOTS + 1], t[NROOTS + 1];
    lambda[0] = 1;
    for (int i = 1; i <= NROOTS; ++i) {
      lambda[i] = 0;
    }
    for (int i = 0; i <= NROOTS; ++i) {
      b[i] = index_of[lambda[i]];
    }
    int el = 0;
    for (int r = 1; r <= NROOTS; ++r) {
      int discr = 0;
      for (int i = 0; i < r; ++i) {
        if (lambda[i] != 0 && s[r - i - 1] != A0) {
          discr ^= alpha_to[modnn(index_of[lambda[i]] + s[r - i - 1])];
        }
      }
      discr = index_of[discr];
      if (discr == A0) {
        for (int i = NROOTS; i > 0; --i) {
          b[i] = b[i - 1];
        }
        b[0] = A0;
      } else {
        t[0] = lambda[0];
        for (int i = 0; i < NROOTS; ++i) {
          t[i + 1] = b[i] != A0 ? lambda[i + 1] ^ alpha_to[modnn(discr + b[i])] : lambda[i + 1];
        }
        if (2 * el <= r - 1) {
          el = r - el;
          for (int i = 0; i <= NROOTS; ++i) {
            b[i] = lambda[i] == 0 ? A0 : modnn(index_of[lambda[i]] - discr + GF_NN);
          }
        } else {
          for (int i = NROOTS; i > 0; --i) {
            b[i] = b[i - 1];
          }
          b[0] = A0;
        }
        for (int i = 0; i <= NROOTS; ++i) {
          lambda[i] = t[i];
        }
      }
    }
    for (int i = 0; i <= NROOTS; ++i) {
      lambda[i] = index_of[lambda[i]];
      if (lambda[i] != A0) {
        deg_lambda = i;
      }
    }
    int reg[NROOTS + 1];
    for (int i = 1; i <= NROOTS; ++i) {
      reg[i] = lambda[i];
    }
    // Chien search (prim 1: location k = i - 1).
    for (int i = 1, k = 0; i <= GF_NN; ++i, k = modnn(k + 1)) {
      int q = 1;
      for (int jj = deg_lambda; jj > 0; --jj) {
        if (reg[jj] != A0) {
          reg[jj] = modnn(reg[jj] + jj);
          q ^= alpha_to[reg[jj]];
        }
      }
      if (q != 0) {
        continue;
      }
      root[count] = i;
      loc[count] = k;
      if (++count == deg_lambda) {
        break;
      }
    }
    bool in_pad = false;
    for (int jj = 0; jj < count; ++jj) {
      in_pad = in_pad || loc[jj] < pad;
    }
    if (deg_lambda != count || count > fec::RS_T || in_pad) {
      count = -1; // uncorrectable: libfec's tests, and more than 4 "corrections" (reed_solomon.hpp)
    } else {
      const int deg_omega = deg_lambda - 1;
      for (int i = 0; i <= deg_omega; ++i) {
        int tmp = 0;
        for (int jj = i; jj >= 0; --jj) {
          if (s[i - jj] != A0 && lambda[jj] != A0) {
            tmp ^= alpha_to[modnn(s[i - jj] + lambda[jj])];
          }
        }
        omega[i] = index_of[tmp];
      }
      for (int jj = count - 1; jj >= 0; --jj) {
        int num1 = 0;
        for (int i = deg_omega; i >= 0; --i) {
          if (omega[i] != A0) {
            num1 ^= alpha_to[modnn(omega[i] + i * root[jj])];
          }
        }
        const int num2 = alpha_to[modnn(root[jj] * (1 - 1) + GF_NN)];
        int den = 0;
        for (int i = (deg_lambda < NROOTS - 1 ? deg_lambda : NROOTS - 1) & ~1; i >= 0; i -= 2) {
          if (lambda[i + 1] != A0) {
            den ^= alpha_to[modnn(lambda[i + 1] + i * root[jj])];
          }
        }
        if (num1 != 0) {
          data[loc[jj] - pad] ^= alpha_to[modnn(index_of[num1] + index_of[num2] + GF_NN - index_of[den])];
        }
      }
      // The corrected word must be a codeword (its syndromes zero), else the codeword
      // stays as received.
      int s2[NROOTS];
      for (int i = 0; i < NROOTS; ++i) {
        s2[i] = data[0];
      }
      for (int jj = 1; jj < n; ++jj) {
        for (int i = 0; i < NROOTS; ++i) {
          s2[i] = s2[i] == 0 ? data[jj] : data[jj] ^ alpha_to[modnn(index_of[s2[i]] + (1 + i))];
        }
      }
      int left = 0;
      for (int i = 0; i < NROOTS; ++i) {
        left |= s2[i];
      }
      if (left != 0) {
        count = -1;
        for (int b = 0; b < n; ++b) {
          const uint64_t i = at + uint64_t(b);
          data[b] = job.decoded[(i % fec::NOF_ENCODERS) * job.q + i / fec::NOF_ENCODERS];
        }
      }
    }
  }
  uint8_t* info = job.info + cw * fec::RS_K;
  for (int b = 0; b < kk; ++b) {
    info[b] = data[b];
  }
  if (count < 0) {
    atomicAdd(rs + 2 * jn + 1, 1u);
  } else if (count > 0) {
    atomicAdd(rs + 2 * jn, uint32_t(count));
  }
}

template <typename T>
void grow(cuda::device_buffer<T>& b, std::size_t n)
{
  if (b.size() < n) {
    b = cuda::device_buffer<T>(n + n / 2);
  }
}

template <typename T>
void grow(cuda::pinned_buffer<T>& b, std::size_t n)
{
  if (b.size() < n) {
    b = cuda::pinned_buffer<T>(n + n / 2);
  }
}

} // namespace

void gpu_fec::run(const std::vector<coded_end>& ends, uint32_t* d_rs, cudaStream_t stream, cudaEvent_t viterbi_done)
{
  const std::size_t n = ends.size();
  if (n == 0) {
    return;
  }
  grow(h_jobs_, n);
  grow(d_jobs_, n);
  grow(h_tiles_at_, n + 1);
  grow(d_tiles_at_, n + 1);
  grow(h_words_at_, n + 1);
  grow(d_words_at_, n + 1);
  uint64_t decoded = 0;
  h_tiles_at_[0] = 0;
  h_words_at_[0] = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const fec::frame_geometry& g = ends[i].g;
    h_tiles_at_[i + 1] = h_tiles_at_[i] + fec::NOF_ENCODERS * fec::nof_tiles(g.nin);
    h_words_at_[i + 1] = h_words_at_[i] + g.codewords;
    decoded += fec::NOF_ENCODERS * g.q;
  }
  grow(decoded_, decoded);
  if (dec_.size() == 0) {
    dec_ = cuda::device_buffer<uint64_t>(fec::MAX_TILE_STEPS * MAX_TILES);
  }
  uint64_t at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const fec::frame_geometry& g = ends[i].g;
    fec_job& j = h_jobs_[i];
    j.streams = ends[i].d_streams;
    j.info = ends[i].d_info;
    j.decoded = decoded_.data() + at;
    j.ce = g.ce;
    j.nin = g.nin;
    j.q = g.q;
    j.periods = g.periods;
    j.codewords = g.codewords;
    j.last_k = g.last_k;
    j.pin = uint32_t(g.punct.pin);
    j.pout = uint32_t(g.punct.pout);
    for (int k = 0; k < 7; ++k) {
      j.input[k] = g.punct.input[std::size_t(k)];
      j.which[k] = g.punct.which[std::size_t(k)];
    }
    at += fec::NOF_ENCODERS * g.q;
  }
  WHD_CUDA_CHECK(cudaMemcpyAsync(d_jobs_.data(), h_jobs_.data(), n * sizeof(fec_job), cudaMemcpyHostToDevice, stream));
  WHD_CUDA_CHECK(cudaMemcpyAsync(d_tiles_at_.data(), h_tiles_at_.data(), (n + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice, stream));
  WHD_CUDA_CHECK(cudaMemcpyAsync(d_words_at_.data(), h_words_at_.data(), (n + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice, stream));
  WHD_CUDA_CHECK(cudaMemsetAsync(d_rs, 0, 2 * n * sizeof(uint32_t), stream));
  const uint64_t tiles = h_tiles_at_[n];
  for (uint64_t first = 0; first < tiles; first += MAX_TILES) {
    const uint64_t count = std::min<uint64_t>(MAX_TILES, tiles - first);
    viterbi_kernel<<<unsigned((count + VITERBI_THREADS - 1) / VITERBI_THREADS), VITERBI_THREADS, 0, stream>>>(
        d_jobs_.data(), d_tiles_at_.data(), int(n), first, count, dec_.data());
    WHD_CUDA_CHECK_LAUNCH();
  }
  if (viterbi_done != nullptr) {
    WHD_CUDA_CHECK(cudaEventRecord(viterbi_done, stream));
  }
  const uint64_t words = h_words_at_[n];
  rs_kernel<<<unsigned((words + RS_THREADS - 1) / RS_THREADS), RS_THREADS, 0, stream>>>(d_jobs_.data(), d_words_at_.data(), int(n),
                                                                                        words, d_rs);
  WHD_CUDA_CHECK_LAUNCH();
}

} // namespace whd::baseband::gpu
