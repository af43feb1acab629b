#pragma once
// The report's "Inference" section (issue 29): the infer suite's prefill tokens/s against the
// prompt length, decode step time and tokens/s against batch and cached context with the % of the
// memory ceiling, and the measured serving cases' latency percentiles; devices side by side.
// `gpubench serving` projects serving from the same curves (reports/serving.hpp).
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// Nothing when the files hold no ok infer case.
void infer_section(Document& doc, const std::vector<ResultsFile>& files);

}  // namespace gpubench::reports
