// libFuzzer target: the results reader (reports/results_reader.hpp) and the Markdown report
// that consumes what it accepts (`gpubench report`).
//
// Input: the contents of one results file, given to read_results_text (read_results reads the
// file and calls it). UsageError is the expected rejection of a bad file; any other exception,
// a crash, a hang or a sanitizer report is a finding. An accepted file is rendered with
// render_markdown against the built-in spec sheet, and the full report (build_report: HTML, CSV,
// JSON summary) and history over it, none of which may throw either.
#include <cstdint>
#include <string_view>

#include "bench/core/errors.hpp"
#include "reports/history.hpp"
#include "reports/markdown.hpp"
#include "reports/report.hpp"
#include "reports/results_reader.hpp"
#include "reports/spec_sheet.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpubench::reports;
  static const SpecSheet specs = SpecSheet::builtin();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ResultsFile file;
  try {
    file = read_results_text(text, "fuzz.json");
  } catch (const gpubench::UsageError&) {
    return 0;
  }
  (void)file.host();
  (void)render_markdown({file}, specs);
  ReportOptions options;
  options.prices.add_assignment("a=1.5");
  options.train_tokens = 1e9;
  const Report report = build_report({file, file}, specs, options);
  (void)to_html(report.doc);
  (void)report.summary.dump();
  HistoryOptions history;
  history.permutations = 100;
  (void)to_html(history_document(build_history({file, file, file, file}, history), history));
  return 0;
}
