// gpubench report: renders results files. Needs no CUDA device.
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/results.hpp"
#include "reports/markdown.hpp"

namespace gpubench::app {

ReportOptions parse_report_options(const std::vector<std::string>& args) {
  ReportOptions o;
  std::vector<std::string>& files = o.files;
  std::string &out = o.out, &spec_sheet = o.spec_sheet, &format = o.format;
  po::options_description desc(
      "Usage: gpubench report [options] RESULTS.json...\n\nWrites a Markdown report of one or more results files: "
      "one table per suite with device, axis values, time, rate, % of datasheet peak and noise.\n\nOptions");
  desc.add_options()
      ("output,o", po::value(&out), "write the report to this file instead of stdout")
      ("format,f", po::value(&format)->default_value(format), "report format: markdown")
      ("spec-sheet", po::value(&spec_sheet), "GPU spec sheet JSON replacing the built-in data/gpus.json")
      ("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("files", po::value(&files)->composing());
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("files", -1);
  po::variables_map vm = parse_or_throw(args, all, &pos);
  if (vm.count("help")) {
    o.help = true;
    o.help_text = help_text(desc);
    return o;
  }
  if (format != "markdown") throw UsageError(fmt::format("--format '{}': accepted formats are: markdown", format));
  if (files.empty()) throw UsageError("report: no results file given (usage: gpubench report RESULTS.json...)");
  return o;
}

int cmd_report(const std::vector<std::string>& args) {
  const ReportOptions o = parse_report_options(args);
  if (o.help) return print_help(o.help_text);
  const std::vector<std::string>& files = o.files;
  const std::string &out = o.out, &spec_sheet = o.spec_sheet;
  if (!out.empty()) check_output_path(out);

  std::vector<reports::ResultsFile> loaded;
  for (const std::string& f : files) loaded.push_back(reports::read_results(f));
  const reports::SpecSheet specs =
      spec_sheet.empty() ? reports::SpecSheet::builtin() : reports::SpecSheet::from_file(spec_sheet);
  const std::string text = reports::render_markdown(loaded, specs);
  if (out.empty()) {
    std::cout << text;
  } else {
    write_file_atomically(out, text);
  }
  return 0;
}

}  // namespace gpubench::app
