#pragma once
// Numbers and lists as users type them on a command line: one syntax for every option of every
// command (issue 26), so `0x10`, ` 8`, `8 `, `1e999`, `nan` and `-1` for a count are refused the
// same way everywhere instead of by whichever of strtod, stoll or lexical_cast an option used.
//
// A real: an optional sign, decimal digits with an optional fraction, an optional exponent
// (12, -0.5, .5, 1e3, 2.5E-3); finite. An integer: an optional sign and decimal digits, within
// long long. Nothing else: no spaces, no hex or octal prefix, no inf or nan, no trailing text.
// A list: comma-separated items, none empty, none given twice, each kept exactly as typed.
// Header-only: reports/ (which links no harness) reads prices and figures with it too.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "bench/core/errors.hpp"

namespace gpubench {
namespace numbers_detail {

inline bool digit(char c) { return c >= '0' && c <= '9'; }

// Whether `text` is [+-]?(d+(.d*)?|.d+)([eE][+-]?d+)? exactly.
inline bool real_syntax(std::string_view t) {
  std::size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
  std::size_t digits = 0;
  while (i < t.size() && digit(t[i])) ++i, ++digits;
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && digit(t[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    std::size_t exp = 0;
    while (i < t.size() && digit(t[i])) ++i, ++exp;
    if (exp == 0) return false;
  }
  return i == t.size();
}

}  // namespace numbers_detail

inline std::optional<double> read_real(std::string_view text) {
  if (!numbers_detail::real_syntax(text)) return std::nullopt;
  // strtod on a copy (NUL-terminated); the syntax above leaves it nothing to guess.
  const std::string s(text);
  const double v = std::strtod(s.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;  // 1e999
  return v;
}

inline std::optional<long long> read_integer(std::string_view text) {
  std::string_view t = text;
  if (!t.empty() && t.front() == '+') {
    t.remove_prefix(1);  // from_chars takes '-' but not '+'
    if (t.empty() || !numbers_detail::digit(t.front())) return std::nullopt;  // "+-1"
  }
  const bool starts_well = !t.empty() && (numbers_detail::digit(t.front()) ||
                                           (t.front() == '-' && t.size() > 1 && numbers_detail::digit(t[1])));
  if (!starts_well) return std::nullopt;
  long long v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;  // trailing text, overflow
  return v;
}

inline double parse_real(std::string_view text, std::string_view option, std::string_view what) {
  const std::optional<double> v = read_real(text);
  if (!v) throw UsageError(fmt::format("{} '{}': expected {}", option, text, what));
  return *v;
}

inline long long parse_integer(std::string_view text, std::string_view option, long long lo, long long hi) {
  const std::optional<long long> v = read_integer(text);
  if (!v || *v < lo || *v > hi) {
    throw UsageError(fmt::format("{} '{}': expected a whole number from {} to {}", option, text, lo, hi));
  }
  return *v;
}

inline std::vector<std::string> parse_list(std::string_view text, std::string_view option) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (item.empty()) throw UsageError(fmt::format("{} '{}': an empty item", option, text));
    if (std::find(out.begin(), out.end(), item) != out.end()) {
      throw UsageError(fmt::format("{} '{}': '{}' is given twice", option, text, item));
    }
    out.push_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace gpubench
