#pragma once
// Reading gpubench results files (docs/results-format.md). Needs no CUDA.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench::reports {

struct ResultEntry {
  std::string name;         // Google Benchmark name
  std::string run_type;     // "iteration" or "aggregate"
  std::string aggregate_name;  // for aggregates: "mean", "median", "stddev", "cv"
  std::string suite;
  std::string device;       // "cuda:0", "cpu"
  std::string device_name;  // "NVIDIA H200"
  std::string status;       // "ok", "skipped", "failed"
  std::string reason;
  nlohmann::json axes = nlohmann::json::object();
  std::vector<std::string> axis_names;  // the keys of `axes` in file order (json sorts them)
  nlohmann::json metrics = nlohmann::json::object();
  nlohmann::json details = nlohmann::json::object();  // a case's own results (gpubench.details)
  nlohmann::json measurement = nlohmann::json::object();
  nlohmann::json verification = nlohmann::json::object();
  nlohmann::json profile = nlohmann::json::object();    // instruments' fields (telemetry, ...)
  nlohmann::json telemetry = nlohmann::json::object();  // entry-level telemetry, when written there
  nlohmann::json collective = nlohmann::json::object();  // collectives suite: ranks, nodes, backend, bytes
  // Under mpirun/srun, each rank's own figures for a case that every rank measures on its own
  // device (gpubench.ranks: rank, host, device identity, mean_s, metrics); empty otherwise.
  nlohmann::json ranks = nlohmann::json::array();
  // `gpubench evaluate`: the part and item the entry was measured for ({"part", "item"});
  // empty in files of other commands (reports/node_card.hpp reads it).
  nlohmann::json evaluate = nlohmann::json::object();
  std::optional<std::int64_t> repetition_index;
  std::optional<double> real_time_s;  // mean time per run in seconds, when a time was reported
  std::optional<std::int64_t> iterations;
  // Why the figure cannot be believed (gpubench.suspect, as written; docs/plausibility.md).
  // The reports judge again (reports/plausibility.hpp: judge_file) and show the union.
  std::vector<std::string> suspect;
};

struct ResultsFile {
  std::filesystem::path path;
  nlohmann::json context;
  std::vector<ResultEntry> entries;
  nlohmann::json summaries = nlohmann::json::object();  // top-level gpubench.summaries
  nlohmann::json tuning;  // top-level gpubench.tuning (`gpubench tune train|dataload`); null when absent
  nlohmann::json soak;  // top-level gpubench.soak (a soak's series and verdict); null when absent
  nlohmann::json mamf;  // top-level gpubench.mamf (`gpubench tune gemm --mamf`); null when absent
  nlohmann::json storage_au;  // top-level gpubench.storage_au (`gpubench tune storage`); null when absent
  std::string host() const;  // context.host_name
  std::vector<std::string> warnings;  // e.g. a case and repetition recorded twice
};

// Throws gpubench::UsageError with one line naming the file and what is wrong with it
// (missing, not JSON, not a gpubench results file, unsupported schema version).
ResultsFile read_results(const std::filesystem::path& path);

// Several files read in parallel (one thread each, at most 16 at a time); the result is in the
// order given, and an error is the one of the first bad file in that order.
std::vector<ResultsFile> read_results_files(const std::vector<std::filesystem::path>& paths);

// One entry (an element of "benchmarks") as a run writes it, for readers of a run in progress
// (the console). Throws gpubench::UsageError when it is not a gpubench entry.
ResultEntry read_result_entry(const nlohmann::ordered_json& entry);

// The same for a file's contents already in memory; `origin` stands for the file in the
// result's path and in error messages. read_results reads the file and calls this.
ResultsFile read_results_text(std::string_view text, const std::filesystem::path& origin);

}  // namespace gpubench::reports
