// gpubench tune dataload: options only; the search lives in bench/tune/dataload_tune.cpp.
#include <fmt/format.h>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/core/errors.hpp"
#include "bench/tune/dataload_tune.hpp"

namespace gpubench::app {

constexpr const char* kTuneDataloadUsage = R"(Usage: gpubench tune dataload [options]

Finds the fewest loader workers (CPU cores) and the loader settings (prefetch depth, pinned
memory and aug=cpu|gpu on a GPU, JPEG decode scale, files or shard) that keep the consumer's
data stall under --max-stall, within --budget seconds. Every configuration is a dataload
pipeline case, verified before it is timed. The recommended and the default configuration are
then measured again, longer, three ways (io=memory, cached, cold) for the stall split
(preparation vs fetch). Writes a results file: each configuration tried is an entry, and
gpubench.tuning holds the recommendation, the default and the search log (docs/tune.md).
The consumer: --step-time S, --consumer-rate R or --consumer-from T.json (a train case's
measured rate): a spin of that time per batch; or
--consumer train-768|train-3072|train-9408 (the train suite's mlp step on the batch);
default: a 0.05 s step per batch. Under mpirun/srun the recommendation is per rank: rank 0
tunes with its share of the node's CPUs, the other ranks exit at once.
Exit status: 0 with a recommendation, 1 when none could be made or the device is not here,
2 on bad usage.

Options)";

int cmd_tune_dataload(const std::vector<std::string>& args) {
  tune::DataloadTuneOptions o;
  double max_stall_pct = o.max_stall * 100, step_time = 0, rate = 0;
  po::options_description desc(kTuneDataloadUsage);
  desc.add_options()
      ("device,d", po::value(&o.device), "cpu or cuda:N (default: cuda:0 when a GPU is here, else cpu)")
      ("dataset", po::value(&o.dataset),
       "a `gpubench datagen` folder or a folder of JPEG files (default: GPUBENCH_DATASET, else 64 generated images)")
      ("step-time", po::value(&step_time), "the consumer's seconds per batch (a spin)")
      ("consumer-rate", po::value(&rate), "or the consumer's samples/s (step = batch / rate)")
      ("consumer-from", po::value(&o.consumer_from),
       "or a results file with a train case: its measured samples/s (tokens/s / seq) is the consumer's rate")
      ("consumer", po::value(&o.consumer)->default_value(o.consumer),
       "spin, or train-768 | train-3072 | train-9408: one training step of the train suite's mlp per batch")
      ("max-stall", po::value(&max_stall_pct)->default_value(max_stall_pct),
       "percent of the consumer's time it may wait for data (above 0, below 100)")
      ("budget", po::value(&o.budget_s)->default_value(o.budget_s),
       "seconds for the search and the final measurements (above 0, at most 86400)")
      ("seed", po::value(&o.seed)->default_value(o.seed), "breaks ties of the search order")
      ("batch", po::value(&o.batch)->default_value(o.batch), "samples per batch (1 to 4096)")
      ("io", po::value(&o.io)->default_value(o.io), "the stall searched with the dataset cached (page cache) or cold")
      ("max-workers", po::value(&o.max_workers)->default_value(o.max_workers),
       "most workers tried (0: the process's CPUs, divided among the ranks of a node)")
      ("max-scale", po::value(&o.max_scale)->default_value(o.max_scale),
       "decode scales tried: 1/1 up to 1/this (1, 2, 4, 8; 1 keeps full-resolution decoding)")
      ("default-workers", po::value(&o.default_workers)->default_value(o.default_workers),
       "workers of the default configuration (prefetch 2, unpinned, aug=cpu, scale 1, files)")
      ("out,o", po::value(&o.out), "results file (default results/<host>-<UTC time>.json)")
      ("quiet,q", po::bool_switch(&o.quiet), "no progress on stderr")
      ("help,h", "show this help");
  po::variables_map vm = parse_or_throw(args, desc);
  if (vm.count("help")) return print_help(help_text(desc));
  if (vm.count("step-time")) o.step_time_s = step_time;
  if (vm.count("consumer-rate")) o.consumer_rate = rate;
  if (vm.count("out") && o.out.empty()) throw UsageError("--out: empty path");
  if (vm.count("dataset") && o.dataset.empty()) throw UsageError("--dataset: empty path");
  o.max_stall = max_stall_pct / 100;
  o.command_line = "gpubench tune dataload " + join_args(args);
  return tune::tune_dataload(o);
}

}  // namespace gpubench::app
