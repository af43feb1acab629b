#pragma once
// Markdown report over one or more results files.
#include <string>
#include <vector>

#include "results_reader.hpp"
#include "spec_sheet.hpp"

namespace gpubench::reports {

// One section per suite with a table: device, axis values, time per run, rate, % of datasheet
// peak, noise, samples; then skipped/failed cases with their reasons; and a short environment
// table per results file (host, CPU, devices, driver/runtime, library versions).
std::string render_markdown(const std::vector<ResultsFile>& files, const SpecSheet& specs);

}  // namespace gpubench::reports
