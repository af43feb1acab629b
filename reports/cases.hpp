#pragma once
// Joining results across files by case identity, and the fields the reports read from an
// entry. Everything is generic (suite + axes + metrics): a new suite's cases show up without
// code here; the named fields below are the documented names (docs/results-format.md,
// "Fields the reports read") and every one of them may be absent.
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/results_reader.hpp"

namespace gpubench::reports {

// The headline performance of an entry, oriented so that higher is better.
struct Perf {
  double value = 0;    // the metric's value (or 1/time when only a time is known)
  std::string metric;  // "tflops", "tokens_per_s", ... or "runs_per_s"
  std::string unit;    // "TFLOP/s", "tokens/s", ...
};

// metrics.primary when it names a numeric metric; else the first of tokens_per_s,
// samples_per_s, busbw_gbps, tflops (gbps first when peak_key is memory_bandwidth), gbps,
// output_tokens_per_s, fps, items_per_s; else runs per second from the time per run. nullopt for entries without a time.
std::optional<Perf> entry_perf(const ResultEntry& e);

// suite + every axis except `device` (compact JSON, keys sorted): the same case on two
// machines has the same identity.
std::string case_identity(const ResultEntry& e);
// "m=1024 n=1024 k=1024 dtype=fp32" in the suite's axis order, without `except` (the label, and
// the pairing key, of cases that differ only in that axis); the name when no axis is left.
std::string axes_label(const ResultEntry& e, const std::string& except = "");
std::string scalar_text(const nlohmann::json& v);
// One axis of a case as text ("" when the case has no such axis).
std::string axis_text(const ResultEntry& e, const std::string& axis);
// A case's device for a section's rows: "NVIDIA H200 (cuda:0)", and " [file.json]" when
// `several_files` are read.
std::string device_label(const ResultsFile& f, const ResultEntry& e, bool several_files);

// Lookups into nested objects; nullptr / nullopt where any step is missing.
const nlohmann::json* json_at(const nlohmann::json& root, std::initializer_list<const char*> path);
std::optional<double> number_at(const nlohmann::json& root, std::initializer_list<const char*> path);
std::string string_at(const nlohmann::json& root, std::initializer_list<const char*> path);

// Mean board power while the case ran, from telemetry (profile.telemetry or telemetry):
// power_w.mean, power_w_mean or mean_power_w.
std::optional<double> entry_power_w(const ResultEntry& e);
// Work items per joule from telemetry: `<items_unit>_per_joule` (tokens_per_joule,
// output_tokens_per_joule, samples_per_joule; items_per_joule without a unit) of the entry's
// metrics.items_unit.
std::optional<double> entry_items_per_joule(const ResultEntry& e);
// Telemetry says the case ran throttled: throttled == true, or a non-empty throttle_reasons.
bool entry_throttled(const ResultEntry& e);
bool entry_noisy(const ResultEntry& e);
bool is_iteration(const ResultEntry& e);

// One device in one results file: a column of the report.
struct RunColumn {
  std::size_t file = 0;
  std::string device, device_name, host, label;
};

struct JoinedCase {
  std::string identity, suite;
  const ResultEntry* first = nullptr;             // for axes and labels
  std::vector<std::vector<const ResultEntry*>> by_column;  // ok iteration entries (repetitions)
};

struct Joined {
  std::vector<RunColumn> columns;
  std::vector<std::string> suites;  // in order of first appearance
  std::vector<JoinedCase> cases;    // in order of first appearance
};

Joined join_results(const std::vector<ResultsFile>& files);

// Median of the entries' headline values; nullopt when none has one.
std::optional<Perf> median_perf(const std::vector<const ResultEntry*>& entries);

}  // namespace gpubench::reports
