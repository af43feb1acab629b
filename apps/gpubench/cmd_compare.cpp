// gpubench compare BASE NEW: regression verdicts for CI. Exit 0 no regression, 1 a regression,
// 2 usage or input error.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "apps/gpubench/report_output.hpp"
#include "bench/core/errors.hpp"
#include "reports/compare.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::app {

CompareOptions parse_compare_options(const std::vector<std::string>& args) {
  CompareOptions o;
  std::string output;
  std::vector<std::string> files;
  po::options_description desc(
      "Usage: gpubench compare [options] BASE.json NEW.json\n\nPer case (suite + axis values + device) the median of "
      "the headline metric over repetitions and its change; a Mann-Whitney U test when both sides have enough "
      "repetitions, else a noise-overlap rule. Verdicts: improved, regressed, unchanged, noisy, missing, new, and "
      "ambiguous: a change that the recorded clock explains (time x clock within the threshold) or that ran under "
      "other processes' load.\n"
      "Exit status: 0 nothing regressed, 1 something regressed (or was ambiguous, with --fail-on-ambiguous), 2 usage "
      "or input error (speed-ups never fail).\n\n"
      "Options");
  desc.add_options()
      ("threshold", po::value(&o.threshold_pct)->default_value(o.threshold_pct), "smallest change in % that counts (0 to 1000)")
      ("alpha", po::value(&o.alpha)->default_value(o.alpha, "0.05"), "significance level of the tests")
      ("allow-different-devices", po::bool_switch(&o.allow_different_devices), "compare results from different GPU models")
      ("fail-on-ambiguous", po::bool_switch(&o.fail_on_ambiguous), "an ambiguous case (clock or load) fails too")
      ("contended", po::value(&o.contended_pct)->default_value(o.contended_pct),
       "other processes' CPU use or steal time in % above which a side is contended (0 to 100)")
      ("out", po::value(&o.out), "output path (stdout when absent); with several formats each gets its extension, in place of an ending that is a format's own (.json .md .html .csv .prom .txt .xml), else appended")
      ("output,o", po::value(&output), "the same as --out")
      ("format,f", po::value(&o.format)->default_value(o.format), "comma list of: md (markdown), html, json, junit")
      ("junit", po::value(&o.junit), "also write JUnit XML to this file")
      ("help,h", "show this help");
  po::variables_map vm = parse_with_inputs(args, desc, files);
  if (take_help(vm, desc, o.help, o.help_text)) return o;
  if ((vm.count("out") && o.out.empty()) || (vm.count("output") && output.empty())) {
    throw UsageError("--out: empty path");  // not stdout by accident
  }
  merge_output_alias(o.out, output);
  in_range(o.threshold_pct, "--threshold", 0, 1000, true);
  in_range(o.contended_pct, "--contended", 0, 100, true);
  if (!(o.alpha > 0 && o.alpha < 1)) throw UsageError("--alpha: should be between 0 and 1");
  o.outputs = reports::resolve_outputs(o.format, o.out, {"md", "html", "json", "junit"});
  if (vm.count("junit") && o.junit.empty()) throw UsageError("--junit: empty path");
  if (!o.junit.empty()) o.outputs.push_back({"junit", o.junit, "--junit"});
  if (files.size() != 2) {
    throw UsageError(fmt::format("compare: expected two results files (BASE NEW), got {}", files.size()));
  }
  o.base = files[0];
  o.next = files[1];
  return o;
}

int cmd_compare(const std::vector<std::string>& args) {
  const CompareOptions o = parse_compare_options(args);
  if (o.help) return print_help(o.help_text);
  check_outputs(o.outputs, named_inputs({o.base, o.next}), /*repeated_ok=*/true);
  const std::vector<reports::ResultsFile> files = reports::read_results_files({o.base, o.next});
  print_read_warnings("compare", files);
  const reports::ResultsFile &base = files[0], &next = files[1];
  reports::CompareOptions co;
  co.threshold_pct = o.threshold_pct;
  co.alpha = o.alpha;
  co.allow_different_devices = o.allow_different_devices;
  co.fail_on_ambiguous = o.fail_on_ambiguous;
  co.contended_pct = o.contended_pct;
  const reports::SpecSheet specs = reports::SpecSheet::builtin();
  co.datasheet = plausibility::memoized(
      [&specs](const std::string& name, const std::string& key) { return specs.peak(name, key); });
  co.datasheet_clock = plausibility::memoized(
      [&specs](const std::string& name, const std::string& key) { return specs.peak_clock(name, key); });
  const reports::Comparison c = reports::compare_results(base, next, co);
  for (const auto& t : o.outputs) {
    if (t.format == "md") write_output(t, reports::to_markdown(reports::comparison_document(c, base, next, co)));
    if (t.format == "html") write_output(t, reports::to_html(reports::comparison_document(c, base, next, co)));
    if (t.format == "json") write_output(t, reports::comparison_json(c, co).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (t.format == "junit") write_output(t, reports::comparison_junit(c, co));
  }
  for (const auto& w : c.warnings) fmt::print(stderr, "gpubench compare: warning: {}\n", w);
  for (const auto& x : c.cases) {
    if (!x.suspect.empty()) fmt::print(stderr, "gpubench compare: suspect: {} {} {}: {}\n", x.suite, x.device, x.label, fmt::join(x.suspect, "; "));
  }
  // Two files without a case in common compare nothing: that is an input error, not a pass.
  const bool common = std::any_of(c.cases.begin(), c.cases.end(), [](const reports::CaseComparison& k) {
    return k.verdict != reports::Verdict::missing && k.verdict != reports::Verdict::added;
  });
  if (!common) {
    fmt::print(stderr, "gpubench compare: {} and {} have no case in common (same suite, axes and device): nothing "
                       "was compared\n", o.base, o.next);
    return 2;
  }
  const std::size_t regressions = c.regressions();
  if (regressions > 0) fmt::print(stderr, "gpubench compare: {} case(s) regressed\n", regressions);
  if (const std::size_t ambiguous = c.ambiguous(); ambiguous > 0) {
    fmt::print(stderr, "gpubench compare: {} case(s) ambiguous (a clock or load change explains the difference){}\n",
               ambiguous, o.fail_on_ambiguous ? "; --fail-on-ambiguous counts them as failures" : "");
  }
  return c.failures(co) > 0 ? 1 : 0;
}

}  // namespace gpubench::app
