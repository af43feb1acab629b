#pragma once
// `gpubench compare BASE NEW`: a regression verdict per case with statistics, for CI.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/document.hpp"
#include "reports/plausibility.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

struct CompareOptions {
  double threshold_pct = 5;  // a change smaller than this is "unchanged"
  double alpha = 0.05;       // significance level of the tests
  bool allow_different_devices = false;
  plausibility::PeakLookup datasheet;  // for the plausibility rules (empty: measured ceilings only)
  plausibility::ClockLookup datasheet_clock;  // the clock each datasheet figure assumes (empty: none known)
  // Load from other processes (profile.host.other_cpu_pct, steal_pct) above which a side is
  // "contended" and its change cannot be called a regression or an improvement.
  double contended_pct = 10;
  bool fail_on_ambiguous = false;  // an ambiguous case fails (exit 1, JUnit failure) too
};

// ambiguous: a change that the recorded clock explains (the change in cycles, time x clock, is
// below the threshold) or that a contended side may have caused; never a regression by itself.
enum class Verdict { improved, regressed, unchanged, noisy, missing, added, ambiguous };
const char* verdict_name(Verdict v);  // "improved", ..., "new" for added

struct CaseComparison {
  std::string suite, device, device_name, label;  // label: the axes
  std::vector<double> base, next;  // headline values per repetition (higher is better)
  std::string metric, unit;
  double base_median = 0, new_median = 0, ratio = 0;  // new / base
  std::string test;  // "mann-whitney", "noise-overlap", or "" (missing/new)
  double p = 1;      // U test p-value (mann-whitney only)
  std::string detail;  // why this verdict, one line
  std::vector<std::string> suspect;  // "base: reason" / "new: reason" (docs/plausibility.md)
  std::optional<double> base_clock_mhz, new_clock_mhz;  // median recorded clock of each side
  Verdict verdict = Verdict::unchanged;
};

struct Comparison {
  std::vector<CaseComparison> cases;
  std::vector<std::string> warnings;
  std::size_t regressions() const;
  std::size_t ambiguous() const;
  // Cases that fail the comparison (exit 1): regressions, and ambiguous ones when asked to.
  std::size_t failures(const CompareOptions& o) const { return regressions() + (o.fail_on_ambiguous ? ambiguous() : 0); }
};

// Throws UsageError when the files hold different GPU models and that is not allowed.
//
// Per case (suite + axes + device id): the values of the headline metric per repetition on each
// side, their medians and ratio. Significance: the Mann-Whitney U test when both sides have at
// least 2 repetitions and enough of them for p < alpha to be reachable (a warning below 9, as
// Google Benchmark's compare.py gives); otherwise the noise-overlap rule: the change counts when
// the ranges median x (1 +- noise) of the two sides do not overlap, noise being the measured
// relative standard deviation of the samples (measurement.noise_pct; 0 when not recorded).
// Verdict: |change| < threshold -> unchanged; else significant -> improved/regressed; else noisy.
// Then the two fake regressions (issue 27): an improved/regressed case whose sides recorded
// different clocks (metrics.sm_clock_mhz on GPUs, profile.host.cpu_clock_mhz on CPUs; medians)
// and whose change in cycle space (ratio / clock ratio) is below the threshold is
// `ambiguous: clock B -> N MHz`; one where either side ran with other processes' load above
// contended_pct (profile.host.other_cpu_pct or steal_pct) is `ambiguous: load`. Where no clock
// or load is recorded, the statistics and verdicts are those above (Google Benchmark's compare.py).
Comparison compare_results(const ResultsFile& base, const ResultsFile& next, const CompareOptions& options);

Document comparison_document(const Comparison& c, const ResultsFile& base, const ResultsFile& next,
                             const CompareOptions& options);
std::string comparison_junit(const Comparison& c, const CompareOptions& options);
nlohmann::ordered_json comparison_json(const Comparison& c, const CompareOptions& options);

}  // namespace gpubench::reports
