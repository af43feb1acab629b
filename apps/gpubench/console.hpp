#pragma once
// What a run shows while it goes. By default (the "table" console): on a terminal, one live
// progress line on stderr (case i/N, elapsed, time left, the current case in its short form);
// on stdout one table per suite, a row per case as it ends: the axes that vary within the
// suite as columns (the constant ones on a line above), the headline rate with its unit, the
// time per run, the noise and a status. No line is wider than ConsoleOptions::width: a status
// too long for its row becomes a numbered note under the suite's table.
// When Google Benchmark's own reporter prints the cases (--benchmark_format, --console gb) the
// console shows only the progress, as one line per finished case when stderr is no terminal.
// It is a presentation module of the command line: the harness knows it only as a RunObserver
// (bench/core/run_observer.hpp), so bench/core never includes the report layer it renders with.
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/run_observer.hpp"

namespace gpubench::app {

struct ConsoleOptions {
  bool quiet = false;        // nothing at all
  bool tables = true;        // false: Google Benchmark prints the cases, the console only progress
  bool live = false;         // stderr is a terminal: the progress line is rewritten in place
  std::size_t width = 160;   // no line wider than this (the live line: also the terminal's width)
  std::FILE* out = stdout;   // tables
  std::FILE* err = stderr;   // progress
};

// One row of a suite's table, from the results entries of one case (its repetitions).
struct ConsoleRow {
  std::string rate;    // "12.3 TFLOP/s", or "" without a rate
  std::string time;    // "1.25 ms" per run, or ""
  std::string noise;   // "0.52%", or ""
  std::string status;  // ok | noisy | suspect: why | skipped: why | FAILED: why
};
ConsoleRow console_row(const std::vector<nlohmann::ordered_json>& entries);

class Console final : public RunObserver {
 public:
  // `plan` must outlive the console. Cases of one suite are contiguous in a plan.
  Console(const std::vector<PlannedCase>& plan, ConsoleOptions options);
  void started(std::size_t index) override;
  // Every results entry the case wrote (one per repetition, plus aggregates).
  void finished(std::size_t index, const std::vector<nlohmann::ordered_json>& entries) override;
  void done() override;  // clears the live line and closes the last table

  // The case's label with only the axes that vary within its suite (and its device when the
  // suite runs on several): "gemm m=1024 dtype=fp16", in the suite's axis order.
  std::string short_label(std::size_t index) const;
  double elapsed_s() const;

 private:
  struct Column {
    std::string title;
    std::size_t width = 0;
    bool right = false;
  };
  struct Group {  // one suite's cases: [first, last]
    std::size_t first = 0, last = 0;
    std::vector<std::string> varying;  // axis names (and "device") that vary, in axis order
    std::vector<Column> columns;
    std::string constant;              // "shape=mnk model=none ..." the axes that do not
    bool several_devices = false;
    bool header_printed = false, closed = false;
    std::vector<std::string> notes;    // statuses moved under the table
    // "% of published" of its cases that match a row of data/reference.json (reports/reference.hpp):
    // percent and the text of the line under the table.
    std::vector<std::pair<double, std::string>> published;
  };
  const Group& group_of(std::size_t index) const;
  std::vector<std::string> cells(std::size_t index) const;
  void print_header(Group& g);
  void close(Group& g);
  void clear_live();
  void print_progress_line(std::size_t index, const std::string& outcome);
  // The case's "% of published" and its line, when a row of data/reference.json matches it.
  std::optional<std::pair<double, std::string>> published_text(std::size_t index,
                                                               const std::vector<nlohmann::ordered_json>& entries) const;
  std::size_t live_width() const;

  const std::vector<PlannedCase>& plan_;
  ConsoleOptions opt_;
  std::vector<Group> groups_;
  std::vector<std::size_t> group_index_;  // per case
  std::size_t done_ = 0;
  bool live_shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Splits `text` into lines of at most `width` characters at spaces, each after the first
// starting with `indent`.
std::vector<std::string> wrap_words(const std::string& text, std::size_t width, const std::string& indent);

// The harness's observer factory for the console: tables on stdout unless `run.tables` is off,
// a live progress line when stderr is a terminal, nothing when quiet.
RunObserverFactory console_observer();

}  // namespace gpubench::app
