// open_capture and capture_reader on bad input: every refusal is a capture_error
// that names the file, says what is wrong and what to do. And the edges that are
// not errors: empty files, bare names, files cut while being read.

#include "transport_test_util.hpp"

#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

namespace {

using namespace whd;
using namespace whd::transport;
namespace fs = std::filesystem;
using test::capture_error_of;
using test::expect_mentions;

class transport_capture_errors : public ::testing::Test {
protected:
  /// `NAME.sigmf-meta` with the given `global` (and annotations) beside a data file of
  /// `data_bytes` zero bytes; returns the meta's path.
  fs::path recording(const std::string& name, const nlohmann::json& global, std::size_t data_bytes = 64,
                     const nlohmann::json& annotations = nlohmann::json::array())
  {
    const nlohmann::json meta = {{"global", global},
                                 {"captures", nlohmann::json::array({{{"core:sample_start", 0}}})},
                                 {"annotations", annotations}};
    test::write_text(dir_ / (name + ".sigmf-meta"), meta.dump(1));
    raw(name + ".sigmf-data", data_bytes);
    return dir_ / (name + ".sigmf-meta");
  }

  fs::path raw(const std::string& name, std::size_t bytes)
  {
    const std::vector<unsigned char> zeros(bytes, 0);
    test::write_bytes(dir_ / name, zeros.data(), zeros.size());
    return dir_ / name;
  }

  static nlohmann::json global(const std::string& datatype_name)
  {
    return {{"core:datatype", datatype_name}, {"core:sample_rate", 2.538e9}, {"core:version", "1.0.0"}};
  }

  test::temp_dir dir_;
};

TEST_F(transport_capture_errors, missing_meta)
{
  const std::string msg = capture_error_of([&] { open_capture(dir_ / "absent.sigmf-meta"); });
  expect_mentions(msg, {"absent.sigmf-meta", "does not exist", "sigmf-data"});
}

TEST_F(transport_capture_errors, missing_meta_beside_data)
{
  raw("lonely.sigmf-data", 64);
  const std::string msg = capture_error_of([&] { open_capture(dir_ / "lonely.sigmf-data"); });
  expect_mentions(msg, {"lonely.sigmf-meta", "does not exist"});
}

TEST_F(transport_capture_errors, missing_data)
{
  const fs::path meta = recording("nodata", global("cf32_le"));
  fs::remove(dir_ / "nodata.sigmf-data");
  const std::string msg = capture_error_of([&] { open_capture(meta); });
  expect_mentions(msg, {"nodata.sigmf-data", "does not exist", "copy"});
}

TEST_F(transport_capture_errors, meta_not_json_gives_the_position)
{
  raw("broken.sigmf-data", 64);
  test::write_text(dir_ / "broken.sigmf-meta", "{\n \"global\": {\n  \"core:datatype\": \"cf32_le\",\n }\n");
  const std::string msg = capture_error_of([&] { open_capture(dir_ / "broken.sigmf-meta"); });
  expect_mentions(msg, {"broken.sigmf-meta", "not valid JSON", "line 4", "byte"});
}

TEST_F(transport_capture_errors, meta_without_global)
{
  raw("noglobal.sigmf-data", 64);
  test::write_text(dir_ / "noglobal.sigmf-meta", R"({"captures": [], "annotations": []})");
  expect_mentions(capture_error_of([&] { open_capture(dir_ / "noglobal.sigmf-meta"); }),
                  {"noglobal.sigmf-meta", "\"global\""});

  raw("array.sigmf-data", 64);
  test::write_text(dir_ / "array.sigmf-meta", "[1, 2]");
  expect_mentions(capture_error_of([&] { open_capture(dir_ / "array.sigmf-meta"); }),
                  {"array.sigmf-meta", "not an object"});
}

TEST_F(transport_capture_errors, meta_without_datatype)
{
  const fs::path meta = recording("nodt", {{"core:sample_rate", 1e6}, {"core:version", "1.0.0"}});
  expect_mentions(capture_error_of([&] { open_capture(meta); }),
                  {"nodt.sigmf-meta", "core:datatype", "cf32_le, ci16_le, ci8"});

  const fs::path numeric = recording("numdt", {{"core:datatype", 5}});
  expect_mentions(capture_error_of([&] { open_capture(numeric); }), {"numdt.sigmf-meta", "not a string"});
}

TEST_F(transport_capture_errors, unsupported_datatype_lists_the_supported_ones)
{
  int index = 0;
  for (const std::string dt : {"cu8", "cf32_be", "ri16_le", "cf64_le", ""}) {
    SCOPED_TRACE(dt);
    const fs::path meta = recording("dt_" + std::to_string(index++), global(dt));
    expect_mentions(capture_error_of([&] { open_capture(meta); }),
                    {meta.filename().string(), "\"" + dt + "\" is not supported", "cf32_le, ci16_le, ci8"});
  }
}

TEST_F(transport_capture_errors, datatypes_parse_datatype_accepts_are_read)
{
  const std::pair<const char*, datatype> accepted[] = {{"cf32_le", datatype::cf32_le}, {"cf32", datatype::cf32_le},
                                                       {"ci16_le", datatype::ci16_le}, {"ci16", datatype::ci16_le},
                                                       {"ci8", datatype::ci8},         {"ci8_le", datatype::ci8}};
  for (const auto& [name, type] : accepted) {
    SCOPED_TRACE(name);
    const capture_info info = open_capture(recording(std::string("ok_") + name, global(name), 64));
    EXPECT_EQ(info.type, type);
    EXPECT_EQ(info.nof_samples, 64 / bytes_per_sample(type));
  }
}

TEST_F(transport_capture_errors, unknown_extension_without_format)
{
  const fs::path p = raw("samples.bin", 64);
  expect_mentions(capture_error_of([&] { open_capture(p); }),
                  {"samples.bin", "\".bin\"", "format", "cf32_le, ci16_le, ci8", ".cf32"});
  // The format names it.
  const capture_info info = open_capture(p, datatype::ci16_le);
  EXPECT_EQ(info.type, datatype::ci16_le);
  EXPECT_EQ(info.nof_samples, 16u);
  EXPECT_TRUE(info.meta_path.empty());
}

TEST_F(transport_capture_errors, raw_extensions_name_their_formats)
{
  const std::pair<const char*, datatype> forms[] = {{"a.cf32", datatype::cf32_le}, {"b.cfile", datatype::cf32_le},
                                                    {"c.ci16", datatype::ci16_le}, {"d.sc16", datatype::ci16_le},
                                                    {"e.ci8", datatype::ci8},      {"f.sc8", datatype::ci8},
                                                    {"g.CF32", datatype::cf32_le}};
  for (const auto& [name, type] : forms) {
    SCOPED_TRACE(name);
    const capture_info info = open_capture(raw(name, 80));
    EXPECT_EQ(info.type, type);
    EXPECT_EQ(info.nof_samples, 80 / bytes_per_sample(type));
  }
  // The format overrides the extension of a raw file.
  EXPECT_EQ(open_capture(dir_ / "c.ci16", datatype::cf32_le).nof_samples, 10u);
}

TEST_F(transport_capture_errors, missing_raw_file)
{
  expect_mentions(capture_error_of([&] { open_capture(dir_ / "gone.ci16"); }), {"gone.ci16", "does not exist"});
  expect_mentions(capture_error_of([&] { open_capture(dir_ / "gone_bare"); }), {"gone_bare", "does not exist"});
  expect_mentions(capture_error_of([&] { open_capture(dir_ / "gone.bin", datatype::ci8); }),
                  {"gone.bin", "does not exist"});
}

TEST_F(transport_capture_errors, size_not_whole_samples)
{
  const fs::path meta = recording("odd", global("ci16_le"), 4 * 100 + 3);
  expect_mentions(capture_error_of([&] { open_capture(meta); }),
                  {"odd.sigmf-data", "403 bytes", "4-byte ci16_le", "3 bytes left over"});

  const fs::path rawp = raw("odd.cf32", 8 * 10 + 4);
  expect_mentions(capture_error_of([&] { open_capture(rawp); }), {"odd.cf32", "84 bytes", "8-byte cf32_le"});
  const fs::path rawi = raw("odd.sc8", 11);
  expect_mentions(capture_error_of([&] { open_capture(rawi); }), {"odd.sc8", "11 bytes", "2-byte ci8"});
}

TEST_F(transport_capture_errors, format_disagreeing_with_meta)
{
  const fs::path meta = recording("disagree", global("ci16_le"));
  expect_mentions(capture_error_of([&] { open_capture(meta, datatype::cf32_le); }),
                  {"disagree.sigmf-meta", "cf32_le", "ci16_le", "disagrees"});
  EXPECT_EQ(open_capture(meta, datatype::ci16_le).type, datatype::ci16_le);
}

TEST_F(transport_capture_errors, directory_path)
{
  fs::create_directory(dir_ / "folder.cf32");
  expect_mentions(capture_error_of([&] { open_capture(dir_ / "folder.cf32"); }), {"folder.cf32", "directory"});
  expect_mentions(capture_error_of([&] { open_capture(dir_.path()); }), {dir_.path().string(), "directory"});
  // A meta that is a directory.
  fs::create_directory(dir_ / "dirmeta.sigmf-meta");
  raw("dirmeta.sigmf-data", 8);
  expect_mentions(capture_error_of([&] { open_capture(dir_ / "dirmeta.sigmf-data"); }),
                  {"dirmeta.sigmf-meta", "directory"});
}

TEST_F(transport_capture_errors, sigmf_archive_is_refused_with_a_remedy)
{
  raw("packed.sigmf", 1024);
  expect_mentions(capture_error_of([&] { open_capture(dir_ / "packed.sigmf"); }),
                  {"packed.sigmf", "archive", "tar xf"});
}

TEST_F(transport_capture_errors, bad_sample_rate_layout_and_annotations)
{
  nlohmann::json g = global("ci8");
  g["core:sample_rate"] = "fast";
  expect_mentions(capture_error_of([&] { open_capture(recording("rate_str", g)); }),
                  {"rate_str.sigmf-meta", "core:sample_rate"});
  g["core:sample_rate"] = -1.0;
  expect_mentions(capture_error_of([&] { open_capture(recording("rate_neg", g)); }),
                  {"rate_neg.sigmf-meta", "core:sample_rate"});

  nlohmann::json two = global("ci8");
  two["core:num_channels"] = 2;
  expect_mentions(capture_error_of([&] { open_capture(recording("twoch", two)); }),
                  {"twoch.sigmf-meta", "channels"});

  const nlohmann::json bad_annotations = nlohmann::json::array(
      {{{"core:sample_start", 10}}, {{"core:sample_start", -5}, {"core:label", "x"}}});
  expect_mentions(capture_error_of([&] { open_capture(recording("badann", global("ci8"), 64, bad_annotations)); }),
                  {"badann.sigmf-meta", "annotations[1]", "core:sample_start"});
  const nlohmann::json label_number = nlohmann::json::array({{{"core:sample_start", 10}, {"core:label", 3}}});
  expect_mentions(capture_error_of([&] { open_capture(recording("badlabel", global("ci8"), 64, label_number)); }),
                  {"badlabel.sigmf-meta", "annotations[0]", "core:label"});

  // A header inside the data file would be read as samples: refused.
  test::write_text(dir_ / "hdr.sigmf-meta",
                   nlohmann::json({{"global", global("ci8")},
                                   {"captures", {{{"core:sample_start", 0}, {"core:header_bytes", 16}}}}})
                       .dump());
  raw("hdr.sigmf-data", 64);
  expect_mentions(capture_error_of([&] { open_capture(dir_ / "hdr.sigmf-meta"); }),
                  {"hdr.sigmf-meta", "header_bytes"});
}

TEST_F(transport_capture_errors, annotations_are_read_as_the_document_holds_them)
{
  // The annotations are read as they are parsed, not kept as a document: what SigMF
  // defines of each is kept, any other member skipped however deep, and odd elements
  // refused with the element named, as a reader of the whole document would.
  const auto meta_text = [](const std::string& annotations_part) {
    return R"({"global": {"core:datatype": "ci8", "core:version": "1.0.0"}, "captures": [{"core:sample_start": 0}], )" +
           annotations_part + "}";
  };
  const auto write = [&](const std::string& name, const std::string& annotations_part) {
    test::write_text(dir_ / (name + ".sigmf-meta"), meta_text(annotations_part));
    raw(name + ".sigmf-data", 64);
    return dir_ / (name + ".sigmf-meta");
  };
  {
    const auto info = open_capture(write("skip", R"("annotations": [
      {"x": {"a": [1, {"core:sample_start": 99}], "b": null}, "core:sample_start": 5, "core:sample_count": 3,
       "core:label": "l", "y": [[], {}], "core:comment": "c\u00e9", "core:sample_start": 6},
      {"core:sample_start": 18446744073709551615, "z": 1.5e300}])"));
    ASSERT_EQ(info.annotations.size(), 2u);
    EXPECT_EQ(info.annotations[0].sample_start, 6u); // a member given twice: the last counts, as in JSON objects
    EXPECT_EQ(info.annotations[0].sample_count, 3u);
    EXPECT_EQ(info.annotations[0].label, "l");
    EXPECT_EQ(info.annotations[0].comment, "c\xc3\xa9");
    EXPECT_EQ(info.annotations[1].sample_start, 18446744073709551615u);
    EXPECT_EQ(info.annotations[1].sample_count, 0u);
  }
  {
    // "annotations" twice: the last counts; its elements are counted from 0 again.
    const auto info = open_capture(
        write("twice", R"("annotations": [{"core:sample_start": 1}, 2], "annotations": [{"core:sample_start": 7}, {"core:sample_start": 9}])"));
    ASSERT_EQ(info.annotations.size(), 2u);
    EXPECT_EQ(info.annotations[1].sample_start, 9u);
    EXPECT_TRUE(open_capture(write("null", R"("annotations": null)")).annotations.empty());
    EXPECT_TRUE(open_capture(write("empty", R"("annotations": [])")).annotations.empty());
  }
  expect_mentions(capture_error_of([&] { open_capture(write("nested", R"("annotations": [{"core:sample_start": [1, 2]}])")); }),
                  {"nested.sigmf-meta", "annotations[0]", "core:sample_start", "an array of 2 elements"});
  expect_mentions(capture_error_of([&] {
                    open_capture(write("objlabel", R"("annotations": [{"core:sample_start": 1}, {"core:sample_start": 2, "core:label": {"a": 1}}])"));
                  }),
                  {"annotations[1]", "core:label", "an object of 1 members"});
  expect_mentions(capture_error_of([&] { open_capture(write("arrayel", R"("annotations": [{"core:sample_start": 1}, [1, 2]])")); }),
                  {"annotations[1]", "not an object"});
  expect_mentions(capture_error_of([&] { open_capture(write("nullel", R"("annotations": [null])")); }),
                  {"annotations[0]", "not an object"});
  expect_mentions(capture_error_of([&] { open_capture(write("nostart", R"("annotations": [{"core:sample_count": 4}])")); }),
                  {"annotations[0]", "lacks", "core:sample_start"});
  expect_mentions(capture_error_of([&] { open_capture(write("notarray", R"("annotations": {"core:sample_start": 1})")); }),
                  {"notarray.sigmf-meta", "\"annotations\" is not an array"});
  // The first bad element is the one named.
  expect_mentions(capture_error_of([&] {
                    open_capture(write("first", R"("annotations": [{"core:sample_start": 1}, {"core:sample_start": -1}, 3])"));
                  }),
                  {"annotations[1]", "core:sample_start"});
  // A fault of the document outside the annotations is told first, as before.
  test::write_text(dir_ / "order.sigmf-meta", R"({"annotations": [7], "global": {"core:version": "1.0.0"}})");
  raw("order.sigmf-data", 64);
  expect_mentions(capture_error_of([&] { open_capture(dir_ / "order.sigmf-meta"); }), {"order.sigmf-meta", "core:datatype"});
}

TEST_F(transport_capture_errors, meta_without_optional_fields_is_read)
{
  // Only what SigMF requires: no sample rate, no captures, no annotations.
  test::write_text(dir_ / "minimal.sigmf-meta", R"({"global": {"core:datatype": "ci8", "core:version": "1.0.0"}})");
  raw("minimal.sigmf-data", 10);
  const capture_info info = open_capture(dir_ / "minimal");
  EXPECT_EQ(info.type, datatype::ci8);
  EXPECT_EQ(info.nof_samples, 5u);
  EXPECT_FALSE(info.sample_rate_sps.has_value());
  EXPECT_TRUE(info.annotations.empty());
}

TEST_F(transport_capture_errors, empty_data_is_zero_samples)
{
  const capture_info sig = open_capture(recording("empty", global("cf32_le"), 0));
  EXPECT_EQ(sig.nof_samples, 0u);
  const capture_info rawi = open_capture(raw("empty.ci16", 0));
  EXPECT_EQ(rawi.nof_samples, 0u);
  const capture_reader reader(sig);
  std::vector<cf32> out(4);
  EXPECT_EQ(reader.read(0, out), 0u);
  chunk_reader chunks(reader, 16, 4);
  chunk c;
  EXPECT_FALSE(chunks.next(c));
}

TEST_F(transport_capture_errors, file_cut_after_open_reads_short_without_throwing)
{
  std::vector<int16_t> iq(2 * 100);
  for (std::size_t k = 0; k < iq.size(); ++k) {
    iq[k] = static_cast<int16_t>(1000 - static_cast<int>(k) * 7);
  }
  test::write_bytes(dir_ / "cut.ci16", iq.data(), iq.size() * sizeof(int16_t));
  const capture_reader reader(open_capture(dir_ / "cut.ci16"));
  ASSERT_EQ(reader.size(), 100u);
  fs::resize_file(dir_ / "cut.ci16", 60 * 4 + 2); // and half a sample
  std::vector<cf32> out(100);
  EXPECT_EQ(reader.read(0, out), 60u);
  EXPECT_EQ(out[59], cf32(1000.0f - 118 * 7, 1000.0f - 119 * 7));
  EXPECT_EQ(reader.read(70, out), 0u);
  std::vector<std::byte> raw_out(400);
  EXPECT_EQ(reader.read_raw(0, raw_out), 60u);

  // A chunk walk ends at the cut with every read sample new exactly once.
  chunk_reader chunks(reader, 32, 16);
  chunk c;
  uint64_t next = 0;
  bool saw_last = false;
  while (chunks.next(c)) {
    EXPECT_FALSE(saw_last);
    EXPECT_EQ(c.first, next);
    next += c.nof_new;
    saw_last = c.last;
  }
  EXPECT_TRUE(saw_last);
  EXPECT_EQ(next, 60u);
}

TEST(transport_capture_reader_errors, read_error_is_a_capture_error)
{
  // Reading the start of one's own address space through /proc/self/mem fails with
  // EIO (page 0 is never mapped): a real read error, without a failing disk.
  capture_info info;
  info.data_path = "/proc/self/mem";
  info.type = datatype::ci8;
  info.nof_samples = 64;
  std::optional<capture_reader> reader;
  try {
    reader.emplace(info);
  } catch (const capture_error& e) {
    GTEST_SKIP() << "cannot open /proc/self/mem here: " << e.what();
  }
  std::vector<cf32> out(64);
  expect_mentions(capture_error_of([&] { reader->read(0, out); }), {"/proc/self/mem", "read failed", "byte 0"});
  info.type = datatype::cf32_le;
  const capture_reader direct(info);
  expect_mentions(capture_error_of([&] { direct.read(0, out); }), {"/proc/self/mem", "read failed"});
}

TEST(transport_capture_reader_errors, missing_file_or_directory)
{
  test::temp_dir dir;
  capture_info info;
  info.data_path = dir / "vanished.cf32";
  info.nof_samples = 1;
  expect_mentions(capture_error_of([&] { capture_reader r(info); }), {"vanished.cf32", "cannot be opened"});
  info.data_path = dir.path();
  expect_mentions(capture_error_of([&] { capture_reader r(info); }), {dir.path().string(), "directory"});
}

} // namespace
