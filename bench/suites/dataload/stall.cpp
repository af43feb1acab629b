#include "bench/suites/dataload/stall.hpp"

#include <algorithm>

namespace gpubench::suites::dataload {

StallStats stall_stats(const std::vector<StepRecord>& steps) {
  StallStats s;
  s.steps = static_cast<std::int64_t>(steps.size());
  for (const StepRecord& r : steps) {
    s.total_s += r.step_s;
    s.wait_s += r.wait_s;
  }
  if (s.steps == 0 || s.total_s <= 0) return s;
  s.stall_share = s.wait_s / s.total_s;
  s.mean_step_s = s.total_s / static_cast<double>(s.steps);
  s.mean_wait_s = s.wait_s / static_cast<double>(s.steps);
  for (const StepRecord& r : steps) s.stalled_steps += r.wait_s > 0.01 * s.mean_step_s ? 1 : 0;
  return s;
}

DsSplit ds_analyzer_split(double synthetic_step_s, double cached_step_s, double cold_step_s) {
  DsSplit d{synthetic_step_s, cached_step_s, cold_step_s};
  d.prep_stall_s = std::max(0.0, cached_step_s - synthetic_step_s);
  d.fetch_stall_s = std::max(0.0, cold_step_s - cached_step_s);
  if (cold_step_s > 0) {
    d.prep_share = std::min(1.0, d.prep_stall_s / cold_step_s);
    d.fetch_share = std::min(1.0 - d.prep_share, d.fetch_stall_s / cold_step_s);
    d.compute_share = 1.0 - d.prep_share - d.fetch_share;
  }
  return d;
}

nlohmann::ordered_json queue_depth_summary(const std::vector<StepRecord>& steps, std::size_t points) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (steps.empty()) return j;
  std::vector<int> depths;
  double sum = 0;
  std::size_t empty = 0;
  for (const StepRecord& r : steps) {
    depths.push_back(r.depth);
    sum += r.depth;
    empty += r.depth == 0 ? 1 : 0;
  }
  std::vector<int> sorted = depths;
  std::sort(sorted.begin(), sorted.end());
  j["mean"] = sum / static_cast<double>(steps.size());
  j["min"] = sorted.front();
  j["max"] = sorted.back();
  j["median"] = sorted[sorted.size() / 2];
  j["empty_share"] = static_cast<double>(empty) / static_cast<double>(steps.size());
  const std::size_t groups = std::max<std::size_t>(1, std::min(points, steps.size()));
  nlohmann::ordered_json series = nlohmann::ordered_json::array();
  const double t0 = steps.front().start_s;
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t a = g * steps.size() / groups, b = (g + 1) * steps.size() / groups;
    double d = 0;
    for (std::size_t i = a; i < b; ++i) d += steps[i].depth;
    series.push_back({steps[a].start_s - t0, d / static_cast<double>(b - a)});
  }
  j["series"] = std::move(series);
  return j;
}

}  // namespace gpubench::suites::dataload
