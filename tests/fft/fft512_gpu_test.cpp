/// GPU tests of the batched transform: every variant and input type against a
/// float64 FFT of the same input values, with poisoned outputs so that an unwritten
/// or out-of-range element is caught. Skip with the reason where no GPU is usable.
#include "fft_test_util.hpp"

#include <gpu_guard.hpp>

#include <whd/fft/fft512.hpp>
#include <whd/fft/tune_cache.hpp>
#include <whd/transport/cuda.hpp>

#include <cstring>
#include <stdexcept>

namespace whd::fft {
namespace {

using test::cd;
using test::REL_L2_BOUND;
namespace wc = whd::cuda;

/// Random input of `count` transforms of one type, with its float64 reference.
struct batch_input {
  input_type type = input_type::cf32;
  std::size_t count = 0;
  std::size_t per_scale = 1;
  std::vector<cf32> x32;
  std::vector<cf16> x16;
  std::vector<ci8> x8;
  std::vector<float> scale;
  std::vector<std::vector<cd>> ref; ///< per transform, float64 FFT of the exact input values
};

batch_input make_input(input_type type, std::size_t count, std::uint64_t seed, std::size_t per_scale = 1)
{
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_int_distribution<int> i8(-127, 127);
  batch_input in;
  in.type = type;
  in.count = count;
  in.per_scale = per_scale;
  std::vector<cd> exact(count * N);
  if (type == input_type::cf32) {
    in.x32 = test::random_cf32(g, count * N);
    exact = test::to_cd(in.x32.data(), count * N);
  } else if (type == input_type::cf16) {
    in.x16.resize(count * N);
    for (std::size_t i = 0; i < count * N; ++i) {
      in.x16[i] = {test::to_half(u(g)), test::to_half(u(g))};
      exact[i] = {test::from_half(in.x16[i].i), test::from_half(in.x16[i].q)};
    }
  } else {
    in.x8.resize(count * N);
    in.scale.resize((count + per_scale - 1) / per_scale);
    for (auto& s : in.scale) {
      s = (0.5f + 0.75f * (u(g) + 1.0f)) / 127.0f;
    }
    for (std::size_t i = 0; i < count * N; ++i) {
      in.x8[i] = {static_cast<int8_t>(i8(g)), static_cast<int8_t>(i8(g))};
      const double s = in.scale[(i / N) / per_scale];
      exact[i] = {in.x8[i].i * s, in.x8[i].q * s};
    }
  }
  in.ref.resize(count);
  for (std::size_t f = 0; f < count; ++f) {
    in.ref[f] = test::fft64(std::vector<cd>(exact.begin() + static_cast<std::ptrdiff_t>(f * N),
                                            exact.begin() + static_cast<std::ptrdiff_t>((f + 1) * N)));
  }
  return in;
}

/// The input on the device, and an output with one poisoned transform beyond the end.
struct device_batch {
  explicit device_batch(const batch_input& in)
      : x32(in.x32.size()), x16(in.x16.size()), x8(in.x8.size()), scale(in.scale.size()), out((in.count + 1) * N)
  {
    if (!in.x32.empty()) {
      WHD_CUDA_CHECK(cudaMemcpy(x32.data(), in.x32.data(), x32.size_bytes(), cudaMemcpyHostToDevice));
    }
    if (!in.x16.empty()) {
      WHD_CUDA_CHECK(cudaMemcpy(x16.data(), in.x16.data(), x16.size_bytes(), cudaMemcpyHostToDevice));
    }
    if (!in.x8.empty()) {
      WHD_CUDA_CHECK(cudaMemcpy(x8.data(), in.x8.data(), x8.size_bytes(), cudaMemcpyHostToDevice));
      WHD_CUDA_CHECK(cudaMemcpy(scale.data(), in.scale.data(), scale.size_bytes(), cudaMemcpyHostToDevice));
    }
  }
  void poison() { WHD_CUDA_CHECK(cudaMemset(out.data(), 0xFF, out.size_bytes())); }
  std::vector<cf32> fetch() const
  {
    std::vector<cf32> h(out.size());
    WHD_CUDA_CHECK(cudaMemcpy(h.data(), out.data(), out.size_bytes(), cudaMemcpyDeviceToHost));
    return h;
  }
  wc::device_buffer<cf32> x32;
  wc::device_buffer<cf16> x16;
  wc::device_buffer<ci8> x8;
  wc::device_buffer<float> scale;
  wc::device_buffer<cf32> out;
};

void run_variant(const variant& v, const batch_input& in, device_batch& d, launch_options o = {})
{
  switch (in.type) {
  case input_type::cf32: fft512_variant(v, d.x32.data(), d.out.data(), in.count, nullptr, o); break;
  case input_type::cf16: fft512_variant(v, d.x16.data(), d.out.data(), in.count, nullptr, o); break;
  case input_type::ci8:
    fft512_variant(v, d.x8.data(), d.scale.data(), in.per_scale, d.out.data(), in.count, nullptr, o);
    break;
  }
  WHD_CUDA_CHECK(cudaDeviceSynchronize());
}

/// Every transform within the bound (worst one reported), the poisoned transform
/// after the last untouched. Returns the worst relative L2 error.
double check_output(const batch_input& in, const std::vector<cf32>& out, const std::string& what,
                    std::size_t stride = 1)
{
  double worst = 0.0;
  std::size_t worst_f = 0;
  test::error_report worst_e;
  for (std::size_t f = 0; f < in.count; f += stride) {
    const auto e = test::compare(out, in.ref[f], f * N);
    if (!(e.rel_l2 <= worst)) {
      worst = e.rel_l2;
      worst_f = f;
      worst_e = e;
    }
  }
  EXPECT_LT(worst, REL_L2_BOUND) << what << ": worst transform " << worst_f << ": " << worst_e.str();
  std::uint32_t bits = 0;
  std::size_t touched = 0;
  for (std::size_t i = in.count * N; i < out.size(); ++i) {
    const float re = out[i].real();
    std::memcpy(&bits, &re, 4);
    touched += bits != 0xFFFFFFFFu;
  }
  EXPECT_EQ(touched, 0u) << what << ": wrote past the last transform";
  return worst;
}

class fft512_gpu : public ::testing::Test {
protected:
  void SetUp() override { WHD_REQUIRE_GPU(); }
};

TEST_F(fft512_gpu, every_variant_and_input_type_matches_float64)
{
  std::uint64_t seed = 2000;
  std::cout << "[ seeds    ] 2000.. (one per variant and input type)\n";
  for (auto type : {input_type::cf32, input_type::cf16, input_type::ci8}) {
    double worst = 0.0;
    for (const auto& v : all_variants()) {
      const auto in = make_input(type, 37, seed++); // 37: partial blocks for every group count
      device_batch d(in);
      d.poison();
      run_variant(v, in, d);
      worst = std::max(worst, check_output(in, d.fetch(), std::string(to_string(type)) + " " + to_string(v)));
    }
    std::cout << "[ accuracy ] " << to_string(type) << ": worst relative L2 over all variants " << worst << '\n';
  }
}

TEST_F(fft512_gpu, pipelined_blocks_loop_over_many_chunks)
{
  std::uint64_t seed = 3000;
  std::cout << "[ seeds    ] 3000..\n";
  for (auto type : {input_type::cf32, input_type::ci8}) {
    for (const auto& v : all_variants()) {
      if (!v.pipelined) {
        continue;
      }
      const auto in = make_input(type, 301, seed++, 4);
      device_batch d(in);
      d.poison();
      run_variant(v, in, d, launch_options{3}); // 3 blocks: each walks many chunks
      check_output(in, d.fetch(), std::string(to_string(type)) + " " + to_string(v) + " max_blocks 3");
    }
  }
}

TEST_F(fft512_gpu, repeated_runs_are_bit_identical)
{
  const auto in = make_input(input_type::cf32, 64, 4000);
  for (const auto& v : all_variants()) {
    device_batch d(in);
    d.poison();
    run_variant(v, in, d, launch_options{2});
    const auto a = d.fetch();
    d.poison();
    run_variant(v, in, d, launch_options{2});
    const auto b = d.fetch();
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(cf32)), 0) << to_string(v) << ": results moved";
  }
}

TEST_F(fft512_gpu, int8_scale_groups)
{
  for (std::size_t per_scale : {1u, 3u, 37u, 1000u}) {
    const auto in = make_input(input_type::ci8, 37, 5000 + per_scale, per_scale);
    device_batch d(in);
    d.poison();
    fft512(d.x8.data(), d.scale.data(), per_scale, d.out.data(), in.count, nullptr);
    WHD_CUDA_CHECK(cudaDeviceSynchronize());
    check_output(in, d.fetch(), "ci8 per_scale " + std::to_string(per_scale));
  }
}

TEST_F(fft512_gpu, entry_points_check_their_arguments)
{
  const auto in = make_input(input_type::cf32, 4, 6000);
  device_batch d(in);
  d.poison();
  fft512(d.x32.data(), d.out.data(), 0, nullptr); // nothing to do
  WHD_CUDA_CHECK(cudaDeviceSynchronize());
  const auto h = d.fetch();
  std::uint32_t bits = 0;
  std::memcpy(&bits, h.data(), 4);
  EXPECT_EQ(bits, 0xFFFFFFFFu) << "count 0 wrote output";
  EXPECT_THROW(fft512(static_cast<const cf32*>(nullptr), d.out.data(), 4, nullptr), std::invalid_argument);
  EXPECT_THROW(fft512(d.x32.data(), nullptr, 4, nullptr), std::invalid_argument);
  EXPECT_THROW(fft512_variant(variant{ordering::dit, exchange::smem, twiddle::table, 3, false}, d.x32.data(),
                              d.out.data(), 4, nullptr),
               std::invalid_argument);
  EXPECT_THROW(fft512(d.x8.data(), d.scale.data(), 0, d.out.data(), 4, nullptr), std::invalid_argument);
  EXPECT_THROW(fft512(d.x32.data(), d.out.data(), MAX_BATCH + 1, nullptr), std::invalid_argument);
}

TEST_F(fft512_gpu, large_batch_through_every_entry_point)
{
  constexpr std::size_t COUNT = 20000;
  const fft512_plan plan(load_tuned_choice());
  std::cout << "[ plan     ] " << plan.choice().source << '\n';
  {
    const auto in = make_input(input_type::cf32, COUNT, 7000);
    device_batch d(in);
    d.poison();
    fft512(d.x32.data(), d.out.data(), COUNT, nullptr);
    WHD_CUDA_CHECK(cudaDeviceSynchronize());
    check_output(in, d.fetch(), "fft512 cf32", 7);
    d.poison();
    plan.run(d.x32.data(), d.out.data(), COUNT, nullptr);
    WHD_CUDA_CHECK(cudaDeviceSynchronize());
    check_output(in, d.fetch(), "plan cf32", 7);
  }
  {
    const auto in = make_input(input_type::cf16, COUNT, 7001);
    device_batch d(in);
    d.poison();
    fft512(d.x16.data(), d.out.data(), COUNT, nullptr);
    WHD_CUDA_CHECK(cudaDeviceSynchronize());
    check_output(in, d.fetch(), "fft512 cf16", 7);
    d.poison();
    plan.run(d.x16.data(), d.out.data(), COUNT, nullptr);
    WHD_CUDA_CHECK(cudaDeviceSynchronize());
    check_output(in, d.fetch(), "plan cf16", 7);
  }
  {
    const auto in = make_input(input_type::ci8, COUNT, 7002, 16);
    device_batch d(in);
    d.poison();
    plan.run(d.x8.data(), d.scale.data(), 16, d.out.data(), COUNT, nullptr);
    WHD_CUDA_CHECK(cudaDeviceSynchronize());
    check_output(in, d.fetch(), "plan ci8", 7);
  }
}

} // namespace
} // namespace whd::fft
