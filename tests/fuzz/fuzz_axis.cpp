// libFuzzer target: the --axis syntax (bench/core/axis.hpp).
//
// Input: one --axis argument, "NAME=VALUES". split_axis_assignment splits it; VALUES is parsed
// with parse_axis_values against the real suites' axis of that name (every suite that has
// one), or against a generic integer axis accepting 0 and up when no suite has the name.
// UsageError is the expected rejection; any other exception, a crash, a hang or a sanitizer
// report is a finding. Accepted values are checked against the documented promises:
// non-empty, no duplicates, at most kMaxAxisValues, integers >= the axis minimum, names
// among the axis's choices, text words free of separators.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "bench/core/axis.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/all_suites.hpp"

namespace {

using namespace gpubench;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_axis: broken promise: %s\n", what);
  std::abort();
}

void check(const AxisSpec& spec, std::string_view values) {
  std::vector<AxisValue> parsed;
  try {
    parsed = parse_axis_values(spec, values);
  } catch (const UsageError&) {
    return;
  }
  require(!parsed.empty(), "an accepted value list is non-empty");
  require(parsed.size() <= kMaxAxisValues, "at most kMaxAxisValues values");
  for (std::size_t i = 0; i < parsed.size(); ++i) {
    require(std::find(parsed.begin() + static_cast<std::ptrdiff_t>(i) + 1, parsed.end(), parsed[i]) == parsed.end(),
            "no duplicates");
    if (spec.kind == AxisKind::Int) {
      const auto* v = std::get_if<std::int64_t>(&parsed[i]);
      require(v != nullptr, "integer axes give integers");
      require(*v >= spec.min_value, "integers are >= the axis minimum");
    } else if (spec.kind == AxisKind::Enum) {
      const auto* s = std::get_if<std::string>(&parsed[i]);
      require(s != nullptr, "enumerated axes give names");
      require(std::find(spec.choices.begin(), spec.choices.end(), *s) != spec.choices.end(),
              "names are among the axis's choices");
    } else {
      const auto* s = std::get_if<std::string>(&parsed[i]);
      require(s != nullptr && !s->empty(), "text axes give non-empty words");
      require(s->find_first_of("/=, ") == std::string::npos, "text words hold no separators");
    }
    (void)to_string(parsed[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  AxisAssignment a;
  try {
    a = split_axis_assignment(text);
  } catch (const UsageError&) {
    return 0;
  }
  require(!a.name.empty() && !a.values.empty(), "split gives a name and values");
  if (a.values.front() == '@') return 0;  // "@OTHER" is resolved by the planner (fuzz_cli)
  bool known = false;
  for (const Suite* suite : suites::all()) {
    for (const AxisSpec& spec : suite->axes()) {
      if (spec.name != a.name) continue;
      known = true;
      check(spec, a.values);
    }
  }
  if (!known) check(AxisSpec{a.name, AxisKind::Int, "fuzz", {}, 0}, a.values);
  return 0;
}
