/// Host-run structure tests: the exact __host__ __device__ code of every algorithm
/// (passes, exchange patterns, twiddle indices, the shuffle transpose) run on the CPU
/// against a float64 DFT and liquid-dsp, plus the properties the GPU relies on
/// (permutations, bank-conflict freedom, the base + offset address split).
#include "fft_test_util.hpp"

#include <whd/fft/fft512.hpp>
#include <whd/fft/fft512_structure.hpp>

#include <complex>
#include <liquid/liquid.h>

#include <array>
#include <set>

namespace whd::fft {
namespace {

using test::cd;
using test::REL_L2_BOUND;

static_assert(FFT_POINTS == N, "the structure's size and the public N agree");

template <class A>
class fft512_structure : public ::testing::Test {};

using algos = ::testing::Types<fft512_algo<ordering::stockham, exchange::smem, twiddle::table>,
                               fft512_algo<ordering::stockham, exchange::smem, twiddle::sincos>,
                               fft512_algo<ordering::stockham, exchange::shfl, twiddle::table>,
                               fft512_algo<ordering::stockham, exchange::shfl, twiddle::sincos>,
                               fft512_algo<ordering::dit, exchange::smem, twiddle::table>,
                               fft512_algo<ordering::dit, exchange::smem, twiddle::sincos>,
                               fft512_algo<ordering::dit, exchange::shfl, twiddle::table>,
                               fft512_algo<ordering::dit, exchange::shfl, twiddle::sincos>>;

struct algo_names {
  template <class A>
  static std::string GetName(int)
  {
    return std::string(A::ORDER == ordering::dit ? "dit" : "stockham") + "_" +
           (A::EXCHANGE == exchange::smem ? "smem" : "shfl") + "_" + (A::TWIDDLE == twiddle::table ? "table" : "sincos");
  }
};
TYPED_TEST_SUITE(fft512_structure, algos, algo_names);

/// Runs the host emulation of A on one transform: natural order in, natural order out.
template <class A>
std::vector<cf32> emulate(const std::vector<cf32>& x, bool inverse = false)
{
  float2 v[THREADS_PER_TRANSFORM][VALUES_PER_THREAD];
  for (int t = 0; t < THREADS_PER_TRANSFORM; ++t) {
    for (int j = 0; j < VALUES_PER_THREAD; ++j) {
      const cf32 s = x[static_cast<std::size_t>(A::input_index(t, j))];
      v[t][j] = float2{s.real(), s.imag()};
    }
  }
  host_emulate<A>(v, inverse);
  std::vector<cf32> y(N, cf32(NAN, NAN)); // poison: an unmapped bin stays NaN
  for (int t = 0; t < THREADS_PER_TRANSFORM; ++t) {
    for (int j = 0; j < VALUES_PER_THREAD; ++j) {
      y[static_cast<std::size_t>(A::output_bin(t, j))] = {v[t][j].x, v[t][j].y};
    }
  }
  return y;
}

TYPED_TEST(fft512_structure, input_and_output_maps_are_permutations)
{
  std::set<int> in, out;
  for (int t = 0; t < THREADS_PER_TRANSFORM; ++t) {
    for (int j = 0; j < VALUES_PER_THREAD; ++j) {
      in.insert(TypeParam::input_index(t, j));
      out.insert(TypeParam::output_bin(t, j));
      EXPECT_EQ(TypeParam::input_index(t, j), TypeParam::input_base(t) + TypeParam::input_offset(j));
      EXPECT_EQ(TypeParam::output_bin(t, j), TypeParam::output_base(t) + TypeParam::output_offset(j));
    }
  }
  EXPECT_EQ(in.size(), 512u);
  EXPECT_EQ(out.size(), 512u);
  EXPECT_EQ(*in.rbegin(), 511);
  EXPECT_EQ(*out.rbegin(), 511);
}

TYPED_TEST(fft512_structure, matches_float64_dft_on_random_inputs)
{
  auto g = test::seeded(1001);
  for (int trial = 0; trial < 6; ++trial) {
    const auto x = test::random_cf32(g, N);
    const auto ref = test::dft(test::to_cd(x.data()));
    const auto e = test::compare(emulate<TypeParam>(x), ref);
    EXPECT_LT(e.rel_l2, REL_L2_BOUND) << "trial " << trial << ": " << e.str();
    if (trial == 0) {
      std::cout << "[ accuracy ] " << e.str() << '\n';
    }
  }
}

TYPED_TEST(fft512_structure, equals_liquid_dsp_fft)
{
  auto g = test::seeded(1002);
  auto x = test::random_cf32(g, N);
  std::vector<cf32> y(N);
  fftplan plan = fft_create_plan(N, x.data(), y.data(), LIQUID_FFT_FORWARD, 0);
  fft_execute(plan);
  fft_destroy_plan(plan);
  std::vector<cd> liquid(N);
  for (int i = 0; i < N; ++i) {
    liquid[static_cast<std::size_t>(i)] = {y[static_cast<std::size_t>(i)].real(), y[static_cast<std::size_t>(i)].imag()};
  }
  const auto e = test::compare(emulate<TypeParam>(x), liquid);
  EXPECT_LT(e.rel_l2, REL_L2_BOUND) << e.str();
}

TYPED_TEST(fft512_structure, inverse_matches_float64_and_round_trips)
{
  auto g = test::seeded(1003);
  const auto x = test::random_cf32(g, N);
  const auto inv = emulate<TypeParam>(x, true);
  const auto e_inv = test::compare(inv, test::dft(test::to_cd(x.data()), +1));
  EXPECT_LT(e_inv.rel_l2, REL_L2_BOUND) << "inverse: " << e_inv.str();
  auto back = emulate<TypeParam>(emulate<TypeParam>(x), true);
  for (auto& s : back) {
    s /= static_cast<float>(N);
  }
  const auto e_rt = test::compare(back, test::to_cd(x.data()));
  EXPECT_LT(e_rt.rel_l2, REL_L2_BOUND) << "round trip: " << e_rt.str();
}

TYPED_TEST(fft512_structure, impulse_gives_a_pure_tone)
{
  for (int n0 : {0, 1, 7, 64, 255, 511}) {
    std::vector<cf32> x(N, cf32(0.0f, 0.0f));
    x[static_cast<std::size_t>(n0)] = cf32(1.0f, 0.0f);
    std::vector<cd> ref(N);
    for (int b = 0; b < N; ++b) {
      ref[static_cast<std::size_t>(b)] = test::unit(static_cast<long long>(b) * n0, N, -1);
    }
    const auto e = test::compare(emulate<TypeParam>(x), ref);
    EXPECT_LT(e.rel_l2, REL_L2_BOUND) << "impulse at " << n0 << ": " << e.str();
  }
}

TYPED_TEST(fft512_structure, is_linear)
{
  auto g = test::seeded(1004);
  const auto x = test::random_cf32(g, N), y = test::random_cf32(g, N);
  const cf32 a(0.75f, -0.25f), b(-1.5f, 0.5f);
  std::vector<cf32> z(N);
  for (int i = 0; i < N; ++i) {
    z[static_cast<std::size_t>(i)] = a * x[static_cast<std::size_t>(i)] + b * y[static_cast<std::size_t>(i)];
  }
  const auto fx = emulate<TypeParam>(x), fy = emulate<TypeParam>(y);
  std::vector<cd> combo(N);
  for (int i = 0; i < N; ++i) {
    combo[static_cast<std::size_t>(i)] =
        cd(a) * cd(fx[static_cast<std::size_t>(i)]) + cd(b) * cd(fy[static_cast<std::size_t>(i)]);
  }
  const auto e = test::compare(emulate<TypeParam>(z), combo);
  EXPECT_LT(e.rel_l2, 2 * REL_L2_BOUND) << e.str();
}

TYPED_TEST(fft512_structure, shift_theorem)
{
  auto g = test::seeded(1005);
  const auto x = test::random_cf32(g, N);
  const auto fx = emulate<TypeParam>(x);
  for (int s : {1, 37, 256}) {
    std::vector<cf32> xs(N);
    for (int n = 0; n < N; ++n) {
      xs[static_cast<std::size_t>(n)] = x[static_cast<std::size_t>((n - s + N) % N)];
    }
    std::vector<cd> ref(N);
    for (int b = 0; b < N; ++b) {
      ref[static_cast<std::size_t>(b)] =
          cd(fx[static_cast<std::size_t>(b)]) * test::unit(static_cast<long long>(b) * s, N, -1);
    }
    const auto e = test::compare(emulate<TypeParam>(xs), ref);
    EXPECT_LT(e.rel_l2, 2 * REL_L2_BOUND) << "shift " << s << ": " << e.str();
  }
}

/// Checks one exchange: write and read are bijections onto the 512 logical positions,
/// the padding is injective and fits the scratch, the base + offset split equals the
/// logical address, and every 8-byte access of a warp is conflict-free per half-warp.
template <class X>
void check_exchange(const char* name, int scratch_float2)
{
  SCOPED_TRACE(name);
  std::set<int> w, r, phys;
  for (int p = 0; p < 512; ++p) {
    phys.insert(X::phys(p));
    EXPECT_LT(X::phys(p), X::SCRATCH);
  }
  EXPECT_EQ(phys.size(), 512u) << "padding must be injective";
  EXPECT_LE(X::SCRATCH, scratch_float2);
  for (int t = 0; t < THREADS_PER_TRANSFORM; ++t) {
    for (int j = 0; j < VALUES_PER_THREAD; ++j) {
      w.insert(X::write(t, j));
      r.insert(X::read(t, j));
      EXPECT_EQ(X::write_base(t) + X::write_offset(j), X::phys(X::write(t, j))) << "t " << t << " j " << j;
      EXPECT_EQ(X::read_base(t) + X::read_offset(j), X::phys(X::read(t, j))) << "t " << t << " j " << j;
    }
  }
  EXPECT_EQ(w.size(), 512u);
  EXPECT_EQ(r.size(), 512u);
  // 32 banks of 4 bytes = 16 banks of 8 bytes; an 8-byte warp access is served per
  // half-warp, which must touch 16 different 8-byte banks.
  for (int j = 0; j < VALUES_PER_THREAD; ++j) {
    for (int h = 0; h < THREADS_PER_TRANSFORM; h += 16) {
      std::set<int> wb, rb;
      for (int i = 0; i < 16; ++i) {
        wb.insert(X::phys(X::write(h + i, j)) % 16);
        rb.insert(X::phys(X::read(h + i, j)) % 16);
      }
      EXPECT_EQ(wb.size(), 16u) << "bank conflict on store, slot " << j << ", threads " << h << "..";
      EXPECT_EQ(rb.size(), 16u) << "bank conflict on load, slot " << j << ", threads " << h << "..";
    }
  }
}

TYPED_TEST(fft512_structure, exchanges_are_conflict_free_permutations)
{
  check_exchange<typename TypeParam::x1>("exchange 1", TypeParam::SCRATCH_FLOAT2);
  if constexpr (TypeParam::EXCHANGE == exchange::smem) {
    check_exchange<typename TypeParam::x2>("exchange 2", TypeParam::SCRATCH_FLOAT2);
  }
}

TEST(fft512_structure_parts, shuffle_stages_transpose_each_group_of_8_lanes)
{
  float2 v[8][8];
  for (int l = 0; l < 8; ++l) {
    for (int j = 0; j < 8; ++j) {
      v[l][j] = float2{static_cast<float>(l), static_cast<float>(j)};
    }
  }
  for (int k = 4; k > 0; k >>= 1) {
    for (int j = 0; j < 8; ++j) {
      if ((j & k) != 0) {
        continue;
      }
      float2 sent[8];
      for (int l = 0; l < 8; ++l) {
        sent[l] = detail::xpose_send(v[l], l, k, j);
      }
      for (int l = 0; l < 8; ++l) {
        detail::xpose_recv(v[l], l, k, j, sent[l ^ k]);
      }
    }
  }
  for (int l = 0; l < 8; ++l) {
    for (int j = 0; j < 8; ++j) {
      EXPECT_EQ(v[l][j].x, static_cast<float>(j)) << "lane " << l << " slot " << j;
      EXPECT_EQ(v[l][j].y, static_cast<float>(l)) << "lane " << l << " slot " << j;
    }
  }
}

TEST(fft512_structure_parts, warp_rows_transpose_each_group_of_8_lanes_conflict_free)
{
  using X = detail::warp_xpose;
  std::set<int> written;
  for (int t = 0; t < THREADS_PER_TRANSFORM; ++t) {
    const int lo = X::WARP_ROWS * (t / 32);
    for (int j = 0; j < VALUES_PER_THREAD; ++j) {
      const int w = X::write_base(t) + X::write_offset(j);
      written.insert(w);
      EXPECT_GE(w, lo) << "t " << t << " j " << j;
      EXPECT_LT(w, lo + X::WARP_ROWS) << "t " << t << " j " << j;
      // Slot j of lane r of a group is what lane j of the group held in slot r.
      const int from = (t & ~7) + j;
      EXPECT_EQ(X::read_base(t) + X::read_offset(j), X::write_base(from) + X::write_offset(t & 7)) << "t " << t << " j " << j;
    }
  }
  EXPECT_EQ(written.size(), 512u);
  EXPECT_LE(*written.rbegin(), X::SCRATCH - 1);
  for (int j = 0; j < VALUES_PER_THREAD; ++j) {
    for (int h = 0; h < THREADS_PER_TRANSFORM; h += 16) {
      std::set<int> wb, rb;
      for (int i = 0; i < 16; ++i) {
        wb.insert((X::write_base(h + i) + X::write_offset(j)) % 16);
        rb.insert((X::read_base(h + i) + X::read_offset(j)) % 16);
      }
      EXPECT_EQ(wb.size(), 16u) << "bank conflict on store, slot " << j << ", threads " << h << "..";
      EXPECT_EQ(rb.size(), 16u) << "bank conflict on load, slot " << j << ", threads " << h << "..";
    }
  }
  // No barrier before the rows are written: each warp's first-exchange reads stay in its rows.
  EXPECT_TRUE(detail::x1_reads_stay_in_warp_rows<detail::stockham_x1>());
  EXPECT_FALSE(detail::x1_reads_stay_in_warp_rows<detail::dit_x1>());
}

TEST(fft512_structure_parts, dft8_matches_float64)
{
  auto g = test::seeded(1006);
  const auto x = test::random_cf32(g, 8);
  float2 v[8];
  for (int i = 0; i < 8; ++i) {
    v[i] = float2{x[static_cast<std::size_t>(i)].real(), x[static_cast<std::size_t>(i)].imag()};
  }
  detail::dft8(v);
  std::vector<cf32> y(8);
  for (int i = 0; i < 8; ++i) {
    y[static_cast<std::size_t>(i)] = {v[i].x, v[i].y};
  }
  const auto e = test::compare(y, test::dft(test::to_cd(x.data(), 8)));
  EXPECT_LT(e.rel_l2, 3e-7) << e.str();
}

TEST(fft512_structure_parts, constexpr_trig_is_double_accurate)
{
  double worst = 0.0;
  for (int e = 0; e < 4096; ++e) {
    const auto cs = detail::cos_sin_turns(e, 4096);
    const double a = 2.0 * std::numbers::pi * e / 4096.0;
    worst = std::max({worst, std::abs(cs.c - std::cos(a)), std::abs(cs.s - std::sin(a))});
  }
  EXPECT_LT(worst, 1e-15);
  std::cout << "[ trig     ] worst |constexpr - libm| = " << worst << '\n';
}

TEST(fft512_structure_parts, twiddle_table_is_rounded_from_double)
{
  const auto& tw = detail::TWIDDLE_TABLE.w;
  // Correctly rounded: within half an ulp of the float64 value (plus libm's own error,
  // which at the exact zeros of cos and sin is ~6e-17).
  auto expect_rounded = [](float2 got, long long e, const char* part, int i) {
    const cd w = test::unit(e, N, -1);
    for (auto [g, ref] : {std::pair{got.x, w.real()}, std::pair{got.y, w.imag()}}) {
      const float a = std::abs(g);
      const double half_ulp = 0.5 * (std::nextafter(a, INFINITY) - a);
      EXPECT_LE(std::abs(g - ref), half_ulp + 1e-15) << part << " entry " << i << " exponent " << e;
    }
  };
  for (int e = 0; e < 512; ++e) {
    expect_rounded(tw[detail::TW_W512 + e], e, "W512", e);
  }
  for (int k = 1; k < 8; ++k) {
    for (int t = 0; t < 64; ++t) {
      expect_rounded(tw[detail::TW_STOCKHAM1 + (k - 1) * 64 + t], static_cast<long long>(t) * k, "stockham1", t);
    }
    for (int m = 0; m < 8; ++m) {
      expect_rounded(tw[detail::TW_STOCKHAM2 + (k - 1) * 8 + m], 8LL * m * k, "stockham2", m);
    }
  }
}

TEST(fft512_structure_parts, twiddle_powers_stay_within_a_few_ulp)
{
  double worst = 0.0;
  for (int t = 0; t < 64; ++t) {
    float2 w[8];
    detail::powers_from_124(detail::w512_rounded(t), detail::w512_rounded((2 * t) % 512),
                            detail::w512_rounded((4 * t) % 512), w);
    for (int k = 1; k < 8; ++k) {
      const cd ref = test::unit(static_cast<long long>(t) * k, N, -1);
      worst = std::max(worst, std::abs(cd(w[k].x, w[k].y) - ref));
    }
  }
  EXPECT_LT(worst, 4.0 * 0x1p-24);
  std::cout << "[ twiddle  ] worst |power - exact| = " << worst << '\n';
}

TEST(fft512_structure_parts, float64_fft_reference_equals_dft)
{
  auto g = test::seeded(1007);
  const auto x = test::to_cd(test::random_cf32(g, N).data());
  const auto a = test::fft64(x), b = test::dft(x);
  const auto e = test::compare(std::vector<std::complex<double>>(a), b);
  EXPECT_LT(e.rel_l2, 1e-13) << e.str();
}

} // namespace
} // namespace whd::fft
