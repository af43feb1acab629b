#pragma once
// The report's storage table (issue 44): every ok case of the storage suite with its bandwidth,
// IOPS and read-latency percentiles, as fio prints them, and the filesystem it read.
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// Nothing when the files hold no ok storage case.
void storage_section(Document& doc, const std::vector<ResultsFile>& files);

}  // namespace gpubench::reports
