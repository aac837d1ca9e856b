#include "sigmf_meta.hpp"

#include "capture_fail.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

namespace whd::transport::detail {

namespace {

using json = nlohmann::json;

constexpr datatype ALL_DATATYPES[] = {datatype::cf32_le, datatype::ci16_le, datatype::ci8};

/// A meta larger than this is no meta (most likely a data file given by mistake).
constexpr std::uintmax_t MAX_META_BYTES = 256u << 20;

std::string read_text(const std::filesystem::path& meta_path)
{
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(meta_path, ec);
  if (!ec && size > MAX_META_BYTES) {
    fail(meta_path, "is " + std::to_string(size) + " bytes, too large for a SigMF meta (is it the data file?); pass "
                    "the recording's NAME.sigmf-meta");
  }
  std::ifstream in(meta_path, std::ios::binary);
  if (!in) {
    fail(meta_path, "cannot be opened for reading; check that it exists and is readable");
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    fail(meta_path, "read failed; check the disk or copy the recording again");
  }
  return text;
}

/// e.what() is "[json.exception.parse_error.101] parse error at line L, column C: ...
/// last read: 'TOKEN'; expected ..."; the part a person reads. TOKEN is as long as the
/// bad token (each control character in it 8 characters long, and it may hold
/// "'; expected" itself): its middle is cut, and the whole is bounded.
std::string json_message(const json::exception& e)
{
  std::string what = e.what();
  if (const auto pos = what.find("] "); what.starts_with("[json.exception") && pos != std::string::npos) {
    what.erase(0, pos + 2);
  }
  constexpr std::string_view LAST_READ = "last read: '";
  constexpr std::size_t KEEP_HEAD = 40, KEEP_TAIL = 16, MAX_CHARS = 400;
  if (const auto open = what.find(LAST_READ); open != std::string::npos) {
    const std::size_t first = open + LAST_READ.size();
    std::size_t close = what.rfind("'; expected");
    if (close == std::string::npos || close < first) {
      close = what.rfind('\'');
    }
    if (close != std::string::npos && close > first && close - first > KEEP_HEAD + KEEP_TAIL + 3) {
      what.replace(first + KEEP_HEAD, close - first - KEEP_HEAD - KEEP_TAIL, "...");
    }
  }
  if (what.size() > MAX_CHARS) {
    what.resize(MAX_CHARS - 3);
    what += "...";
  }
  return what;
}

json parse_json(const std::filesystem::path& meta_path, const std::string& text)
{
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    fail(meta_path, "SigMF meta is not valid JSON: " + json_message(e) + " (byte " + std::to_string(e.byte) +
                        "); fix the JSON or record the capture again");
  } catch (const json::exception& e) {
    // A number too large for a double (out_of_range.406, "1e400") is valid JSON
    // syntax that the parser still refuses.
    fail(meta_path, "SigMF meta cannot be read: " + json_message(e) + "; fix the JSON or record the capture again");
  }
}

/// A value as a message shows it: scalars as JSON (long strings shortened), arrays
/// and objects by their size only. json::dump recurses once per level of nesting,
/// so dumping a hostile meta's `[[[[...]]]]` would overflow the stack.
std::string describe(const json& value)
{
  if (value.is_array()) {
    return "an array of " + std::to_string(value.size()) + " elements";
  }
  if (value.is_object()) {
    return "an object of " + std::to_string(value.size()) + " members";
  }
  constexpr std::size_t MAX_CHARS = 80;
  std::string text = value.dump();
  if (text.size() > MAX_CHARS) {
    std::size_t cut = MAX_CHARS;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0u) == 0x80u) {
      --cut; // not inside a UTF-8 sequence
    }
    text.resize(cut);
    text += "...";
  }
  return text;
}

uint64_t read_count(const std::filesystem::path& meta_path, const json& value, const std::string& where)
{
  if (!value.is_number_unsigned()) {
    fail(meta_path, where + " is " + describe(value) + ", not a non-negative integer as SigMF requires; fix the meta");
  }
  return value.get<uint64_t>();
}

std::string read_string(const std::filesystem::path& meta_path, const json& value, const std::string& where)
{
  if (!value.is_string()) {
    fail(meta_path, where + " is " + describe(value) + ", not a string as SigMF requires; fix the meta");
  }
  return value.get<std::string>();
}

std::vector<annotation> read_annotations(const std::filesystem::path& meta_path, const json& root)
{
  std::vector<annotation> out;
  const auto it = root.find("annotations");
  if (it == root.end() || it->is_null()) {
    return out;
  }
  if (!it->is_array()) {
    fail(meta_path, "\"annotations\" is not an array as SigMF requires; fix or remove it (the receiver does not "
                    "need annotations)");
  }
  out.reserve(it->size());
  for (std::size_t k = 0; k < it->size(); ++k) {
    const json& a = (*it)[k];
    const std::string where = "annotations[" + std::to_string(k) + "]";
    if (!a.is_object()) {
      fail(meta_path, where + " is not an object; fix or remove it (the receiver does not need annotations)");
    }
    annotation ann;
    const auto start = a.find("core:sample_start");
    if (start == a.end()) {
      fail(meta_path, where + " lacks \"core:sample_start\", which SigMF requires; fix or remove it");
    }
    ann.sample_start = read_count(meta_path, *start, where + " \"core:sample_start\"");
    if (const auto n = a.find("core:sample_count"); n != a.end()) {
      ann.sample_count = read_count(meta_path, *n, where + " \"core:sample_count\"");
    }
    if (const auto s = a.find("core:label"); s != a.end()) {
      ann.label = read_string(meta_path, *s, where + " \"core:label\"");
    }
    if (const auto s = a.find("core:comment"); s != a.end()) {
      ann.comment = read_string(meta_path, *s, where + " \"core:comment\"");
    }
    out.push_back(std::move(ann));
  }
  return out;
}

/// Refuse layouts this reader would misread: several interleaved channels, header
/// bytes inside the data file.
void check_layout(const std::filesystem::path& meta_path, const json& root, const json& global)
{
  if (const auto n = global.find("core:num_channels"); n != global.end()) {
    if (read_count(meta_path, *n, "global \"core:num_channels\"") != 1) {
      fail(meta_path, "records " + describe(*n) + " interleaved channels; only single-channel recordings are "
                      "supported: extract one channel into its own recording");
    }
  }
  const auto captures = root.find("captures");
  if (captures == root.end() || !captures->is_array()) {
    return;
  }
  for (const json& c : *captures) {
    if (!c.is_object()) {
      continue;
    }
    if (const auto h = c.find("core:header_bytes"); h != c.end() && !(h->is_number_unsigned() && *h == 0)) {
      fail(meta_path, "a capture segment has \"core:header_bytes\": " + describe(*h) +
                          "; data files with header bytes are not supported: strip the header from the data file "
                          "and remove the field");
    }
  }
}

} // namespace

std::string supported_datatypes()
{
  std::string s;
  for (const datatype t : ALL_DATATYPES) {
    s += (s.empty() ? "" : ", ") + std::string(to_string(t));
  }
  return s;
}

sigmf_meta read_sigmf_meta(const std::filesystem::path& meta_path)
{
  const json root = parse_json(meta_path, read_text(meta_path));
  if (!root.is_object()) {
    fail(meta_path, "is JSON but not a SigMF meta: the top level is not an object; pass the recording's "
                    "NAME.sigmf-meta");
  }
  const auto global = root.find("global");
  if (global == root.end() || !global->is_object()) {
    fail(meta_path, "lacks the \"global\" object that every SigMF meta has; fix the meta (it needs at least "
                    "\"global\": {\"core:datatype\": ...})");
  }
  const auto dt = global->find("core:datatype");
  if (dt == global->end()) {
    fail(meta_path, "lacks global \"core:datatype\", so the sample format is unknown; add it (one of " +
                        supported_datatypes() + ")");
  }
  const std::string dt_name = read_string(meta_path, *dt, "global \"core:datatype\"");
  sigmf_meta meta;
  if (const auto t = parse_datatype(dt_name)) {
    meta.type = *t;
  } else {
    fail(meta_path, "core:datatype " + describe(*dt) + " is not supported; supported: " + supported_datatypes() +
                        " (little-endian); convert the recording to one of them");
  }
  if (const auto rate = global->find("core:sample_rate"); rate != global->end()) {
    if (!rate->is_number() || !std::isfinite(rate->get<double>()) || rate->get<double>() <= 0.0) {
      fail(meta_path, "global \"core:sample_rate\" is " + describe(*rate) +
                          ", not a positive number of samples per second; fix or remove it");
    }
    meta.sample_rate_sps = rate->get<double>();
  }
  check_layout(meta_path, root, *global);
  meta.annotations = read_annotations(meta_path, root);
  return meta;
}

std::string sigmf_meta_text(datatype type, double sample_rate_sps, const std::string& description,
                            std::vector<annotation> annotations)
{
  using ojson = nlohmann::ordered_json;
  ojson global = {
      {"core:datatype", std::string(to_string(type))},
      {"core:sample_rate", sample_rate_sps},
      {"core:version", "1.0.0"},
  };
  if (!description.empty()) {
    global["core:description"] = description;
  }
  global["core:recorder"] = "whd-tx";

  // SigMF requires annotations ordered by sample_start; stable keeps the caller's
  // order among equal starts.
  std::stable_sort(annotations.begin(), annotations.end(),
                   [](const annotation& a, const annotation& b) { return a.sample_start < b.sample_start; });
  ojson anns = ojson::array();
  for (const annotation& a : annotations) {
    ojson o = {{"core:sample_start", a.sample_start}, {"core:sample_count", a.sample_count}};
    if (!a.label.empty()) {
      o["core:label"] = a.label;
    }
    if (!a.comment.empty()) {
      o["core:comment"] = a.comment;
    }
    anns.push_back(std::move(o));
  }
  const ojson root = {
      {"global", std::move(global)},
      {"captures", ojson::array({ojson{{"core:sample_start", 0}}})},
      {"annotations", std::move(anns)},
  };
  // Invalid UTF-8 in a label becomes U+FFFD rather than failing the whole recording.
  return root.dump(4, ' ', false, ojson::error_handler_t::replace) + "\n";
}

} // namespace whd::transport::detail
