// The report's data-parallel section and finding (reports/scaling_section.hpp).
#include "reports/scaling_section.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "reports/cases.hpp"
#include "reports/scaling.hpp"

namespace gpubench::reports {

namespace {

using scaling::Dp;
using scaling::TrainCase;

constexpr double kEfficiencyFloor = 0.8;  // the finding's threshold
constexpr int kLargestProjected = 4096;

bool data_parallel(const TrainCase& c) { return c.dp != "none" && c.ranks > 1 && c.measured_step_s.has_value(); }

// Where the projection stands: the measured data-parallel cases and, when the files allow
// one, the projection over powers of two and the measured rank counts.
struct View {
  std::vector<TrainCase> cases;  // data-parallel ones only
  std::optional<scaling::ScalingResult> projection;
  std::string why_not;  // when there is no projection
};

View make_view(const std::vector<ResultsFile>& files) {
  View v;
  for (TrainCase& c : scaling::train_cases(files)) {
    if (data_parallel(c)) v.cases.push_back(std::move(c));
  }
  if (v.cases.empty()) return v;
  scaling::ScalingOptions o;
  std::set<int> gpus;
  for (int n = 1; n <= kLargestProjected; n *= 2) gpus.insert(n);
  for (const TrainCase& c : v.cases) gpus.insert(c.ranks);
  o.gpus.assign(gpus.begin(), gpus.end());
  try {
    v.projection = scaling::project(files, o);
  } catch (const UsageError& e) {
    v.why_not = e.what();
  }
  return v;
}

std::string seconds(std::optional<double> s) {
  if (!s) return {};
  return *s > 0 ? format_duration(*s) : "0";
}

std::string percent(std::optional<double> v) { return v ? decimal(*v, 1) + "%" : std::string(); }

}  // namespace

void scaling_section(Document& doc, const std::vector<ResultsFile>& files) {
  const View v = make_view(files);
  if (v.cases.empty()) return;
  doc.heading("Data-parallel scaling");
  doc.paragraph(
      "Measured data-parallel train steps: step time of the slowest rank, the compute-only step measured in the same "
      "run, the communication backward did not hide (exposed) and its share of the step, and scaling efficiency "
      "(compute-only / step).");
  Table t;
  for (const char* c : {"device", "case", "dp"}) t.add_column(c);
  for (const char* c : {"ranks", "step", "compute-only", "exposed comm", "exposed share", "overlap", "efficiency"}) {
    t.add_column(c, true);
  }
  for (const TrainCase& c : v.cases) {
    const ResultEntry& e = *c.entry;
    const auto compute = number_at(e.metrics, {"compute_only_s"});
    const auto overlap = number_at(e.metrics, {"overlap_pct"});
    std::optional<double> share;
    if (c.measured_exposed_s && *c.measured_step_s > 0) share = 100 * *c.measured_exposed_s / *c.measured_step_s;
    t.rows.push_back({e.device_name.empty() ? e.device : e.device_name, c.label, c.dp, std::to_string(c.ranks),
                      seconds(c.measured_step_s), seconds(compute), seconds(c.measured_exposed_s), percent(share),
                      percent(overlap),
                      c.measured_efficiency ? decimal(100 * *c.measured_efficiency, 1) + "%" : std::string()});
  }
  doc.table(std::move(t));
  if (!v.projection) {
    doc.paragraph("No projection to more GPUs: " + v.why_not + ".");
    return;
  }
  const scaling::ScalingResult& r = *v.projection;
  doc.paragraph("Projected with the model of `gpubench scaling` (docs/scaling.md; network: " + r.network +
                "). Charts: projected throughput (line, log scale), measured throughput (dots), projected efficiency "
                "(dashed, right axis).");
  // One chart per case, device and mode, over the projected GPU counts.
  std::size_t i = 0;
  while (i < r.projections.size()) {
    const scaling::Projection& first = r.projections[i];
    LineChart chart;
    chart.title = fmt::format("{} {} on {}", first.label, scaling::dp_name(first.dp), first.device);
    chart.unit = first.work_unit.empty() ? "steps/s" : first.work_unit + "/s";
    chart.values_label = "projected";
    chart.secondary_unit = "efficiency %";
    chart.log_y = true;  // 1 to 4096 GPUs: a line that rises by decades
    LineChart::Series measured{"measured", {}, false, true};
    LineChart::Series efficiency{"projected efficiency", {}, true, false};
    for (; i < r.projections.size() && r.projections[i].label == first.label &&
           r.projections[i].device == first.device && r.projections[i].dp == first.dp;
         ++i) {
      const scaling::Projection& p = r.projections[i];
      chart.x_labels.push_back(std::to_string(p.step.gpus));
      chart.values.push_back(p.work_per_s > 0 ? p.work_per_s : 1 / p.step.step_s);
      efficiency.values.push_back(100 * p.step.efficiency);
      double point = std::numeric_limits<double>::quiet_NaN();
      for (const TrainCase& c : v.cases) {
        if (c.label != p.label || c.ranks != p.step.gpus || c.dp != scaling::dp_name(p.dp)) continue;
        if (c.work_per_step > 0 && p.work_per_s > 0) point = c.work_per_step * c.ranks / *c.measured_step_s;
        else if (p.work_per_s <= 0) point = 1 / *c.measured_step_s;
      }
      measured.values.push_back(point);
    }
    chart.series = {std::move(measured), std::move(efficiency)};
    doc.chart(std::move(chart));
  }
  if (!r.validation.empty()) {
    Table val;
    for (const char* c : {"case", "dp"}) val.add_column(c);
    for (const char* c : {"ranks", "measured step", "projected step", "error"}) val.add_column(c, true);
    for (const auto& x : r.validation) {
      val.rows.push_back({x.label, scaling::dp_name(x.dp), std::to_string(x.ranks), seconds(x.measured_s),
                          seconds(x.projected_s), percent_change(x.error_pct)});
    }
    doc.paragraph("The projection at each measured rank count beside the measurement:");
    doc.table(std::move(val));
  }
}

void scaling_finding(Document& doc, const std::vector<ResultsFile>& files, bool& heading) {
  const View v = make_view(files);
  if (!v.projection || v.projection->projections.empty()) return;
  std::vector<std::string> items;
  const auto& ps = v.projection->projections;
  std::size_t i = 0;
  while (i < ps.size()) {
    const scaling::Projection& first = ps[i];
    std::optional<std::size_t> below;
    std::size_t last = i;
    for (; i < ps.size() && ps[i].label == first.label && ps[i].device == first.device && ps[i].dp == first.dp; ++i) {
      if (!below && ps[i].step.efficiency < kEfficiencyFloor) below = i;
      last = i;
    }
    const std::string what = fmt::format("{} ({}, {})", first.label, scaling::dp_name(first.dp), first.device);
    items.push_back(below ? fmt::format("{}: projected scaling efficiency drops below 80% at {} GPUs ({}%; {} exposed "
                                        "communication per step).",
                                        what, ps[*below].step.gpus, decimal(100 * ps[*below].step.efficiency, 1),
                                        format_duration(ps[*below].step.exposed_s))
                          : fmt::format("{}: projected scaling efficiency stays at or above 80% up to {} GPUs ({}%).",
                                        what, ps[last].step.gpus, decimal(100 * ps[last].step.efficiency, 1)));
  }
  if (!heading) doc.heading("Findings"), heading = true;
  doc.heading("Data-parallel scaling", 3);
  doc.paragraph(v.projection->gpus_per_node > 0
                    ? fmt::format("Projection with {} GPUs per node (docs/scaling.md).", v.projection->gpus_per_node)
                    : "Projection on the measured network alone (no inter-node curve: every GPU assumed on it; "
                      "`gpubench scaling --gpus-per-node G --inter-node-gbps X` models nodes; docs/scaling.md).");
  doc.list(std::move(items));
}

}  // namespace gpubench::reports
