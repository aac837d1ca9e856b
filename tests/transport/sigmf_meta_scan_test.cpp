// The quick read of a meta's annotations (sigmf_meta_scan) against a full parse:
// open_capture, keeping the annotations or only their reach, must say what
// nlohmann::json::parse of the whole file says (datatype, sample rate, every
// annotation, their reach) on the conformance captures, on a meta of many annotations
// in whd-tx's form and in forms the scan hands to the full parser; and a meta broken
// anywhere in its annotations is refused with the full parser's message and byte.

#include "test_env.hpp"
#include "transport_test_util.hpp"

#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <random>
#include <string>

namespace {

using namespace whd;
using namespace whd::transport;
namespace fs = std::filesystem;
using test::capture_error_of;
using test::expect_mentions;

/// What a meta says, read by nlohmann's document parser alone (the reference).
struct full_read {
  std::string datatype_name;
  std::optional<double> sample_rate_sps;
  std::vector<annotation> annotations;
  uint64_t reach = 0;
};

full_read parse_whole(const std::string& text)
{
  const nlohmann::json root = nlohmann::json::parse(text);
  full_read r;
  r.datatype_name = root.at("global").at("core:datatype").get<std::string>();
  if (const auto rate = root["global"].find("core:sample_rate"); rate != root["global"].end()) {
    r.sample_rate_sps = rate->get<double>();
  }
  if (const auto anns = root.find("annotations"); anns != root.end() && !anns->is_null()) {
    for (const auto& a : *anns) {
      annotation ann;
      ann.sample_start = a.at("core:sample_start").get<uint64_t>();
      ann.sample_count = a.value("core:sample_count", uint64_t(0));
      ann.label = a.value("core:label", std::string());
      ann.comment = a.value("core:comment", std::string());
      const uint64_t end = ann.sample_count > UINT64_MAX - ann.sample_start ? UINT64_MAX : ann.sample_start + ann.sample_count;
      r.reach = std::max(r.reach, end);
      r.annotations.push_back(std::move(ann));
    }
  }
  return r;
}

std::string read_text(const fs::path& path)
{
  const auto bytes = test::read_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

/// open_capture of `meta`, both ways, against the whole parse of its text.
void expect_as_full_parse(const fs::path& meta)
{
  SCOPED_TRACE(meta.string());
  const full_read want = parse_whole(read_text(meta));
  const capture_info kept = open_capture(meta, std::nullopt, annotation_use::keep);
  const capture_info reach = open_capture(meta, std::nullopt, annotation_use::reach_only);
  for (const capture_info* info : {&kept, &reach}) {
    EXPECT_EQ(to_string(info->type), want.datatype_name);
    EXPECT_EQ(info->sample_rate_sps, want.sample_rate_sps);
    EXPECT_EQ(info->annotations_reach, want.reach);
  }
  EXPECT_TRUE(reach.annotations.empty());
  ASSERT_EQ(kept.annotations.size(), want.annotations.size());
  for (std::size_t k = 0; k < want.annotations.size(); ++k) {
    const annotation& got = kept.annotations[k];
    const annotation& exp = want.annotations[k];
    ASSERT_TRUE(got.sample_start == exp.sample_start && got.sample_count == exp.sample_count &&
                got.label == exp.label && got.comment == exp.comment)
        << "annotation " << k << ": " << got.sample_start << "+" << got.sample_count << " '" << got.label << "' '"
        << got.comment << "', the full parse " << exp.sample_start << "+" << exp.sample_count << " '" << exp.label
        << "' '" << exp.comment << "'";
  }
}

/// A meta as whd-tx writes it (indent 4), its annotations' text given.
std::string meta_text(const std::string& annotations_json)
{
  return "{\n    \"global\": {\n        \"core:datatype\": \"ci8\",\n        \"core:sample_rate\": 2538000000.0,\n"
         "        \"core:version\": \"1.0.0\",\n        \"core:description\": \"d\\u00e9j\\u00e0 \\\"vu\\\"\",\n"
         "        \"core:recorder\": \"whd-tx\"\n    },\n    \"captures\": [\n        {\n"
         "            \"core:sample_start\": 0\n        }\n    ],\n    \"annotations\": " +
         annotations_json + "\n}\n";
}

/// `n` annotations in whd-tx's form, with the odd member a reader must take or skip:
/// escapes, UTF-8, members SigMF defines elsewhere or not at all, nested values, floats.
std::string many_annotations(std::size_t n, uint32_t seed)
{
  std::mt19937 rng(seed);
  std::string s = "[";
  uint64_t start = 1000;
  for (std::size_t k = 0; k < n; ++k) {
    const uint64_t count = 4032 + rng() % 3000;
    s += k == 0 ? "\n" : ",\n";
    s += "        {\n            \"core:sample_start\": " + std::to_string(start) +
         ",\n            \"core:sample_count\": " + std::to_string(count);
    switch (rng() % 8) {
    case 0: s += ", \"core:label\": \"qam16\", \"core:comment\": \"seq " + std::to_string(k) + ", nd 4, header ok\""; break;
    case 1: s += ", \"core:label\": \"qpsk\\n\\t\\\"\\\\\\/\\u00e9\\ud83d\\ude00\", \"core:comment\": \"caf\xc3\xa9 \xe2\x82\xac\""; break;
    case 2: s += ", \"core:freq_lower_edge\": -1.5e9, \"core:freq_upper_edge\": 2.5E+9, \"x\": [true, false, null, {\"a\": [[]]}]"; break;
    case 3: s += ", \"core:label\": \"a\", \"core:label\": \"b\""; break; // the last counts
    case 4: s += ", \"core:uuid\": \"\", \"n\": 0, \"z\": -0.0e-999"; break;
    default: break;
    }
    s += "\n        }";
    start += count + 777;
  }
  s += "\n    ]";
  return s;
}

class transport_sigmf_meta_scan : public ::testing::Test {
protected:
  fs::path write(const std::string& name, const std::string& text)
  {
    test::write_text(dir_ / (name + ".sigmf-meta"), text);
    test::write_bytes(dir_ / (name + ".sigmf-data"), "\0\0\0\0", 4);
    return dir_ / (name + ".sigmf-meta");
  }

  test::temp_dir dir_;
};

TEST_F(transport_sigmf_meta_scan, conformance_captures_read_as_the_full_parse_reads_them)
{
  std::size_t n = 0;
  for (const auto& entry : fs::directory_iterator(test::vectors_dir())) {
    if (entry.path().extension() == ".sigmf-meta") {
      expect_as_full_parse(entry.path());
      ++n;
    }
  }
  EXPECT_GE(n, 6u) << "the conformance captures in " << test::vectors_dir();
}

TEST_F(transport_sigmf_meta_scan, many_annotations_read_as_the_full_parse_reads_them)
{
  constexpr uint32_t SEED = 20;
  SCOPED_TRACE("seed " + std::to_string(SEED));
  const std::string anns = many_annotations(20000, SEED);
  expect_as_full_parse(write("many", meta_text(anns)));
  expect_as_full_parse(write("empty", meta_text("[]")));
  expect_as_full_parse(write("null", meta_text("null")));
  expect_as_full_parse(write("max", meta_text(R"([{"core:sample_start": 18446744073709551615, "core:sample_count": 2}])")));
  // Forms the scan leaves to the full parser, the same annotations either way:
  // "annotations" twice (the last counts), a name written with an escape, a number
  // whose double the scan does not vouch for, nesting deeper than the scan follows.
  std::string twice = meta_text(anns);
  twice.insert(twice.find("\"annotations\""), "\"annotations\": [{\"core:sample_start\": 5}],\n    ");
  expect_as_full_parse(write("twice", twice));
  expect_as_full_parse(write("escaped_name", meta_text(anns + ", \"annot\\u0061tions\": [{\"core:sample_start\": 3}]")));
  std::string escaped_member = anns;
  escaped_member.replace(escaped_member.find("\"core:sample_count\""), 19, "\"core:sample\\u005fcount\"");
  expect_as_full_parse(write("escaped_member", meta_text(escaped_member)));
  expect_as_full_parse(write("huge_float", meta_text(R"([{"core:sample_start": 1, "x": 1e300}])")));
  expect_as_full_parse(
      write("deep", meta_text(R"([{"core:sample_start": 1, "x": )" + std::string(40, '[') + std::string(40, ']') + "}]")));
}

TEST_F(transport_sigmf_meta_scan, a_broken_meta_is_refused_with_the_full_parsers_message)
{
  const std::string good = meta_text(many_annotations(20000, 21));
  const std::size_t deep = good.find("\"core:sample_count\"", good.size() / 2); // in annotation ~10000
  struct fault {
    const char* name;
    std::string text;
  };
  const auto with = [&](std::size_t at, std::size_t erase, const std::string& insert) {
    std::string t = good;
    t.replace(at, erase, insert);
    return t;
  };
  const fault faults[] = {
      {"comma", with(deep - 1, 0, "\"x\": 1 ")},            // a missing comma
      {"control", with(deep + 1, 0, "\x01")},                // a control character in a name
      {"utf8", with(deep + 1, 0, "\xc3\x28")},               // a broken UTF-8 sequence
      {"surrogate", with(deep + 1, 0, "\\udc00")},           // a low surrogate alone
      {"escape", with(deep + 1, 0, "\\x")},                  // no such escape
      {"literal", with(deep, 0, "\"y\": nul, ")},            // a misspelt literal
      {"number", with(deep, 0, "\"y\": 01, ")},              // a leading zero
      {"cut", good.substr(0, deep)},                         // the file ends inside the array
      {"after", good.substr(0, good.size() - 2) + ",}\n"},   // a fault after the array
  };
  for (const fault& f : faults) {
    SCOPED_TRACE(f.name);
    std::size_t byte = 0;
    try {
      const auto taken = nlohmann::json::parse(f.text);
      ADD_FAILURE() << "the reference parser took it: " << taken.size() << " members";
    } catch (const nlohmann::json::parse_error& e) {
      byte = e.byte;
    }
    const fs::path meta = write(f.name, f.text);
    const std::string kept = capture_error_of([&] { open_capture(meta, std::nullopt, annotation_use::keep); });
    const std::string reach = capture_error_of([&] { open_capture(meta, std::nullopt, annotation_use::reach_only); });
    expect_mentions(kept, {meta.string(), "not valid JSON", "(byte " + std::to_string(byte) + ")"});
    EXPECT_EQ(reach, kept);
  }
  // Valid JSON that SigMF or a double refuses, deep in the array: the full reader's messages.
  const fs::path range = write("range", with(deep, 0, "\"y\": 1e400, "));
  expect_mentions(capture_error_of([&] { open_capture(range, std::nullopt, annotation_use::reach_only); }),
                  {"cannot be read", "1e400"});
  // The element of `deep`: one "core:sample_start" each before it, one in captures.
  std::size_t element = 0;
  for (std::size_t at = good.find("\"core:sample_start\""); at < deep; at = good.find("\"core:sample_start\"", at + 1)) {
    ++element;
  }
  element -= 2;
  const fs::path negative = write("negative", with(deep, 0, "\"core:sample_start\": -1, "));
  const std::string message = capture_error_of([&] { open_capture(negative, std::nullopt, annotation_use::reach_only); });
  expect_mentions(message, {"annotations[" + std::to_string(element) + "]", "core:sample_start", "-1"});
  EXPECT_EQ(capture_error_of([&] { open_capture(negative); }), message);
}

} // namespace
