#pragma once
// The search of `gpubench tune dataload`: the fewest loader workers (CPU cores) that keep the
// consumer's data stall under a target, and the loader settings (prefetch, pinned, aug, decode
// scale, format) that need the fewest. Plain C++ over an abstract oracle and clock, tested
// with a fake stall model (tests/unit/test_workers_search.cpp).
//
// Model: for one setting the stall share does not grow with more workers (more producers
// never starve the consumer more), so the fewest workers meeting the target is found by a
// binary search, and a setting that misses the target at w workers cannot need fewer than w+1.
//
//   stage "short" (effort 0): the settings in prior order (higher first; ties in the seed's
//     shuffled order). Each is first measured at the best worker count found so far (at
//     first: the most workers allowed): missing the target there, it cannot win and costs one
//     measurement; meeting it, a binary search below finds its fewest workers.
//   stage "long" (effort 1): the `finalists` best settings (fewest workers, then lowest stall)
//     measured again at their worker count, longer; one that now misses the target moves up
//     one worker at a time (long measurements) until it meets it or runs out of workers.
//   The recommendation: the fewest workers meeting the target by its most thorough
//     measurement, ties to the lower stall. When no setting meets it, the lowest stall
//     measured (meets_target false): the caller says so.
//
// A setting with any failed measurement (verification, a setup error) is never recommended.
// Budget: a measurement starts only when the longest earlier one at its effort (else the
// longest short one times `long_ratio`) fits in what is left of the budget less the caller's
// reserve; the first starts regardless.
// Every measurement and every setting left out is in the log (LogEntry, as tune train's).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/tune/search.hpp"

namespace gpubench::tune {

// One measurement of the loader at a setting and a worker count.
struct LoaderMeasured {
  Status status = Status::Ok;  // Ok or Failed
  double stall = 0;            // data-stall share of the consumer's time, 0 to 1 (Ok only)
  std::string reason;          // why Failed
  nlohmann::ordered_json figures = nlohmann::ordered_json::object();  // kept in the log
};
// settings: a candidate's config (without workers); effort 0 short, 1 long.
using LoaderOracle = std::function<LoaderMeasured(const Config& settings, int workers, int effort)>;

struct WorkersSearchOptions {
  double budget_s = 30;
  double max_stall = 0.05;  // share
  int min_workers = 1, max_workers = 1;
  std::uint64_t seed = 1;
  int finalists = 2;
  double long_ratio = 3;  // a long measurement's expected cost / a short one's
  // Seconds of the budget to keep for after the search (the caller's final measurements),
  // asked again before every measurement (it may learn from the costs so far). Null: none.
  std::function<double()> reserve_s;
};

struct WorkersChoice {
  std::size_t setting = 0;  // index into the candidates as given
  int workers = 0;
  double stall = 0;         // of its most thorough measurement at `workers`
  int effort = 0;           // of that measurement
  bool meets_target = false;
};

struct WorkersSearchResult {
  std::optional<WorkersChoice> best;  // only a setting that never failed
  std::vector<LogEntry> log;          // config = settings + {"workers", N}; round = effort
  double elapsed_s = 0;
  bool budget_exhausted = false;
  int settings = 0, measured = 0, failed = 0, skipped = 0, pruned = 0;  // settings by final state
  int measurements = 0;
};

// The config of a log entry: the setting's knobs then workers.
Config with_workers(const Config& settings, int workers);

WorkersSearchResult search_workers(const std::vector<Candidate>& settings, const LoaderOracle& oracle, const Clock& clock,
                                   const WorkersSearchOptions& options);

}  // namespace gpubench::tune
