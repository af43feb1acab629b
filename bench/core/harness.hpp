#pragma once
// The harness registers each planned case with Google Benchmark, drives it through
// setup -> verify -> warm-up -> measure, and writes every finished case to the results file.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure.hpp"
#include "plan.hpp"
#include "results.hpp"

namespace gpubench {

// Google Benchmark flags gpubench interprets itself; the rest pass through to the library.
struct BenchmarkFlags {
  std::vector<std::string> passthrough;     // given to benchmark::Initialize
  std::optional<std::string> filter;        // --benchmark_filter: applied while planning
  std::optional<double> min_time_s;         // --benchmark_min_time: same as --min-time
  std::string format = "console";           // --benchmark_format: console|json|csv
};
// Splits and validates --benchmark_* arguments; UsageError for unknown or malformed ones.
BenchmarkFlags parse_benchmark_flags(const std::vector<std::string>& args);

// Looks up the datasheet figure for a device and peak key (from the spec sheet).
using PeakLookup = std::function<std::optional<double>(const std::string& device_name, const std::string& peak_key)>;

struct HarnessOptions {
  MeasureOptions measure;
  BenchmarkFlags benchmark;
  bool quiet = false;
  PeakLookup peak;
};

struct RunSummary {
  int ok = 0, skipped = 0, failed = 0;
};

// Runs the plan; every case outcome (ok, skipped, failed) lands in `results` as it finishes.
RunSummary run_plan(const std::vector<PlannedCase>& plan, const HarnessOptions& options, ResultsFile& results);

// Derived metrics for one run of a case: rates in decimal units and % of the datasheet peak.
nlohmann::ordered_json derive_metrics(double flops, double bytes, const std::string& peak_key, double seconds_per_run,
                              std::optional<double> peak);

}  // namespace gpubench
