#include "variant_index.hpp"

#include <whd/fft/variant.hpp>

#include <array>
#include <charconv>

namespace whd::fft {

namespace {

constexpr std::array<variant, detail::NOF_VARIANTS> make_all()
{
  std::array<variant, detail::NOF_VARIANTS> all{};
  for (int i = 0; i < detail::NOF_VARIANTS; ++i) {
    all[static_cast<std::size_t>(i)] = detail::variant_at(i);
  }
  return all;
}

constexpr std::array<variant, detail::NOF_VARIANTS> ALL = make_all();

constexpr std::string_view name(ordering o) { return o == ordering::dit ? "dit" : "stockham"; }
constexpr std::string_view name(exchange e) { return e == exchange::smem ? "smem" : "shfl"; }
constexpr std::string_view name(twiddle w) { return w == twiddle::table ? "table" : "sincos"; }

/// Splits `s` at '/' into up to 6 fields; returns the number found (7 if too many).
int split(std::string_view s, std::array<std::string_view, 6>& out)
{
  int n = 0;
  while (true) {
    const auto pos = s.find('/');
    if (n == 6) {
      return 7;
    }
    out[static_cast<std::size_t>(n++)] = s.substr(0, pos);
    if (pos == std::string_view::npos) {
      return n;
    }
    s.remove_prefix(pos + 1);
  }
}

} // namespace

std::span<const variant> all_variants() { return ALL; }

std::string to_string(const variant& v)
{
  std::string s;
  s.append(name(v.order)).append("/").append(name(v.exch)).append("/").append(name(v.tw));
  s.append("/g").append(std::to_string(v.groups));
  if (v.pipelined) {
    s.append("/pipe");
  }
  return s;
}

std::optional<variant> parse_variant(std::string_view text)
{
  std::array<std::string_view, 6> f{};
  const int n = split(text, f);
  if (n != 4 && n != 5) {
    return std::nullopt;
  }
  variant v;
  if (f[0] == "dit" || f[0] == "stockham") {
    v.order = f[0] == "dit" ? ordering::dit : ordering::stockham;
  } else {
    return std::nullopt;
  }
  if (f[1] == "smem" || f[1] == "shfl") {
    v.exch = f[1] == "smem" ? exchange::smem : exchange::shfl;
  } else {
    return std::nullopt;
  }
  if (f[2] == "table" || f[2] == "sincos") {
    v.tw = f[2] == "table" ? twiddle::table : twiddle::sincos;
  } else {
    return std::nullopt;
  }
  if (f[3].size() < 2 || f[3][0] != 'g') {
    return std::nullopt;
  }
  const auto digits = f[3].substr(1);
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v.groups);
  if (ec != std::errc{} || ptr != digits.data() + digits.size() || detail::group_code(v.groups) < 0) {
    return std::nullopt;
  }
  if (n == 5) {
    if (f[4] != "pipe") {
      return std::nullopt;
    }
    v.pipelined = true;
  }
  return v;
}

std::string_view to_string(input_type t) { return name_of(INPUT_TYPE_NAMES, t); }

std::optional<input_type> parse_input_type(std::string_view s) { return parse_name(INPUT_TYPE_NAMES, s); }

variant default_variant(input_type)
{
  // Until a tune cache says otherwise: the one variant within half a percent of the
  // tuner's best for every input type on the H100 (whd-bench fft), with correctly
  // rounded table twiddles. Groups of 8 and the pipelined grid lose on narrow inputs there.
  return variant{ordering::stockham, exchange::shfl, twiddle::table, 2, false};
}

} // namespace whd::fft
