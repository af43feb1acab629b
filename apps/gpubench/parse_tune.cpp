// `gpubench tune train`'s, `tune gemm`'s and `tune dataload`'s options, parsed and checked before anything runs
// (the fuzzer tests/fuzz/fuzz_cli drives them, as it does `run`'s).
#include <fmt/format.h>

#include <algorithm>

#include "apps/gpubench/options.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"
#include "bench/core/paths.hpp"
#include "bench/suites/gemm/gemm_tune.hpp"
#include "bench/tune/dataload_tune.hpp"
#include "bench/tune/storage_tune.hpp"

namespace gpubench::app {
namespace {

constexpr const char* kTuneTrainUsage = R"(Usage: gpubench tune train --model M [options]

Searches precision (GPU: fp32, tf32, fp16-amp, bf16-amp; CPU: fp32) x micro-batch x gradient
accumulation (micro-batch x accumulation x ranks = the global batch) x activation recompute
(transformers) for one model of the train suite on one device (per rank), within --budget seconds:
successive halving, short measurements first and longer ones for the best third, every
configuration verified before it is timed. Then the recommended and the default configuration
are measured again (after the budget) and compared: speed-up, throughput, noise, memory, MFU.
Writes a results file (every configuration tried is an entry) with gpubench.tuning; `gpubench
report` renders it. Exit status: 0 when a configuration was recommended, 1 when none could be,
2 on bad usage.

Under mpirun/srun (one rank per device) every configuration is the data-parallel step (dp=ddp;
--dp ddp,zero1 also tries ZeRO-1) and the search also tries the gradient bucket cap (bucket_mb: 1, 5, 25, 100 MiB, those that
give this model different buckets); micro-batch x accumulation x ranks = the global batch. Every
rank takes the same decisions (rank 0's clock and measurements), rank 0 writes the results file
and prints; the recommended command starts with the launcher (mpirun -np N gpubench run ...).

Options)";

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

constexpr const char* kTuneStorageUsage = R"(Usage: gpubench tune storage [options]

How many accelerators this storage keeps fed, as MLPerf Storage measures it: N emulated
accelerators each take a batch of samples from its own loader threads, then compute for the
workload's step time (a sleep: no GPU is needed). AU (accelerator utilisation) = compute time /
run time, the first step's wait excluded; the verdict is the largest N whose AU meets the
workload's threshold. N = 1, 2, 4, ... until one misses, then halving the gap, within --budget.
The samples are shuffled ranges of one file: generated (position-derived content, every read
checked) in GPUBENCH_STORAGE_DIR or the temporary folder, or GPUBENCH_STORAGE_FILE (read only).
Writes a results file: every N tried is an entry, gpubench.storage_au holds the curve and the
verdict (docs/suite-storage.md). Prints the curve and a line 'verdict: this storage feeds N GPUs
at AU >= X% (...)'. Exit status: 0 when the search ran, 1 when a run failed (an I/O error, wrong
content), 2 on bad usage.

Workloads (MLPerf Storage's configs): unet3d (146.6 MB samples, batch 7; h100 0.323 s, a100
0.636 s; AU 90%), resnet50 (114660 B, batch 400; h100 0.224 s, a100 0.435 s; AU 90%), retinanet
(153600 B, batch 16; h100 0.180 s; AU 85%), or custom (--sample-bytes, --batch, --step-time).

Options)";

constexpr double kMaxBudgetS = 86400;

}  // namespace

TuneTrainOptions parse_tune_train_options(const std::vector<std::string>& args) {
  TuneTrainOptions o;
  std::int64_t global_batch = 0;
  po::options_description desc(kTuneTrainUsage);
  desc.add_options()
      ("device,d", po::value(&o.device), "cpu, cuda or cuda:N (default: a GPU when one is here, else cpu; cuda: cuda:0, or under mpirun/srun each rank its "
                                         "local GPU)")
      ("model", po::value(&o.model), "mlp, transformer (the quick preset's dimensions) or a named train preset: "
                                      "gpt2-124m, gpt2-350m, gpt-1.3b, llama7b-block")
      ("axis,a", po::value(&o.axes)->composing(),
       "NAME=VALUE for a model-shape axis (layers, hidden, heads, ffn_mult, seq, vocab); repeatable")
      ("global-batch", po::value(&global_batch),
       "sequences (mlp: samples) per optimizer step over all ranks (default: the preset's micro-batch x accumulation "
       "x ranks)")
      ("dp", po::value<std::string>()->default_value("ddp"),
       "under mpirun/srun: the data-parallel modes searched, a comma list of ddp, zero1 (the default configuration "
       "uses the first)")
      ("budget", po::value(&o.budget_text)->default_value(o.budget_text),
       "seconds the search may take (above 0, at most 86400); the final confirmation comes after it")
      ("seed", po::value(&o.seed)->default_value(o.seed), "orders candidates of equal prior; same seed, same order")
      ("out,o", po::value(&o.out), "results file (default results/<host>-<UTC time>.json; under mpirun/srun rank 0's)")
      ("rank-timeout", po::value(&o.rank_timeout_s)->default_value(o.rank_timeout_s),
       "under mpirun/srun: seconds a rank may take to join or to reach each step the ranks take together before "
       "the run ends naming it (above 0, at most 86400)")
      ("quiet,q", po::bool_switch(&o.quiet), "no progress on stderr")
      ("help,h", "show this help");
  po::variables_map vm = parse_or_throw(args, desc);
  if (take_help(vm, desc, o.help, o.help_text)) return o;
  // The budget is read here so that every malformed one gets the same line.
  o.budget_s = parse_real(o.budget_text, "--budget", fmt::format("seconds (a number above 0, at most {})", kMaxBudgetS));
  in_range(o.budget_s, "--budget", 0, kMaxBudgetS);
  in_range(o.rank_timeout_s, "--rank-timeout", 0, kMaxBudgetS);
  if (o.model.empty()) throw UsageError("tune train: --model is required (mlp, transformer, gpt2-124m, ...)");
  o.dp_given = !vm["dp"].defaulted();
  o.dp_modes.clear();
  const std::string dp = vm["dp"].as<std::string>();
  for (const std::string& mode : split_list(dp, "--dp")) {
    if (mode != "ddp" && mode != "zero1") throw UsageError(fmt::format("--dp '{}': expected a comma list of ddp, zero1", dp));
    if (std::find(o.dp_modes.begin(), o.dp_modes.end(), mode) != o.dp_modes.end()) {
      throw UsageError(fmt::format("--dp '{}': {} twice", dp, mode));
    }
    o.dp_modes.push_back(mode);
  }
  if (vm.count("global-batch")) {
    if (global_batch < 1) throw UsageError(fmt::format("--global-batch {}: expected at least 1", global_batch));
    o.global_batch = global_batch;
  }
  if (!o.device.empty() && o.device != "cpu" && o.device != "cuda" && o.device.rfind("cuda:", 0) != 0) {
    throw UsageError(fmt::format("--device '{}': tune train tunes one device: cpu or cuda:N", o.device));
  }
  if (vm.count("out")) {
    if (o.out.empty()) throw UsageError("--out: empty path");
    validate_output_file(o.out, "--out");
  }
  return o;
}



// `gpubench tune gemm` (cmd_tune.cpp runs it).
namespace {

constexpr const char* kTuneUsage = R"(Usage: gpubench tune gemm [options]

Searches cuBLASLt's algorithms for each GEMM shape of the selection (the gemm suite's axes and
presets; default preset: tune) on each selected GPU: up to --lt-candidates heuristic
algorithms are timed, the heuristic's first among them, and the fastest is verified against
the reference and written to the tuning cache (created, or updated in place). `gpubench run
--tuning-cache FILE` then uses those algorithms for the cublaslt-tuned provider. Prints the
tuning report: per shape, the default's time, the best time, the gain and the algorithm.
Exit status: 0 when every shape was tuned or skipped, 1 when one failed or there is no CUDA
device, 2 on bad usage. `gpubench tune train --help`: the search over a training setup's knobs;
`gpubench tune dataload --help`: the fewest loader workers keeping the data stall low;
`gpubench tune storage --help`: how many accelerators this storage keeps fed (MLPerf Storage's AU);
`gpubench tune gemm --mamf --help`: the maximum achievable matmul FLOP/s over a sweep of shapes.

Options)";


}  // namespace

TuneOptions parse_tune_options(const std::vector<std::string>& args) {
  TuneOptions o;
  o.selection.preset = "tune";
  o.selection.device = "cuda";
  po::options_description desc(kTuneUsage);
  add_selection_options(desc, o.selection);
  desc.add_options()
      ("cache", po::value(&o.cache)->default_value(o.cache), "tuning cache file to create or update")
      ("lt-candidates", po::value(&o.lt_candidates)->default_value(o.lt_candidates),
       "cuBLASLt heuristic algorithms to time per shape")
      ("quiet,q", po::bool_switch(&o.quiet), "no progress on stderr")
      ("dry-run", po::bool_switch(&o.dry_run),
       "print the shapes and the estimated wall time (last line: 'dry-run: N to run, K skipped, about S s'); "
       "tune nothing, write nothing")
      ("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("target", po::value(&o.target));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description positional;
  positional.add("target", 1);
  po::variables_map vm = parse_or_throw(args, all, &positional);
  if (take_help(vm, desc, o.help, o.help_text)) return o;
  if (o.target.empty()) throw UsageError("what to tune? `gpubench tune gemm`, `gpubench tune train`, `gpubench tune dataload` or `gpubench tune storage`");
  if (o.target != "gemm") throw UsageError(fmt::format("'{}': tunable targets are gemm, train, dataload, storage", o.target));
  if (!o.selection.suites.empty() && (o.selection.suites.size() != 1 || o.selection.suites[0] != "gemm")) {
    throw UsageError("--suite: tune works on the gemm suite only");
  }
  if (o.lt_candidates < 1 || o.lt_candidates > suites::gemm::kMaxLtCandidates) {
    throw UsageError(fmt::format("--lt-candidates {}: expected 1 to {}", o.lt_candidates, suites::gemm::kMaxLtCandidates));
  }
  validate_output_file(o.cache, "--cache");  // the rules of every output path (paths.hpp)
  if (!o.selection.assume.empty() && !o.dry_run) {
    throw UsageError(fmt::format("--assume {}: cannot tune a GPU that is not here; add --dry-run to plan for it",
                                 o.selection.assume));
  }
  return o;
}

TuneDataloadCli parse_tune_dataload_options(const std::vector<std::string>& args) {
  TuneDataloadCli cli;
  tune::DataloadTuneOptions& o = cli.options;
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
  if (take_help(vm, desc, cli.help, cli.help_text)) return cli;
  if (vm.count("step-time")) o.step_time_s = step_time;
  if (vm.count("consumer-rate")) o.consumer_rate = rate;
  if (vm.count("out") && o.out.empty()) throw UsageError("--out: empty path");
  if (vm.count("dataset") && o.dataset.empty()) throw UsageError("--dataset: empty path");
  o.max_stall = max_stall_pct / 100;
  o.command_line = "gpubench tune dataload " + join_args(args);
  tune::check_dataload_option_values(o);  // the rest (--dataset, --out) when it runs
  return cli;
}

TuneStorageCli parse_tune_storage_options(const std::vector<std::string>& args) {
  TuneStorageCli cli;
  tune::StorageTuneOptions& o = cli.options;
  std::int64_t sample_bytes = 0;
  int batch = 0, read_threads = 0;
  double step_time = 0, au = 0;
  std::string device;
  po::options_description desc(kTuneStorageUsage);
  desc.add_options()
      ("device,d", po::value(&device), "cpu: the host reads the storage (the only choice; for evaluate's workers)")
      ("workload", po::value(&o.workload)->default_value(o.workload), "unet3d, resnet50, retinanet or custom")
      ("accelerator", po::value(&o.accelerator)->default_value(o.accelerator),
       "whose published step time: h100 or a100 (retinanet: h100)")
      ("sample-bytes", po::value(&sample_bytes), "bytes per sample (custom; or instead of the workload's)")
      ("batch", po::value(&batch), "samples per step per accelerator (custom; or instead of the workload's)")
      ("step-time", po::value(&step_time), "the emulated step in seconds (custom; or instead of the published one)")
      ("consumer-from", po::value(&o.consumer_from),
       "or a results file with a train case: its measured samples/s at --batch gives the step")
      ("au", po::value(&au), "the AU threshold in percent (default: the workload's, 90 or 85)")
      ("read-threads", po::value(&read_threads), "loader threads per accelerator (default: the workload's, 4 or 8)")
      ("direct", po::value(&o.direct)->default_value(o.direct), "1: O_DIRECT reads; 0: through the page cache")
      ("size", po::value(&o.size)->default_value(o.size), "bytes of the generated file (0: 1 GiB, at least two batches)")
      ("max-accelerators", po::value(&o.max_accelerators)->default_value(o.max_accelerators), "the most N tried")
      ("run-time", po::value(&o.run_s)->default_value(o.run_s), "seconds of steps per run, at least (and 5 steps)")
      ("budget", po::value(&o.budget_s)->default_value(o.budget_s), "seconds the search may take")
      ("seed", po::value(&o.seed)->default_value(o.seed), "the samples' shuffle")
      ("out,o", po::value(&o.out), "results file (default results/<host>-<UTC time>.json)")
      ("quiet,q", po::bool_switch(&o.quiet), "no progress on stderr")
      ("help,h", "show this help");
  po::variables_map vm = parse_or_throw(args, desc);
  if (take_help(vm, desc, cli.help, cli.help_text)) return cli;
  if (vm.count("sample-bytes")) o.sample_bytes = sample_bytes;
  if (vm.count("batch")) o.batch = batch;
  if (vm.count("step-time")) o.step_time_s = step_time;
  if (vm.count("au")) o.au_pct = au;
  if (vm.count("read-threads")) o.read_threads = read_threads;
  if (vm.count("out") && o.out.empty()) throw UsageError("--out: empty path");
  if (vm.count("consumer-from") && o.consumer_from.empty()) throw UsageError("--consumer-from: empty path");
  if (vm.count("device") && device != "cpu") {
    throw UsageError(fmt::format("--device '{}': tune storage reads on the host: cpu (the accelerators are emulated)", device));
  }
  o.command_line = "gpubench tune storage " + join_args(args);
  tune::check_storage_option_values(o);  // the files when it runs
  return cli;
}

}  // namespace gpubench::app
