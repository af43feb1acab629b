#pragma once
// `gpubench report`: results from several machines or configurations joined by case identity,
// every device side by side, with ratios, % of peak and of measured ceilings, perf per watt
// and per dollar-hour, geomean scorecard, time and cost to train, rooflines, findings and the
// environment. One model, rendered as a Document (Markdown/HTML), CSV and a JSON summary.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/document.hpp"
#include "reports/fleet.hpp"
#include "reports/results_reader.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::reports {

// USD per hour per device, matched against device names: a key matches when it is a
// case-insensitive substring of the name; the longest matching key wins.
struct PriceList {
  std::vector<std::pair<std::string, double>> prices;
  std::optional<double> find(const std::string& device_name) const;
  // "NAME=USD_PER_HOUR"; UsageError when malformed.
  void add_assignment(const std::string& text);
  // {"prices_usd_per_hour": {"NVIDIA H100": 2.5, ...}} (data/prices.example.json).
  static PriceList from_file(const std::filesystem::path& path);
  // --prices FILE (when not empty) then each --price NAME=USD, as `report` and `scaling` take them.
  static PriceList from_options(const std::string& file, const std::vector<std::string>& assignments);
};

struct ReportOptions {
  std::string baseline;  // a column: "1"/"#1", its label, or a unique substring; default: the first GPU
  PriceList prices;
  std::optional<double> train_tokens, train_samples;  // the workload for "time and cost to train"
  std::string train_filter;                           // substring of the train cases' axes
  FleetOptions fleet;                                 // outlier rule of the fleet section
};

struct Report {
  Document doc;
  std::string csv;
  nlohmann::ordered_json summary;
};

// Throws UsageError when the baseline names no column (or several).
Report build_report(const std::vector<ResultsFile>& files, const SpecSheet& specs, const ReportOptions& options);

// Compatibility wrapper: the Markdown of build_report with default options.
std::string render_report_markdown(const std::vector<ResultsFile>& files, const SpecSheet& specs);

}  // namespace gpubench::reports
