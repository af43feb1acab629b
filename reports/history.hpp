#pragma once
// `gpubench history FILES|DIR`: each case's headline value over runs ordered by run date, with
// change points (stats.hpp: CUSUM + permutation test, binary segmentation) naming the run
// where performance shifted.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"
#include "reports/stats.hpp"

namespace gpubench::reports {

struct HistoryOptions {
  double alpha = 0.05;      // permutation-test significance
  double min_shift = 0.05;  // smallest relative shift reported
  int permutations = 1000;
};

struct RunInfo {
  std::string date;  // context.gpubench.started_utc, else context.date
  std::string file, host;
};

struct Series {
  std::string suite, device_name, label, unit;
  std::vector<std::size_t> run;  // index into History::runs, ascending
  std::vector<double> values;    // median headline value in that run
  std::vector<ChangePoint> changes;  // ChangePoint::index indexes `values`
};

struct History {
  std::vector<RunInfo> runs;  // ordered by date
  std::vector<Series> series;
};

// The JSON files of a directory (sorted by name) or the files given; UsageError when none.
std::vector<std::filesystem::path> expand_history_inputs(const std::vector<std::string>& inputs);

// `files` in any order: they are sorted by run date (then file name).
History build_history(std::vector<ResultsFile> files, const HistoryOptions& options);
Document history_document(const History& h, const HistoryOptions& options);
nlohmann::ordered_json history_json(const History& h);

}  // namespace gpubench::reports
