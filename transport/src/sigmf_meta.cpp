#include "sigmf_meta.hpp"

#include "capture_fail.hpp"
#include "sigmf_meta_scan.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
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
  // Read at once to its size (much faster than char by char on a large meta), then
  // whatever is left of a file that grew or has no size (a pipe).
  std::string text(ec ? 0 : std::size_t(size), '\0');
  in.read(text.data(), std::streamsize(text.size()));
  text.resize(std::size_t(in.gcount()));
  if (!in.bad() && !in.eof()) {
    text.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
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

/// The meta's document, or the reason it is none. `count_annotations`, when given,
/// counts the top level's "annotations" keys.
json parse_json(const std::filesystem::path& meta_path, const std::string& text, int* count_annotations = nullptr)
{
  const json::parser_callback_t count = [count_annotations](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key && parsed == "annotations") {
      ++*count_annotations;
    }
    return true;
  };
  try {
    return count_annotations != nullptr ? json::parse(text, count) : json::parse(text);
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

/// One element of "annotations", the k-th.
annotation read_annotation(const std::filesystem::path& meta_path, const json& a, std::size_t k)
{
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
  if (const auto l = a.find("core:label"); l != a.end()) {
    ann.label = read_string(meta_path, *l, where + " \"core:label\"");
  }
  if (const auto c = a.find("core:comment"); c != a.end()) {
    ann.comment = read_string(meta_path, *c, where + " \"core:comment\"");
  }
  return ann;
}

/// Checks what "annotations" is (its elements are read apart).
void check_annotations(const std::filesystem::path& meta_path, const json& root)
{
  const auto it = root.find("annotations");
  if (it != root.end() && !it->is_null() && !it->is_array()) {
    fail(meta_path, "\"annotations\" is not an array as SigMF requires; fix or remove it (the receiver does not "
                    "need annotations)");
  }
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

/// The checks of the document but its annotations' elements, in the order a person
/// fixes them: the top level, global and its datatype, the sample rate, the layout,
/// what "annotations" is. Returns the meta without annotations.
sigmf_meta check_document(const std::filesystem::path& meta_path, const json& root)
{
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
  check_annotations(meta_path, root);
  return meta;
}

/// The meta when its annotations are in the plain form (scan_annotations): they are
/// read by the scan, the rest of the document, with "annotations": [] in their place,
/// by nlohmann as before. nullopt for any other text, or when the rest is not valid
/// JSON or holds "annotations" again: read_any_form then reads it and says what is
/// wrong.
std::optional<sigmf_meta> read_plain_form(const std::filesystem::path& meta_path, const std::string& text,
                                          bool keep_annotations)
{
  auto scan = scan_annotations(text, keep_annotations);
  if (!scan) {
    return std::nullopt;
  }
  std::string rest;
  rest.reserve(text.size() - (scan->end - scan->begin) + 2);
  rest.append(text, 0, scan->begin).append("[]").append(text, scan->end);
  int nof_annotations = 0;
  json root;
  try {
    root = parse_json(meta_path, rest, &nof_annotations);
  } catch (const capture_error&) {
    return std::nullopt;
  }
  if (nof_annotations != 1) {
    return std::nullopt;
  }
  sigmf_meta meta = check_document(meta_path, root);
  meta.annotations = std::move(scan->annotations);
  meta.annotations_reach = scan->reach;
  return meta;
}

/// The meta in any form: the whole document through nlohmann's parser, then its
/// annotations, the first bad one reported once the document's other checks passed.
sigmf_meta read_any_form(const std::filesystem::path& meta_path, const std::string& text, bool keep_annotations)
{
  const json root = parse_json(meta_path, text);
  sigmf_meta meta = check_document(meta_path, root);
  const auto it = root.find("annotations");
  if (it == root.end() || it->is_null()) {
    return meta;
  }
  for (std::size_t k = 0; k < it->size(); ++k) {
    annotation a = read_annotation(meta_path, (*it)[k], k);
    const uint64_t end = a.sample_count > UINT64_MAX - a.sample_start ? UINT64_MAX : a.sample_start + a.sample_count;
    meta.annotations_reach = std::max(meta.annotations_reach, end);
    if (keep_annotations) {
      meta.annotations.push_back(std::move(a));
    }
  }
  return meta;
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

sigmf_meta read_sigmf_meta(const std::filesystem::path& meta_path, bool keep_annotations)
{
  const std::string text = read_text(meta_path);
  if (auto meta = read_plain_form(meta_path, text, keep_annotations)) {
    return std::move(*meta);
  }
  return read_any_form(meta_path, text, keep_annotations);
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
