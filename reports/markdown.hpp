#pragma once
// Markdown report over one or more results files.
#include <string>
#include <vector>

#include "results_reader.hpp"
#include "spec_sheet.hpp"

namespace gpubench::reports {

// The `gpubench report` document (report.hpp) with default options, as Markdown.
std::string render_markdown(const std::vector<ResultsFile>& files, const SpecSheet& specs);

}  // namespace gpubench::reports
