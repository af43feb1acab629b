// gpubench history FILES|DIR: per-case series over runs with change points.
#include <fmt/format.h>

#include <cmath>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "apps/gpubench/report_output.hpp"
#include "bench/core/errors.hpp"
#include "reports/history.hpp"

namespace gpubench::app {

HistoryOptions parse_history_options(const std::vector<std::string>& args) {
  HistoryOptions o;
  std::string output;
  po::options_description desc(
      "Usage: gpubench history [options] RESULTS.json...|DIR\n\nEach case's headline value over runs ordered by run "
      "date, with change points (CUSUM and a permutation test, by binary segmentation) naming the run where "
      "performance shifted.\n\nOptions");
  desc.add_options()
      ("alpha", po::value(&o.alpha)->default_value(o.alpha, "0.05"), "significance level of the permutation test")
      ("min-shift", po::value(&o.min_shift_pct)->default_value(o.min_shift_pct), "smallest shift in % that is reported (0 to 1000)")
      ("permutations", po::value(&o.permutations)->default_value(o.permutations), "shuffles per test (100 to 100000)")
      ("out", po::value(&o.out), "output path (stdout when absent); with several formats each gets its extension, in place of an ending that is a format's own (.json .md .html .csv .prom .txt .xml), else appended")
      ("output,o", po::value(&output), "the same as --out")
      ("format,f", po::value(&o.format)->default_value(o.format), "comma list of: md (markdown), html, json")
      ("help,h", "show this help");
  po::variables_map vm = parse_with_inputs(args, desc, o.inputs);
  if (take_help(vm, desc, o.help, o.help_text)) return o;
  if ((vm.count("out") && o.out.empty()) || (vm.count("output") && output.empty())) {
    throw UsageError("--out: empty path");  // not stdout by accident
  }
  merge_output_alias(o.out, output);
  if (!(o.alpha > 0 && o.alpha < 1)) throw UsageError("--alpha: should be between 0 and 1");
  in_range(o.min_shift_pct, "--min-shift", 0, 1000, true);
  if (o.permutations < 100 || o.permutations > 100000) throw UsageError("--permutations: should be 100 to 100000");
  o.outputs = reports::resolve_outputs(o.format, o.out, {"md", "html", "json"});
  if (o.inputs.empty()) throw UsageError("history: no results files or directory given (usage: gpubench history FILES|DIR)");
  return o;
}

int cmd_history(const std::vector<std::string>& args) {
  const HistoryOptions o = parse_history_options(args);
  if (o.help) return print_help(o.help_text);
  check_outputs(o.outputs, named_inputs(o.inputs));
  std::vector<reports::ResultsFile> files = reports::read_results_files(reports::expand_history_inputs(o.inputs));
  print_read_warnings("history", files);
  reports::HistoryOptions ho;
  ho.alpha = o.alpha;
  ho.min_shift = o.min_shift_pct / 100;
  ho.permutations = o.permutations;
  const reports::History h = reports::build_history(std::move(files), ho);
  for (const auto& t : o.outputs) {
    if (t.format == "md") write_output(t, reports::to_markdown(reports::history_document(h, ho)));
    if (t.format == "html") write_output(t, reports::to_html(reports::history_document(h, ho)));
    if (t.format == "json") {
      write_output(t, reports::history_json(h).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    }
  }
  return 0;
}

}  // namespace gpubench::app
