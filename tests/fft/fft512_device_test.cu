/// GPU tests of the device function as a fused kernel calls it: values in registers,
/// the index maps of the contract, forward then inverse in one kernel, with the
/// block-wide barrier and with the per-transform named barrier, and for the shuffle
/// variants with either lane transpose.
#include "fft_test_util.hpp"

#include <gpu_guard.hpp>

#include <whd/fft/fft512_device.cuh>
#include <whd/transport/cuda.hpp>

#include <cstring>
#include <utility>

namespace whd::fft {
namespace {

using test::cd;
using test::REL_L2_BOUND;
namespace wc = whd::cuda;

constexpr int GROUPS = 2; // transforms per block

/// Group g's barrier: a named one per group, or the block's.
template <bool NAMED>
__device__ auto group_sync(int g)
{
  if constexpr (NAMED) {
    return transform_sync{1 + g};
  } else {
    return block_sync{};
  }
}

/// The forward or inverse transform of group g.
template <class A, bool NAMED, lane_transpose X, bool INVERSE>
__device__ void call_transform(float2 (&v)[8], int t, float2* scratch, int g)
{
  using Sync = decltype(group_sync<NAMED>(g));
  if constexpr (INVERSE) {
    fft512_inverse<A, Sync, X>(v, t, scratch, group_sync<NAMED>(g));
  } else {
    fft512_forward<A, Sync, X>(v, t, scratch, group_sync<NAMED>(g));
  }
}

/// Forward transform of x into y (natural order through the index maps), then the
/// inverse of y into z, all in one kernel.
template <class A, bool NAMED, lane_transpose X>
__global__ void __launch_bounds__(64 * GROUPS) forward_inverse_kernel(const float2* x, float2* y, float2* z)
{
  __shared__ float2 scratch[GROUPS][scratch_float2<A, X>()];
  const int t = static_cast<int>(threadIdx.x);
  const int g = static_cast<int>(threadIdx.y);
  const std::size_t f = blockIdx.x * GROUPS + threadIdx.y;
  float2 v[8];
  for (int j = 0; j < 8; ++j) {
    v[j] = x[f * 512 + A::input_index(t, j)];
  }
  call_transform<A, NAMED, X, false>(v, t, scratch[g], g);
  for (int j = 0; j < 8; ++j) {
    y[f * 512 + A::output_bin(t, j)] = v[j];
  }
  __syncthreads(); // y is complete and the scratch is free again
  for (int j = 0; j < 8; ++j) {
    v[j] = y[f * 512 + A::input_index(t, j)];
  }
  call_transform<A, NAMED, X, true>(v, t, scratch[g], g);
  for (int j = 0; j < 8; ++j) {
    z[f * 512 + A::output_bin(t, j)] = v[j];
  }
}

/// x to the device, y and z filled with 0xFF, launch(x, y, z) run, y and z back.
template <class Launch>
std::pair<std::vector<cf32>, std::vector<cf32>> run_xyz(const std::vector<cf32>& x, Launch launch)
{
  wc::device_buffer<cf32> dx(x.size()), dy(x.size()), dz(x.size());
  WHD_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.size_bytes(), cudaMemcpyHostToDevice));
  WHD_CUDA_CHECK(cudaMemset(dy.data(), 0xFF, dy.size_bytes()));
  WHD_CUDA_CHECK(cudaMemset(dz.data(), 0xFF, dz.size_bytes()));
  launch(reinterpret_cast<const float2*>(dx.data()), reinterpret_cast<float2*>(dy.data()), reinterpret_cast<float2*>(dz.data()));
  WHD_CUDA_CHECK_LAUNCH();
  WHD_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cf32> y(x.size()), z(x.size());
  WHD_CUDA_CHECK(cudaMemcpy(y.data(), dy.data(), dy.size_bytes(), cudaMemcpyDeviceToHost));
  WHD_CUDA_CHECK(cudaMemcpy(z.data(), dz.data(), dz.size_bytes(), cudaMemcpyDeviceToHost));
  return {std::move(y), std::move(z)};
}

template <class A, bool NAMED, lane_transpose X = lane_transpose::shuffles>
void check_device_function(const char* name, std::uint64_t seed)
{
  SCOPED_TRACE(std::string(name) + (NAMED ? " named barrier" : " block barrier") +
               (X == lane_transpose::warp_rows ? ", warp rows" : ""));
  constexpr std::size_t COUNT = 2 * GROUPS * 5;
  std::mt19937_64 g(seed);
  const auto x = test::random_cf32(g, COUNT * N);
  auto [y, z] = run_xyz(x, [](const float2* dx, float2* dy, float2* dz) {
    forward_inverse_kernel<A, NAMED, X><<<COUNT / GROUPS, dim3(64, GROUPS)>>>(dx, dy, dz);
  });
  for (auto& s : z) {
    s /= static_cast<float>(N);
  }
  for (std::size_t f = 0; f < COUNT; ++f) {
    const auto in = test::to_cd(x.data() + f * N);
    const auto ef = test::compare(y, test::fft64(in), f * N);
    EXPECT_LT(ef.rel_l2, REL_L2_BOUND) << "forward, transform " << f << ": " << ef.str();
    const auto er = test::compare(z, in, f * N);
    EXPECT_LT(er.rel_l2, REL_L2_BOUND) << "round trip, transform " << f << ": " << er.str();
  }
}

class fft512_device_function : public ::testing::Test {
protected:
  void SetUp() override { WHD_REQUIRE_GPU(); }
};

template <ordering O, exchange E, twiddle W, lane_transpose X = lane_transpose::shuffles>
void check_both_barriers(const char* name, std::uint64_t seed)
{
  check_device_function<fft512_algo<O, E, W>, false, X>(name, seed);
  check_device_function<fft512_algo<O, E, W>, true, X>(name, seed + 1);
}

TEST_F(fft512_device_function, forward_and_round_trip_in_registers)
{
  std::cout << "[ seeds    ] 8000..8019\n";
  check_both_barriers<ordering::stockham, exchange::smem, twiddle::table>("stockham/smem/table", 8000);
  check_both_barriers<ordering::stockham, exchange::smem, twiddle::sincos>("stockham/smem/sincos", 8002);
  check_both_barriers<ordering::stockham, exchange::shfl, twiddle::table>("stockham/shfl/table", 8004);
  check_both_barriers<ordering::stockham, exchange::shfl, twiddle::sincos>("stockham/shfl/sincos", 8006);
  check_both_barriers<ordering::dit, exchange::smem, twiddle::table>("dit/smem/table", 8008);
  check_both_barriers<ordering::dit, exchange::smem, twiddle::sincos>("dit/smem/sincos", 8010);
  check_both_barriers<ordering::dit, exchange::shfl, twiddle::table>("dit/shfl/table", 8012);
  check_both_barriers<ordering::dit, exchange::shfl, twiddle::sincos>("dit/shfl/sincos", 8014);
  check_both_barriers<ordering::stockham, exchange::shfl, twiddle::table, lane_transpose::warp_rows>("stockham/shfl/table", 8016);
  check_both_barriers<ordering::stockham, exchange::shfl, twiddle::sincos, lane_transpose::warp_rows>("stockham/shfl/sincos", 8018);
}

/// Transforms 2 f and 2 f + 1 by one fft512_forward_many<A, 2> into y, and each by
/// fft512_forward into z (same 64 threads, one scratch per transform).
template <class A, lane_transpose X>
__global__ void __launch_bounds__(64) forward_many_kernel(const float2* x, float2* y, float2* z)
{
  constexpr int K = 2;
  constexpr int STRIDE = scratch_float2<A, X>();
  __shared__ float2 scratch[K * STRIDE];
  const int t = static_cast<int>(threadIdx.x);
  const std::size_t f = blockIdx.x * K;
  float2 v[K][8];
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j < 8; ++j) {
      v[k][j] = x[(f + k) * 512 + A::input_index(t, j)];
    }
  }
  fft512_forward_many<A, K, block_sync, X>(v, t, scratch, STRIDE);
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j < 8; ++j) {
      y[(f + k) * 512 + A::output_bin(t, j)] = v[k][j];
    }
  }
  for (int k = 0; k < K; ++k) {
    __syncthreads(); // the scratch is free again
    float2 u[8];
    for (int j = 0; j < 8; ++j) {
      u[j] = x[(f + k) * 512 + A::input_index(t, j)];
    }
    fft512_forward<A, block_sync, X>(u, t, scratch);
    for (int j = 0; j < 8; ++j) {
      z[(f + k) * 512 + A::output_bin(t, j)] = u[j];
    }
  }
}

template <exchange E, twiddle W, lane_transpose X>
void check_forward_many(const char* name, std::uint64_t seed)
{
  using A = fft512_algo<ordering::stockham, E, W>;
  SCOPED_TRACE(std::string(name) + (X == lane_transpose::warp_rows ? ", warp rows" : ""));
  constexpr std::size_t COUNT = 2 * 6;
  std::mt19937_64 g(seed);
  const auto x = test::random_cf32(g, COUNT * N);
  const auto [y, z] = run_xyz(x, [](const float2* dx, float2* dy, float2* dz) { forward_many_kernel<A, X><<<COUNT / 2, 64>>>(dx, dy, dz); });
  // Bit-identical to one transform at a time, and right against the float64 DFT.
  EXPECT_EQ(std::memcmp(y.data(), z.data(), y.size() * sizeof(cf32)), 0);
  for (std::size_t f = 0; f < COUNT; ++f) {
    const auto ef = test::compare(y, test::fft64(test::to_cd(x.data() + f * N)), f * N);
    EXPECT_LT(ef.rel_l2, REL_L2_BOUND) << "transform " << f << ": " << ef.str();
  }
}

TEST_F(fft512_device_function, two_transforms_at_once_equal_one_at_a_time)
{
  std::cout << "[ seeds    ] 8100..8104\n";
  check_forward_many<exchange::smem, twiddle::table, lane_transpose::shuffles>("stockham/smem/table", 8100);
  check_forward_many<exchange::shfl, twiddle::table, lane_transpose::shuffles>("stockham/shfl/table", 8101);
  check_forward_many<exchange::shfl, twiddle::table, lane_transpose::warp_rows>("stockham/shfl/table", 8102);
  check_forward_many<exchange::shfl, twiddle::sincos, lane_transpose::warp_rows>("stockham/shfl/sincos", 8103);
  check_forward_many<exchange::smem, twiddle::sincos, lane_transpose::shuffles>("stockham/smem/sincos", 8104);
}

TEST_F(fft512_device_function, default_algo_contract)
{
  // What the fused receiver relies on: natural-order loads at t + 64 j.
  using A = fft512_default_algo;
  for (int t = 0; t < 64; ++t) {
    for (int j = 0; j < 8; ++j) {
      EXPECT_EQ(A::input_index(t, j), t + 64 * j);
    }
  }
  EXPECT_LE(A::SCRATCH_FLOAT2 * sizeof(float2), 4544u);
}

} // namespace
} // namespace whd::fft
