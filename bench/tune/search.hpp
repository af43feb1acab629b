#pragma once
// The search engine of `gpubench tune train` / `tune dataload`: successive halving over an
// explicit list of candidate configurations (a discrete knob space, already filtered by the
// caller), with a cost oracle that measures one configuration at one effort.
//
//   round 0 ("short"): every candidate, in prior order, measured at effort 0;
//   round k ("long"):  the best ceil(n / eta) (at least 2) of round k-1's measured candidates,
//                      at effort k (the oracle makes effort k about eta times longer than k-1);
//   until max_rounds rounds were run, fewer than 2 candidates are left, or the budget is spent.
//
// Pruning: a candidate that does not fit (out of memory) prunes every later candidate the
// caller's `at_least_as_large` says needs at least as much memory, without measuring it (the
// largest-batch search's reasoning: what did not fit at micro-batch b does not fit above b).
// It saves measurements when smaller configurations come first in the order (or a default
// is measured first); in a large-first order each unfit candidate is one (cheap) failure.
// Failed and unfit candidates are logged with their reason and never recommended.
//
// Budget: a measurement starts only when the time it is expected to take (the longest one
// measured so far at that effort, else the longest at the effort below times eta) fits in what
// is left of `budget_s`; the very first measurement starts regardless (nothing can be
// recommended without one). So the search ends within budget_s, except for one measurement
// whose cost exceeds every earlier one at its effort.
//
// Reproducible: the order is the caller's prior (higher first), ties broken by a shuffle seeded
// with `seed`; with a deterministic oracle and clock the same seed gives the same log.
// Plain C++ over an abstract oracle and clock: tested with a fake cost model (tests/unit).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench::tune {

// Knob values of one configuration, in the knobs' order: {"micro_batch", "8"}, ...
using Config = std::vector<std::pair<std::string, std::string>>;
std::string config_label(const Config& c);  // "precision=fp32 micro_batch=8 ..."
const std::string& knob(const Config& c, const std::string& name);  // std::out_of_range if absent

struct Candidate {
  Config config;
  double prior = 0;  // expected merit, higher first: the order of round 0 (and of a short budget's cut)
};

enum class Status { Ok, Failed, DoesNotFit, Skipped };
const char* to_string(Status s);  // ok, failed, does-not-fit, skipped

// One measurement by the oracle.
struct Measured {
  Status status = Status::Ok;  // Ok, Failed or DoesNotFit
  double score = 0;            // higher is better (e.g. samples/s); only read when Ok
  std::string reason;          // why Failed / DoesNotFit
  nlohmann::ordered_json figures = nlohmann::ordered_json::object();  // measured figures, kept in the log
};

// Measures a configuration at an effort (0: short; each level about eta times longer).
using Oracle = std::function<Measured(const Config&, int effort)>;
using Clock = std::function<double()>;  // seconds, monotonic

struct SearchOptions {
  double budget_s = 60;
  std::uint64_t seed = 1;
  int eta = 3;         // keep 1/eta per round
  int max_rounds = 3;  // round 0 included
  // The caller's memory order: true when `other` needs at least as much memory as `unfit`
  // (same precision and recompute, micro-batch >= ...). Null: nothing is pruned.
  std::function<bool(const Config& unfit, const Config& other)> at_least_as_large;
};

struct LogEntry {
  Config config;
  int round = 0;             // 0: short; >0: long
  Status status = Status::Ok;
  double score = 0;          // Ok only
  std::string reason;        // Failed, DoesNotFit, Skipped
  nlohmann::ordered_json figures = nlohmann::ordered_json::object();
  double cost_s = 0;         // clock time the measurement took (0 when not measured)
  std::string stage() const { return round == 0 ? "short" : "long"; }
};

struct SearchResult {
  std::optional<std::size_t> best;   // index into the candidates as given; only a measured Ok one
  std::vector<double> latest_score;  // per candidate: its most thorough Ok score (NaN: none)
  std::vector<int> latest_round;     // per candidate: the round of that score (-1: none)
  std::vector<LogEntry> log;         // every measurement and every skip, in order
  double elapsed_s = 0;
  int rounds = 0;                    // rounds started
  bool budget_exhausted = false;     // a measurement was left out for the budget
  int measured = 0, failed = 0, unfit = 0, skipped = 0;  // candidates by their final state
};

SearchResult successive_halving(const std::vector<Candidate>& candidates, const Oracle& oracle, const Clock& clock,
                                const SearchOptions& options);

}  // namespace gpubench::tune
