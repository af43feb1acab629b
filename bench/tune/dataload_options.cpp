// `gpubench tune dataload`'s pure parts (dataload_tune.hpp): the option values checked (the
// command's parser and its fuzzer use it without the tuner) and the final's rule.
#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "bench/tune/dataload_tune.hpp"

namespace gpubench::tune {

void check_dataload_option_values(const DataloadTuneOptions& o) {
  if (!(o.budget_s > 0 && o.budget_s <= kMaxDataloadBudgetS)) {
    throw UsageError(fmt::format("--budget {}: expected seconds above 0, at most {}", o.budget_s, kMaxDataloadBudgetS));
  }
  if (!(o.max_stall > 0 && o.max_stall < 1)) {
    throw UsageError(fmt::format("--max-stall {}: expected a percentage above 0 and below 100", o.max_stall * 100));
  }
  if (o.batch < 1 || o.batch > 4096) throw UsageError(fmt::format("--batch {}: expected 1 to 4096", o.batch));
  if (o.max_workers < 0 || o.max_workers > 1024) {
    throw UsageError(fmt::format("--max-workers {}: expected 1 to 1024 (0: every CPU)", o.max_workers));
  }
  if (o.default_workers < 1 || o.default_workers > 1024) {
    throw UsageError(fmt::format("--default-workers {}: expected 1 to 1024", o.default_workers));
  }
  if (o.max_scale != 1 && o.max_scale != 2 && o.max_scale != 4 && o.max_scale != 8) {
    throw UsageError(fmt::format("--max-scale {}: expected 1, 2, 4 or 8 (libjpeg-turbo's DCT scaling)", o.max_scale));
  }
  if (o.io != "cached" && o.io != "cold") throw UsageError(fmt::format("--io '{}': expected cached or cold", o.io));
  const bool train = o.consumer.rfind("train-", 0) == 0;
  if (o.consumer != "spin" && o.consumer != "train-768" && o.consumer != "train-3072" && o.consumer != "train-9408") {
    throw UsageError(fmt::format("--consumer '{}': expected spin, train-768, train-3072 or train-9408", o.consumer));
  }
  if ((o.step_time_s ? 1 : 0) + (o.consumer_rate ? 1 : 0) + (o.consumer_from.empty() ? 0 : 1) > 1) {
    throw UsageError("--step-time, --consumer-rate and --consumer-from: give one of them");
  }
  if (train && (o.step_time_s || o.consumer_rate || !o.consumer_from.empty())) {
    throw UsageError(fmt::format(
        "--consumer {}: the train step takes its own time; drop --step-time/--consumer-rate/--consumer-from", o.consumer));
  }
  if (o.step_time_s && !(*o.step_time_s >= 1e-6 && *o.step_time_s <= 60)) {
    throw UsageError(fmt::format("--step-time {}: expected seconds from 0.000001 to 60", *o.step_time_s));
  }
  if (o.consumer_rate) {
    const double step = o.batch / *o.consumer_rate;
    if (!(*o.consumer_rate > 0) || !(step >= 1e-6 && step <= 60)) {
      throw UsageError(fmt::format("--consumer-rate {}: expected samples/s giving a step of 1 us to 60 s for --batch {}",
                                   *o.consumer_rate, o.batch));
    }
  }
  if (!o.device.empty() && o.device != "cpu" && o.device.rfind("cuda:", 0) != 0) {
    throw UsageError(fmt::format("--device '{}': expected cpu or cuda:N (one device)", o.device));
  }
  if (o.device == "cpu" && o.consumer == "train-9408") {
    throw UsageError("--consumer train-9408 on the CPU: a 363M-parameter model; use train-768 or train-3072");
  }
}

std::optional<std::string> default_beats_recommendation(const nlohmann::ordered_json& recommended,
                                                        const nlohmann::ordered_json& default_config) {
  const double rec = recommended.value("samples_per_s", 0.0), def = default_config.value("samples_per_s", 0.0);
  const bool rec_meets = recommended.value("meets_max_stall", false);
  const bool def_meets = default_config.value("meets_max_stall", false);
  if (def > 0 && rec < def) {
    return fmt::format("the search's best measured {:.0f} samples/s in the final, the default {:.0f}", rec, def);
  }
  if (def_meets && !rec_meets) return "the search's best missed the stall target in the final, which the default met";
  return std::nullopt;
}

}  // namespace gpubench::tune
