#include "sigmf_meta.hpp"

#include "capture_fail.hpp"
#include "sigmf_meta_scan.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
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
  // Read at once to its size (a 20 MB meta: some 25 ms less than char by char), then
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

/// An element of the top level's "annotations" array as read: the fields SigMF
/// defines (others are skipped unread), or the element whole when it is no object.
struct annotation_fields {
  std::optional<json> start, count, label, comment;
  std::optional<json> not_object; ///< the element, when it is not an object
};

/// What parse_json hands over of the top level's "annotations" array.
struct annotation_sink {
  std::function<void()> begin; ///< the array opens (again, if the key repeats: the last counts)
  std::function<void(const annotation_fields&)> add; ///< its next element
};

/// nlohmann's document builder for everything but the elements of the top level's
/// "annotations" array, which go to an annotation_sink field by field: a capture of
/// many frames has an annotation a frame, and 100 000 of them made into JSON objects
/// took most of a 16 MB meta's 0.3 s.
class meta_sax {
public:
  meta_sax(json& root, const annotation_sink& sink) : dom_(root, true), sink_(sink) {}

  bool null()
  {
    return scalar([] { return json(nullptr); }, [&] { return dom_.null(); });
  }
  bool boolean(bool v)
  {
    return scalar([v] { return json(v); }, [&] { return dom_.boolean(v); });
  }
  bool number_integer(json::number_integer_t v)
  {
    return scalar([v] { return json(v); }, [&] { return dom_.number_integer(v); });
  }
  bool number_unsigned(json::number_unsigned_t v)
  {
    return scalar([v] { return json(v); }, [&] { return dom_.number_unsigned(v); });
  }
  bool number_float(json::number_float_t v, const json::string_t& text)
  {
    return scalar([v] { return json(v); }, [&] { return dom_.number_float(v, text); });
  }
  bool string(json::string_t& v)
  {
    return scalar([&v] { return json(std::move(v)); }, [&] { return dom_.string(v); });
  }
  bool binary(json::binary_t& v) { return sub_ ? sub_->binary(v) : dom_.binary(v); } // not in JSON text

  bool start_object(std::size_t n)
  {
    ++depth_;
    if (sub_) {
      return sub_->start_object(n);
    }
    if (!in_annotations_ || depth_ <= 2) {
      return dom_.start_object(n);
    }
    if (depth_ == 3) { // an element
      fields_ = {};
      key_ = nullptr;
      return true;
    }
    return open_sub([&] { return sub_->start_object(n); });
  }

  bool key(json::string_t& k)
  {
    if (sub_) {
      return sub_->key(k);
    }
    if (in_annotations_ && depth_ == 3) {
      key_ = k == "core:sample_start" ? &fields_.start
             : k == "core:sample_count" ? &fields_.count
             : k == "core:label"        ? &fields_.label
             : k == "core:comment"      ? &fields_.comment
                                        : nullptr;
      return true;
    }
    if (in_annotations_ && depth_ > 3) {
      return true; // inside a member SigMF does not define: skipped
    }
    next_is_annotations_ = depth_ == 1 && k == "annotations";
    return dom_.key(k);
  }

  bool end_object()
  {
    bool ok = true;
    if (sub_) {
      ok = sub_->end_object();
      close_sub();
    } else if (!in_annotations_ || depth_ <= 2) {
      ok = dom_.end_object();
    } else if (depth_ == 3) {
      sink_.add(fields_);
    }
    --depth_;
    return ok;
  }

  bool start_array(std::size_t n)
  {
    ++depth_;
    if (sub_) {
      return sub_->start_array(n);
    }
    if (!in_annotations_ || depth_ <= 2) {
      if (depth_ == 2 && next_is_annotations_) {
        in_annotations_ = true;
        sink_.begin();
      }
      return dom_.start_array(n);
    }
    if (depth_ == 3) { // an element that is no object: kept whole for the message
      fields_ = {};
      fields_.not_object.emplace();
      sub_target_ = &*fields_.not_object;
      sub_depth_ = depth_;
      sub_.emplace(*sub_target_, true);
      return sub_->start_array(n);
    }
    return open_sub([&] { return sub_->start_array(n); });
  }

  bool end_array()
  {
    bool ok = true;
    if (sub_) {
      ok = sub_->end_array();
      close_sub();
    } else if (!in_annotations_ || depth_ <= 2) {
      if (in_annotations_ && depth_ == 2) {
        in_annotations_ = false;
      }
      ok = dom_.end_array();
    }
    --depth_;
    return ok;
  }

  /// Throws `ex` as its own type (parse_error, out_of_range), as the document builder does.
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& last_token, const Exception& ex)
  {
    return dom_.parse_error(position, last_token, ex);
  }

private:
  /// A scalar: to the document, to the element's field, or skipped.
  template <class Make, class Dom>
  bool scalar(Make&& make, Dom&& to_dom)
  {
    if (sub_) {
      return to_dom_sub(make());
    }
    if (!in_annotations_) {
      return to_dom();
    }
    if (depth_ == 2) { // an element that is no object
      annotation_fields f;
      f.not_object = make();
      sink_.add(f);
    } else if (depth_ == 3 && key_ != nullptr) {
      *key_ = make();
    }
    return true;
  }

  bool to_dom_sub(json&& v)
  {
    // A scalar inside a container kept whole: its document builder takes it.
    switch (v.type()) {
    case json::value_t::null: return sub_->null();
    case json::value_t::boolean: return sub_->boolean(v.get<bool>());
    case json::value_t::number_integer: return sub_->number_integer(v.get<json::number_integer_t>());
    case json::value_t::number_unsigned: return sub_->number_unsigned(v.get<json::number_unsigned_t>());
    case json::value_t::number_float: return sub_->number_float(v.get<json::number_float_t>(), "");
    case json::value_t::string: return sub_->string(v.get_ref<json::string_t&>());
    default: return true;
    }
  }

  /// A container as the value of an element's member: kept whole when SigMF defines
  /// the member (its message describes it), skipped otherwise.
  template <class Start>
  bool open_sub(Start&& start)
  {
    if (depth_ == 4 && key_ != nullptr) {
      key_->emplace();
      sub_target_ = &**key_;
      sub_depth_ = depth_;
      sub_.emplace(*sub_target_, true);
      return start();
    }
    return true; // deeper, or a member SigMF does not define: skipped
  }

  void close_sub()
  {
    if (depth_ == sub_depth_) {
      sub_.reset();
      if (sub_depth_ == 3) { // the element itself
        sink_.add(fields_);
      }
    }
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const annotation_sink& sink_;
  int depth_ = 0;            ///< containers open (the top level is 1)
  bool next_is_annotations_ = false;
  bool in_annotations_ = false;
  annotation_fields fields_; ///< the element being read
  std::optional<json>* key_ = nullptr; ///< the field the element's current member fills
  std::optional<nlohmann::detail::json_sax_dom_parser<json>> sub_;
  json* sub_target_ = nullptr;
  int sub_depth_ = 0;
};

/// The meta's document, whose "annotations" array is left empty: its elements go to
/// `sink` as they are read.
json parse_json(const std::filesystem::path& meta_path, const std::string& text, const annotation_sink& sink)
{
  json root;
  try {
    meta_sax sax(root, sink);
    json::sax_parse(text, &sax);
    return root;
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
annotation read_annotation(const std::filesystem::path& meta_path, const annotation_fields& a, std::size_t k)
{
  const auto where = [k] { return "annotations[" + std::to_string(k) + "]"; };
  if (a.not_object) {
    fail(meta_path, where() + " is not an object; fix or remove it (the receiver does not need annotations)");
  }
  annotation ann;
  if (!a.start) {
    fail(meta_path, where() + " lacks \"core:sample_start\", which SigMF requires; fix or remove it");
  }
  // The common case without building the messages' text.
  if (a.start->is_number_unsigned() && (!a.count || a.count->is_number_unsigned()) && (!a.label || a.label->is_string()) &&
      (!a.comment || a.comment->is_string())) {
    ann.sample_start = a.start->get<uint64_t>();
    ann.sample_count = a.count ? a.count->get<uint64_t>() : 0;
    ann.label = a.label ? a.label->get<std::string>() : std::string();
    ann.comment = a.comment ? a.comment->get<std::string>() : std::string();
    return ann;
  }
  ann.sample_start = read_count(meta_path, *a.start, where() + " \"core:sample_start\"");
  if (a.count) {
    ann.sample_count = read_count(meta_path, *a.count, where() + " \"core:sample_count\"");
  }
  if (a.label) {
    ann.label = read_string(meta_path, *a.label, where() + " \"core:label\"");
  }
  if (a.comment) {
    ann.comment = read_string(meta_path, *a.comment, where() + " \"core:comment\"");
  }
  return ann;
}

/// Checks what "annotations" is (its elements were read as they were parsed).
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
/// wrong. A 20 MB meta of 100 000 annotations takes some 20 ms so.
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
  int nof_arrays = 0;
  bool elements = false;
  const annotation_sink sink{[&] { ++nof_arrays; }, [&](const annotation_fields&) { elements = true; }};
  json root;
  try {
    meta_sax sax(root, sink);
    json::sax_parse(rest, &sax);
  } catch (const json::exception&) {
    return std::nullopt;
  }
  if (nof_arrays != 1 || elements) {
    return std::nullopt;
  }
  sigmf_meta meta = check_document(meta_path, root);
  meta.annotations = std::move(scan->annotations);
  meta.annotations_reach = scan->reach;
  return meta;
}

/// The meta in any form: the whole document through meta_sax, its annotations read
/// as they are parsed; the first bad one is reported where the document's other checks
/// have passed, as when they were read after them.
sigmf_meta read_any_form(const std::filesystem::path& meta_path, const std::string& text, bool keep_annotations)
{
  std::vector<annotation> annotations;
  std::exception_ptr bad_annotation;
  const annotation_sink sink{[&] {
                               annotations.clear();
                               bad_annotation = nullptr;
                             },
                             [&](const annotation_fields& a) {
                               if (bad_annotation) {
                                 return;
                               }
                               try {
                                 annotations.push_back(read_annotation(meta_path, a, annotations.size()));
                               } catch (...) {
                                 bad_annotation = std::current_exception();
                               }
                             }};
  const json root = parse_json(meta_path, text, sink);
  sigmf_meta meta = check_document(meta_path, root);
  if (bad_annotation) {
    std::rethrow_exception(bad_annotation);
  }
  for (const annotation& a : annotations) {
    const uint64_t end = a.sample_count > UINT64_MAX - a.sample_start ? UINT64_MAX : a.sample_start + a.sample_count;
    meta.annotations_reach = std::max(meta.annotations_reach, end);
  }
  if (keep_annotations) {
    meta.annotations = std::move(annotations);
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
