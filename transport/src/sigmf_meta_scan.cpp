#include "sigmf_meta_scan.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

namespace whd::transport::detail {

namespace {

/// A byte a JSON string holds as it is: printable ASCII but the quote and the backslash.
constexpr std::array<bool, 256> PLAIN = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) {
    t[std::size_t(c)] = c != '"' && c != '\\';
  }
  return t;
}();

/// Containers open inside one skipped value at most; deeper goes to the full parser.
constexpr int MAX_DEPTH = 32;

/// A number's integer digits plus its decimal exponent at most: below 10^300 a double is finite
/// (nlohmann refuses an infinite one, "1e400", as out of range).
constexpr long MAX_DECIMAL_EXPONENT = 300;

/// A cursor over the text. Every reader returns false where the text is not in the
/// form it reads; the cursor is then of no further use.
class cursor {
public:
  explicit cursor(std::string_view text) : first_(text.data()), p_(text.data()), end_(text.data() + text.size()) {}

  std::size_t offset() const { return std::size_t(p_ - first_); }
  bool at_end() const { return p_ == end_; }
  char peek() const { return p_ < end_ ? *p_ : '\0'; }

  void skip_ws()
  {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
      ++p_;
    }
  }

  /// `c`, after any whitespace.
  bool expect(char c)
  {
    skip_ws();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }

  /// A string at the cursor, checked as nlohmann checks it (no control characters,
  /// well-formed UTF-8, known escapes, \u surrogates in pairs); its value appended to
  /// `out` when given.
  bool string(std::string* out)
  {
    if (peek() != '"') {
      return false;
    }
    ++p_;
    for (;;) {
      const char* run = p_;
      while (p_ < end_ && PLAIN[static_cast<unsigned char>(*p_)]) {
        ++p_;
      }
      if (out != nullptr) {
        out->append(run, p_);
      }
      if (p_ == end_) {
        return false;
      }
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        if (!escape(out)) {
          return false;
        }
      } else if (c >= 0x80) {
        const char* seq = p_;
        if (!utf8_sequence()) {
          return false;
        }
        if (out != nullptr) {
          out->append(seq, p_);
        }
      } else {
        return false; // a control character
      }
    }
  }

  /// A member name of plain ASCII (no escapes), as SigMF's names are; its bytes in `name`.
  bool plain_name(std::string_view& name)
  {
    if (peek() != '"') {
      return false;
    }
    const char* first = ++p_;
    while (p_ < end_ && PLAIN[static_cast<unsigned char>(*p_)]) {
      ++p_;
    }
    if (p_ == end_ || *p_ != '"') {
      return false;
    }
    name = std::string_view(first, std::size_t(p_ - first));
    ++p_;
    return true;
  }

  /// A member name: its bytes in `name` when plain ASCII (as SigMF's names are), else
  /// decoded into `scratch` and `name` viewing it.
  bool name(std::string& scratch, std::string_view& name)
  {
    const char* at = p_;
    if (plain_name(name)) {
      return true;
    }
    p_ = at;
    scratch.clear();
    if (!string(&scratch)) {
      return false;
    }
    name = scratch;
    return true;
  }

  /// A non-negative integer below 2^64 written as such (no sign, fraction or exponent):
  /// what nlohmann reads as number_unsigned.
  bool unsigned_integer(uint64_t& v)
  {
    if (p_ == end_ || *p_ < '0' || *p_ > '9') {
      return false;
    }
    if (*p_ == '0') {
      ++p_;
      v = 0;
    } else {
      v = 0;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
        const auto d = uint64_t(*p_ - '0');
        if (v > (UINT64_MAX - d) / 10) {
          return false; // nlohmann makes it a double
        }
        v = v * 10 + d;
        ++p_;
      }
    }
    return p_ == end_ || (*p_ != '.' && *p_ != 'e' && *p_ != 'E' && (*p_ < '0' || *p_ > '9'));
  }

  /// Any JSON value at the cursor (after whitespace), skipped.
  bool skip_value()
  {
    std::array<char, MAX_DEPTH> closers{};
    int depth = 0;
    for (;;) {
      skip_ws();
      if (p_ == end_) {
        return false;
      }
      bool value_done = true;
      switch (*p_) {
      case '{':
      case '[':
        if (depth == MAX_DEPTH) {
          return false;
        }
        closers[std::size_t(depth++)] = *p_ == '{' ? '}' : ']';
        ++p_;
        skip_ws();
        if (p_ < end_ && *p_ == closers[std::size_t(depth - 1)]) {
          ++p_;
          --depth;
        } else if (closers[std::size_t(depth - 1)] == '}') {
          if (!member_name()) {
            return false;
          }
          value_done = false;
        } else {
          value_done = false;
        }
        break;
      case '"':
        if (!string(nullptr)) {
          return false;
        }
        break;
      case 't':
        if (!literal("true")) {
          return false;
        }
        break;
      case 'f':
        if (!literal("false")) {
          return false;
        }
        break;
      case 'n':
        if (!literal("null")) {
          return false;
        }
        break;
      default:
        if (!number()) {
          return false;
        }
      }
      if (!value_done) {
        continue; // the first value of the container just opened
      }
      // After a value: the next one of its container, or the container's end.
      for (;;) {
        if (depth == 0) {
          return true;
        }
        skip_ws();
        if (p_ == end_) {
          return false;
        }
        const char closer = closers[std::size_t(depth - 1)];
        if (*p_ == ',') {
          ++p_;
          if (closer == '}') {
            skip_ws();
            if (!member_name()) {
              return false;
            }
          }
          break;
        }
        if (*p_ != closer) {
          return false;
        }
        ++p_;
        --depth;
      }
    }
  }

private:
  /// `"name":`, the name checked as any string.
  bool member_name()
  {
    return string(nullptr) && expect(':');
  }

  bool literal(std::string_view word)
  {
    if (std::size_t(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0) {
      return false;
    }
    p_ += word.size();
    return true;
  }

  /// A JSON number whose double is surely finite.
  bool number()
  {
    const auto digit = [this] { return p_ < end_ && *p_ >= '0' && *p_ <= '9'; };
    if (p_ < end_ && *p_ == '-') {
      ++p_;
    }
    long int_digits = 0;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
      int_digits = 1;
    } else if (digit()) {
      for (; digit(); ++p_) {
        ++int_digits;
      }
    } else {
      return false;
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!digit()) {
        return false;
      }
      while (digit()) {
        ++p_;
      }
    }
    long exponent = 0;
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      bool negative = false;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) {
        negative = *p_ == '-';
        ++p_;
      }
      if (!digit()) {
        return false;
      }
      for (; digit(); ++p_) {
        exponent = std::min(exponent * 10 + (*p_ - '0'), 100000L);
      }
      if (negative) {
        exponent = 0; // small numbers round to 0 or a subnormal, both finite
      }
    }
    return int_digits + exponent <= MAX_DECIMAL_EXPONENT;
  }

  static int hex(char c)
  {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }

  /// `\uXXXX` at the cursor: its code unit, or -1.
  long code_unit()
  {
    if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u') {
      return -1;
    }
    long v = 0;
    for (int k = 2; k < 6; ++k) {
      const int h = hex(p_[k]);
      if (h < 0) {
        return -1;
      }
      v = v * 16 + h;
    }
    p_ += 6;
    return v;
  }

  /// An escape at the cursor (the backslash).
  bool escape(std::string* out)
  {
    if (end_ - p_ < 2) {
      return false;
    }
    char plain = '\0';
    switch (p_[1]) {
    case '"': plain = '"'; break;
    case '\\': plain = '\\'; break;
    case '/': plain = '/'; break;
    case 'b': plain = '\b'; break;
    case 'f': plain = '\f'; break;
    case 'n': plain = '\n'; break;
    case 'r': plain = '\r'; break;
    case 't': plain = '\t'; break;
    case 'u': return unicode_escape(out);
    default: return false;
    }
    p_ += 2;
    if (out != nullptr) {
      out->push_back(plain);
    }
    return true;
  }

  /// `\uXXXX`, or a surrogate pair of them, as UTF-8.
  bool unicode_escape(std::string* out)
  {
    long cp = code_unit();
    if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) {
      return false; // a low surrogate alone
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      const long low = code_unit();
      if (low < 0xDC00 || low > 0xDFFF) {
        return false;
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (out != nullptr) {
      if (cp < 0x80) {
        out->push_back(char(cp));
      } else if (cp < 0x800) {
        out->push_back(char(0xC0 | (cp >> 6)));
        out->push_back(char(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        out->push_back(char(0xE0 | (cp >> 12)));
        out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(char(0x80 | (cp & 0x3F)));
      } else {
        out->push_back(char(0xF0 | (cp >> 18)));
        out->push_back(char(0x80 | ((cp >> 12) & 0x3F)));
        out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(char(0x80 | (cp & 0x3F)));
      }
    }
    return true;
  }

  /// One well-formed UTF-8 sequence of two to four bytes (RFC 3629: no overlong forms,
  /// no surrogates, nothing past U+10FFFF), as nlohmann's lexer requires.
  bool utf8_sequence()
  {
    const auto b = [this](std::ptrdiff_t k) { return static_cast<unsigned char>(p_[k]); };
    const auto in = [](unsigned char v, unsigned lo, unsigned hi) { return v >= lo && v <= hi; };
    const unsigned char c = b(0);
    int len = 0;
    unsigned lo = 0x80, hi = 0xBF; // the second byte's range
    if (in(c, 0xC2, 0xDF)) {
      len = 2;
    } else if (in(c, 0xE0, 0xEF)) {
      len = 3;
      lo = c == 0xE0 ? 0xA0 : 0x80;
      hi = c == 0xED ? 0x9F : 0xBF;
    } else if (in(c, 0xF0, 0xF4)) {
      len = 4;
      lo = c == 0xF0 ? 0x90 : 0x80;
      hi = c == 0xF4 ? 0x8F : 0xBF;
    } else {
      return false;
    }
    if (end_ - p_ < len || !in(b(1), lo, hi)) {
      return false;
    }
    for (int k = 2; k < len; ++k) {
      if (!in(b(k), 0x80, 0xBF)) {
        return false;
      }
    }
    p_ += len;
    return true;
  }

  const char* first_;
  const char* p_;
  const char* end_;
};

/// The fields of an annotation the receiver and its tests read.
enum class field { start, count, label, comment, other };

field field_of(std::string_view name)
{
  return name == "core:sample_start"   ? field::start
         : name == "core:sample_count" ? field::count
         : name == "core:label"        ? field::label
         : name == "core:comment"      ? field::comment
                                       : field::other;
}

/// One element of the array, at its '{'.
bool scan_element(cursor& in, bool keep, annotations_scan& out)
{
  if (!in.expect('{')) {
    return false;
  }
  std::optional<uint64_t> start;
  annotation a;
  do {
    in.skip_ws();
    std::string_view name;
    if (!in.plain_name(name) || !in.expect(':')) {
      return false; // also an empty object: it lacks core:sample_start
    }
    in.skip_ws();
    bool ok = true;
    switch (field_of(name)) {
    case field::start:
      start.emplace();
      ok = in.unsigned_integer(*start);
      break;
    case field::count: ok = in.unsigned_integer(a.sample_count); break;
    case field::label:
      a.label.clear(); // a member given twice: the last counts
      ok = in.string(keep ? &a.label : nullptr);
      break;
    case field::comment:
      a.comment.clear();
      ok = in.string(keep ? &a.comment : nullptr);
      break;
    case field::other: ok = in.skip_value(); break;
    }
    if (!ok) {
      return false;
    }
  } while (in.expect(','));
  if (!in.expect('}') || !start) {
    return false;
  }
  a.sample_start = *start;
  const uint64_t end = a.sample_count > UINT64_MAX - a.sample_start ? UINT64_MAX : a.sample_start + a.sample_count;
  out.reach = std::max(out.reach, end);
  if (keep) {
    out.annotations.push_back(std::move(a));
  }
  return true;
}

/// The array, at its '['.
bool scan_array(cursor& in, bool keep, annotations_scan& out)
{
  out.begin = in.offset();
  if (!in.expect('[')) {
    return false;
  }
  if (!in.expect(']')) {
    do {
      if (!scan_element(in, keep, out)) {
        return false;
      }
    } while (in.expect(','));
    if (!in.expect(']')) {
      return false;
    }
  }
  out.end = in.offset();
  return true;
}

} // namespace

std::optional<annotations_scan> scan_annotations(std::string_view text, bool keep_annotations)
{
  cursor in(text);
  if (!in.expect('{')) {
    return std::nullopt;
  }
  in.skip_ws();
  if (in.peek() == '}') {
    return std::nullopt;
  }
  do {
    in.skip_ws();
    std::string_view name;
    std::string decoded;
    if (!in.name(decoded, name)) {
      return std::nullopt;
    }
    if (!in.expect(':')) {
      return std::nullopt;
    }
    in.skip_ws();
    if (name == "annotations") {
      annotations_scan out;
      if (!scan_array(in, keep_annotations, out)) {
        return std::nullopt;
      }
      return out;
    }
    if (!in.skip_value()) {
      return std::nullopt;
    }
  } while (in.expect(','));
  return std::nullopt;
}

} // namespace whd::transport::detail
