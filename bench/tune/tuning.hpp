#pragma once
// The `gpubench.tuning` object of a results file written by `gpubench tune train|dataload`
// (docs/tune.md, "The gpubench.tuning object"; reports/tuning.cpp renders it).
//
//   target              "train" | "dataload"
//   objective           the figure the search maximizes, a key of the figures below
//                       ("tokens_per_s", "samples_per_s", ...)
//   knobs               knob names, in order: the keys of recommended / default / search[]
//                       entries that are knob values (the rest are figures)
//   fixed               what the search did not change (model, device, global_batch, ranks...)
//   recommended         knob values + figures of the final measurement + `case` (its entry's
//                       name in benchmarks[]) + `command` (a ready-to-copy gpubench command
//                       line that runs it); absent when nothing could be recommended
//   default             the same, for the default configuration, measured the same way
//   speedup_vs_default  recommended objective / default objective (final measurements)
//   budget_s, search_s, final_s, wall_s   the budget; time spent searching; time of the final
//                       confirmation (after the search, outside the budget); the whole command
//   seed
//   configurations      counts: candidates, measured, failed, does_not_fit, skipped
//   search[]            one object per measurement or skip, in order: knob values, `stage`
//                       (short | long | final), `round`, `status` (ok | failed | does-not-fit |
//                       skipped), the figures when ok, `reason` otherwise, `cost_s`
// Figures (train): tokens_per_s or samples_per_s, step_s, noise_pct, memory_bytes, mfu_pct
// (GPU, when the spec sheet has the peak), case.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/tune/search.hpp"

namespace gpubench::tune {

struct Tuning {
  std::string target;
  std::string objective;
  std::vector<std::string> knobs;
  nlohmann::ordered_json fixed = nlohmann::ordered_json::object();
  nlohmann::ordered_json recommended;     // null when nothing could be recommended
  nlohmann::ordered_json default_config;  // null when the default could not be measured
  std::optional<double> speedup_vs_default;
  double budget_s = 0, search_s = 0, final_s = 0, wall_s = 0;
  std::uint64_t seed = 1;
  nlohmann::ordered_json configurations = nlohmann::ordered_json::object();
  nlohmann::ordered_json search = nlohmann::ordered_json::array();
  // False until the tune has written its last figures. The file is rewritten after every
  // measurement and a signal ends the process between two writes, so every write before the last
  // says `"interrupted": true`: what a stopped tune leaves is what it had decided so far (the
  // log, the best configuration measured so far), marked as such.
  bool finished = false;
  nlohmann::ordered_json best_so_far;  // written while not finished: the best ok measurement yet
  // A tune's own sections, written as fields of the tuning object after `search` (dataload:
  // `decode_gpu`, the GPU decode it considered beside the CPU loader).
  nlohmann::ordered_json sections = nlohmann::ordered_json::object();
};

// One search[] object: the knob values, stage, round, status, then the figures (ok) or the
// reason.
nlohmann::ordered_json log_entry_json(const LogEntry& e);
// A flat configuration object: knob values then `figures`' fields.
nlohmann::ordered_json configuration_json(const Config& c, const nlohmann::ordered_json& figures);

nlohmann::ordered_json to_json(const Tuning& t);

}  // namespace gpubench::tune
