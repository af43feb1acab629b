#pragma once
// The report's per-call latency table of the collectives (issue 31): for every case timed with
// timing=per_iter, the percentiles of single calls per size (the slowest rank's), as nccl-tests
// -I and OSU's latency tests report them, beside the bus bandwidth at the median call.
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// Nothing when the files hold no ok collectives case timed per iteration.
void collectives_latency_section(Document& doc, const std::vector<ResultsFile>& files);

}  // namespace gpubench::reports
