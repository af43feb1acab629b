#pragma once
// `gpubench tune dataload`: the fewest loader workers (CPU cores) and the loader settings
// (prefetch, pinned, aug, decode scale, format) that keep a consumer's data stall under
// --max-stall, searched with search_workers (workers_search.hpp) over the dataload suite's
// pipeline cases run through the harness (set up, verified, warmed up, timed), then the
// recommended and the default settings measured again, longer, three ways (io=memory, cached,
// cold) for DS-Analyzer's stall split. Writes a results file (each configuration tried an
// entry) with `gpubench.tuning` (docs/tune.md).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpubench::tune {

struct DataloadTuneOptions {
  std::string device;             // cpu or cuda:N; empty: cuda:0 when a GPU is here, else cpu
  std::string dataset;            // a folder (GPUBENCH_DATASET); empty: the suite generates one
  std::optional<double> step_time_s;    // the consumer's time per batch
  std::optional<double> consumer_rate;  // or its rate in samples/s (step = batch / rate)
  std::string consumer_from;      // or a results file: its first train case's measured samples/s
  std::string consumer = "spin";  // or train-768 | train-3072 | train-9408: a real train step
  double max_stall = 0.05;        // share
  double budget_s = 60;
  std::uint64_t seed = 1;
  int batch = 16;
  std::string io = "cached";      // the stall measured with the dataset in the page cache, or cold
  int max_workers = 0;            // 0: the CPUs of the process (per rank under a launcher)
  int max_scale = 2;              // decode scales tried: 1, 2, ... up to this
  int default_workers = 1;        // the default configuration's workers
  std::string out;
  std::string command_line;       // for the results context
  bool quiet = false;
};

// The consumer rate of a train case measured earlier: the first ok train iteration entry of a
// results file, its samples/s (the mlp) or tokens/s / seq (transformers: sequences/s), and
// its name. UsageError naming the file when it has none.
std::pair<double, std::string> train_consumer_rate(const std::string& results_path);

// The default consumer when neither a step time, a rate nor a train consumer is given.
inline constexpr double kDefaultStepTimeS = 0.05;

// The most --budget may be (seconds).
inline constexpr double kMaxDataloadBudgetS = 86400;

// Throws UsageError naming the option for a value out of its range or a contradiction between
// options (dataload_options.cpp). Pure: no file is opened (tune_dataload checks --dataset and
// --out itself).
void check_dataload_option_values(const DataloadTuneOptions& o);

// The final's rule: never a recommendation that the final measured slower than the default, or
// that misses the stall target the default meets. Given the two final measurements
// (samples_per_s, meets_max_stall), why the default must be recommended instead, or nullopt.
std::optional<std::string> default_beats_recommendation(const nlohmann::ordered_json& recommended,
                                                        const nlohmann::ordered_json& default_config);

// Throws UsageError for bad options (before anything runs); returns the exit code: 0 with a
// recommendation, 1 when none could be made (every configuration failed).
int tune_dataload(const DataloadTuneOptions& options);

}  // namespace gpubench::tune
