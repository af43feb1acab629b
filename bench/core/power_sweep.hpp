#pragma once
// A power-limit or clock sweep: for each step, apply it (PowerControl), run the load for a fixed
// time (a phase the caller runs: a soak phase), and record throughput, power and perf per watt.
// The efficiency curve is those points in order; the results file keeps them under
// gpubench.soak.sweep (docs/results-format.md) and the report draws them.
//
// A refused setting (no permission, not supported) is said in one line, e.g.
//   power limit: off: NVML_ERROR_NO_PERMISSION, run as root or set by an administrator
// and the sweep then measures one phase at the current settings instead of repeating it per
// step. A step outside the board's range is said and skipped; the others still run.
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/power_control.hpp"

namespace gpubench {

// What one phase of load measured, over every device under load.
struct PhaseFigures {
  double throughput = 0;  // work per second, summed over the devices under load
  std::string unit;       // "TFLOP/s", "GB/s", ...
  std::optional<double> power_w;  // mean board power over the phase, summed over the GPUs; none without telemetry
  double seconds = 0;     // the phase's length
  bool verified = true;   // every check of the phase's answers passed
};

struct SweepPoint {
  std::string setting;  // "90%", "300 W", "1410 MHz", or "current" after a refusal
  std::string status;   // "on" or "off: <why>"
  std::vector<std::optional<double>> limit_w;  // per GPU, the limit in force
  std::optional<unsigned> locked_mhz;
  PhaseFigures figures;
  std::optional<double> perf_per_watt() const {
    if (!figures.power_w || !(*figures.power_w > 0)) return std::nullopt;
    return figures.throughput / *figures.power_w;
  }
};

// Runs the sweep; `say` gets the one-line notices. The caller keeps `control` alive around it
// (its destructor restores). An exception from `phase` propagates after nothing more is applied
// (control's destructor then restores).
std::vector<SweepPoint> run_sweep(PowerControl& control, const std::vector<PowerStep>& steps,
                                  const std::function<PhaseFigures(const SweepPoint&)>& phase, std::ostream& say);

// {"kind": "power_limit"|"clocks", "points": [{"setting", "status", "limit_w": [...], "locked_mhz",
//  "throughput", "unit", "power_w", "perf_per_watt", "seconds", "verified", "relative_throughput",
//  "relative_perf_per_watt"}], "best_perf_per_watt": "<setting>"}. Relative figures are to the
// first point's; fields that were not measured are absent.
nlohmann::ordered_json sweep_json(const std::vector<PowerStep>& steps, const std::vector<SweepPoint>& points);

}  // namespace gpubench
