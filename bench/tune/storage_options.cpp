// `gpubench tune storage`'s pure parts (storage_tune.hpp): the option values checked (the
// command's parser and its fuzzer use it without the tuner) and the search over N.
#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "bench/core/errors.hpp"
#include "bench/suites/storage/au.hpp"
#include "bench/tune/storage_tune.hpp"

namespace gpubench::tune {

void check_storage_option_values(const StorageTuneOptions& o) {
  namespace st = suites::storage;
  const bool custom = o.workload == "custom";
  if (!custom && o.workload != "unet3d" && o.workload != "resnet50" && o.workload != "retinanet") {
    throw UsageError(fmt::format("--workload '{}': expected unet3d, resnet50, retinanet (MLPerf Storage's) or custom", o.workload));
  }
  if (!custom && st::find_workload(o.workload, o.accelerator) == nullptr) {
    std::string have;
    for (const st::AuWorkload& w : st::published_workloads()) {
      if (w.name == o.workload) have += (have.empty() ? "" : ", ") + w.accelerator;
    }
    throw UsageError(fmt::format("--accelerator '{}': MLPerf Storage publishes {}'s step time for {} (or give --step-time)",
                                 o.accelerator, o.workload, have));
  }
  if (custom && (!o.sample_bytes || !o.batch || (!o.step_time_s && o.consumer_from.empty()))) {
    throw UsageError("--workload custom: give --sample-bytes, --batch and --step-time (or --consumer-from)");
  }
  if (o.step_time_s && !o.consumer_from.empty()) throw UsageError("--step-time and --consumer-from: give one of them");
  if (o.sample_bytes && (*o.sample_bytes < 512 || *o.sample_bytes > (std::int64_t{4} << 30))) {
    throw UsageError(fmt::format("--sample-bytes {}: expected 512 B to 4 GiB", *o.sample_bytes));
  }
  if (o.batch && (*o.batch < 1 || *o.batch > 4096)) throw UsageError(fmt::format("--batch {}: expected 1 to 4096", *o.batch));
  if (o.step_time_s && !(*o.step_time_s >= 0.001 && *o.step_time_s <= 60)) {
    throw UsageError(fmt::format("--step-time {}: expected seconds from 0.001 to 60", *o.step_time_s));
  }
  if (o.au_pct && !(*o.au_pct > 0 && *o.au_pct < 100)) {
    throw UsageError(fmt::format("--au {}: expected a percentage above 0 and below 100", *o.au_pct));
  }
  if (o.read_threads && (*o.read_threads < 1 || *o.read_threads > 64)) {
    throw UsageError(fmt::format("--read-threads {}: expected 1 to 64", *o.read_threads));
  }
  if (o.direct != 0 && o.direct != 1) throw UsageError(fmt::format("--direct {}: expected 1 (O_DIRECT) or 0 (page cache)", o.direct));
  if (o.size < 0 || o.size > (std::int64_t{1} << 50)) throw UsageError(fmt::format("--size {}: expected bytes up to 1 PiB (0: the default)", o.size));
  if (o.max_accelerators < 1 || o.max_accelerators > kMaxAccelerators) {
    throw UsageError(fmt::format("--max-accelerators {}: expected 1 to {}", o.max_accelerators, kMaxAccelerators));
  }
  const int threads = o.read_threads ? *o.read_threads : custom ? 4 : st::find_workload(o.workload, o.accelerator)->read_threads;
  if (static_cast<long long>(threads) * o.max_accelerators > kMaxLoaderThreads) {
    throw UsageError(fmt::format("--max-accelerators {} x {} read threads: at most {} loader threads",
                                 o.max_accelerators, threads, kMaxLoaderThreads));
  }
  if (!(o.run_s >= 0.05 && o.run_s <= 3600)) throw UsageError(fmt::format("--run-time {}: expected seconds from 0.05 to 3600", o.run_s));
  if (!(o.budget_s > 0 && o.budget_s <= 86400)) {
    throw UsageError(fmt::format("--budget {}: expected seconds above 0, at most 86400", o.budget_s));
  }
}

int largest_passing(const std::vector<std::pair<int, bool>>& tried) {
  int best = 0;
  for (const auto& [n, passed] : tried) {
    if (passed) best = std::max(best, n);
  }
  return best;
}

std::optional<int> next_accelerators(const std::vector<std::pair<int, bool>>& tried, int max_n) {
  const int pass = largest_passing(tried);
  int fail = INT_MAX;
  for (const auto& [n, passed] : tried) {
    if (!passed) fail = std::min(fail, n);
  }
  if (tried.empty()) return 1;
  if (fail == INT_MAX) {  // every N so far passed: double, up to the most allowed
    if (pass >= max_n) return std::nullopt;
    return std::min(max_n, pass * 2);
  }
  if (fail - pass <= 1) return std::nullopt;  // the gap is closed (pass 0, fail 1: none fed)
  return pass + (fail - pass) / 2;
}

}  // namespace gpubench::tune
