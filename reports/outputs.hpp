#pragma once
// --format LIST and --out PATH, shared by report, compare, history, scaling and serving: which
// formats to write and where. One format: PATH itself (stdout without --out). Several: each
// format's extension on PATH's stem (derived_output_path); they need --out.
//
// Output names (docs/report-compare-history.md, "Output names"), the one rule of every path
// gpubench derives from another (these outputs, `run --report`, `run --trace-dir`): a name's
// extension is dropped only when it is one of the formats' own (kFormatExtensions, any case);
// any other ending is part of the name and kept ("p.v1.2" -> "p.v1.2.md", "r.json" -> "r.md").
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpubench::reports {

// The extensions of the formats gpubench reads and writes: results and JSON reports, Markdown,
// HTML, CSV, OpenMetrics (.prom for node_exporter's textfile collector; .txt as plain text),
// JUnit XML.
inline constexpr std::array<std::string_view, 7> kFormatExtensions = {".json", ".md", ".html", ".csv",
                                                                       ".prom", ".txt", ".xml"};

// Whether `extension` (with its dot) is one of kFormatExtensions, ignoring case.
bool is_format_extension(std::string_view extension);
// `path` without its file name's extension when that is a format's own, else `path` whole:
// "out/r.json" -> "out/r", "p.v1.2" -> "p.v1.2", "rep_de_DE.UTF-8" -> "rep_de_DE.UTF-8".
std::string output_stem(const std::string& path);
// The path of an output named after `path`: output_stem(path) + `extension` (".md",
// ".report.json", ".trace.json").
std::string derived_output_path(const std::string& path, std::string_view extension);

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
