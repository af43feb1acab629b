#pragma once
// Writing the outputs of report, compare and history (reports/outputs.hpp resolves them).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/paths.hpp"
#include "reports/document.hpp"
#include "reports/outputs.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::app {

// Checks every output path before anything is read (UsageError naming the option and the
// path; the rules of bench/core/paths.hpp), against the command's inputs and each other too
// (check_path_clashes: an output that is an input, another output or a locked file is refused),
// then creates their missing folders.
// `repeated_ok`: an input may be given twice (compare A A).
void check_outputs(const std::vector<reports::OutputTarget>& targets, const std::vector<NamedPath>& inputs,
                   bool repeated_ok = false);
// The command's input files (positional), named "input" in messages.
std::vector<NamedPath> named_inputs(const std::vector<std::string>& files);
// The readers' warnings about the files (a case recorded twice), one line each on stderr.
void print_read_warnings(const char* command, const std::vector<reports::ResultsFile>& files);
// To the path atomically, or to stdout when the path is empty.
void write_output(const reports::OutputTarget& target, const std::string& text);
// A projection's outputs (scaling, serving): md and html from the document, json as it is.
void write_outputs(const std::vector<reports::OutputTarget>& targets, const reports::Document& doc,
                   const nlohmann::ordered_json& json);

// --report FORMATS of run and evaluate: each report beside the results file, named by the
// output-name rule (results.json -> results.md, results.report.json for json). UsageError for
// a format `report` does not write.
std::vector<std::pair<std::string, std::filesystem::path>> report_paths(const std::string& formats,
                                                                        const std::filesystem::path& results);

}  // namespace gpubench::app
