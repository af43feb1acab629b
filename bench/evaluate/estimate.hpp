#pragma once
// What a planned case will cost in wall seconds, before anything runs: one model that
// `run --dry-run`, `tune gemm --dry-run` and `gpubench evaluate`'s budget share.
//
//   case = repetitions x (warm-up + timed samples + one verification run + setup) + allowances
//
// - the measurement policy (bench/core/measure.hpp) fixes warm-up (doubling batches until
//   --warmup: under 2 x warmup, or one run where a run is longer) and the timed samples
//   (--min-time, or --min-samples samples of max(--batch-time, one run));
// - one run's time comes from the case's own work (Case::metrics: FLOPs, bytes) over the rate
//   the device is expected to reach, a stated fraction of its datasheet figure (CPU: of the
//   derived peak, bench/core/cpu_peak.hpp). A case whose run outlasts a sample is planned at
//   its length: `-a seq_q=1000000` plans hours, not the policy's half second;
// - setup and verification that no policy holds are allowances, each named (CostModel, and
//   planning_allowances for what a suite's case does beyond its work: cuDNN graph builds,
//   host verification of a Llama layer, a serve trace's arrivals), calibrated by the first GPU
//   run (H200, 2026-12-04, docs/gpu-hosts.md) where it measured them.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/device.hpp"
#include "bench/core/measure.hpp"
#include "bench/core/plan.hpp"

namespace gpubench::evaluate {

// The datasheet figure of a device for a peak key: TFLOP/s ("bf16_tensor", "fp32"), or GB/s
// for "memory_bandwidth"; nullopt where unknown. A command builds it from the spec sheet and the
// CPU's derived peak (apps/gpubench/dry_run.hpp: rate_lookup).
using RateLookup = std::function<std::optional<double>(const DeviceInfo& device, const std::string& peak_key)>;

// Costs the measurement policy does not determine. Allowances, not measurements: evaluate
// records each part's planned and measured seconds side by side, so they can be corrected.
struct CostModel {
  double process_start_s = 2.0;   // a gpubench process: CUDA context, cuBLAS/cuBLASLt handles, NVML
  double case_setup_s = 0.1;      // per case: allocation, input fill, verification against the reference
  // Per GPU case of a preset-sized plan, on top of case_setup_s: the H200 run's `quick` step, 174
  // GPU cases, took 59-67 s against a 26 s plan (buffers up to 1 GiB allocated, filled and
  // verified on the host); scripts/smoke_allowances.awk adds the same 0.2 s ("preset case").
  double gpu_preset_case_s = 0.2;
  double metrics_replay_s = 1.0;  // per case with --profile metrics: the range profiler's replay passes
  double tune_candidate_s = 0.006;  // tune gemm: one algorithm timed (3 batches of ~2 ms, gemm_cublaslt.cpp)
  // The fraction of the datasheet figure a run is planned at: cuBLASLt's best large bf16 GEMM
  // reaches about 0.7-0.8 of an H100's dense peak (ml-engineering's MAMF table), smaller and
  // other kernels less; a STREAM-like kernel about 0.9 of the HBM figure. Lower fractions plan
  // longer: the budget errs toward finishing early.
  double gpu_compute_fraction = 0.5;
  double gpu_memory_fraction = 0.7;
  // The CPU: its derived peak counts every core's widest FMAs (an upper bound, twice the real
  // rate on Zen 1-4); the reference kernels and OpenBLAS on two cores reach 10-40% of it.
  double cpu_compute_fraction = 0.1;
  // No datasheet gives a host's memory bandwidth: a 2-core cloud VM's STREAM triad measures
  // 8-20 GB/s; 8 GB/s plans long on bigger hosts, never short.
  double cpu_memory_gbps = 8.0;
};

// Seconds one run of a case with these metrics is expected to take on `device`: the larger of
// flops over the compute rate and bytes over the memory rate; 0 where neither is known.
double expected_run_seconds(const Metrics& metrics, const DeviceInfo& device, const RateLookup& rates,
                            const CostModel& costs);

// Wall seconds of one case that runs, from the policy, the expected run time (0: unknown, the
// policy alone) and the setup allowance; times `repetitions`. A single-run case (a serve
// trace: SamplingPolicy::single_run) is one run plus its setup.
double estimate_case_seconds(const MeasureOptions& m, int repetitions, const CostModel& costs, double run_s = 0,
                             bool single_run = false, double setup_s = -1);

// A cost named on the plan: "cuDNN attention case", 2.5 s.
struct Allowance {
  std::string what;
  double seconds = 0;
};

// What a case of a suite costs beyond its measurement policy and its work, per case (the same
// constants as scripts/smoke_allowances.awk, which the GPU smoke adds to `run --dry-run`'s plan).
std::vector<Allowance> planning_allowances(const PlannedCase& planned, const CostModel& costs);

struct EstimateSettings {
  MeasureOptions measure;
  int repetitions = 1;
  bool metrics = false;      // --profile metrics: a replay per case
  bool allowances = false;   // add planning_allowances and the preset-case setup (evaluate)
  CostModel costs;
  RateLookup rates;          // empty: no work-based run time (the policy alone)
};

struct CaseEstimate {
  double seconds = 0;  // 0 for a skipped case
  double run_s = 0;    // the expected time of one run (0: unknown)
  std::vector<Allowance> allowances;
};

// The estimate of one planned case. The case is made (Suite::make_case allocates nothing) to
// read its metrics; a case whose metrics need its setup (they throw, or are all zero) is
// planned by the policy alone.
CaseEstimate estimate_case(const PlannedCase& planned, const EstimateSettings& settings);

struct PlanEstimate {
  std::size_t to_run = 0, skipped = 0;
  double seconds = 0;  // one process start, plus every case that runs (and a process per case with isolate)
  std::vector<Allowance> allowances;  // summed per kind, in first-seen order
};
PlanEstimate estimate_plan(const std::vector<PlannedCase>& plan, const EstimateSettings& settings, bool isolate = false);

}  // namespace gpubench::evaluate
