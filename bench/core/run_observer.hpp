#pragma once
// What a run shows while it goes is the caller's business, not the harness's: the harness tells
// an observer when each case starts and ends (with the results entries it wrote) and when the
// run is done, as it tells instruments about each case's phases. `gpubench run`'s console
// tables (apps/gpubench/console.hpp) are one observer; a tune or soak that runs cases quietly
// gives none. So the harness never depends on how results are rendered (reports/).
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan.hpp"

namespace gpubench {

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void started(std::size_t index) = 0;  // case `index` of the plan begins
  // Every results entry the case wrote (one per repetition, plus aggregates).
  virtual void finished(std::size_t index, const std::vector<nlohmann::ordered_json>& entries) = 0;
  virtual void done() = 0;  // the run ended (also after an exception unwinds it)
};

// What an observer is told about the run it watches.
struct ObservedRun {
  bool quiet = false;   // nothing is to be shown (--quiet, or ranks other than 0)
  bool tables = true;   // false: Google Benchmark's reporter prints the cases (--benchmark_format)
};

// Makes the observer of one run over `plan` (which outlives it). Empty: nobody watches.
using RunObserverFactory =
    std::function<std::unique_ptr<RunObserver>(const std::vector<PlannedCase>& plan, const ObservedRun& run)>;

}  // namespace gpubench
