#pragma once
// Data-stall arithmetic over a pipeline's consumer timeline (pure functions, unit-tested on
// synthetic timelines).
//
// Each consumer step records when it started, how long it waited for a batch (the data stall:
// the consumer had nothing to work on) and how long the whole step took. The stall share is
// sum(wait) / sum(step).
//
// DS-Analyzer's split (Mohan et al., "Analyzing and Mitigating Data Stalls in DNN Training",
// PVLDB 14(5), VLDB 2021, section 3): run the same training three ways and difference the
// step times:
//   t_synthetic  data already prepared in memory: no fetch, no preparation (compute only)
//   t_cached     the dataset in the page cache: preparation but no storage fetch
//   t_cold       the page cache dropped: fetch and preparation
//   prep stall  = max(0, t_cached - t_synthetic)      fetch stall = max(0, t_cold - t_cached)
// each also as a share of t_cold, the step time of the real (cold) run.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench::suites::dataload {

struct StepRecord {
  double start_s = 0;  // since the pipeline started
  double wait_s = 0;   // blocked on the queue
  double step_s = 0;   // the whole step, wait included
  int depth = 0;       // batches queued when the step asked for one
};

struct StallStats {
  std::int64_t steps = 0;
  double total_s = 0, wait_s = 0;
  double stall_share = 0;     // wait / total
  double mean_step_s = 0;
  double mean_wait_s = 0;
  std::int64_t stalled_steps = 0;  // steps that waited more than 1% of the mean step
};
StallStats stall_stats(const std::vector<StepRecord>& steps);

struct DsSplit {
  double synthetic_step_s = 0, cached_step_s = 0, cold_step_s = 0;
  double prep_stall_s = 0, fetch_stall_s = 0;
  double prep_share = 0, fetch_share = 0, compute_share = 0;  // of cold_step_s; they sum to 1
};
// Step times in seconds (> 0). A difference that comes out negative (noise) counts as 0; the
// compute share is then what is left.
DsSplit ds_analyzer_split(double synthetic_step_s, double cached_step_s, double cold_step_s);

// Queue depth over a timeline: mean, min, max, median, the share of steps that found the
// queue empty, and a compact series of at most `points` [time_s, mean depth] pairs (the steps
// split into equal consecutive groups).
nlohmann::ordered_json queue_depth_summary(const std::vector<StepRecord>& steps, std::size_t points = 32);

}  // namespace gpubench::suites::dataload
