// sigmf_writer: what it writes reads back (through open_capture and byte by byte),
// integers are rounded and saturated, and the meta carries the SigMF 1.x core
// fields with the types the SigMF schema gives them.

#include "transport_test_util.hpp"

#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

namespace {

using namespace whd;
using namespace whd::transport;
namespace fs = std::filesystem;
using test::capture_error_of;
using test::expect_mentions;

constexpr double RATE_SPS = 2.538e9;
constexpr unsigned SEED = 90210;
constexpr float INF = std::numeric_limits<float>::infinity();
constexpr float NAN_F = std::numeric_limits<float>::quiet_NaN();

std::vector<cf32> random_samples(std::size_t n, unsigned seed, float sigma)
{
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, sigma);
  std::vector<cf32> v(n);
  for (cf32& x : v) {
    x = cf32(g(rng), g(rng));
  }
  return v;
}

/// Write `samples` in uneven pieces (crossing the writer's internal blocks).
void write_in_pieces(sigmf_writer& w, const std::vector<cf32>& samples, float scale)
{
  const std::size_t pieces[] = {1, 4095, 4097, 3, 10000};
  std::size_t at = 0;
  for (std::size_t k = 0; at < samples.size(); ++k) {
    const std::size_t n = std::min(pieces[k % std::size(pieces)], samples.size() - at);
    w.write(std::span(samples).subspan(at, n), scale);
    at += n;
  }
}

/// Reference conversion written here: float product, round half away from zero,
/// clamp to [lo, hi], NaN to 0.
float reference_int(float x, float scale, double lo, double hi)
{
  const float v = x * scale;
  if (std::isnan(v)) {
    return 0.0f;
  }
  return static_cast<float>(std::clamp(std::round(static_cast<double>(v)), lo, hi));
}

nlohmann::json read_meta(const fs::path& path)
{
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return nlohmann::json::parse(in);
}

/// Every sample of the recording at `base`, read through open_capture and, again,
/// from the data file's bytes; the two must agree.
std::vector<cf32> read_back(const fs::path& base, datatype type)
{
  const capture_info info = open_capture(base.string() + ".sigmf-meta");
  EXPECT_EQ(info.type, type);
  const capture_reader reader(info);
  std::vector<cf32> samples(reader.size());
  EXPECT_EQ(reader.read(0, samples), samples.size());
  const std::vector<unsigned char> bytes = test::read_bytes(info.data_path);
  EXPECT_EQ(bytes.size(), samples.size() * bytes_per_sample(type));
  for (std::size_t k = 0; k < samples.size(); ++k) {
    EXPECT_TRUE(test::same_bits(samples[k], test::decode_le(bytes, type, k))) << "sample " << k;
  }
  return samples;
}

TEST(transport_sigmf_writer, cf32_round_trip_is_exact)
{
  std::printf("seed %u\n", SEED);
  test::temp_dir dir;
  const std::vector<cf32> src = random_samples(30001, SEED, 1.0f);
  {
    sigmf_writer w(dir / "f", datatype::cf32_le, RATE_SPS, "cf32 round trip");
    write_in_pieces(w, src, 1.0f);
    EXPECT_EQ(w.samples_written(), src.size());
    w.close();
  }
  const std::vector<cf32> back = read_back(dir / "f", datatype::cf32_le);
  ASSERT_EQ(back.size(), src.size());
  for (std::size_t k = 0; k < src.size(); ++k) {
    ASSERT_TRUE(test::same_bits(back[k], src[k])) << "sample " << k;
  }
}

TEST(transport_sigmf_writer, cf32_scale_multiplies)
{
  test::temp_dir dir;
  const std::vector<cf32> src = random_samples(5000, SEED, 3.0f);
  {
    sigmf_writer w(dir / "s", datatype::cf32_le, RATE_SPS, "");
    write_in_pieces(w, src, 0.25f);
  }
  const std::vector<cf32> back = read_back(dir / "s", datatype::cf32_le);
  ASSERT_EQ(back.size(), src.size());
  for (std::size_t k = 0; k < src.size(); ++k) {
    ASSERT_EQ(back[k], src[k] * 0.25f) << "sample " << k;
  }
}

struct int_case {
  float in;
  float scale;
  float expect;
};

void check_int_type(datatype type, const std::vector<int_case>& table, double lo, double hi, float sigma, float scale)
{
  test::temp_dir dir;
  // The table (real part) next to its negation (imaginary part) where that is
  // meaningful, then random samples at full scale and beyond it.
  std::vector<cf32> src;
  std::vector<cf32> expect;
  for (const int_case& c : table) {
    {
      sigmf_writer w(dir / "one", type, RATE_SPS, "");
      const cf32 s(c.in, c.in);
      w.write(std::span(&s, 1), c.scale);
    }
    const std::vector<cf32> back = read_back(dir / "one", type);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].real(), c.expect) << "in " << c.in << " scale " << c.scale;
    EXPECT_EQ(back[0].imag(), c.expect) << "in " << c.in << " scale " << c.scale;
  }
  const std::vector<cf32> rnd = random_samples(20011, SEED + 1, sigma);
  {
    sigmf_writer w(dir / "rnd", type, RATE_SPS, "");
    write_in_pieces(w, rnd, scale);
  }
  const std::vector<cf32> back = read_back(dir / "rnd", type);
  ASSERT_EQ(back.size(), rnd.size());
  std::size_t saturated = 0;
  for (std::size_t k = 0; k < rnd.size(); ++k) {
    const cf32 e(reference_int(rnd[k].real(), scale, lo, hi), reference_int(rnd[k].imag(), scale, lo, hi));
    ASSERT_EQ(back[k], e) << "sample " << k << " in " << rnd[k];
    saturated += (e.real() == lo || e.real() == hi) ? 1 : 0;
  }
  EXPECT_GT(saturated, 0u) << "the random samples should reach saturation";
}

TEST(transport_sigmf_writer, ci16_rounds_and_saturates)
{
  std::printf("seed %u\n", SEED + 1);
  const std::vector<int_case> table = {
      {0.0f, 1.0f, 0.0f},          {0.4f, 1.0f, 0.0f},          {0.5f, 1.0f, 1.0f},
      {-0.5f, 1.0f, -1.0f},        {1.5f, 1.0f, 2.0f},          {2.5f, 1.0f, 3.0f},
      {-2.5f, 1.0f, -3.0f},        {1000.0f, 1.0f, 1000.0f},    {-1234.0f, 1.0f, -1234.0f},
      {0.25f, 10.0f, 3.0f},        {0.123f, 1000.0f, 123.0f},   {32766.6f, 1.0f, 32767.0f},
      {32767.49f, 1.0f, 32767.0f}, {32767.5f, 1.0f, 32767.0f},  {40000.0f, 1.0f, 32767.0f},
      {1.0f, 1e6f, 32767.0f},      {-32767.6f, 1.0f, -32768.0f}, {-32768.4f, 1.0f, -32768.0f},
      {-1e9f, 1.0f, -32768.0f},    {INF, 1.0f, 32767.0f},       {-INF, 1.0f, -32768.0f},
      {NAN_F, 1.0f, 0.0f},
  };
  check_int_type(datatype::ci16_le, table, -32768.0, 32767.0, 1.0f, 12000.0f);
}

TEST(transport_sigmf_writer, ci8_rounds_and_saturates)
{
  std::printf("seed %u\n", SEED + 1);
  const std::vector<int_case> table = {
      {0.5f, 1.0f, 1.0f},       {-0.5f, 1.0f, -1.0f},     {3.49f, 1.0f, 3.0f},     {-3.5f, 1.0f, -4.0f},
      {126.5f, 1.0f, 127.0f},   {127.4f, 1.0f, 127.0f},   {127.5f, 1.0f, 127.0f},  {128.0f, 1.0f, 127.0f},
      {1.0f, 300.0f, 127.0f},   {-127.6f, 1.0f, -128.0f}, {-128.4f, 1.0f, -128.0f}, {-128.5f, 1.0f, -128.0f},
      {-200.0f, 1.0f, -128.0f}, {0.5f, 64.0f, 32.0f},     {INF, 1.0f, 127.0f},     {-INF, 1.0f, -128.0f},
      {NAN_F, 1.0f, 0.0f},
  };
  check_int_type(datatype::ci8, table, -128.0, 127.0, 1.0f, 50.0f);
}

TEST(transport_sigmf_writer, meta_has_the_sigmf_core_fields)
{
  test::temp_dir dir;
  {
    sigmf_writer w(dir / "m", datatype::ci16_le, RATE_SPS, "two frames");
    const std::vector<cf32> src = random_samples(700, SEED, 100.0f);
    w.write(src);
    w.add_annotation({500, 10, "qam16", ""});
    w.add_annotation({100, 20, "qpsk", "snr 28 dB"});
    w.add_annotation({300, 0, "", ""});
    w.add_annotation({100, 5, "second at 100", ""});
    w.close();
    EXPECT_EQ(w.meta_path(), dir / "m.sigmf-meta");
    EXPECT_EQ(w.data_path(), dir / "m.sigmf-data");
  }
  const nlohmann::json meta = read_meta(dir / "m.sigmf-meta");
  ASSERT_TRUE(meta.is_object());
  const nlohmann::json& g = meta.at("global");
  EXPECT_EQ(g.at("core:datatype"), "ci16_le");
  ASSERT_TRUE(g.at("core:sample_rate").is_number_float()) << g.dump();
  EXPECT_EQ(g.at("core:sample_rate").get<double>(), RATE_SPS);
  EXPECT_EQ(g.at("core:version"), "1.0.0");
  EXPECT_EQ(g.at("core:description"), "two frames");
  EXPECT_EQ(g.at("core:recorder"), "whd-tx");

  const nlohmann::json& captures = meta.at("captures");
  ASSERT_TRUE(captures.is_array());
  ASSERT_EQ(captures.size(), 1u);
  ASSERT_TRUE(captures[0].at("core:sample_start").is_number_unsigned());
  EXPECT_EQ(captures[0].at("core:sample_start").get<uint64_t>(), 0u);

  // Sorted by sample_start, equal starts in the order added; empty strings omitted.
  const nlohmann::json& anns = meta.at("annotations");
  ASSERT_TRUE(anns.is_array());
  ASSERT_EQ(anns.size(), 4u);
  const uint64_t starts[] = {100, 100, 300, 500};
  const uint64_t counts[] = {20, 5, 0, 10};
  const char* labels[] = {"qpsk", "second at 100", nullptr, "qam16"};
  const char* comments[] = {"snr 28 dB", nullptr, nullptr, nullptr};
  for (std::size_t k = 0; k < 4; ++k) {
    SCOPED_TRACE(anns[k].dump());
    ASSERT_TRUE(anns[k].at("core:sample_start").is_number_unsigned());
    ASSERT_TRUE(anns[k].at("core:sample_count").is_number_unsigned());
    EXPECT_EQ(anns[k]["core:sample_start"].get<uint64_t>(), starts[k]);
    EXPECT_EQ(anns[k]["core:sample_count"].get<uint64_t>(), counts[k]);
    if (labels[k] != nullptr) {
      EXPECT_EQ(anns[k].at("core:label"), labels[k]);
    } else {
      EXPECT_FALSE(anns[k].contains("core:label"));
    }
    if (comments[k] != nullptr) {
      EXPECT_EQ(anns[k].at("core:comment"), comments[k]);
    } else {
      EXPECT_FALSE(anns[k].contains("core:comment"));
    }
  }

  // And open_capture reads it back.
  const capture_info info = open_capture(dir / "m");
  EXPECT_EQ(info.type, datatype::ci16_le);
  EXPECT_EQ(info.nof_samples, 700u);
  EXPECT_EQ(info.sample_rate_sps, RATE_SPS);
  ASSERT_EQ(info.annotations.size(), 4u);
  EXPECT_EQ(info.annotations[0].comment, "snr 28 dB");
  EXPECT_EQ(info.annotations[1].label, "second at 100");
  EXPECT_EQ(info.annotations[3].sample_start, 500u);
}

TEST(transport_sigmf_writer, every_datatype_is_named_as_sigmf_names_it)
{
  test::temp_dir dir;
  const std::pair<datatype, const char*> names[] = {
      {datatype::cf32_le, "cf32_le"}, {datatype::ci16_le, "ci16_le"}, {datatype::ci8, "ci8"}};
  for (const auto& [type, name] : names) {
    { sigmf_writer w(dir / name, type, 1e6, ""); }
    const nlohmann::json meta = read_meta(dir / (std::string(name) + ".sigmf-meta"));
    EXPECT_EQ(meta["global"]["core:datatype"], name);
    EXPECT_FALSE(meta["global"].contains("core:description")) << "empty description is omitted";
    EXPECT_TRUE(meta["annotations"].is_array());
    EXPECT_TRUE(meta["annotations"].empty());
  }
}

TEST(transport_sigmf_writer, destructor_closes_and_close_is_idempotent)
{
  test::temp_dir dir;
  const std::vector<cf32> src = random_samples(10, SEED, 1.0f);
  {
    sigmf_writer w(dir / "d", datatype::cf32_le, RATE_SPS, "");
    w.write(src);
  }
  EXPECT_EQ(open_capture(dir / "d.sigmf-meta").nof_samples, 10u);

  sigmf_writer w(dir / "twice", datatype::ci8, RATE_SPS, "");
  w.write(src, 10.0f);
  w.close();
  w.close();
  EXPECT_THROW(w.write(src), std::logic_error);
  EXPECT_EQ(open_capture(dir / "twice").nof_samples, 10u);
}

TEST(transport_sigmf_writer, empty_recording_is_valid)
{
  test::temp_dir dir;
  { sigmf_writer w(dir / "e", datatype::ci16_le, RATE_SPS, "nothing"); }
  const capture_info info = open_capture(dir / "e.sigmf-data");
  EXPECT_EQ(info.nof_samples, 0u);
  EXPECT_EQ(fs::file_size(info.data_path), 0u);
}

TEST(transport_sigmf_writer, base_may_carry_a_sigmf_extension_and_stale_meta_goes)
{
  test::temp_dir dir;
  test::write_text(dir / "r.sigmf-meta", "stale");
  sigmf_writer w(dir / "r.sigmf-meta", datatype::cf32_le, RATE_SPS, "");
  EXPECT_EQ(w.data_path(), dir / "r.sigmf-data");
  EXPECT_FALSE(fs::exists(dir / "r.sigmf-meta")) << "a stale meta would describe the new data";
  w.close();
  EXPECT_EQ(open_capture(dir / "r").nof_samples, 0u);
}

TEST(transport_sigmf_writer, bad_sample_rate_is_refused)
{
  test::temp_dir dir;
  EXPECT_THROW(sigmf_writer(dir / "z", datatype::ci8, 0.0, ""), std::invalid_argument);
  EXPECT_THROW(sigmf_writer(dir / "z", datatype::ci8, -1.0, ""), std::invalid_argument);
  EXPECT_THROW(sigmf_writer(dir / "z", datatype::ci8, std::nan(""), ""), std::invalid_argument);
}

TEST(transport_sigmf_writer, cannot_create_names_the_file)
{
  test::temp_dir dir;
  expect_mentions(capture_error_of([&] { sigmf_writer w(dir / "no_such_folder" / "rec", datatype::ci8, 1e6, ""); }),
                  {"rec.sigmf-data", "cannot be created", "folder"});
}

class transport_sigmf_writer_disk_full : public ::testing::Test {
protected:
  void SetUp() override
  {
    if (!fs::exists("/dev/full")) {
      GTEST_SKIP() << "no /dev/full to stand for a full disk";
    }
  }
  test::temp_dir dir_;
};

TEST_F(transport_sigmf_writer_disk_full, on_close_names_the_data_file)
{
  // A few samples stay in stdio's buffer: the full disk shows at close.
  fs::create_symlink("/dev/full", dir_ / "full.sigmf-data");
  sigmf_writer w(dir_ / "full", datatype::cf32_le, RATE_SPS, "");
  const std::vector<cf32> src = random_samples(16, SEED, 1.0f);
  w.write(src);
  expect_mentions(capture_error_of([&] { w.close(); }), {"full.sigmf-data", "write failed", "space"});
  EXPECT_FALSE(fs::exists(dir_ / "full.sigmf-meta")) << "no meta for an incomplete recording";
}

TEST_F(transport_sigmf_writer_disk_full, on_write_names_the_data_file)
{
  fs::create_symlink("/dev/full", dir_ / "big.sigmf-data");
  sigmf_writer w(dir_ / "big", datatype::ci16_le, RATE_SPS, "");
  const std::vector<cf32> src(1 << 20, cf32(1.0f, -1.0f));
  expect_mentions(capture_error_of([&] { w.write(src, 100.0f); }), {"big.sigmf-data", "write failed"});
  w.close(); // releases the file, writes no meta, does not throw again
  EXPECT_FALSE(fs::exists(dir_ / "big.sigmf-meta"));
}

TEST_F(transport_sigmf_writer_disk_full, meta_names_the_meta_file)
{
  sigmf_writer w(dir_ / "m", datatype::ci8, RATE_SPS, "");
  // The writer removes a stale meta when it starts; the full disk arrives after.
  fs::create_symlink("/dev/full", dir_ / "m.sigmf-meta");
  w.write(random_samples(16, SEED, 10.0f));
  expect_mentions(capture_error_of([&] { w.close(); }), {"m.sigmf-meta", "write failed"});
}

} // namespace
