#pragma once
// The results file: Google Benchmark's JSON schema (context + benchmarks) with gpubench's
// fields added (docs/results-format.md). The whole document is rewritten atomically after
// every case, so the file on disk is always valid JSON holding every finished case.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpubench {

inline constexpr int kResultsSchemaVersion = 1;
inline constexpr std::uintmax_t kMinFreeBytes = std::uintmax_t{16} << 20;

// Writes `text` to a temporary file beside `path`, flushes it to disk, then renames it over
// `path`. Throws std::runtime_error naming the path on failure; `path` is never left partial.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// Checks an output file path (paths.hpp: validate_output_file, the same rules for every output
// option), then creates its missing parent folders. Throws UsageError with one line naming
// `option` and the path when it cannot be written; nothing is created then.
void check_output_path(const std::filesystem::path& path, std::string_view option = "--out");

class ResultsFile {
 public:
  // Writes the file at once with an empty benchmarks list. An empty path keeps the document in
  // memory only: the ranks other than 0 of a multi-process run write nothing.
  ResultsFile(std::filesystem::path path, nlohmann::ordered_json context);
  void add(nlohmann::ordered_json entry);  // appends and rewrites the file
  // Replaces entry `index` (a later, more thorough measurement of the same case: `tune`) and
  // rewrites the file; std::out_of_range for an index that is not there.
  void replace(std::size_t index, nlohmann::ordered_json entry);
  // Replaces every entry at once and rewrites the file (soak: its summary entries, written again
  // when the ranks' arrive).
  void set_entries(std::vector<nlohmann::ordered_json> entries);
  // Sets top-level gpubench.<key> (e.g. `tuning`) and rewrites the file.
  void set_gpubench(const std::string& key, nlohmann::ordered_json value);
  // Sets top-level gpubench.summaries.<name> (rewritten with the next add()).
  void set_summary(const std::string& name, nlohmann::ordered_json summary);
  // Sets top-level gpubench.<key> (a command's own section, as `soak` writes its series and
  // verdict) and rewrites the file at once.
  void set_section(const std::string& key, nlohmann::ordered_json value);
  // Runs over the whole document after every add(), before the write: `gpubench run` marks
  // implausible figures with it (reports/plausibility.hpp; bench/core does not know the rules).
  void set_judge(std::function<void(nlohmann::ordered_json&)> judge) { judge_ = std::move(judge); }
  const nlohmann::ordered_json& document() const { return doc_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void flush();
  std::filesystem::path path_;
  nlohmann::ordered_json doc_;
  std::function<void(nlohmann::ordered_json&)> judge_;
};

// default results path: results/<host>-<UTC timestamp>.json
std::filesystem::path default_results_path(const std::string& host);

}  // namespace gpubench
