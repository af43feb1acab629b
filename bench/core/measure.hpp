#pragma once
// The measurement policy every suite shares.
//
// 1. Warm-up: batches of doubling size until `warmup_s` has passed; the last batch gives an
//    estimate of the time per run.
// 2. Batch size: enough runs per sample that a sample lasts `batch_s` (so CUDA event
//    resolution, ~0.5 us, and launch latency are negligible). In cold mode every sample is one
//    run preceded by a cache flush outside the timed region.
// 3. Sample count: enough samples to fill `min_time_s`, and at least `min_samples`. In cold
//    mode a sample costs far more than its timed run (the flush, which reads twice the L2 on
//    a GPU, and the wait for the sample's end): the warm-up measures that wall-clock cost and
//    the count fills `min_time_s` of it, so a cold run's wall time stays close to what was
//    asked (a 5 us kernel would otherwise get 100,000 samples and ~8 s of flushing).
// The planned count is fixed before timing starts, so Google Benchmark is told the number of
// runs up front (it needs the same count for every repetition). When the planned samples
// fell short of `min_time_s` (the warm-up's estimate was slow), collect adds samples until
// they do: `min_time_s` is a floor, for every kind of case.
#include <cstdint>
#include <string>
#include <vector>

#include "case.hpp"
#include "stats.hpp"
#include "team.hpp"

namespace gpubench {

struct MeasureOptions {
  double min_time_s = 0.5;
  double warmup_s = 0.05;
  double batch_s = 0.002;
  std::int64_t min_samples = 10;
  double max_noise = 0.05;  // relative (stddev/mean) noise above which a case is flagged noisy
  bool cold = false;
  // With a team: every rank meets at an (untimed) barrier before each sample, so a window
  // starts with every rank present (Case::sampling; the MPI collectives set it).
  bool barrier_before_sample = false;
  // The warm-up's estimate of one run is its fastest batch's time per run instead of its last
  // (longest) batch's: a batch that lost the core to another process only runs slower, and an
  // estimate inflated by one would plan windows of a few runs (median headlines set it).
  bool estimate_from_fastest_batch = false;
  // Every sample is one run, whatever its length (per-iteration timing, SamplingPolicy).
  bool one_run_per_sample = false;
  // No warm-up and one sample of one run (SamplingPolicy::single_run).
  bool single_run = false;
};

struct MeasurePlan {
  std::int64_t runs_per_sample = 1;
  std::int64_t samples = 1;
  double estimated_run_s = 0;
  double estimated_sample_wall_s = 0;  // cold mode: wall seconds per sample, flush included
  std::int64_t total_runs() const { return runs_per_sample * samples; }
};

struct Measurement {
  std::vector<double> seconds_per_run;  // one value per sample
  double total_s = 0;                   // sum of the timed batches
  std::int64_t runs = 0;                // runs timed: the plan's, more when samples were added
  std::int64_t planned_samples = 0;
  std::int64_t samples() const { return static_cast<std::int64_t>(seconds_per_run.size()); }
  SampleStats stats;                    // of seconds_per_run
  bool noisy = false;
};

// Pure arithmetic of steps 2 and 3, from an estimated time per run and, in cold mode, the
// wall-clock cost of one cold sample (flush + run + wait; 0: unknown, the run time is used).
MeasurePlan plan_samples(double estimated_run_s, const MeasureOptions& options, double cold_sample_wall_s = 0);

struct WarmUpEstimate {
  double run_s = 0;          // timed seconds per run
  double sample_wall_s = 0;  // cold mode: wall seconds per cold sample (0 otherwise)
};

// Step 1. Warm mode: batches of doubling size until `warmup_s` of timed work. Cold mode:
// single cold samples (flush, one timed run) until `warmup_s` of wall time, at least 2; the
// estimates are the medians of all but the first (which allocates the flush buffer). With a
// team, every batch's time is the slowest rank's, so every rank runs the same batches, stops
// together and (plan_samples being pure arithmetic) plans the same runs: a collective case
// never waits for a rank that stopped.
WarmUpEstimate estimate_runs(Case& c, Timer& timer, const MeasureOptions& options, Team* team = nullptr);

// Step 1, the estimated seconds per run only.
double warm_up(Case& c, Timer& timer, const MeasureOptions& options, Team* team = nullptr);

// Step 1 then plan_samples.
MeasurePlan calibrate(Case& c, Timer& timer, const MeasureOptions& options, Team* team = nullptr);

// The time per run a measurement reports: the mean of every timed run (total / runs), or the
// median over samples of each sample's time per run (SamplingPolicy::Headline::Median).
double headline_s(const Measurement& m, SamplingPolicy::Headline headline);

// `options` with a case's sampling policy applied: its window caps the batch time, its
// barrier is taken before every sample, and a median headline plans from the fastest warm-up
// batch.
MeasureOptions with_policy(MeasureOptions options, const SamplingPolicy& policy);

// Times `plan.samples` batches of `plan.runs_per_sample` runs, then more such batches while
// the timed total is below `options.min_time_s` (with a team: the slowest rank's total, so
// every rank times the same batches; `step` names that agreement for the team's timeout
// message), up to the sample cap.
Measurement collect(Case& c, Timer& timer, const MeasurePlan& plan, const MeasureOptions& options,
                    Team* team = nullptr, const std::string& step = "timing");

}  // namespace gpubench
