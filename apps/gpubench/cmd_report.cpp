// gpubench report: renders results files. Needs no CUDA device.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "apps/gpubench/report_output.hpp"
#include "bench/core/errors.hpp"
#include "reports/openmetrics.hpp"
#include "reports/report.hpp"

namespace gpubench::app {

namespace {

// A workload of more than 1e18 tokens or samples is a typo (the largest training runs are ~1e13).
double positive(double v, const char* option) { return in_range(v, option, 0, 1e18); }

}  // namespace

ReportOptions parse_report_options(const std::vector<std::string>& args) {
  ReportOptions o;
  std::string output;
  po::options_description desc(
      "Usage: gpubench report [options] RESULTS.json...\n\nJoins results files by case (suite + axis values) and "
      "reports every device side by side: ratio to a baseline, % of datasheet peak, % of the measured ceiling, perf "
      "per watt and per dollar-hour, geomean scorecard, time and cost to train, rooflines, findings and the "
      "environment.\n\nOptions");
  desc.add_options()
      ("out", po::value(&o.out), "output path (stdout when absent); with several formats each gets its extension, in place of an ending that is a format's own (.json .md .html .csv .prom .txt .xml), else appended")
      ("output,o", po::value(&output), "the same as --out")
      ("format,f", po::value(&o.format)->default_value(o.format),
       "comma list of: md (markdown), html, csv, json, openmetrics (Prometheus/OpenMetrics text for node_exporter's "
       "textfile collector: docs/report-compare-history.md)")
      ("baseline", po::value(&o.baseline), "the run ratios refer to: its number (1, #2), label or a unique part of it (default: the first)")
      ("prices", po::value(&o.prices_file), "price file {\"prices_usd_per_hour\": {NAME: USD}} (see data/prices.example.json)")
      ("price", po::value(&o.price_assignments)->composing(), "NAME=USD_PER_HOUR for devices whose name contains NAME (repeatable)")
      ("train-tokens", po::value<double>(), "workload for time and cost to train, in tokens (uses cases with tokens_per_s)")
      ("train-samples", po::value<double>(), "workload for time and cost to train, in samples (uses cases with samples_per_s)")
      ("train-case", po::value(&o.train_filter), "only train cases whose axes contain this text (e.g. model=gpt2-small)")
      ("spec-sheet", po::value(&o.spec_sheet), "GPU spec sheet JSON replacing the built-in data/gpus.json")
      ("outlier-mads", po::value(&o.outlier_mads)->default_value(o.outlier_mads),
       "fleet: flag a device more than this many median absolute deviations below its model's median (above 0, at "
       "most 1000) ...")
      ("outlier-pct", po::value(&o.outlier_pct)->default_value(o.outlier_pct),
       "... and more than this many percent below it (above 0, at most 100)")
      ("help,h", "show this help");
  po::variables_map vm = parse_with_inputs(args, desc, o.files);
  if (take_help(vm, desc, o.help, o.help_text)) return o;
  if ((vm.count("out") && o.out.empty()) || (vm.count("output") && output.empty())) {
    throw UsageError("--out: empty path");  // not stdout by accident
  }
  merge_output_alias(o.out, output);
  if (vm.count("train-tokens")) o.train_tokens = positive(vm["train-tokens"].as<double>(), "--train-tokens");
  if (vm.count("train-samples")) o.train_samples = positive(vm["train-samples"].as<double>(), "--train-samples");
  in_range(o.outlier_mads, "--outlier-mads", 0, 1000);
  in_range(o.outlier_pct, "--outlier-pct", 0, 100);
  if (o.train_tokens && o.train_samples) throw UsageError("--train-tokens and --train-samples: give one workload");
  o.outputs = reports::resolve_outputs(o.format, o.out, {"md", "html", "csv", "json", "openmetrics"});
  reports::PriceList check;
  for (const auto& p : o.price_assignments) check.add_assignment(p);  // fails early on a bad one
  if (o.files.empty()) throw UsageError("report: no results file given (usage: gpubench report RESULTS.json...)");
  return o;
}

int cmd_report(const std::vector<std::string>& args) {
  const ReportOptions o = parse_report_options(args);
  if (o.help) return print_help(o.help_text);
  std::vector<NamedPath> inputs = named_inputs(o.files);
  if (!o.spec_sheet.empty()) inputs.push_back({o.spec_sheet, "--spec-sheet"});
  if (!o.prices_file.empty()) inputs.push_back({o.prices_file, "--prices"});
  check_outputs(o.outputs, inputs);

  const std::vector<reports::ResultsFile> loaded =
      reports::read_results_files(std::vector<std::filesystem::path>(o.files.begin(), o.files.end()));
  print_read_warnings("report", loaded);
  const reports::SpecSheet specs =
      o.spec_sheet.empty() ? reports::SpecSheet::builtin() : reports::SpecSheet::from_file(o.spec_sheet);
  reports::ReportOptions ro;
  ro.baseline = o.baseline;
  ro.prices = reports::PriceList::from_options(o.prices_file, o.price_assignments);
  ro.train_tokens = o.train_tokens;
  ro.train_samples = o.train_samples;
  ro.train_filter = o.train_filter;
  ro.fleet = {o.outlier_mads, o.outlier_pct};
  const reports::Report report = reports::build_report(loaded, specs, ro);
  for (const auto& t : o.outputs) {
    if (t.format == "md") write_output(t, reports::to_markdown(report.doc));
    if (t.format == "html") write_output(t, reports::to_html(report.doc));
    if (t.format == "csv") write_output(t, report.csv);
    if (t.format == "json") write_output(t, report.summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (t.format == "openmetrics") write_output(t, reports::to_openmetrics(loaded, &specs));
  }
  return 0;
}

}  // namespace gpubench::app
