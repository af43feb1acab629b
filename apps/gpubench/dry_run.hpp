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
#include "bench/evaluate/estimate.hpp"
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

// The plan's estimate is bench/evaluate/estimate.hpp's (one model for the dry runs and
// evaluate's budget). The rates it plans runs at: the spec sheet's figures for a GPU, the CPU's
// derived peak (bench/core/cpu_peak.hpp) for the CPU.
evaluate::RateLookup rate_lookup(const reports::SpecSheet& specs);

using evaluate::CostModel;
using evaluate::PlanEstimate;

// The closing line of every dry run, which scripts read: "dry-run: N to run, K skipped, about S s".
std::string dry_run_line(const PlanEstimate& e);

// `run --dry-run`'s estimate of a plan: the policy of `measure`, run times from `rates`; without
// the suites' allowances (the GPU smoke adds them from its own table, scripts/smoke_allowances.awk).
PlanEstimate estimate_run_plan(const std::vector<PlannedCase>& plan, const MeasureOptions& measure, int repetitions,
                               bool isolate, bool metrics, const evaluate::RateLookup& rates);

// The plan, one case per line as `gpubench list` prints it, on stdout.
void print_plan(const std::vector<PlannedCase>& plan);

}  // namespace gpubench::app
