// Writing the outputs of report, compare and history.
#include "apps/gpubench/report_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <system_error>

#include "bench/core/errors.hpp"
#include "bench/core/results.hpp"

namespace gpubench::app {

void check_outputs(const std::vector<reports::OutputTarget>& targets, const std::vector<NamedPath>& inputs,
                   bool repeated_ok) {
  if (!repeated_ok) {  // the results files (positional): a --prices or --spec-sheet file is read apart
    std::vector<NamedPath> results;
    for (const NamedPath& i : inputs) {
      if (i.option == "input") results.push_back(i);
    }
    refuse_repeated_inputs(results);
  }
  std::vector<NamedPath> outputs;
  for (const auto& t : targets) {
    if (!t.path.empty()) {
      validate_output_file(t.path, t.option);
      outputs.push_back({t.path, t.option});
    }
  }
  check_path_clashes(inputs, outputs);
  for (const auto& t : targets) {
    if (!t.path.empty()) check_output_path(t.path, t.option);
  }
}

std::vector<NamedPath> named_inputs(const std::vector<std::string>& files) {
  std::vector<NamedPath> inputs;
  for (const std::string& f : files) inputs.push_back({f, "input"});
  return inputs;
}

void print_read_warnings(const char* command, const std::vector<reports::ResultsFile>& files) {
  for (const reports::ResultsFile& f : files) {
    for (const std::string& w : f.warnings) fmt::print(stderr, "gpubench {}: warning: {}\n", command, w);
  }
}

void write_output(const reports::OutputTarget& target, const std::string& text) {
  if (target.path.empty()) {
    errno = 0;
    std::cout << text;
    std::cout.flush();
    // The reader went away (SIGPIPE ignored): main ends quietly with 141, as a shell expects.
    if (std::cout.fail() && errno == EPIPE) throw std::system_error(EPIPE, std::generic_category(), "standard output");
  } else {
    write_file_atomically(target.path, text);
  }
}

void write_outputs(const std::vector<reports::OutputTarget>& targets, const reports::Document& doc,
                   const nlohmann::ordered_json& json) {
  for (const auto& t : targets) {
    if (t.format == "md") write_output(t, reports::to_markdown(doc));
    if (t.format == "html") write_output(t, reports::to_html(doc));
    if (t.format == "json") write_output(t, json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
}

// --report FORMATS: each report beside the results file, named after it by the output-name rule
// (reports/outputs.hpp: results.json -> results.md, ...; p.v1.2 -> p.v1.2.md; the json report is
// results.report.json, not the results file itself). UsageError for a format `report` does not write.
std::vector<std::pair<std::string, std::filesystem::path>> report_paths(const std::string& formats,
                                                                        const std::filesystem::path& results) {
  std::vector<std::pair<std::string, std::filesystem::path>> out;
  if (formats.empty()) return out;
  std::size_t start = 0;
  while (start <= formats.size()) {
    const std::size_t comma = std::min(formats.find(',', start), formats.size());
    std::string f = formats.substr(start, comma - start);
    if (f == "markdown") f = "md";
    if (f != "md" && f != "html" && f != "csv" && f != "json" && f != "openmetrics") {
      throw UsageError(fmt::format("--report '{}': '{}' is not one of md, html, csv, json, openmetrics", formats, f));
    }
    const std::filesystem::path p = reports::derived_output_path(
        results.string(), f == "json" ? ".report.json" : f == "openmetrics" ? ".prom" : "." + f);
    const bool again = std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.first == f; });
    if (!again) out.emplace_back(f, p);  // md,md: written once
    start = comma + 1;
  }
  return out;
}

}  // namespace gpubench::app
