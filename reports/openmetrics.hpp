#pragma once
// Results in the OpenMetrics text format (which is also valid Prometheus text exposition
// format 0.0.4), for node_exporter's textfile collector or any scraper of a .prom file.
//
// One gauge family per headline metric (gpubench_tflops, gpubench_gbps, gpubench_tokens_per_s,
// ... as reports::entry_perf picks it), plus gpubench_seconds_per_run, gpubench_noise_ratio and
// gpubench_pct_of_peak where known, and gpubench_results_timestamp_seconds per file. Labels:
// suite, device_model, device (cuda:N or cpu), uuid (GPUs), host, then the case's axes (an axis
// whose name is taken, or not a valid label name, gets an axis_ prefix / its bad characters as
// '_'). Samples carry no timestamp: the textfile collector refuses them.
// Repetitions of a case give one sample (their median); the same host and device in two files
// would give two identical series, so a `results` label (the file name, or the path where two
// files share a name) is added then. Every case is its own series: where two cases' names and
// label sets come out equal (names or values that sanitise or print alike, an empty value), each
// gets a `case` label, its name (or its suite and axes as JSON where the names are equal too).
#include <string>
#include <vector>

#include "reports/results_reader.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::reports {

// `specs`: where given, each case's headline is also held against the published figure of the
// same measurement on its GPU (gpubench_pct_of_published; reference.hpp).
std::string to_openmetrics(const std::vector<ResultsFile>& files, const SpecSheet* specs = nullptr);

// A label value with OpenMetrics' escapes: backslash, double quote and newline.
std::string openmetrics_escape(const std::string& value);

}  // namespace gpubench::reports
