#pragma once
// Planning without running: `--assume MODEL` plans against a named GPU model instead of the
// devices here, and `run --dry-run` / `tune gemm --dry-run` print the plan with an estimate of
// its wall time, from the measurement policy and stated allowances (nothing is run or written).
// scripts/gpu-smoke.sh --dry-run sums these estimates into its plan for a GPU host.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "bench/core/device.hpp"
#include "bench/core/measure.hpp"
#include "bench/core/plan.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::app {

// The CUDA device a model of the spec sheet would show the planner: `model` is an entry's key
// ("h200-sxm") or a prefix that only one key starts with ("h200"), case-insensitive, or a CUDA
// device name the entry matches ("NVIDIA H200", as nvidia-smi prints it). The
// device's name, memory and SM count come from the spec sheet entry, its compute capability
// from the architecture table in dry_run.cpp. UsageError (listing the keys) when the model is
// unknown, ambiguous, or of an architecture the table lacks.
DeviceInfo assumed_device(std::string_view model, const reports::SpecSheet& specs);

// What the planner sees with --assume: the host CPU and the one assumed GPU as cuda:0; with
// `MODEL:N` (N from 1 to 64), N such GPUs as cuda:0 to cuda:N-1, and `gpus` is N (0 without
// a count). UsageError for a count that is not a whole number in range.
struct AssumedNode {
  DeviceInventory inventory;
  int gpus = 0;
};
AssumedNode assumed_inventory(std::string_view model, const reports::SpecSheet& specs);

// Costs the measurement policy does not determine. These are allowances, not measurements: a
// real smoke run prints each step's planned and measured seconds side by side, so they can be
// corrected from a GPU host's numbers.
struct CostModel {
  double process_start_s = 2.0;   // a gpubench process: CUDA context, cuBLAS/cuBLASLt handles, NVML
  double case_setup_s = 0.1;      // per case: allocation, input fill, verification against the reference
  double metrics_replay_s = 1.0;  // per case with --profile metrics: the range profiler's replay passes
  double tune_candidate_s = 0.006;  // tune gemm: one algorithm timed (3 batches of ~2 ms, gemm_cublaslt.cpp)
};

// Wall seconds one case that runs is planned to take: warm-up (doubling batches until
// warmup_s has passed: under 2 x warmup_s for a fast case), the timed samples (min_time_s, or
// min_samples batches of batch_s where that is longer; a run slower than a sample makes it
// longer, which no plan can know), and the setup allowance; times `repetitions`.
double estimate_case_seconds(const MeasureOptions& m, int repetitions, const CostModel& costs);

struct PlanEstimate {
  std::size_t to_run = 0, skipped = 0;
  double seconds = 0;  // one process start, plus every case that runs (and a process per case with --isolate)
};

struct DryRunSettings {
  MeasureOptions measure;
  int repetitions = 1;
  bool isolate = false;
  bool metrics = false;
  CostModel costs;
};

PlanEstimate estimate_plan(const std::vector<PlannedCase>& plan, const DryRunSettings& settings);

// The closing line of every dry run, which scripts read: "dry-run: N to run, K skipped, about S s".
std::string dry_run_line(const PlanEstimate& e);

// The plan, one case per line as `gpubench list` prints it, on stdout.
void print_plan(const std::vector<PlannedCase>& plan);

}  // namespace gpubench::app
