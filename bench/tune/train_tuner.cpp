#include "bench/tune/train_tuner.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "bench/core/errors.hpp"
#include "bench/core/plan.hpp"
#include "bench/suites/all_suites.hpp"
#include "bench/suites/train/dp.hpp"
#include "bench/suites/train/train.hpp"
#include "bench/suites/train/verify.hpp"
#include "bench/tune/team_agreement.hpp"

namespace gpubench::tune {
namespace {

using nlohmann::ordered_json;

// Effort levels grow by the search's eta (3): short, 3x, 9x.
constexpr int kEta = 3;
constexpr int kMaxRounds = 3;

bool is_one_of(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

// The preset's value of one axis for the device kind.
std::string preset_value(const Preset& p, bool cuda, const std::string& axis) {
  for (const auto& [name, value] : cuda ? p.cuda : p.cpu) {
    if (name == axis) return value;
  }
  throw std::logic_error("train preset " + p.name + " has no " + axis);
}

std::int64_t first_int(const std::string& list, const std::string& what) {
  try {
    return std::stoll(list.substr(0, list.find_first_of(",:")));
  } catch (const std::exception&) {
    throw std::logic_error("train preset: bad " + what + " " + list);
  }
}

std::vector<std::string> knob_axes(const Config& c) {
  std::vector<std::string> v;
  for (const auto& [name, value] : c) v.push_back(name + "=" + value);
  return v;
}

// The one planned case of a configuration, as `gpubench run` would plan it.
PlannedCase plan_one(const TrainSpace& s, const Config& c, const DeviceInfo& device) {
  PlanRequest request;
  request.suites = {"train"};
  request.preset = s.preset;
  request.axis_overrides = s.fixed_axes;
  for (const std::string& a : knob_axes(c)) request.axis_overrides.push_back(a);
  const std::vector<PlannedCase> plan = make_plan(suites::all(), request, {device});
  if (plan.size() != 1) {
    throw std::logic_error(fmt::format("tune train: {} planned {} cases, expected 1", config_label(c), plan.size()));
  }
  return plan.front();
}

// Every (a, b) pair, a outermost.
std::vector<std::pair<std::string, std::string>> product(const std::vector<std::string>& as,
                                                         const std::vector<std::string>& bs) {
  std::vector<std::pair<std::string, std::string>> v;
  for (const std::string& a : as) {
    for (const std::string& b : bs) v.emplace_back(a, b);
  }
  return v;
}

double prior_of(const Config& c) {
  const std::string& p = knob(c, "precision");
  const std::string& r = knob(c, "recompute");
  // Larger micro-batches keep the GEMMs efficient and launch less; tensor-core precisions run
  // faster; recompute adds forward work. Only an order: the measurements decide.
  double prior = std::log2(static_cast<double>(std::stoll(knob(c, "micro_batch"))));
  prior += p == "tf32" ? 2 : (p == "fp16-amp" || p == "bf16-amp") ? 3 : 0;
  prior -= r == "mlp" ? 0.5 : r == "block" ? 1 : 0;
  return prior;
}

}  // namespace

std::vector<std::string> bucket_mb_values(const kernels::train::ParamLayout& layout, int ranks) {
  using suites::train::DpMode;
  // Caps that give the same buckets (the same lower boundaries) make the same step: one of a
  // group is measured.
  std::map<std::vector<std::int64_t>, std::vector<double>> groups;
  for (double cap : kTrainBucketMbs) {
    std::vector<std::int64_t> bounds;
    for (const suites::train::Bucket& b : suites::train::plan_buckets(layout, cap, sizeof(float), DpMode::Ddp, ranks).buckets) {
      bounds.push_back(b.offset);
    }
    groups[bounds].push_back(cap);
  }
  std::vector<double> kept;
  for (const auto& [bounds, caps] : groups) {
    const bool has_default = std::find(caps.begin(), caps.end(), suites::train::kDefaultBucketMb) != caps.end();
    kept.push_back(has_default ? suites::train::kDefaultBucketMb : *std::min_element(caps.begin(), caps.end()));
  }
  std::sort(kept.begin(), kept.end());
  std::vector<std::string> out;
  for (double cap : kept) out.push_back(fmt::format("{}", cap));
  return out;
}

std::vector<std::string> train_models() {
  std::vector<std::string> v = {"mlp", "transformer"};
  for (const Preset& p : suites::train::train_presets()) {
    if (!is_one_of(p.name, {"quick", "standard", "full"})) v.push_back(p.name);
  }
  return v;
}

TrainSpace make_train_space(const TrainTuneRequest& r, double memory_bytes) {
  const std::vector<std::string> models = train_models();
  if (std::find(models.begin(), models.end(), r.model) == models.end()) {
    std::string list;
    for (const std::string& m : models) list += (list.empty() ? "" : ", ") + m;
    throw UsageError(fmt::format("--model '{}': unknown model (expected one of {})", r.model, list));
  }
  if (r.ranks < 1) throw std::logic_error("tune train: ranks < 1");
  TrainSpace s;
  s.ranks = r.ranks;
  s.launcher = r.ranks > 1 ? r.launcher : "";
  for (const char* k : kTrainKnobs) s.knobs.push_back(k);
  if (r.ranks > 1) {
    for (const char* k : kTrainDpKnobs) s.knobs.push_back(k);
  }
  const bool cuda = r.device.is_cuda();
  const bool named = r.model != "mlp" && r.model != "transformer";
  s.preset = named ? r.model : "quick";
  s.model = named ? "transformer" : r.model;
  const std::vector<Preset> presets = suites::train::train_presets();
  const Preset& preset = *std::find_if(presets.begin(), presets.end(), [&](const Preset& p) { return p.name == s.preset; });
  s.fixed_axes.push_back("model=" + s.model);

  std::map<std::string, std::string> shape;
  for (const char* a : kTrainShapeAxes) shape[a] = preset_value(preset, cuda, a);
  for (const std::string& arg : r.shape_axes) {
    const std::size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
      throw UsageError(fmt::format("--axis '{}': expected NAME=VALUE", arg));
    }
    const std::string value = arg.substr(eq + 1);
    if (name == "model") throw UsageError(fmt::format("--axis {}: the model is --model", arg));
    bool searched = false;
    for (const char* k : kTrainKnobs) searched = searched || name == k;
    if (searched) {
      throw UsageError(fmt::format("--axis {}: {} is what tune train searches; it cannot be fixed", arg, name));
    }
    if (name == "dp" || name == "bucket_mb") {
      throw UsageError(fmt::format("--axis {}: under mpirun/srun tune train searches dp=ddp and bucket_mb; in one "
                                   "process there is no data-parallel step",
                                   arg));
    }
    if (shape.count(name) == 0) {
      throw UsageError(fmt::format("--axis {}: not a model-shape axis (layers, hidden, heads, ffn_mult, seq, vocab)", arg));
    }
    if (value.find_first_of(",:") != std::string::npos) {
      throw UsageError(fmt::format("--axis {}: one value (tune train describes one model)", arg));
    }
    shape[name] = value;
    s.fixed_axes.push_back(arg);
  }

  const std::int64_t preset_micro = first_int(preset_value(preset, cuda, "micro_batch"), "micro_batch");
  const std::int64_t preset_accum = first_int(preset_value(preset, cuda, "accum"), "accum");
  s.global_batch = r.global_batch.value_or(preset_micro * preset_accum * r.ranks);
  if (s.global_batch < 1) throw UsageError(fmt::format("--global-batch {}: expected at least 1", s.global_batch));
  if (s.global_batch % r.ranks != 0) {
    throw UsageError(fmt::format("--global-batch {}: not divisible by the {} ranks", s.global_batch, r.ranks));
  }
  const std::int64_t per_rank = s.global_batch / r.ranks;
  s.objective = s.model == "mlp" ? "samples_per_s" : "tokens_per_s";

  const std::vector<std::string> precisions =
      cuda ? std::vector<std::string>{"fp32", "tf32", "fp16-amp", "bf16-amp"} : std::vector<std::string>{"fp32"};
  const std::vector<std::string> recomputes =
      s.model == "mlp" ? std::vector<std::string>{"none"} : std::vector<std::string>{"none", "mlp", "block"};
  std::vector<std::int64_t> micros;
  for (std::int64_t b = 1; b * b <= per_rank; ++b) {
    if (per_rank % b != 0) continue;
    micros.push_back(b);
    if (b != per_rank / b) micros.push_back(per_rank / b);
  }
  std::sort(micros.begin(), micros.end());
  // The default: the preset's micro-batch (the largest divisor not above it), fp32, no recompute.
  std::int64_t default_micro = 1;
  for (std::int64_t b : micros) {
    if (b <= preset_micro) default_micro = b;
  }
  // With several ranks every configuration is the data-parallel step (r.dp_modes: ddp, zero1)
  // at one of the bucket caps that make a difference for this model's gradient; one process has
  // no such knob.
  auto config = [&](const std::string& p, std::int64_t b, const std::string& rc, const std::string& dp,
                    const std::string& bucket) {
    Config c{{"precision", p}, {"micro_batch", std::to_string(b)}, {"accum", std::to_string(per_rank / b)},
             {"recompute", rc}};
    if (!dp.empty()) {
      c.emplace_back("dp", dp);
      c.emplace_back("bucket_mb", bucket);
    }
    return c;
  };
  std::vector<std::string> dps = {""}, buckets = {""};
  if (r.ranks > 1) {
    if (r.dp_modes.empty()) throw std::logic_error("tune train: no dp mode to search");
    dps = r.dp_modes;
    const PlannedCase pc = plan_one(s, config("fp32", default_micro, "none", "", ""), r.device);
    buckets = bucket_mb_values(kernels::train::param_layout(suites::train::config_from(pc.point)), r.ranks);
  }
  s.default_config = config("fp32", default_micro, "none", dps.front(),
                            r.ranks > 1 ? fmt::format("{}", suites::train::kDefaultBucketMb) : "");

  // Memory estimate: the case's own rule on a GPU (it refuses what needs more than the device
  // holds at 2 bytes per element); on the CPU 4-byte elements within 80% of host memory. (ddp
  // keeps the whole model on every rank, whatever the bucket cap: the same estimate; zero1
  // shards the AdamW moments, so for it the estimate errs high.)
  std::string smallest_need;
  for (const std::string& p : precisions) {
    for (const std::string& rc : recomputes) {
      for (std::int64_t b : micros) {
        const PlannedCase pc = plan_one(s, config(p, b, rc, "", ""), r.device);  // UsageError for a model that cannot be built
        const suites::train::ModelConfig mc = suites::train::config_from(pc.point);
        const double need = suites::train::estimated_bytes(mc, cuda ? 2 : 4);
        const double room = cuda ? memory_bytes : 0.8 * memory_bytes;
        const bool fits = !(memory_bytes > 0 && need > room);
        for (const auto& [dp, bucket] : product(dps, buckets)) {
          const Config c = config(p, b, rc, dp, bucket);
          if (!fits) {
            LogEntry e;
            e.config = c;
            e.status = Status::DoesNotFit;
            e.reason = fmt::format("not measured: needs about {:.3g} GB by the estimate, the {} holds {:.3g} GB",
                                   need / 1e9, cuda ? "GPU" : "host", room / 1e9);
            if (smallest_need.empty() && b == 1) smallest_need = e.reason;
            s.unfit.push_back(std::move(e));
            continue;
          }
          Candidate cand;
          cand.config = c;
          // The default goes first: it is the baseline every other figure is compared with.
          cand.prior = c == s.default_config ? 1e9 : prior_of(c);
          s.candidates.push_back(std::move(cand));
        }
      }
    }
  }
  if (s.candidates.empty()) {
    throw UsageError(fmt::format("--global-batch {}: no micro-batch fits ({})", s.global_batch,
                                 smallest_need.empty() ? "none of the configurations" : smallest_need.substr(14)));
  }
  s.fixed = {{"model", r.model}, {"device", r.device.id()}, {"global_batch", s.global_batch}, {"ranks", r.ranks}};
  if (!s.launcher.empty()) s.fixed["launcher"] = s.launcher;
  for (const auto& [name, value] : shape) s.fixed[name] = value;
  return s;
}

std::vector<std::string> run_arguments(const TrainSpace& s, const Config& c, const std::string& device_id) {
  std::vector<std::string> v = {"--suite", "train", "--preset", s.preset, "--device", device_id};
  for (const std::string& a : s.fixed_axes) {
    v.push_back("--axis");
    v.push_back(a);
  }
  for (const std::string& a : knob_axes(c)) {
    v.push_back("--axis");
    v.push_back(a);
  }
  return v;
}

std::string run_command(const TrainSpace& s, const Config& c, const std::string& device_id) {
  std::string cmd = s.launcher.empty() ? "gpubench run" : s.launcher + " gpubench run";
  for (const std::string& a : run_arguments(s, c, device_id)) cmd += " " + a;
  return cmd;
}

namespace {

// The measuring side: plans a configuration, runs it through the harness, records its entry.
class TrainOracle {
 public:
  TrainOracle(const TrainTuneRequest& r, const TrainSpace& s, ResultsFile& results, const TrainTuneSettings& settings)
      : r_(r), s_(s), results_(results), settings_(settings) {}

  // One measurement: `stage` short | long | final; `role` recommended | default | "".
  Measured measure(const Config& c, const MeasureOptions& m, const std::string& stage, int round,
                   const std::string& role) {
    const PlannedCase pc = plan_one(s_, c, r_.device);
    HarnessOptions h = settings_.harness;
    h.measure = m;
    h.quiet = true;
    ResultsFile scratch({}, results_.document().at("context"));
    if (settings_.judge) scratch.set_judge(settings_.judge);
    (void)run_plan({pc}, h, scratch);
    const ordered_json& doc = scratch.document();
    if (doc["benchmarks"].empty()) throw std::runtime_error("tune train: the harness recorded no entry for " + pc.name());
    ordered_json entry = doc["benchmarks"].back();
    entry["gpubench"]["tune"] = {{"stage", stage}, {"round", round}};
    if (!role.empty()) entry["gpubench"]["tune"]["role"] = role;
    record(entry);

    const ordered_json& g = entry["gpubench"];
    Measured out;
    out.figures["case"] = entry.value("name", pc.name());
    const std::string status = g.value("status", "failed");
    if (status != "ok") {
      const std::string reason = g.value("reason", status);
      out.reason = status == "skipped" ? "skipped: " + reason : reason;
      // Out of memory (device or host) means the configuration does not fit; anything else failed.
      // ("out of device memory allocating ...", "out of host memory", "the step needs about X GB,
      // more than the device's Y GB", "not even micro-batch 1 fits in device memory").
      const bool memory = reason.find("memory") != std::string::npos || reason.find("more than the device") != std::string::npos;
      out.status = status == "skipped" && memory ? Status::DoesNotFit : Status::Failed;
      return out;
    }
    const ordered_json& metrics = g.value("metrics", ordered_json::object());
    const ordered_json& meas = g.value("measurement", ordered_json::object());
    if (!metrics.contains(s_.objective) || !metrics[s_.objective].is_number()) {
      out.status = Status::Failed;
      out.reason = "the entry has no " + s_.objective;
      return out;
    }
    out.score = metrics[s_.objective].get<double>();
    ordered_json& f = out.figures;
    f[s_.objective] = out.score;
    f["step_s"] = meas.value("mean_s", 0.0);
    f["noise_pct"] = meas.value("noise_pct", 0.0);
    f["samples"] = meas.value("samples", 0);
    if (metrics.contains("device_memory_used_bytes")) {
      f["memory_bytes"] = metrics["device_memory_used_bytes"];
    } else if (metrics.contains("peak_memory_bytes")) {
      f["memory_bytes"] = metrics["peak_memory_bytes"];
    }
    if (metrics.contains("pct_of_peak")) f["mfu_pct"] = metrics["pct_of_peak"];
    if (metrics.contains("hfu_pct")) f["hfu_pct"] = metrics["hfu_pct"];
    if (metrics.contains("tflops")) f["tflops"] = metrics["tflops"];
    if (g.contains("suspect")) f["suspect"] = g["suspect"];
    // Re-judged in the results document: the suspect reasons there are the ones that count.
    const ordered_json& recorded = results_.document()["benchmarks"][index_.at(entry["name"].get<std::string>())];
    if (recorded["gpubench"].contains("suspect")) f["suspect"] = recorded["gpubench"]["suspect"];
    return out;
  }

 private:
  // One entry per configuration: its most thorough measurement replaces an earlier one.
  void record(const ordered_json& entry) {
    const std::string name = entry.value("name", "");
    const auto it = index_.find(name);
    if (it == index_.end()) {
      index_[name] = results_.document()["benchmarks"].size();
      results_.add(entry);
    } else {
      results_.replace(it->second, entry);
    }
  }

  const TrainTuneRequest& r_;
  const TrainSpace& s_;
  ResultsFile& results_;
  const TrainTuneSettings& settings_;
  std::map<std::string, std::size_t> index_;
};

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Tuning tune_train(const TrainTuneRequest& r, const TrainSpace& space, ResultsFile& results,
                  const TrainTuneSettings& settings) {
  // With a team every rank runs this in step: the budget's clock and every outcome are rank 0's.
  Team* const team = settings.harness.team;
  const Clock local_clock = settings.clock ? settings.clock : Clock(steady_seconds);
  const Clock clock = team != nullptr ? agreed_clock(*team, local_clock) : local_clock;
  const double started = clock();
  TrainOracle oracle(r, space, results, settings);
  auto measure_one = [&](const Config& c, const MeasureOptions& m, const std::string& stage, int round,
                         const std::string& role) {
    if (team == nullptr) return oracle.measure(c, m, stage, round, role);
    return agreed_measurement(*team, [&] { return oracle.measure(c, m, stage, round, role); },
                              "the outcome of " + config_label(c));
  };
  const std::string command_device = r.command_device.empty() ? r.device.id() : r.command_device;
  const std::size_t n = space.candidates.size();

  // Seconds of samples per short measurement: about a sixth of the budget spread over the
  // candidates (rounds 1 and 2 cost about as much again each: ceil(n/3) candidates at 3x, then
  // 9x), at least 10 ms and at most 1 s; the final confirmation a tenth of the budget, 0.2 s to 10 s.
  const double short_s = settings.short_min_time_s > 0
                             ? settings.short_min_time_s
                             : std::clamp(r.budget_s / (6.0 * static_cast<double>(n)), 0.01, 1.0);
  const double final_s = settings.final_min_time_s > 0 ? settings.final_min_time_s : std::clamp(r.budget_s / 10, 0.2, 10.0);
  auto options_for = [&](double min_time, std::int64_t min_samples) {
    MeasureOptions m = settings.harness.measure;
    m.min_time_s = min_time;
    m.min_samples = min_samples;
    m.warmup_s = std::min(m.warmup_s, min_time);
    return m;
  };

  Tuning t;
  t.target = "train";
  t.objective = space.objective;
  t.knobs = space.knobs;
  t.fixed = space.fixed;
  t.budget_s = r.budget_s;
  t.seed = r.seed;
  for (const LogEntry& e : space.unfit) t.search.push_back(log_entry_json(e));

  SearchOptions so;
  so.budget_s = r.budget_s;
  so.seed = r.seed;
  so.eta = kEta;
  so.max_rounds = kMaxRounds;
  // (zero1 needs less memory than ddp: an unfit ddp prunes only ddp, whatever the bucket cap.)
  so.at_least_as_large = [dp = space.ranks > 1](const Config& unfit, const Config& other) {
    return knob(unfit, "precision") == knob(other, "precision") && knob(unfit, "recompute") == knob(other, "recompute") &&
           (!dp || knob(unfit, "dp") == knob(other, "dp")) &&
           std::stoll(knob(other, "micro_batch")) >= std::stoll(knob(unfit, "micro_batch"));
  };
  int count = 0;
  // The log so far and the best measurement yet, in the file after every measurement (marked
  // interrupted until the end): a stopped tune keeps what it had decided.
  Tuning so_far = t;
  double best_score = 0;
  const Oracle measure = [&](const Config& c, int effort) {
    const std::string stage = effort == 0 ? "short" : "long";
    const double min_time = short_s * std::pow(kEta, effort);
    const double t0 = clock();
    Measured m = measure_one(c, options_for(min_time, effort == 0 ? 3 : 5), stage, effort, "");
    ++count;
    LogEntry e;
    e.config = c;
    e.round = effort;
    e.status = m.status;
    e.score = m.score;
    e.reason = m.reason;
    e.figures = m.figures;
    e.cost_s = clock() - t0;
    so_far.search.push_back(log_entry_json(e));
    if (m.status == Status::Ok && m.score > best_score) {
      best_score = m.score;
      so_far.best_so_far = configuration_json(c, m.figures);
      so_far.best_so_far["stage"] = stage;
    }
    so_far.wall_s = clock() - started;
    results.set_gpubench("tuning", to_json(so_far));
    if (settings.progress) {
      settings.progress(fmt::format("[{}] {} {}: {}", count, stage, config_label(c),
                                    m.status == Status::Ok ? fmt::format("{:.4g} {}", m.score, space.objective)
                                                           : std::string(to_string(m.status)) + ": " + m.reason));
    }
    return m;
  };
  // In the file before the first measurement ends too: a tune stopped that early still says so.
  results.set_gpubench("tuning", to_json(so_far));
  const SearchResult sr = successive_halving(space.candidates, measure, clock, so);
  for (const LogEntry& e : sr.log) t.search.push_back(log_entry_json(e));
  t.best_so_far = so_far.best_so_far;  // kept while the final confirmation runs (dropped once finished)
  t.search_s = sr.elapsed_s;
  const int unfit_by_estimate = static_cast<int>(space.unfit.size());
  t.configurations = {{"candidates", static_cast<int>(n) + unfit_by_estimate},
                      {"measured", sr.measured},
                      {"failed", sr.failed},
                      {"does_not_fit", sr.unfit + unfit_by_estimate},
                      {"skipped", sr.skipped},
                      {"measurements", count},
                      {"rounds", sr.rounds}};
  t.wall_s = clock() - started;
  results.set_gpubench("tuning", to_json(t));

  // The final confirmation: the recommended and the default configuration, measured again the
  // same way and longer (not the search's best sample).
  const double final_start = clock();
  const MeasureOptions fm = options_for(final_s, 10);
  auto final_figures = [&](const Config& c, const std::string& role) {
    const double t0 = clock();
    Measured m = measure_one(c, fm, "final", sr.rounds, role);
    LogEntry e;
    e.cost_s = clock() - t0;
    e.config = c;
    e.round = sr.rounds;
    e.status = m.status;
    e.score = m.score;
    e.reason = m.reason;
    e.figures = m.figures;
    ordered_json j = log_entry_json(e);
    j["stage"] = "final";
    j["role"] = role;
    t.search.push_back(j);
    if (settings.progress) {
      settings.progress(fmt::format("final {} {}: {}", role, config_label(c),
                                    m.status == Status::Ok ? fmt::format("{:.4g} {}", m.score, space.objective)
                                                           : std::string(to_string(m.status)) + ": " + m.reason));
    }
    return m;
  };
  std::optional<Measured> rec, def;
  if (sr.best) {
    const Config& best = space.candidates[*sr.best].config;
    rec = final_figures(best, best == space.default_config ? "recommended+default" : "recommended");
    if (rec->status == Status::Ok) {
      t.recommended = configuration_json(best, rec->figures);
      t.recommended["command"] = run_command(space, best, command_device);
    }
    if (best == space.default_config) def = rec;
  }
  if (!def) def = final_figures(space.default_config, "default");
  if (def->status == Status::Ok) {
    t.default_config = configuration_json(space.default_config, def->figures);
    t.default_config["command"] = run_command(space, space.default_config, command_device);
  } else {
    t.default_config = configuration_json(space.default_config, {{"status", to_string(def->status)}, {"reason", def->reason}});
  }
  if (rec && rec->status == Status::Ok && def->status == Status::Ok && def->score > 0) {
    t.speedup_vs_default = rec->score / def->score;
  }
  t.final_s = clock() - final_start;
  t.wall_s = clock() - started;
  t.finished = true;
  results.set_gpubench("tuning", to_json(t));
  return t;
}

}  // namespace gpubench::tune
