/// The variant list, names and parsing.
#include <whd/fft/variant.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace whd::fft {
namespace {

TEST(fft_variant, every_combination_once)
{
  const auto all = all_variants();
  EXPECT_EQ(all.size(), 64u); // 2 orderings x 2 exchanges x 2 twiddle sources x 4 group counts x plain/pipelined
  std::set<std::string> names;
  for (const auto& v : all) {
    names.insert(to_string(v));
  }
  EXPECT_EQ(names.size(), all.size());
}

TEST(fft_variant, names_round_trip)
{
  for (const auto& v : all_variants()) {
    const auto back = parse_variant(to_string(v));
    ASSERT_TRUE(back.has_value()) << to_string(v);
    EXPECT_EQ(*back, v) << to_string(v);
  }
  EXPECT_EQ(to_string(variant{ordering::dit, exchange::shfl, twiddle::sincos, 2, true}), "dit/shfl/sincos/g2/pipe");
}

TEST(fft_variant, rejects_what_names_no_variant)
{
  for (const char* bad : {"", "stockham", "stockham/smem/table", "stockham/smem/table/g3", "stockham/smem/table/g",
                          "stockham/smem/table/g4x", "fft/smem/table/g4", "stockham/smem/table/g4/pipe/x",
                          "stockham/smem/table/g4/fast", "stockham/mem/table/g4", "stockham/smem/tab/g4"}) {
    EXPECT_FALSE(parse_variant(bad).has_value()) << bad;
  }
}

TEST(fft_variant, input_type_names)
{
  for (auto t : {input_type::cf32, input_type::cf16, input_type::ci8}) {
    EXPECT_EQ(parse_input_type(to_string(t)), t);
    EXPECT_TRUE(parse_variant(to_string(default_variant(t))).has_value());
  }
  EXPECT_FALSE(parse_input_type("cf64").has_value());
}

} // namespace
} // namespace whd::fft
