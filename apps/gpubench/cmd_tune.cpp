// gpubench tune gemm: for every planned GEMM shape on every selected GPU, time up to
// --lt-candidates cuBLASLt algorithms, keep the fastest (verified), write them to the tuning
// cache and print a per-shape report (default vs best, gain, algorithm).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/dry_run.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/paths.hpp"
#include "bench/suites/all_suites.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/gemm_tune.hpp"

namespace gpubench::app {
namespace {

PlanRequest tune_request(const TuneOptions& o) {
  PlanRequest request = to_plan_request(o.selection, "");
  request.suites = {"gemm"};
  request.axis_overrides.push_back("provider=cublaslt-tuned");  // the last --axis for a name wins
  return request;
}

// --dry-run: the shapes a tune would time (one line per planned case, as `list`) and the
// estimated wall time: a process start, and per distinct shape its setup, verification and
// --lt-candidates timed algorithms.
int dry_run(const TuneOptions& o) {
  const DeviceInventory inventory = inventory_for(o.selection, reports::SpecSheet::builtin());
  const DeviceSelection selection = select_devices(o.selection.device, inventory);
  std::vector<DeviceInfo> gpus;
  for (const DeviceInfo& d : selection.devices)
    if (d.is_cuda()) gpus.push_back(d);
  const std::vector<PlannedCase> plan = make_plan(suites::all(), tune_request(o), gpus);
  print_plan(plan);
  const CostModel costs;
  PlanEstimate e;
  e.seconds = costs.process_start_s;
  std::vector<suites::gemm::TuningKey> keys;
  for (const PlannedCase& c : plan) {
    if (c.skip_reason) {
      ++e.skipped;
      continue;
    }
    const suites::gemm::TuningKey key = suites::gemm::tuning_key(c.device, suites::gemm::spec_from(c.point));
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;  // tuned once, as below
    keys.push_back(key);
    ++e.to_run;
    e.seconds += costs.case_setup_s + o.lt_candidates * costs.tune_candidate_s;
  }
  fmt::print("{}\n", dry_run_line(e));
  return 0;
}

}  // namespace

int cmd_tune(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "train") return cmd_tune_train({args.begin() + 1, args.end()});
  if (!args.empty() && args.front() == "dataload") return cmd_tune_dataload({args.begin() + 1, args.end()});
  if (!args.empty() && args.front() == "storage") return cmd_tune_storage({args.begin() + 1, args.end()});
  if (!args.empty() && args.front() == "gemm" && std::find(args.begin(), args.end(), "--mamf") != args.end()) {
    return cmd_tune_mamf(args);
  }
  const TuneOptions o = parse_tune_options(args);
  if (o.help) return print_help(o.help_text);
  if (o.dry_run) return dry_run(o);

  // An existing cache must be readable before any GPU time is spent.
  suites::gemm::TuningCache cache;
  if (std::filesystem::exists(o.cache)) {
    try {
      cache = suites::gemm::TuningCache::load(o.cache);
    } catch (const suites::gemm::TuningCacheError& e) {
      throw UsageError(e.what());
    }
  }

  const DeviceInventory inventory = discover_devices();
  const DeviceSelection selection = select_devices(o.selection.device, inventory);
  std::vector<DeviceInfo> gpus;
  for (const DeviceInfo& d : selection.devices)
    if (d.is_cuda()) gpus.push_back(d);
  if (gpus.empty()) {
    const std::string why = inventory.cuda.empty() ? inventory.cuda_unavailable_reason : "--device selects no GPU";
    fmt::print(stderr, "gpubench tune: no CUDA device to tune on: {}\n", why);
    return 1;
  }

  const std::vector<PlannedCase> plan = make_plan(suites::all(), tune_request(o), gpus);

  std::vector<suites::gemm::TuningEntry> tuned;
  int failed = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedCase& c = plan[i];
    const suites::gemm::GemmCaseSpec spec = suites::gemm::spec_from(c.point);
    const suites::gemm::TuningKey key = suites::gemm::tuning_key(c.device, spec);
    const std::string label = fmt::format("{} on {}", key.shape_label(), c.device.id());
    if (c.skip_reason) {
      if (!o.quiet) fmt::print(stderr, "[{}/{}] skipped {}: {}\n", i + 1, plan.size(), label, *c.skip_reason);
      continue;
    }
    // Shapes that differ only in what the algorithm does not see (alpha, fusion=separate's
    // epilogue, padding) share a key: tune each key once.
    if (std::any_of(tuned.begin(), tuned.end(), [&](const auto& e) { return e.key == key; })) continue;
    if (!o.quiet) fmt::print(stderr, "[{}/{}] tuning {}\n", i + 1, plan.size(), label);
    try {
      suites::gemm::TuningEntry e = suites::gemm::tune_cublaslt(c.device, spec, o.lt_candidates);
      cache.put(e);
      tuned.push_back(std::move(e));
      cache.save(o.cache);  // after every shape: an interrupted tune keeps what it found
    } catch (const CaseSkipped& e) {
      if (!o.quiet) fmt::print(stderr, "[{}/{}] skipped {}: {}\n", i + 1, plan.size(), label, e.what());
    } catch (const suites::gemm::TuningCacheError& e) {
      throw;  // cannot write the cache: stop
    } catch (const std::exception& e) {
      ++failed;
      fmt::print(stderr, "[{}/{}] failed {}: {}\n", i + 1, plan.size(), label, e.what());
    }
  }
  if (!tuned.empty()) {
    fmt::print("{}", suites::gemm::format_tuning_report(tuned));
  }
  fmt::print(stderr, "gpubench tune: {} shape(s) tuned, {} failed; cache {}\n", tuned.size(), failed, o.cache);
  return failed > 0 ? 1 : 0;
}

}  // namespace gpubench::app
