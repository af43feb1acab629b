// gpubench list: the cases a run would execute, without running them; --axes describes the
// suites, their axes and presets instead.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <sstream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/dry_run.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/all_suites.hpp"

namespace gpubench::app {
namespace {

void describe_suites(const std::vector<const Suite*>& suites) {
  for (const Suite* s : suites) {
    fmt::print("{}: {}\n  axes:\n", s->name(), s->description());
    for (const AxisSpec& a : s->axes()) {
      if (a.kind == AxisKind::Enum) {
        fmt::print("    {:<8} {} (one of: {})\n", a.name, a.help, fmt::join(a.choices, ", "));
      } else if (a.kind == AxisKind::Text) {
        fmt::print("    {:<8} {} (text)\n", a.name, a.help);
      } else {
        fmt::print("    {:<8} {} (integer >= {})\n", a.name, a.help, a.min_value);
      }
    }
    fmt::print("  presets:\n");
    for (const Preset& p : s->presets()) {
      auto show = [](const std::vector<std::pair<std::string, std::string>>& v) {
        std::vector<std::string> parts;
        for (const auto& [k, x] : v) parts.push_back(k + "=" + x);
        return fmt::format("{}", fmt::join(parts, " "));
      };
      fmt::print("    {:<9} cuda: {}\n    {:<9} cpu:  {}\n", p.name, show(p.cuda), "", show(p.cpu));
    }
  }
}

}  // namespace

ListOptions parse_list_options(const std::vector<std::string>& args) {
  ListOptions o;
  SelectionOptions& sel = o.selection;
  std::string& filter = o.filter;
  po::options_description desc(
      "Usage: gpubench list [options]\n\nPrints the cases `gpubench run` would execute with the same options "
      "(name, then axis values; skipped cases with the reason; suites that cannot run in this launch as one line on "
      "stderr), without running them.\n\nOptions");
  add_selection_options(desc, sel);
  desc.add_options()
      ("benchmark_filter", po::value(&filter), "only cases whose name matches REGEX ('-' negates), as in run")
      ("axes", "describe every suite: its axes and presets")
      ("help,h", "show this help");
  po::variables_map vm = parse_or_throw(args, desc);
  if (take_help(vm, desc, o.help, o.help_text)) return o;
  o.axes = vm.count("axes") > 0;
  return o;
}

int cmd_list(const std::vector<std::string>& args) {
  const ListOptions o = parse_list_options(args);
  if (o.help) return print_help(o.help_text);
  const SelectionOptions& sel = o.selection;
  const std::string& filter = o.filter;
  const PlanRequest request = to_plan_request(sel, filter);
  if (o.axes) {
    describe_suites(select_suites(suites::all(), request.suites));
    return 0;
  }
  const DeviceInventory inventory = inventory_for(sel, reports::SpecSheet::builtin());
  const DeviceSelection selection = select_devices(sel.device, inventory);
  if (!selection.notice.empty()) fmt::print(stderr, "{}\n", selection.notice);
  std::vector<NotApplicable> not_applicable;
  const std::vector<PlannedCase> plan = make_plan(suites::all(), request, selection.devices, &not_applicable);
  for (const NotApplicable& n : not_applicable) {
    fmt::print(stderr, "{} on {}: not run here: {}\n", n.suite->name(), n.device.id(), n.reason);
  }
  print_plan(plan);
  fmt::print(stderr, "{} case(s)\n", plan.size());
  return 0;
}

}  // namespace gpubench::app
