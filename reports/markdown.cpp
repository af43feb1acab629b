// Markdown report over one or more results files: the `gpubench report` document with default
// options (report.hpp builds it).
#include "reports/markdown.hpp"

#include "reports/report.hpp"

namespace gpubench::reports {

std::string render_markdown(const std::vector<ResultsFile>& files, const SpecSheet& specs) {
  return to_markdown(build_report(files, specs, {}).doc);
}

}  // namespace gpubench::reports
