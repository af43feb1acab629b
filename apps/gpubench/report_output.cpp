// Writing the outputs of report, compare and history.
#include "apps/gpubench/report_output.hpp"

#include <fmt/format.h>

#include <iostream>

#include "bench/core/results.hpp"

namespace gpubench::app {

void check_outputs(const std::vector<reports::OutputTarget>& targets) {
  for (const auto& t : targets) {
    if (!t.path.empty()) check_output_path(t.path, t.option);
  }
}

void print_read_warnings(const char* command, const std::vector<reports::ResultsFile>& files) {
  for (const reports::ResultsFile& f : files) {
    for (const std::string& w : f.warnings) fmt::print(stderr, "gpubench {}: warning: {}\n", command, w);
  }
}

void write_output(const reports::OutputTarget& target, const std::string& text) {
  if (target.path.empty()) {
    std::cout << text;
    std::cout.flush();
  } else {
    write_file_atomically(target.path, text);
  }
}

}  // namespace gpubench::app
