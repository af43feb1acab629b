#pragma once
// Axes: the named parameters a suite sweeps (m, n, k, dtype, ...), and the parser for the
// `--axis NAME=VALUES` syntax.
//
// VALUES is a comma-separated list whose items are, for integer axes,
//   1024            a single value
//   1024:8192:1024  a linear range start:stop:step (stop included when reached)
//   256:16384:x2    a geometric range start:stop:xFACTOR (integer factor >= 2)
// and, for enumerated axes, one of the names the axis accepts (dtype=bf16,fp16).
// Integers accept the binary suffixes k (1024) and M (1048576): `m=4k` is 4096.
// `@NAME` instead of a list makes an axis take the value of an earlier axis in each case
// (`n=@m` gives square GEMMs); the planner resolves it.
// Text axes take free-form words (a model description such as h4096-f11008-a32-kv8-s2048-b1-v32000)
// that the suite checks; a word is letters, digits and . _ : + - so case names stay parsable.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gpubench {

enum class AxisKind { Int, Enum, Text };

struct AxisSpec {
  std::string name;
  AxisKind kind = AxisKind::Int;
  std::string help;
  std::vector<std::string> choices;  // accepted names, for Enum axes
  std::int64_t min_value = 1;        // smallest accepted value, for Int axes
  // For Text axes: what is wrong with a word (one line), or nullopt when the suite accepts it.
  // Unset: every well-formed word is accepted.
  std::function<std::optional<std::string>(std::string_view)> check = {};
  // Largest accepted value, for Int axes (a usage error above it, naming the axis and limit).
  std::int64_t max_value = std::numeric_limits<std::int64_t>::max();
  // For Text axes: the word may be a file path, so '/' is accepted too (the case name then holds
  // the path: `video/.../input=/data/clip.mp4/cpu`, the device still last).
  bool path = false;
};

using AxisValue = std::variant<std::int64_t, std::string>;

std::string to_string(const AxisValue& v);

// Parses VALUES for `spec`; throws UsageError naming the bad item and what is accepted.
// The result is non-empty and free of duplicates, in the order given.
std::vector<AxisValue> parse_axis_values(const AxisSpec& spec, std::string_view text);

// Splits "NAME=VALUES"; throws UsageError when there is no '=' or either side is empty.
struct AxisAssignment {
  std::string name;
  std::string values;
};
AxisAssignment split_axis_assignment(std::string_view text);

// At most this many values per axis: a typo such as 1:100000000:1 is refused, not run.
inline constexpr std::size_t kMaxAxisValues = 4096;

}  // namespace gpubench
