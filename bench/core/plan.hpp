#pragma once
// Planning: selected suites x selected devices x the cartesian product of axis values
// (the preset's, with --axis overrides) -> the ordered list of cases a run executes.
// Each point goes through Suite::resolve (derived axes) and Suite::applies; a point equal to
// an earlier one after resolve is planned once.
#include <optional>
#include <string>
#include <vector>

#include "axis.hpp"
#include "device.hpp"
#include "suite.hpp"

namespace gpubench {

struct PlanRequest {
  std::vector<std::string> suites;         // empty: every suite
  std::string preset = "quick";
  std::vector<std::string> axis_overrides; // "NAME=VALUES" as given on the command line
  std::string filter;                      // Google Benchmark style regex ('-' prefix negates)
};

struct PlannedCase {
  const Suite* suite = nullptr;
  DeviceInfo device;
  Point point;
  std::optional<std::string> skip_reason;  // set when the suite cannot run this point here
  // Google Benchmark name: "<suite>/<axis=value>/.../<device id>". The device id, not its
  // model, is in the name so compare.py pairs the same case across machines.
  std::string name() const;
};

// A suite that cannot run on a device in this launch (Suite::not_applicable): planned out as
// a whole, shown as one line and recorded once in the results context.
struct NotApplicable {
  const Suite* suite = nullptr;
  DeviceInfo device;
  std::string reason;
};

// At most this many cases per run (all suites and devices together, after Suite::applies and
// before --benchmark_filter).
inline constexpr std::size_t kMaxPlannedCases = 65536;
// At most this many axis combinations per run (all suites and devices together), counted before
// any is made: `-a m=1:4096:1 -a n=1:4096:1` is refused, not expanded. Each is made, resolved
// and asked applies() one at a time (about a microsecond each), so this bounds the planning
// time, not its memory; dataload's full preset on 8 GPUs makes about 2.1 million.
inline constexpr std::size_t kMaxExpandedCombinations = std::size_t{1} << 22;

// Throws UsageError for an unknown suite, preset or axis, malformed axis values, or a plan of
// more than kMaxPlannedCases combinations.
// Suites not applicable on a device contribute no case; they are appended to `not_applicable`
// when given.
std::vector<PlannedCase> make_plan(const std::vector<const Suite*>& all_suites, const PlanRequest& request,
                                   const std::vector<DeviceInfo>& devices,
                                   std::vector<NotApplicable>* not_applicable = nullptr);

// The suites named in `names` (all when empty), in registration order; UsageError if unknown.
std::vector<const Suite*> select_suites(const std::vector<const Suite*>& all_suites,
                                        const std::vector<std::string>& names);

// True when `name` passes a Google Benchmark --benchmark_filter expression.
bool matches_filter(const std::string& name, const std::string& filter);

}  // namespace gpubench
