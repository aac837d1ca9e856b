/// @file enum_names.hpp
/// An enum's names in one table: to_string, parse and the list a message gives are all
/// read from it, so that the command line, the Python module, the report and the
/// errors spell a value alike. A value's first row is its name; later rows of the same
/// value are other spellings parse accepts (SigMF's "cf32" for "cf32_le", say).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace whd {

template <class E>
struct enum_name {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
using enum_names = std::array<enum_name<E>, N>;

/// The name of `v` (its first row); `unknown` when the table has none.
template <class E, std::size_t N>
constexpr std::string_view name_of(const enum_names<E, N>& table, E v, std::string_view unknown = "?")
{
  for (const auto& row : table) {
    if (row.value == v) {
      return row.name;
    }
  }
  return unknown;
}

/// The value `s` spells (any of its rows); nullopt for anything else.
template <class E, std::size_t N>
constexpr std::optional<E> parse_name(const enum_names<E, N>& table, std::string_view s)
{
  for (const auto& row : table) {
    if (row.name == s) {
      return row.value;
    }
  }
  return std::nullopt;
}

/// Each value's name once, in table order, for a message: "a, b or c".
template <class E, std::size_t N>
std::string names_of(const enum_names<E, N>& table, std::string_view last = " or ")
{
  std::vector<std::string_view> names; // the values' first rows
  for (const auto& row : table) {
    if (name_of(table, row.value) == row.name) {
      names.push_back(row.name);
    }
  }
  std::string out;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k > 0) {
      out += k + 1 == names.size() ? last : std::string_view(", ");
    }
    out += names[k];
  }
  return out;
}

} // namespace whd
