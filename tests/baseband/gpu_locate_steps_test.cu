// Steps of the GPU candidate locator (baseband/rx/gpu/src/gpu_locate_steps.cuh), each
// run alone by one block in a small kernel, against a host reference on the same input:
//   - fine_cfo_step: the three windows exactly (non-finite samples zeroed), the count of
//     those inside a window exactly, the CFO to atan2's ulps of the same double sums
//     (and to the known offset the samples carry), the derotations to float rounding;
//   - transform_step: the three windows' spectra against a float64 DFT, by relative L2.
// Built with -fmad=false, as the locator's kernel is (tests/baseband/CMakeLists.txt).
#include "gpu_locate_steps.cuh"

#include <whd/transport/cuda.hpp>

#include "gpu_guard.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <iostream>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

namespace {

namespace ls = whd::baseband::gpu::locate_steps;
namespace cu = whd::cuda;

constexpr int N = ls::N;
constexpr int L = ls::L;
constexpr int HEAD = ls::HEAD;
constexpr int NOF_WINDOWS = ls::NOF_WINDOWS;

// Bounds: the CFO's sums are the same double operations on both sides in the same
// order, so only atan2 may differ (by ulps); the derotations are double sincos
// rounded to float; the device FFT is float against a float64 DFT.
constexpr double CFO_REL_TOL = 1e-13;
constexpr float ROT_TOL = 1e-6f;
constexpr double FFT_REL_L2 = 1e-6;

/// Step 2 alone: sm.d.bad cleared as step 1 leaves it, then fine_cfo_step, then its
/// results out of shared memory.
__global__ void __launch_bounds__(ls::THREADS)
fine_cfo_kernel(ls::locate_args a, uint64_t start, uint64_t fft0, float2* head, float2* rot, float2* base, double* cfo, unsigned* bad)
{
  __shared__ ls::shared_mem sm;
  const int tid = int(threadIdx.x);
  if (tid == 0) {
    sm.d.bad = 0;
  }
  __syncthreads();
  const double c = ls::fine_cfo_step(a, start, fft0, sm);
  for (int i = tid; i < HEAD; i += ls::THREADS) {
    head[i] = sm.u.w.head[i];
  }
  for (int i = tid; i < N; i += ls::THREADS) {
    rot[i] = sm.u.w.rot[i];
  }
  if (tid < NOF_WINDOWS) {
    base[tid] = sm.d.base[tid];
  }
  if (tid == 0) {
    *cfo = c;
    *bad = sm.d.bad;
  }
}

/// Step 3 alone: the windows and derotations loaded as step 2 leaves them, then
/// transform_step, then the spectra out.
__global__ void __launch_bounds__(ls::THREADS)
transform_kernel(const float2* head, const float2* rot, const float2* base, float2* y)
{
  __shared__ ls::shared_mem sm;
  const int tid = int(threadIdx.x);
  for (int i = tid; i < HEAD; i += ls::THREADS) {
    sm.u.w.head[i] = head[i];
  }
  for (int i = tid; i < N; i += ls::THREADS) {
    sm.u.w.rot[i] = rot[i];
  }
  if (tid < NOF_WINDOWS) {
    sm.d.base[tid] = base[tid];
  }
  __syncthreads();
  ls::transform_step(sm);
  for (int i = tid; i < NOF_WINDOWS * N; i += ls::THREADS) {
    y[i] = sm.v.y[i / N][i % N];
  }
}

template <class T>
std::vector<T> to_host(const cu::device_buffer<T>& d)
{
  std::vector<T> h(d.size());
  WHD_CUDA_CHECK(cudaMemcpy(h.data(), d.data(), d.size_bytes(), cudaMemcpyDeviceToHost));
  return h;
}

template <class T>
cu::device_buffer<T> to_device(const std::vector<T>& h)
{
  cu::device_buffer<T> d(h.size());
  WHD_CUDA_CHECK(cudaMemcpy(d.data(), h.data(), d.size_bytes(), cudaMemcpyHostToDevice));
  return d;
}

/// frame_locator.cpp's derotation(): e^{-j 2 pi cycles}, reduced in double first.
std::complex<float> host_derotation(double cycles)
{
  const double ph = -2.0 * std::numbers::pi * std::remainder(cycles, 1.0);
  return {float(std::cos(ph)), float(std::sin(ph))};
}

/// Random samples whose two preamble windows repeat one another L samples apart,
/// rotated by `cfo_cps`, with NaN and Inf at `bad_at`.
std::vector<float2> rotated_repeat(double cfo_cps, const std::vector<int>& bad_at, uint32_t seed)
{
  std::mt19937 gen(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<std::complex<float>> z(static_cast<std::size_t>(L));
  for (auto& v : z) {
    v = {g(gen), g(gen)};
  }
  std::vector<float2> x(static_cast<std::size_t>(HEAD));
  for (int n = 0; n < HEAD; ++n) {
    const double ph = 2.0 * std::numbers::pi * cfo_cps * double(n);
    const std::complex<double> v = std::complex<double>(z[std::size_t(n % L)]) * std::polar(1.0, ph);
    x[std::size_t(n)] = make_float2(float(v.real()), float(v.imag()));
  }
  for (std::size_t k = 0; k < bad_at.size(); ++k) {
    x[std::size_t(bad_at[k])].x = k % 2 == 0 ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  }
  return x;
}

TEST(gpu_locate_steps, fine_cfo_step_alone_matches_the_host_sums)
{
  WHD_REQUIRE_GPU();
  constexpr uint32_t SEED = 20261128;
  constexpr double CFO_CPS = 3.1e-4; // cycles per sample, well inside +-1/(2L)
  std::cout << "seed " << SEED << ", cfo " << CFO_CPS << " cycles/sample\n";
  // Non-finite samples: two inside window 0, one in the guard before window 1 (not
  // counted), one in the header window.
  const std::vector<int> bad_at = {5, 300, N + 3, 2 * L + 10};
  constexpr unsigned BAD_IN_WINDOWS = 3;
  const std::vector<float2> x = rotated_repeat(CFO_CPS, bad_at, SEED);

  // The chunk: the windows at fft0 = first + 100, the frame's start G before that.
  constexpr uint64_t FIRST = 1000;
  constexpr uint64_t FFT0 = FIRST + 100;
  constexpr uint64_t START = FFT0 - uint64_t(ls::G) + 8;
  std::vector<float2> chunk(100, make_float2(0.0f, 0.0f));
  chunk.insert(chunk.end(), x.begin(), x.end());
  const auto d_chunk = to_device(chunk);
  ls::locate_args a{};
  a.samples = d_chunk.data();
  a.first = FIRST;
  a.nof = chunk.size();
  a.total = FIRST + chunk.size();
  cu::device_buffer<float2> d_head(static_cast<std::size_t>(HEAD)), d_rot(static_cast<std::size_t>(N)), d_base(static_cast<std::size_t>(NOF_WINDOWS));
  cu::device_buffer<double> d_cfo(1);
  cu::device_buffer<unsigned> d_bad(1);
  fine_cfo_kernel<<<1, ls::THREADS>>>(a, START, FFT0, d_head.data(), d_rot.data(), d_base.data(), d_cfo.data(), d_bad.data());
  WHD_CUDA_CHECK_LAUNCH();
  WHD_CUDA_CHECK(cudaDeviceSynchronize());
  const auto head = to_host(d_head);
  const auto rot = to_host(d_rot);
  const auto base = to_host(d_base);
  const double cfo = to_host(d_cfo)[0];
  const unsigned bad = to_host(d_bad)[0];

  // The host reference: the windows with non-finite samples zeroed, arg P over the
  // two preamble windows summed in order in double, as synchronize sums it.
  std::vector<float2> want_head = x;
  for (const int i : bad_at) {
    want_head[std::size_t(i)] = make_float2(0.0f, 0.0f);
  }
  double pre = 0.0, pim = 0.0;
  for (int i = 0; i < N; ++i) {
    const float2 u = want_head[std::size_t(i)], b = want_head[std::size_t(i + L)];
    pre += double(u.x) * b.x + double(u.y) * b.y;
    pim += double(u.x) * b.y - double(u.y) * b.x;
  }
  const double want_cfo = std::atan2(pim, pre) / (2.0 * std::numbers::pi * double(L));

  EXPECT_EQ(bad, BAD_IN_WINDOWS);
  for (int i = 0; i < HEAD; ++i) {
    ASSERT_EQ(head[std::size_t(i)].x, want_head[std::size_t(i)].x) << "sample " << i;
    ASSERT_EQ(head[std::size_t(i)].y, want_head[std::size_t(i)].y) << "sample " << i;
  }
  EXPECT_LE(std::abs(cfo - want_cfo), CFO_REL_TOL * std::abs(want_cfo)) << "device " << cfo << ", host " << want_cfo;
  // Known answer: the offset the samples carry (the zeroed samples move it a little).
  EXPECT_NEAR(cfo, CFO_CPS, 1e-3 * CFO_CPS);

  float worst = 0.0f;
  int worst_i = 0;
  for (int i = 0; i < N; ++i) {
    const std::complex<float> w = host_derotation(cfo * double(i));
    const float e = std::abs(std::complex<float>(rot[std::size_t(i)].x, rot[std::size_t(i)].y) - w);
    if (e > worst) {
      worst = e;
      worst_i = i;
    }
  }
  EXPECT_LE(worst, ROT_TOL) << "worst derotation at sample " << worst_i;
  for (int w = 0; w < NOF_WINDOWS; ++w) {
    const std::complex<float> want = host_derotation(cfo * double(FFT0 + uint64_t(w) * uint64_t(L) - START));
    EXPECT_LE(std::abs(std::complex<float>(base[std::size_t(w)].x, base[std::size_t(w)].y) - want), ROT_TOL) << "window " << w;
  }
}

TEST(gpu_locate_steps, transform_step_alone_matches_a_float64_dft)
{
  WHD_REQUIRE_GPU();
  constexpr uint32_t SEED = 512;
  std::cout << "seed " << SEED << "\n";
  std::mt19937 gen(SEED);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float2> head(static_cast<std::size_t>(HEAD));
  for (auto& v : head) {
    v = make_float2(g(gen), g(gen));
  }
  // No derotation (1 everywhere): the spectra are the windows' plain transforms.
  const std::vector<float2> rot(static_cast<std::size_t>(N), make_float2(1.0f, 0.0f));
  const std::vector<float2> base(static_cast<std::size_t>(NOF_WINDOWS), make_float2(1.0f, 0.0f));
  const auto d_head = to_device(head);
  const auto d_rot = to_device(rot);
  const auto d_base = to_device(base);
  cu::device_buffer<float2> d_y(static_cast<std::size_t>(NOF_WINDOWS * N));
  transform_kernel<<<1, ls::THREADS>>>(d_head.data(), d_rot.data(), d_base.data(), d_y.data());
  WHD_CUDA_CHECK_LAUNCH();
  WHD_CUDA_CHECK(cudaDeviceSynchronize());
  const auto y = to_host(d_y);

  for (int w = 0; w < NOF_WINDOWS; ++w) {
    double err2 = 0.0, ref2 = 0.0, worst = 0.0;
    int worst_k = 0;
    for (int k = 0; k < N; ++k) {
      std::complex<double> want = 0.0;
      for (int n = 0; n < N; ++n) {
        const float2 v = head[std::size_t(w * L + n)];
        want += std::complex<double>(v.x, v.y) * std::polar(1.0, -2.0 * std::numbers::pi * double((k * n) % N) / double(N));
      }
      const float2 got = y[std::size_t(w * N + k)];
      const double e = std::abs(std::complex<double>(got.x, got.y) - want);
      err2 += e * e;
      ref2 += std::norm(want);
      if (e > worst) {
        worst = e;
        worst_k = k;
      }
    }
    EXPECT_LE(std::sqrt(err2 / ref2), FFT_REL_L2) << "window " << w << ", worst bin " << worst_k << " (error " << worst << ")";
  }
}

} // namespace
