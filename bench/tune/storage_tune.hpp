#pragma once
// `gpubench tune storage`: the most accelerators this storage keeps fed at the workload's AU
// threshold (MLPerf Storage's emulation, bench/suites/storage/au.hpp). N = 1, 2, 4, ... until a
// run misses the threshold, then halving between the last N that passed and the first that
// failed, within --budget. Writes a results file (every N an entry) with gpubench.storage_au
// (docs/suite-storage.md, "How many GPUs this storage feeds").
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpubench::tune {

struct StorageTuneOptions {
  std::string workload = "unet3d";  // unet3d | resnet50 | retinanet (MLPerf Storage's), or custom
  std::string accelerator = "h100"; // whose published step time (h100, a100)
  std::optional<std::int64_t> sample_bytes;  // override (custom: required)
  std::optional<int> batch;
  std::optional<double> step_time_s;
  std::string consumer_from;        // a results file: its train case's samples/s gives the step
  std::optional<double> au_pct;     // the threshold (default: the workload's)
  std::optional<int> read_threads;  // loader threads per accelerator
  int direct = 1;                   // 1: O_DIRECT; 0: the page cache (dropped before every run)
  std::int64_t size = 0;            // bytes of the generated file (0: 1 GiB, at least 2 batches)
  int max_accelerators = 64;
  double run_s = 3;                 // each N's run, at least (min 4 steps)
  double budget_s = 120;
  std::uint64_t seed = 1;
  std::string out;
  std::string command_line;
  bool quiet = false;
};

inline constexpr int kMaxAccelerators = 256;
inline constexpr int kMaxLoaderThreads = 2048;  // accelerators x read threads, at most

// Throws UsageError naming the option for a value out of range or a contradiction. Pure.
void check_storage_option_values(const StorageTuneOptions& o);

// The search, pure: given the N tried so far and whether each passed, the next N to try
// (doubling from 1 while they pass, then halving the gap between the largest pass and the
// smallest failure), or nullopt when that gap is closed or max_n passed.
std::optional<int> next_accelerators(const std::vector<std::pair<int, bool>>& tried, int max_n);
// The largest N that passed (0: none).
int largest_passing(const std::vector<std::pair<int, bool>>& tried);

// Returns the exit code: 0 when the search ran (whatever N it found), 1 when a run failed.
int tune_storage(const StorageTuneOptions& options);

}  // namespace gpubench::tune
