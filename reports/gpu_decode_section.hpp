#pragma once
// The report's GPU JPEG decode table (issue 44): every ok dataload case with decode=gpu (nvJPEG,
// its hw_load split), its images/s, batch latency and host CPU, beside the libjpeg-turbo decode
// of one core in the same files: how many CPU cores the GPU's decode stands in for.
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// Nothing when the files hold no ok decode=gpu case.
void gpu_decode_section(Document& doc, const std::vector<ResultsFile>& files);

}  // namespace gpubench::reports
