#pragma once
// The dataload variant of the "Tuning report" section (reports/tuning.cpp calls it for a
// gpubench.tuning whose target is "dataload", written by `gpubench tune dataload`): the
// consumer and target it was tuned for, the evidence table (recommended against default from
// the final measurements: samples/s, data stall and its split into preparation and fetch,
// noise, cores), the chart of stall against workers, and the search log.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/document.hpp"

namespace gpubench::reports {

void dataload_tuning(Document& doc, const nlohmann::json& tuning, const std::vector<std::string>& knobs);

// The stall frontier: indices of points in increasing workers, each with a lower stall than
// every point before it (fewer workers and less stall are better).
std::vector<std::size_t> stall_frontier(const std::vector<double>& workers, const std::vector<double>& stall);

}  // namespace gpubench::reports
