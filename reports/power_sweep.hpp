#pragma once
// The report's power-sweep section (gpubench.soak.sweep, written by `gpubench soak
// --power-limits` or `--lock-clocks`; docs/power-and-fleet.md): per setting the limit in force,
// throughput, board power, perf per watt and both relative to the first setting, then the
// efficiency curve (throughput and perf per watt against the setting) as charts.
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// Appends one subsection per file holding a sweep; nothing otherwise.
void power_sweep_section(Document& doc, const std::vector<ResultsFile>& files);

}  // namespace gpubench::reports
