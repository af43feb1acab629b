#pragma once
// The report's soak section (gpubench.soak, written by `gpubench soak`; docs/soak.md): the
// verdict and each device's first/last window, then line charts over time: throughput per load
// (a series per device), SM clock, power, GPU and memory temperature, and on the CPU this
// process's CPU use. Markdown gets the tables and a line that the HTML has the charts.
#include <string>
#include <utility>
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// OpenMetrics gauges of a soak (reports/openmetrics.cpp adds host and file labels): the verdict
// (gpubench_soak_passed, gpubench_soak_failed_rules) and each device's last sample
// (gpubench_soak_rate with load and unit labels, temperatures, power, clocks, ECC, PCIe replays).
struct SoakGauge {
  std::string name, help;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};
std::vector<SoakGauge> soak_gauges(const ResultsFile& file);

// Appends the section when any file holds a soak; nothing otherwise.
void soak_section(Document& doc, const std::vector<ResultsFile>& files);

}  // namespace gpubench::reports
