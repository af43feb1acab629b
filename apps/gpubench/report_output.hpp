#pragma once
// Writing the outputs of report, compare and history (reports/outputs.hpp resolves them).
#include <string>
#include <vector>

#include "reports/outputs.hpp"

namespace gpubench::app {

// Checks every output path before anything is read (UsageError naming the path).
void check_outputs(const std::vector<reports::OutputTarget>& targets);
// To the path atomically, or to stdout when the path is empty.
void write_output(const reports::OutputTarget& target, const std::string& text);

}  // namespace gpubench::app
