#include "plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "errors.hpp"

namespace gpubench {
namespace {

std::vector<std::string> names_of(const std::vector<const Suite*>& suites) {
  std::vector<std::string> out;
  for (const Suite* s : suites) out.push_back(s->name());
  return out;
}

// The values of one axis for one expansion: a list, or "@other" to copy another axis's value.
struct AxisValues {
  std::string name;
  std::vector<AxisValue> values;
  int same_as = -1;  // index of an earlier axis, for "@other"
};

// Parses the value text of `spec`; "@name" refers to an earlier axis of the same kind.
AxisValues axis_values(const std::vector<AxisSpec>& axes, std::size_t index, const std::string& text) {
  const AxisSpec& spec = axes[index];
  AxisValues out{spec.name, {}, -1};
  if (!text.empty() && text.front() == '@') {
    const std::string target = text.substr(1);
    for (std::size_t i = 0; i < index; ++i) {
      if (axes[i].name == target && axes[i].kind == spec.kind) {
        out.same_as = static_cast<int>(i);
        return out;
      }
    }
    throw UsageError(fmt::format("axis {}: '{}' must name an earlier axis of the same kind", spec.name, text));
  }
  out.values = parse_axis_values(spec, text);
  return out;
}

// Calls `visit` with every combination of the axes' values, first axis outermost. The points
// are made one at a time: a preset whose product is large but mostly dropped by applies()
// (dataload's full preset: 258048 combinations a GPU, a few hundred cases) never holds them all.
template <class Visit>
void cartesian(const std::vector<AxisValues>& axes, std::size_t axis, std::vector<AxisValue>& current, Visit& visit) {
  if (axis == axes.size()) {
    Point p;
    for (std::size_t i = 0; i < axes.size(); ++i) p.set(axes[i].name, current[i]);
    visit(std::move(p));
    return;
  }
  if (axes[axis].same_as >= 0) {
    current[axis] = current[static_cast<std::size_t>(axes[axis].same_as)];
    cartesian(axes, axis + 1, current, visit);
    return;
  }
  for (const AxisValue& v : axes[axis].values) {
    current[axis] = v;
    cartesian(axes, axis + 1, current, visit);
  }
}

}  // namespace

std::string PlannedCase::name() const { return fmt::format("{}/{}/{}", suite->name(), point.label(), device.id()); }

std::vector<const Suite*> select_suites(const std::vector<const Suite*>& all, const std::vector<std::string>& names) {
  if (names.empty()) return all;
  std::vector<const Suite*> out;
  for (const std::string& n : names) {
    auto it = std::find_if(all.begin(), all.end(), [&](const Suite* s) { return s->name() == n; });
    if (it == all.end()) {
      throw UsageError(fmt::format("--suite '{}': unknown suite (available: {})", n, fmt::join(names_of(all), ", ")));
    }
    if (std::find(out.begin(), out.end(), *it) == out.end()) out.push_back(*it);
  }
  return out;
}

bool matches_filter(const std::string& name, const std::string& filter) {
  if (filter.empty() || filter == "all" || filter == ".") return true;
  bool negate = filter.front() == '-';
  std::string expr = negate ? filter.substr(1) : filter;
  try {
    bool found = std::regex_search(name, std::regex(expr, std::regex::extended));
    return negate ? !found : found;
  } catch (const std::regex_error& e) {
    throw UsageError(fmt::format("--benchmark_filter '{}': not a valid regular expression", filter));
  }
}

std::vector<PlannedCase> make_plan(const std::vector<const Suite*>& all, const PlanRequest& req,
                                   const std::vector<DeviceInfo>& devices, std::vector<NotApplicable>* not_applicable) {
  const std::vector<const Suite*> suites = select_suites(all, req.suites);

  // Validate every override against the selected suites before expanding anything.
  std::vector<AxisAssignment> overrides;
  for (const std::string& text : req.axis_overrides) {
    AxisAssignment a = split_axis_assignment(text);
    bool known = false;
    for (const Suite* s : suites) {
      const std::vector<AxisSpec> axes = s->axes();
      for (std::size_t i = 0; i < axes.size(); ++i) {
        if (axes[i].name != a.name) continue;
        (void)axis_values(axes, i, a.values);  // throws on bad values
        known = true;
      }
    }
    if (!known) {
      std::vector<std::string> accepted;
      for (const Suite* s : suites) {
        for (const AxisSpec& spec : s->axes()) accepted.push_back(fmt::format("{}.{}", s->name(), spec.name));
      }
      throw UsageError(fmt::format("--axis '{}': unknown axis '{}' (axes: {})", text, a.name, fmt::join(accepted, ", ")));
    }
    overrides.push_back(std::move(a));
  }

  std::vector<PlannedCase> plan;
  std::size_t combinations = 0;  // expanded over every suite and device so far
  for (const Suite* suite : suites) {
    const std::vector<Preset> presets = suite->presets();
    auto preset = std::find_if(presets.begin(), presets.end(), [&](const Preset& p) { return p.name == req.preset; });
    if (preset == presets.end()) {
      std::vector<std::string> names;
      for (const Preset& p : presets) names.push_back(p.name);
      throw UsageError(fmt::format("--preset '{}': suite {} has no such preset (available: {})", req.preset,
                                   suite->name(), fmt::join(names, ", ")));
    }
    const std::vector<AxisSpec> axes = suite->axes();
    for (const DeviceInfo& device : devices) {
      if (std::optional<std::string> why = suite->not_applicable(device)) {
        if (not_applicable != nullptr) not_applicable->push_back({suite, device, std::move(*why)});
        continue;
      }
      const auto& preset_values = device.is_cuda() ? preset->cuda : preset->cpu;
      std::vector<AxisValues> values;
      for (std::size_t i = 0; i < axes.size(); ++i) {
        const AxisSpec& spec = axes[i];
        std::string text;
        for (const auto& [name, v] : preset_values) {
          if (name == spec.name) text = v;
        }
        for (const AxisAssignment& a : overrides) {
          if (a.name == spec.name) text = a.values;  // the last --axis for a name wins
        }
        if (text.empty()) {
          throw std::logic_error(fmt::format("suite {} preset {} gives no values for axis {}", suite->name(),
                                             preset->name, spec.name));
        }
        values.push_back(axis_values(axes, i, text));
      }
      // Count before expanding: a product of long axes would exhaust time (found by
      // tests/fuzz/fuzz_cli). The combinations of every suite and device together are at most
      // kMaxExpandedCombinations (each is resolved and asked applies(), one at a time); the
      // cases that remain are at most kMaxPlannedCases. Capping the combinations themselves at
      // kMaxPlannedCases refused the standard and full presets on GPUs (memory's peer axis and
      // dataload's stage-specific axes, which applies() mostly drops).
      std::size_t count = 1;
      for (const AxisValues& v : values) {
        if (v.same_as >= 0) continue;
        count = v.values.size() > kMaxExpandedCombinations / count ? kMaxExpandedCombinations + 1 : count * v.values.size();
      }
      combinations = count > kMaxExpandedCombinations - combinations ? kMaxExpandedCombinations + 1 : combinations + count;
      if (combinations > kMaxExpandedCombinations) {
        throw UsageError(fmt::format("the axes give more than {} combinations (at suite {}, device {}): narrow --axis, "
                                     "--suite or --device",
                                     kMaxExpandedCombinations, suite->name(), device.id()));
      }
      std::vector<AxisValue> scratch(values.size());
      std::set<std::string> seen;  // labels after resolve(): derived axes can make points equal
      std::vector<std::string> given;  // the axes of this suite the user set with --axis
      for (const AxisAssignment& a : overrides) {
        if (std::any_of(axes.begin(), axes.end(), [&](const AxisSpec& s) { return s.name == a.name; })) given.push_back(a.name);
      }
      auto visit = [&](Point&& expanded) {
        expanded.set_given(given);
        Point p = suite->resolve(device, std::move(expanded));
        if (!suite->applies(device, p)) return;
        if (!seen.insert(p.label()).second) return;
        suite->check_sizes(device, p);  // a size too large for any machine is a usage error
        PlannedCase c{suite, device, std::move(p), std::nullopt};
        if (!matches_filter(c.name(), req.filter)) return;
        c.skip_reason = suite->unsupported(device, c.point);
        plan.push_back(std::move(c));
        if (plan.size() > kMaxPlannedCases) {
          throw UsageError(fmt::format("the plan has more than {} cases (at suite {}, device {}): narrow --axis, "
                                       "--suite or --device",
                                       kMaxPlannedCases, suite->name(), device.id()));
        }
      };
      cartesian(values, 0, scratch, visit);
    }
  }
  return plan;
}

}  // namespace gpubench
