#include "axis.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "errors.hpp"

namespace gpubench {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? s.npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::int64_t parse_int(const AxisSpec& spec, std::string_view item, std::string_view text) {
  std::int64_t multiplier = 1;
  if (!text.empty() && (text.back() == 'k' || text.back() == 'K')) {
    multiplier = 1024;
    text.remove_suffix(1);
  } else if (!text.empty() && text.back() == 'M') {
    multiplier = 1024 * 1024;
    text.remove_suffix(1);
  } else if (!text.empty() && text.back() == 'G') {
    multiplier = std::int64_t{1} << 30;  // the collectives' standard preset sweeps 8:1G:x2
    text.remove_suffix(1);
  }
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    throw UsageError(fmt::format(
        "axis {}: '{}' is not an integer (expected e.g. 1024, 4k, 16M, 1G, 1024:8192:1024 or 256:16384:x2)",
        spec.name, item));
  }
  if (v > std::numeric_limits<std::int64_t>::max() / multiplier ||
      v < std::numeric_limits<std::int64_t>::min() / multiplier) {
    throw UsageError(fmt::format("axis {}: '{}' is out of range", spec.name, item));
  }
  return v * multiplier;
}

void check_min(const AxisSpec& spec, std::string_view item, std::int64_t v) {
  if (v < spec.min_value) {
    throw UsageError(fmt::format("axis {}: '{}' is below the smallest accepted value {}", spec.name,
                                 item, spec.min_value));
  }
  if (v > spec.max_value) {
    throw UsageError(fmt::format("axis {}: '{}' is above the largest accepted value {}", spec.name, item,
                                 spec.max_value));
  }
}

void push_unique(std::vector<AxisValue>& out, AxisValue v, const AxisSpec& spec) {
  if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(std::move(v));
  if (out.size() > kMaxAxisValues) {
    throw UsageError(fmt::format("axis {}: more than {} values", spec.name, kMaxAxisValues));
  }
}

void parse_range(const AxisSpec& spec, std::string_view item, std::vector<AxisValue>& out) {
  auto parts = split(item, ':');
  if (parts.size() != 3) {
    throw UsageError(fmt::format(
        "axis {}: range '{}' must be start:stop:step or start:stop:xFACTOR", spec.name, item));
  }
  const std::int64_t start = parse_int(spec, item, trim(parts[0]));
  const std::int64_t stop = parse_int(spec, item, trim(parts[1]));
  check_min(spec, item, start);
  check_min(spec, item, stop);
  if (stop < start) {
    throw UsageError(fmt::format("axis {}: range '{}' has stop < start", spec.name, item));
  }
  std::string_view step = trim(parts[2]);
  if (!step.empty() && step.front() == 'x') {
    const std::int64_t factor = parse_int(spec, item, step.substr(1));
    if (factor < 2) {
      throw UsageError(
          fmt::format("axis {}: range '{}' needs a geometric factor of at least 2", spec.name, item));
    }
    if (start < 1) {
      throw UsageError(
          fmt::format("axis {}: geometric range '{}' must start at 1 or more", spec.name, item));
    }
    for (std::int64_t v = start; v <= stop; v *= factor) {
      push_unique(out, v, spec);
      if (v > stop / factor) break;  // next step would pass stop (or overflow)
    }
  } else {
    const std::int64_t inc = parse_int(spec, item, step);
    if (inc < 1) {
      throw UsageError(fmt::format("axis {}: range '{}' needs a step of at least 1", spec.name, item));
    }
    // In unsigned arithmetic: stop - start, and start + i * inc past the last value, can
    // exceed the int64 range (e.g. 9223372036854775800:9223372036854775807:5).
    const std::uint64_t span = static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start);
    const std::uint64_t last = span / static_cast<std::uint64_t>(inc);
    if (last >= kMaxAxisValues) {
      throw UsageError(fmt::format("axis {}: range '{}' has more than {} values", spec.name, item,
                                   kMaxAxisValues));
    }
    for (std::uint64_t i = 0; i <= last; ++i) {
      push_unique(out, static_cast<std::int64_t>(static_cast<std::uint64_t>(start) + i * static_cast<std::uint64_t>(inc)),
                  spec);
    }
  }
}

// A Text word: the characters allowed in case names (not '/', '=', ',', spaces; '/' in a path
// axis), then the suite's own check.
void check_text(const AxisSpec& spec, std::string_view item) {
  for (char c : item) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == ':' || c == '+' || c == '-' || (spec.path && c == '/');
    if (!ok) {
      throw UsageError(fmt::format("axis {}: '{}' may hold only letters, digits and . _ : + -{}", spec.name, item,
                                   spec.path ? " /" : ""));
    }
  }
  if (spec.check) {
    if (std::optional<std::string> problem = spec.check(item)) {
      throw UsageError(fmt::format("axis {}: '{}': {}", spec.name, item, *problem));
    }
  }
}

}  // namespace

std::string to_string(const AxisValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return std::get<std::string>(v);
}

std::vector<AxisValue> parse_axis_values(const AxisSpec& spec, std::string_view text) {
  if (trim(text).empty()) {
    throw UsageError(fmt::format("axis {}: empty value list", spec.name));
  }
  std::vector<AxisValue> out;
  for (std::string_view raw : split(text, ',')) {
    std::string_view item = trim(raw);
    if (item.empty()) {
      throw UsageError(fmt::format("axis {}: empty item in '{}'", spec.name, text));
    }
    if (spec.kind == AxisKind::Enum) {
      if (std::find(spec.choices.begin(), spec.choices.end(), item) == spec.choices.end()) {
        throw UsageError(fmt::format("axis {}: unknown value '{}' (accepted: {})", spec.name, item,
                                     fmt::join(spec.choices, ", ")));
      }
      push_unique(out, std::string(item), spec);
    } else if (spec.kind == AxisKind::Text) {
      check_text(spec, item);
      push_unique(out, std::string(item), spec);
    } else if (item.find(':') != std::string_view::npos) {
      parse_range(spec, item, out);
    } else {
      const std::int64_t v = parse_int(spec, item, item);
      check_min(spec, item, v);
      push_unique(out, v, spec);
    }
  }
  return out;
}

AxisAssignment split_axis_assignment(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) {
    throw UsageError(fmt::format("--axis '{}': expected NAME=VALUES, e.g. m=1024,4096", text));
  }
  AxisAssignment a{std::string(trim(text.substr(0, eq))), std::string(trim(text.substr(eq + 1)))};
  if (a.name.empty()) throw UsageError(fmt::format("--axis '{}': missing axis name", text));
  if (a.values.empty()) {
    throw UsageError(fmt::format("--axis '{}': empty value list for axis {}", text, a.name));
  }
  return a;
}

}  // namespace gpubench
