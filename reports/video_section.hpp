#pragma once
// The report's video section (issue 48): a table per codec of every ok video case (fps, PSNR
// against its floor, bits per pixel, host CPU cores), how many cores of the CPU in the files one
// GPU case stands in for at the nearest PSNR, and an fps-against-PSNR chart.
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// Nothing when the files hold no ok video case.
void video_section(Document& doc, const std::vector<ResultsFile>& files);

}  // namespace gpubench::reports
