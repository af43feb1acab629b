#pragma once
// --format LIST and --out PATH, shared by report, compare and history: which formats to write
// and where. One format: PATH itself (stdout without --out). Several: PATH with its extension
// replaced by each format's (.md .html .csv .json .xml); they need --out.
#include <string>
#include <utility>
#include <vector>

namespace gpubench::reports {

struct OutputTarget {
  std::string format;  // "md", "html", "csv", "json", "junit"
  std::string path;    // empty: stdout
  std::string option = "--out";  // the option that named `path`, for messages
};

// `formats`: comma list; "markdown" is accepted for "md". UsageError names a format not in
// `allowed` or several formats without --out.
std::vector<OutputTarget> resolve_outputs(const std::string& formats, const std::string& out,
                                          const std::vector<std::string>& allowed);

}  // namespace gpubench::reports
