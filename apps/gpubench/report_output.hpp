#pragma once
// Writing the outputs of report, compare and history (reports/outputs.hpp resolves them).
#include <string>
#include <vector>

#include "reports/outputs.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::app {

// Checks every output path before anything is read (UsageError naming the option and the
// path; the rules of bench/core/paths.hpp), then creates their missing folders.
void check_outputs(const std::vector<reports::OutputTarget>& targets);
// The readers' warnings about the files (a case recorded twice), one line each on stderr.
void print_read_warnings(const char* command, const std::vector<reports::ResultsFile>& files);
// To the path atomically, or to stdout when the path is empty.
void write_output(const reports::OutputTarget& target, const std::string& text);

}  // namespace gpubench::app
