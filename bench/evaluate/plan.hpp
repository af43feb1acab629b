#pragma once
// `gpubench evaluate`'s plan: a node's evaluation as parts of ordinary cases (the suites' and
// soak's: no second harness), fitted to a time budget before anything runs.
//
//   check   doctor's findings; an error stops the run (--force goes on)
//   screen  every GPU at once, one worker per GPU: bf16 and fp8 GEMM at MAMF-style large
//           shapes, HBM triad, a short verified soak (the fleet rule names an outlier GPU)
//   depth   one GPU: fused attention prefill/decode, Llama 3 8B prefill/decode/serve, the bf16
//           and fp8 training steps, the largest micro-batch
//   node    all GPUs: peer copies, all-to-host concurrency, NCCL collectives up to 8 GiB, the
//           all-reduce with NCCL_ALGO=Ring and =NVLS where NCCL offers NVLS (NVSwitch
//           multicast), the data-parallel step (2 GPUs or more, one rank each; the card projects it to 64 and
//           512 GPUs with `scaling`'s model); on the CPU, under mpirun, the all-reduce and the
//           data-parallel step over the ranks
//   input   the data-loading pipeline on every GPU at once; `tune dataload`'s fewest loader
//           cores per GPU under the stall target, each GPU taking its share of the node's CPUs;
//           the node's storage and how many GPUs it feeds
//   media   one GPU's NVDEC and NVENC (skipped, saying so, where it has none) and the host's
//           x264 at the same size, for the cores one GPU stands in for
//
// Each part is a list of items; an item is one `gpubench run` (suites and axes) or one soak.
// The budget keeps items in priority order (kPriority in plan.cpp, docs/evaluate.md): an item
// that does not fit in what is left is dropped, named with its planned seconds and why.
#include <array>
#include <string>
#include <vector>

#include "bench/core/device.hpp"
#include "bench/core/suite.hpp"
#include "bench/evaluate/estimate.hpp"

namespace gpubench::evaluate {

// Where an item runs.
enum class Where {
  Host,      // the check: no device
  EveryGpu,  // one worker per selected device, all at once (the time is one worker's)
  OneGpu,    // the first selected device (the CPU on a CPU run)
  AllGpus,   // one process over every selected GPU (peer copies, collectives, soak)
  HostCpu,   // the host's cpu device, whatever is selected (the storage suite: the node's disks)
};

// The parts of an evaluation in run order: the check, the screen that picks the depth's GPU,
// then depth, node, input and media (what each holds: docs/evaluate.md).
inline constexpr std::array<const char*, 6> kParts = {"check", "screen", "depth", "node", "input", "media"};

struct Item {
  std::string part;  // one of kParts
  std::string name;  // gemm-bf16, hbm-triad, ... (stable: the node card reads them)
  int priority = 0;  // lower is kept first
  enum class Kind { Doctor, Run, Soak, TuneDataload, TuneStorage } kind = Kind::Run;
  Where where = Where::OneGpu;
  std::vector<std::string> suites;  // Run: the suites, each axis given below
  std::vector<std::string> axes;    // Run: NAME=VALUES overrides over the quick preset; Tune*: its options
  double soak_s = 0;                // Soak: the duration; Tune*: the search's budget
  std::size_t min_devices = 1;      // fewer selected devices (or ranks): skipped, saying so
  // One rank per device (the data-parallel step; the CPU's collectives): under mpirun/srun the
  // team runs it; a plain evaluation of several GPUs starts it under mpirun itself.
  bool ranks_per_device = false;
  // Set for the item's own process (NCCL_ALGO=NVLS): the item then runs as one process of its
  // own, and is skipped, not failed, where NCCL refuses the setting (it offers no such algorithm).
  std::vector<std::string> env;
  // Filled by the planner:
  std::size_t cases = 0;            // cases that run (on one worker for EveryGpu)
  std::size_t skipped_cases = 0;
  double planned_s = 0;
  std::string status = "planned";   // planned, "dropped: why", "skipped: why"
  // The `gpubench` arguments of the item's process (run or soak), without --device and --out.
  std::vector<std::string> arguments() const;
};

struct EvaluationPlan {
  double budget_s = 0;
  std::size_t ranks = 1;  // the mpirun/srun team's size (1: a plain evaluation)
  double planned_s = 0;  // the kept items plus the process start
  std::vector<DeviceInfo> devices;  // the selected devices (cuda:0..N-1, or cpu)
  std::vector<Item> items;          // every item in run order; dropped and skipped ones keep their status
  std::size_t gpus() const;
  std::vector<const Item*> kept() const;
  std::vector<const Item*> dropped() const;
};

// The items for these devices (GPU-sized on CUDA devices, CPU-sized on the CPU), before the
// budget: every item with its priority; `budget_s` sets the soak's length (a tenth of the
// budget, 10 to 60 s).
std::vector<Item> evaluation_items(const std::vector<DeviceInfo>& devices, double budget_s);

// Plans every item (make_plan over the suites, estimate_plan over its cases), then keeps items
// in priority order while they fit: UsageError for an empty device list or a budget under the
// check's own cost.
// `ranks`: the team's size under mpirun/srun (each rank then selects its own device), else 1.
EvaluationPlan plan_evaluation(const std::vector<const Suite*>& suites, const std::vector<DeviceInfo>& devices,
                               double budget_s, const EstimateSettings& settings, std::size_t ranks = 1);

// "--budget 30m": seconds from a number with s, m or h (a bare number is seconds); UsageError
// for zero, a negative, an unknown unit or more than 7 days.
double parse_budget(const std::string& text);

}  // namespace gpubench::evaluate
