#pragma once
// The report's "Tuning report" section, for results files written by `gpubench tune train`
// (and `tune dataload`): their top-level gpubench.tuning (docs/tune.md). Per file: what was
// searched and how long, the recommendation as a ready-to-copy command, the evidence table
// (recommended against default, both from the final measurements: throughput, noise, memory,
// MFU, speed-up), a chart of the search frontier and the search log. Dispatches on `target`;
// a target without its own renderer gets the generic tables.
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// Adds nothing when no file has gpubench.tuning.
void tuning_section(Document& doc, const std::vector<ResultsFile>& files);

// The frontier of (x, y) points where less x and more y are better (memory against
// throughput): indices in increasing x, each with more y than every point before it.
std::vector<std::size_t> pareto_frontier(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace gpubench::reports
