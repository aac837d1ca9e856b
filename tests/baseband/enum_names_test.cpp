// Every enum the command lines, the Python module and the report spell is named by one
// table (whd/transport/enum_names.hpp): each value's name parses back to it, other
// spellings parse to their value, anything else to nothing, and the messages list
// each value once.
#include <whd/baseband/payload_sinks.hpp>
#include <whd/baseband/profile.hpp>
#include <whd/baseband/receiver_factory.hpp>
#include <whd/baseband/rx_types.hpp>
#include <whd/fft/variant.hpp>
#include <whd/transport/link_pack.hpp>
#include <whd/transport/sample_types.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

/// Each value's name parses back to it and names it; the table's names are distinct.
template <class E, std::size_t N>
void expect_round_trip(const whd::enum_names<E, N>& table, const char* what)
{
  std::set<std::string_view> names;
  for (const auto& row : table) {
    EXPECT_TRUE(names.insert(row.name).second) << what << ": '" << row.name << "' twice";
    const auto parsed = whd::parse_name(table, row.name);
    ASSERT_TRUE(parsed.has_value()) << what << ": '" << row.name << "'";
    EXPECT_TRUE(*parsed == row.value) << what << ": '" << row.name << "'";
    EXPECT_EQ(whd::parse_name(table, whd::name_of(table, row.value)), parsed) << what;
  }
  EXPECT_FALSE(whd::parse_name(table, "").has_value()) << what;
  EXPECT_FALSE(whd::parse_name(table, "no such name").has_value()) << what;
}

TEST(enum_names, every_table_parses_its_names_back)
{
  expect_round_trip(whd::DATATYPE_NAMES, "datatype");
  expect_round_trip(whd::transport::LINK_FORMAT_NAMES, "link format");
  expect_round_trip(whd::profile::MODULATION_NAMES, "modulation");
  expect_round_trip(whd::baseband::LLR_FORMAT_NAMES, "llr format");
  expect_round_trip(whd::baseband::PAYLOAD_WRITE_NAMES, "payload write");
  expect_round_trip(whd::baseband::BACKEND_NAMES, "backend");
  expect_round_trip(whd::fft::INPUT_TYPE_NAMES, "FFT input type");
}

TEST(enum_names, other_spellings_parse_but_the_name_is_the_first)
{
  // SigMF's short forms, and qam16's other spelling.
  EXPECT_EQ(whd::parse_datatype("cf32"), whd::datatype::cf32_le);
  EXPECT_EQ(whd::parse_datatype("ci16"), whd::datatype::ci16_le);
  EXPECT_EQ(whd::parse_datatype("ci8_le"), whd::datatype::ci8);
  EXPECT_EQ(whd::to_string(whd::datatype::cf32_le), "cf32_le");
  EXPECT_EQ(whd::profile::parse_modulation("16qam"), whd::profile::modulation::qam16);
  EXPECT_STREQ(whd::profile::to_string(whd::profile::modulation::qam16), "qam16");
  // The enums the front ends name, as they spell them.
  EXPECT_STREQ(whd::baseband::to_string(whd::baseband::payload_write::automatic), "auto");
  EXPECT_EQ(whd::baseband::parse_backend("auto"), whd::baseband::backend_kind::automatic);
  EXPECT_EQ(whd::transport::to_string(whd::transport::link_format::half), "half");
}

TEST(enum_names, a_message_lists_each_value_once)
{
  EXPECT_EQ(whd::names_of(whd::DATATYPE_NAMES), "cf32_le, ci16_le or ci8");
  EXPECT_EQ(whd::names_of(whd::profile::MODULATION_NAMES), "qpsk or qam16");
  EXPECT_EQ(whd::names_of(whd::baseband::BACKEND_NAMES), "auto, cpu or gpu");
  EXPECT_EQ(whd::names_of(whd::baseband::PAYLOAD_WRITE_NAMES, " and "), "auto, map, pwrite and split");
  constexpr whd::enum_names<int, 1> one{{{7, "seven"}}};
  EXPECT_EQ(whd::names_of(one), "seven");
}

} // namespace
