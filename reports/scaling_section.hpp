#pragma once
// The report's data-parallel section: measured data-parallel train cases (step, compute-only,
// exposed communication and its share, overlap, efficiency), a scaling chart per case (measured
// throughput beside the projected curve, projected efficiency on the second axis) and the
// finding that names where projected efficiency drops below 80% (docs/scaling.md).
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// Nothing when the files hold no data-parallel train case.
void scaling_section(Document& doc, const std::vector<ResultsFile>& files);

// Under "Findings" (the heading is added once, as the other findings do).
void scaling_finding(Document& doc, const std::vector<ResultsFile>& files, bool& heading);

}  // namespace gpubench::reports
