#pragma once
// `gpubench tune train`: the knob space of one training setup (precision x micro-batch x
// accumulation x recompute at a fixed global batch; under mpirun/srun also the data-parallel
// step's gradient bucket cap), the oracle that measures one
// configuration as the train suite's own case through the harness (planned exactly as
// `gpubench run --suite train --axis ...` plans it: set up, verified, warmed up, timed), and
// the whole tune: search (search.hpp), final confirmation of the recommended and the default
// configuration, results file with every configuration's entry and gpubench.tuning.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/device.hpp"
#include "bench/core/harness.hpp"
#include "bench/core/results.hpp"
#include "bench/tune/search.hpp"
#include "bench/tune/tuning.hpp"
#include "kernels/train/model_config.hpp"

namespace gpubench::tune {

// The model-shape axes --axis may set (one value each); the searched ones are refused.
inline constexpr const char* kTrainShapeAxes[] = {"layers", "hidden", "heads", "ffn_mult", "seq", "vocab"};
inline constexpr const char* kTrainKnobs[] = {"precision", "micro_batch", "accum", "recompute"};
// With several ranks every configuration is the data-parallel step: these knobs follow.
inline constexpr const char* kTrainDpKnobs[] = {"dp", "bucket_mb"};
// The bucket caps (MiB) tried with several ranks, before those that give the same buckets are
// dropped (see bucket_mb_values); the default is PyTorch DDP's 25.
inline constexpr double kTrainBucketMbs[] = {1, 5, 25, 100};

struct TrainTuneRequest {
  DeviceInfo device;
  std::string model;                    // mlp, transformer, or a named train preset (gpt2-124m, ...)
  std::vector<std::string> shape_axes;  // "NAME=VALUE", NAME one of kTrainShapeAxes
  std::optional<std::int64_t> global_batch;
  int ranks = 1;
  // With several ranks: the launcher that starts the recommended command ("mpirun -np 2",
  // "srun -n 2"), and the --device it gives (`cuda`: each rank its local GPU, as `gpubench run`
  // does under a launcher; empty: the device's id).
  std::string launcher;
  std::string command_device;
  // With several ranks: the data-parallel modes searched (ddp, zero1); the default
  // configuration uses the first.
  std::vector<std::string> dp_modes = {"ddp"};
  double budget_s = 60;
  std::uint64_t seed = 1;
};

struct TrainSpace {
  std::string preset;                   // the train preset cases are planned from
  std::vector<std::string> fixed_axes;  // "model=mlp" and the shape overrides
  std::string model;                    // the model axis: mlp | transformer
  std::int64_t global_batch = 0;
  int ranks = 1;
  std::string launcher;                 // prefix of the recommended command (several ranks)
  std::vector<std::string> knobs;       // kTrainKnobs, then with several ranks kTrainDpKnobs
  std::string objective;                // tokens_per_s | samples_per_s
  Config default_config;
  std::vector<Candidate> candidates;    // those the memory estimate lets through
  std::vector<LogEntry> unfit;          // does-not-fit by the estimate: logged, never measured
  nlohmann::ordered_json fixed = nlohmann::ordered_json::object();
};

// The bucket caps worth trying for a model whose gradient buffer has this layout (fp32
// gradients, as both data-parallel steps keep them): of kTrainBucketMbs, those whose bucket plan
// differs from every other's; of caps giving the same buckets (e.g. every cap above the whole
// gradient: one bucket) only one stays, 25 (the default) when it is one of them, else the
// smallest. Ascending, as axis values ("1", "25").
std::vector<std::string> bucket_mb_values(const kernels::train::ParamLayout& layout, int ranks);

// The model names --model accepts, for messages and --help.
std::vector<std::string> train_models();

// Builds the candidates. `memory_bytes`: what the device holds (GPU memory; host memory on the
// CPU). With several ranks each candidate is also one of `dp_modes` at each of
// bucket_mb_values, and the default is the preset's with the first dp mode and `bucket_mb=25`. Throws UsageError naming what is wrong: an unknown model, an axis that is searched or
// unknown or given several values, a global batch below 1 or not divisible by the ranks, or one
// that no micro-batch reaches within memory.
TrainSpace make_train_space(const TrainTuneRequest& r, double memory_bytes);

// The configuration as `gpubench run` arguments: "--suite train --preset P --device D --axis ...",
// and as a command line ("gpubench run ...", after the space's launcher when it has one).
std::vector<std::string> run_arguments(const TrainSpace& s, const Config& c, const std::string& device_id);
std::string run_command(const TrainSpace& s, const Config& c, const std::string& device_id);

struct TrainTuneSettings {
  // Peak lookup, instruments, benchmark flags; measure and quiet are set here. With a team
  // (harness.team, under mpirun/srun) every rank runs tune_train in step: the clock and every
  // measurement's outcome are rank 0's (team_agreement.hpp), so the search is the same on all.
  HarnessOptions harness;
  std::function<void(nlohmann::ordered_json&)> judge;  // plausibility marking of the results document
  std::function<void(const std::string&)> progress;    // one line per measurement (null: silent)
  Clock clock;                                          // seconds; null: steady clock
  // Seconds of timed samples: a short measurement, each longer round eta times more, the final.
  // 0: from the budget (see train_tuner.cpp).
  double short_min_time_s = 0, final_min_time_s = 0;
};

// Runs the search and the final confirmation; every measurement lands in `results` as it
// finishes (one entry per configuration, its most thorough measurement), and gpubench.tuning
// after the search and again after the final confirmation.
Tuning tune_train(const TrainTuneRequest& r, const TrainSpace& space, ResultsFile& results,
                  const TrainTuneSettings& settings);

}  // namespace gpubench::tune
