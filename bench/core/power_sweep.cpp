#include "power_sweep.hpp"

#include <fmt/format.h>

namespace gpubench {

std::vector<SweepPoint> run_sweep(PowerControl& control, const std::vector<PowerStep>& steps,
                                  const std::function<PhaseFigures(const SweepPoint&)>& phase, std::ostream& say) {
  std::vector<SweepPoint> points;
  for (const PowerStep& step : steps) {
    PowerControl::Applied a = control.apply(step);
    SweepPoint p;
    p.setting = step.label();
    p.status = a.status;
    p.limit_w = a.limit_w;
    p.locked_mhz = a.locked_mhz;
    if (!a.on()) {
      say << PowerControl::status_line(step, a.status) << "\n";
      // A step outside the board's range: only that step is off.
      if (a.status.find("outside the board's range") != std::string::npos) continue;
      // Refused: one phase at the settings in force, then the sweep is over.
      p.setting = "current";
      p.figures = phase(p);
      points.push_back(std::move(p));
      break;
    }
    p.figures = phase(p);
    points.push_back(std::move(p));
  }
  return points;
}

nlohmann::ordered_json sweep_json(const std::vector<PowerStep>& steps, const std::vector<SweepPoint>& points) {
  nlohmann::ordered_json j;
  j["kind"] = !steps.empty() && steps.front().kind == PowerStep::Kind::ClockMhz ? "clocks" : "power_limit";
  j["points"] = nlohmann::ordered_json::array();
  std::optional<double> best;
  std::string best_setting;
  for (const SweepPoint& p : points) {
    nlohmann::ordered_json q{{"setting", p.setting}, {"status", p.status}};
    nlohmann::ordered_json limits = nlohmann::ordered_json::array();
    for (const auto& w : p.limit_w) limits.push_back(w ? nlohmann::ordered_json(*w) : nlohmann::ordered_json(nullptr));
    q["limit_w"] = std::move(limits);
    if (p.locked_mhz) q["locked_mhz"] = *p.locked_mhz;
    q["throughput"] = p.figures.throughput;
    q["unit"] = p.figures.unit;
    if (p.figures.power_w) q["power_w"] = *p.figures.power_w;
    if (const auto ppw = p.perf_per_watt()) {
      q["perf_per_watt"] = *ppw;
      if (!best || *ppw > *best) best = *ppw, best_setting = p.setting;
    }
    q["seconds"] = p.figures.seconds;
    q["verified"] = p.figures.verified;
    if (!points.empty() && points.front().figures.throughput > 0) {
      q["relative_throughput"] = p.figures.throughput / points.front().figures.throughput;
      const auto first = points.front().perf_per_watt(), mine = p.perf_per_watt();
      if (first && mine && *first > 0) q["relative_perf_per_watt"] = *mine / *first;
    }
    j["points"].push_back(std::move(q));
  }
  if (best) j["best_perf_per_watt"] = best_setting;
  return j;
}

}  // namespace gpubench
