// Writing the outputs of report, compare and history.
#include "apps/gpubench/report_output.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <iostream>
#include <system_error>

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

}  // namespace gpubench::app
