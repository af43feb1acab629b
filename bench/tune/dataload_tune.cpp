// `gpubench tune dataload` (dataload_tune.hpp): options checked, the search over the dataload
// suite's pipeline cases, the final measurements, the results file.
#include "bench/tune/dataload_tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "bench/core/context.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/harness.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/core/launch.hpp"
#include "bench/core/paths.hpp"
#include "bench/core/plan.hpp"
#include "bench/suites/all_suites.hpp"
#include "bench/suites/dataload/dataload.hpp"
#include "bench/suites/dataload/stall.hpp"
#include "bench/tune/tuning.hpp"
#include "bench/tune/workers_search.hpp"
#include "kernels/memory/host_pool.hpp"
#include "reports/plausibility.hpp"
#include "reports/results_reader.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::tune {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
namespace dl = suites::dataload;


double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The ranks on this node under a launcher (each tunes for its share of the node's CPUs).
int local_ranks(const LaunchInfo& launch) {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}) {
    if (const char* v = std::getenv(name); v != nullptr && std::atoi(v) > 0) return std::atoi(v);
  }
  return launch.size;
}

void check_options(const DataloadTuneOptions& o) {
  check_dataload_option_values(o);
  if (!o.dataset.empty()) {
    try {
      (void)dl::open_dataset(o.dataset);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--dataset: {}", e.what()));
    }
  }
  if (!o.out.empty()) {
    validate_output_file(o.out, "--out");
    std::vector<NamedPath> inputs;
    if (!o.consumer_from.empty()) inputs.push_back({o.consumer_from, "--consumer-from"});
    if (!o.dataset.empty()) inputs.push_back({o.dataset, "--dataset"});
    check_path_clashes(inputs, {{o.out, "--out"}});
  }
}

}  // namespace

std::pair<double, std::string> train_consumer_rate(const std::string& results_path) {
  const reports::ResultsFile f = reports::read_results(results_path);  // UsageError naming the file
  for (const reports::ResultEntry& e : f.entries) {
    if (e.suite != "train" || e.status != "ok" || e.run_type != "iteration") continue;
    double rate = e.metrics.value("samples_per_s", 0.0);
    if (!(rate > 0) && e.axes.contains("seq") && e.axes["seq"].is_number() && e.axes["seq"].get<double>() > 0) {
      rate = e.metrics.value("tokens_per_s", 0.0) / e.axes["seq"].get<double>();
    }
    if (rate > 0 && std::isfinite(rate)) return {rate, e.name};
  }
  throw UsageError(fmt::format("--consumer-from {}: no measured train case (samples/s or tokens/s) in it", results_path));
}

namespace {

// One loader configuration: the setting's knobs (prefetch, [pinned, aug,] scale, format).
struct Knobs {
  int prefetch = 2, scale = 1;
  bool pinned = false, gpu_aug = false, shard = false;
};

Knobs knobs_of(const Config& c) {
  Knobs k;
  for (const auto& [name, value] : c) {
    if (name == "prefetch") k.prefetch = std::stoi(value);
    if (name == "scale") k.scale = std::stoi(value);
    if (name == "pinned") k.pinned = value == "1";
    if (name == "aug") k.gpu_aug = value == "gpu";
    if (name == "format") k.shard = value == "shard";
  }
  return k;
}

Config make_config(const Knobs& k, bool cuda) {
  Config c{{"prefetch", std::to_string(k.prefetch)}};
  if (cuda) {
    c.emplace_back("pinned", k.pinned ? "1" : "0");
    c.emplace_back("aug", k.gpu_aug ? "gpu" : "cpu");
  }
  c.emplace_back("scale", std::to_string(k.scale));
  c.emplace_back("format", k.shard ? "shard" : "files");
  return c;
}

// The settings searched, with a prior: those expected to need the fewest workers first (the
// GPU augmenting, a smaller decode, one sequential shard, a deeper queue), so the bound on
// workers drops early and the rest cost one measurement each.
std::vector<Candidate> loader_settings(bool cuda, int max_scale, bool has_shard) {
  std::vector<Candidate> v;
  for (int gpu_aug = cuda ? 1 : 0; gpu_aug >= 0; --gpu_aug) {
    for (int pinned = cuda ? 1 : 0; pinned >= 0; --pinned) {
      for (int scale = 1; scale <= max_scale; scale *= 2) {
        for (int shard = has_shard ? 1 : 0; shard >= 0; --shard) {
          for (int prefetch : {2, 4, 8}) {
            Knobs k{prefetch, scale, pinned == 1, gpu_aug == 1, shard == 1};
            const double prior = 4.0 * gpu_aug + 2.0 * std::log2(scale) + 1.0 * shard + 0.5 * pinned +
                                 (prefetch == 4 ? 0.3 : prefetch == 8 ? 0.2 : 0.1);
            v.push_back({make_config(k, cuda), prior});
          }
        }
      }
    }
  }
  return v;
}

struct Context {
  const DataloadTuneOptions* o = nullptr;
  DeviceInfo device;
  std::int64_t step_us = 0;
  HarnessOptions harness;
  Json context;
  fs::path out;
  // The results: one entry per case name (its most thorough measurement), in first-seen order.
  std::vector<std::string> names;
  std::map<std::string, Json> entries;
  Tuning tuning;
  reports::SpecSheet specs = reports::SpecSheet::builtin();
};

void write_results(Context& cx) {
  Json doc;
  doc["context"] = cx.context;
  doc["benchmarks"] = Json::array();
  std::vector<Json> list;
  for (const std::string& n : cx.names) list.push_back(cx.entries[n]);
  for (const Json& e : list) doc["benchmarks"].push_back(e);
  doc["gpubench"]["summaries"]["dataload"] = dl::summarize(list);
  doc["gpubench"]["tuning"] = to_json(cx.tuning);
  plausibility::mark_document(doc, plausibility::memoized(cx.harness.peak), cx.harness.peak_clock);
  InterruptsHeld held;
  write_file_atomically(cx.out, doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

std::vector<std::string> axis_overrides(const Context& cx, const Config& settings, int workers, const std::string& io) {
  const Knobs k = knobs_of(settings);
  const bool cuda = cx.device.is_cuda();
  return {"stage=pipeline",
          fmt::format("workers={}", workers),
          "order=random",
          "io=" + io,
          std::string("format=") + (k.shard ? "shard" : "files"),
          fmt::format("scale={}", k.scale),
          "dtype=fp32",
          fmt::format("batch={}", cx.o->batch),
          fmt::format("prefetch={}", k.prefetch),
          fmt::format("pinned={}", cuda && k.pinned ? 1 : 0),
          std::string("aug=") + (cuda && k.gpu_aug ? "gpu" : "cpu"),
          fmt::format("step_us={}", cx.step_us),
          "consumer=" + cx.o->consumer};
}

// A `gpubench run` command line that measures this configuration again.
std::string run_command(const Context& cx, const Config& settings, int workers) {
  std::string s;
  if (const char* dataset = std::getenv(dl::kDatasetEnv); dataset != nullptr && *dataset != '\0') {
    s += fmt::format("{}={} ", dl::kDatasetEnv, dataset);
  }
  s += fmt::format("gpubench run --suite dataload --device {}", cx.device.id());
  for (const std::string& a : axis_overrides(cx, settings, workers, cx.o->io)) s += " --axis " + a;
  return s;
}

// The measurement options of an effort: 0 short, 1 long (3x), 2 the final's (`final_min_s`).
MeasureOptions measure_options(const Context& cx, int prefetch, int effort, double short_min_s, double final_min_s) {
  MeasureOptions m;
  const double step = cx.step_us > 0 ? static_cast<double>(cx.step_us) * 1e-6 : 0.01;
  // The warm-up drains the queue the workers filled before timing (2 x prefetch + 2 steps), so
  // a deep queue does not hide a producer slower than the consumer in a short measurement.
  m.warmup_s = std::max(0.02, (2.0 * prefetch + 2) * step);
  m.min_time_s = effort == 0 ? short_min_s : effort == 1 ? 3 * short_min_s : final_min_s;
  m.min_samples = effort == 0 ? 8 : 16;
  return m;
}

struct Run {
  Json entry;       // as recorded
  bool ok = false;
  std::string reason;
  double stall = 0, samples_per_s = 0, step_s = 0, noise_pct = 0, queue_mean = 0;
  std::int64_t samples = 0;  // timed samples (steps) behind noise_pct
};

// One dataload case through the harness (the axes given; the plan must hold exactly one case);
// its entry recorded in the results (replacing an earlier measurement of the same case) with
// gpubench.tune = {stage[, role]}. Null with `reason` set when nothing was measured.
Json measure_case(Context& cx, const std::vector<std::string>& axes, const MeasureOptions& m, const std::string& stage,
                  const std::string& role, std::string& reason) {
  PlanRequest request;
  request.suites = {"dataload"};
  request.axis_overrides = axes;
  const std::vector<PlannedCase> plan = make_plan(suites::all(), request, {cx.device});
  if (plan.size() != 1) {
    reason = fmt::format("the dataload suite has no such case on {} ({} planned)", cx.device.id(), plan.size());
    return nullptr;
  }
  HarnessOptions h = cx.harness;
  h.measure = m;
  ResultsFile scratch("", cx.context);  // in memory: the entries are gathered below
  (void)run_plan(plan, h, scratch);
  const Json& list = scratch.document()["benchmarks"];
  if (list.empty()) {
    reason = "the case produced no result";
    return nullptr;
  }
  Json entry = list.back();
  entry["gpubench"]["tune"] = {{"stage", stage}};
  if (!role.empty()) entry["gpubench"]["tune"]["role"] = role;
  const std::string name = entry.value("name", plan.front().name());
  if (!cx.entries.count(name)) cx.names.push_back(name);
  cx.entries[name] = entry;
  write_results(cx);  // after every case: an interrupted tune keeps what it measured
  return entry;
}

// Why a recorded entry gives no figure: not ok, or its verification failed; empty when it does.
std::string failure_of(const Json& entry) {
  const Json& g = entry["gpubench"];
  if (g.value("status", "") != "ok") return g.value("status", std::string("failed")) + ": " + g.value("reason", entry.value("error_message", ""));
  if (g.contains("verification") && !g["verification"].value("passed", false)) return "verification failed";
  return "";
}

// One pipeline case (the configuration's axes) through measure_case, its figures read back.
Run run_case(Context& cx, const Config& settings, int workers, const std::string& io, const MeasureOptions& m,
             const std::string& stage, const std::string& role = "") {
  Run r;
  r.entry = measure_case(cx, axis_overrides(cx, settings, workers, io), m, stage, role, r.reason);
  if (r.entry.is_null()) return r;
  const Json& g = r.entry["gpubench"];
  r.reason = failure_of(r.entry);
  if (!r.reason.empty()) return r;
  const Json d = g.value("details", Json::object());
  if (!d.contains("data_stall_share")) {
    r.reason = "the case reported no data stall";
    return r;
  }
  r.ok = true;
  r.stall = d["data_stall_share"].get<double>();
  r.samples_per_s = d.value("samples_per_s", 0.0);
  r.step_s = d.value("mean_step_s", 0.0);
  r.queue_mean = d.contains("queue_depth") ? d["queue_depth"].value("mean", 0.0) : 0.0;
  r.noise_pct = g.contains("measurement") ? g["measurement"].value("noise_pct", 0.0) : 0.0;
  r.samples = g.contains("measurement") ? g["measurement"].value("samples", std::int64_t{0}) : 0;
  return r;
}

Json run_figures(const Run& r) {
  Json f = Json::object();
  if (r.ok) {
    f["data_stall_pct"] = r.stall * 100;
    f["samples_per_s"] = r.samples_per_s;
    f["step_s"] = r.step_s;
    f["noise_pct"] = r.noise_pct;
    f["samples"] = r.samples;
    f["queue_depth_mean"] = r.queue_mean;
  }
  if (r.entry.contains("name")) f["case"] = r.entry["name"];
  return f;
}

// The final measurement of one configuration: the searched io (its stall and rate), plus the
// other two of DS-Analyzer's three runs for the split. Null when the headline run failed.
Json final_measurement(Context& cx, const Config& settings, int workers, const std::string& role, double min_s,
                       std::vector<LogEntry>& log) {
  const int prefetch = knobs_of(settings).prefetch;
  const MeasureOptions m = measure_options(cx, prefetch, 2, 0, min_s);
  std::map<std::string, Run> runs;
  for (const std::string io : {"memory", "cached", "cold"}) {
    const auto t0 = std::chrono::steady_clock::now();
    runs[io] = run_case(cx, settings, workers, io, m, "final", role);
    LogEntry e;
    e.config = with_workers(settings, workers);
    e.round = 2;
    e.status = runs[io].ok ? Status::Ok : Status::Failed;
    e.reason = runs[io].reason;
    e.figures = run_figures(runs[io]);
    e.figures["io"] = io;
    e.figures["role"] = role;
    e.cost_s = seconds_since(t0);
    log.push_back(std::move(e));
    if (!cx.o->quiet) {
      fmt::print(stderr, "final {} io={} {}: {}\n", role, io, config_label(with_workers(settings, workers)),
                 runs[io].ok ? fmt::format("stall {:.1f}%, {:.0f} samples/s", runs[io].stall * 100, runs[io].samples_per_s)
                             : runs[io].reason);
    }
  }
  const Run& head = runs[cx.o->io];
  if (!head.ok) return nullptr;
  Json j = configuration_json(with_workers(settings, workers), Json::object());
  j["samples_per_s"] = head.samples_per_s;
  j["data_stall_pct"] = head.stall * 100;
  j["meets_max_stall"] = head.stall <= cx.o->max_stall;
  j["step_s"] = head.step_s;
  j["noise_pct"] = head.noise_pct;
  j["samples"] = head.samples;
  if (runs["memory"].ok && runs["cached"].ok && runs["cold"].ok && runs["memory"].step_s > 0) {
    const dl::DsSplit s = dl::ds_analyzer_split(runs["memory"].step_s, runs["cached"].step_s, runs["cold"].step_s);
    j["prep_stall_pct"] = s.prep_share * 100;
    j["fetch_stall_pct"] = s.fetch_share * 100;
    j["compute_pct"] = s.compute_share * 100;
    j["synthetic_step_s"] = s.synthetic_step_s;
    j["cached_step_s"] = s.cached_step_s;
    j["cold_step_s"] = s.cold_step_s;
  }
  if (cx.device.is_cuda()) j["cores_per_gpu"] = workers;
  else j["loader_cores"] = workers;
  const Knobs k = knobs_of(settings);
  // PyTorch's DataLoader counts prefetched batches per worker (prefetch_factor x num_workers).
  j["pytorch"] = fmt::format("DataLoader(batch_size={}, num_workers={}, prefetch_factor={}, pin_memory={})", cx.o->batch,
                             workers, std::max(1, (k.prefetch + workers - 1) / workers), k.pinned ? "True" : "False");
  j["case"] = head.entry.value("name", "");
  j["command"] = run_command(cx, settings, workers);
  return j;
}

// decode=gpu, considered beside the CPU loader (issue 44): the pipeline's workers decode with
// libjpeg-turbo, so GPU decode is not a setting of the searched loader; on a CUDA device the tune
// measures nvJPEG's batched decode alone (stage=decode, decode=gpu, the batch the loader feeds)
// at hw_load 0 (the CUDA decoder) and 65 (DALI's default split; skipped with nvJPEG's reason on a
// GPU without a hardware decoder) and sets its best images/s and the host cores it still keeps
// busy beside the recommended loader's: whether it alone keeps up with the consumer, and the
// loader workers it could free (an estimate: reading, augmenting and collating stay on the CPU).
Json consider_gpu_decode(Context& cx, const Json& recommended, double min_s, double consumer_rate) {
  Json j = Json::object();
  if (!cx.device.is_cuda()) {
    j["considered"] = false;
    j["reason"] = "decode=gpu needs a CUDA device (nvJPEG decodes on the GPU); the cpu device's loader decodes with libjpeg-turbo";
    return j;
  }
  j["considered"] = true;
  j["measurements"] = Json::array();
  MeasureOptions m;
  m.warmup_s = 0.05;
  m.min_time_s = min_s;
  m.min_samples = 16;
  Json best;
  for (int hw_load : {0, 65}) {
    const std::vector<std::string> axes = {"stage=decode", "decode=gpu", fmt::format("hw_load={}", hw_load), "workers=1",
                                           "scale=1", "order=random", "io=memory", "format=files",
                                           fmt::format("batch={}", cx.o->batch)};
    std::string reason;
    const Json entry = measure_case(cx, axes, m, "decode_gpu", "", reason);
    if (reason.empty()) reason = failure_of(entry);
    Json row{{"hw_load", hw_load}};
    if (entry.contains("name")) row["case"] = entry["name"];
    if (!reason.empty()) {
      row["reason"] = reason;
    } else {
      const Json& metrics = entry["gpubench"]["metrics"];
      row["images_per_s"] = metrics.value("items_per_s", 0.0);
      row["host_cores"] = metrics.value("cpu_cores", 0.0);
      row["batch_latency_ms_p99"] = metrics.value("batch_latency_ms_p99", 0.0);
      if (best.is_null() || row["images_per_s"].get<double>() > best["images_per_s"].get<double>()) best = row;
    }
    if (!cx.o->quiet) {
      fmt::print(stderr, "decode=gpu hw_load={}: {}\n", hw_load,
                 reason.empty() ? fmt::format("{:.0f} images/s, {:.2f} host cores", row["images_per_s"].get<double>(),
                                              row["host_cores"].get<double>())
                                : reason);
    }
    j["measurements"].push_back(row);
  }
  if (best.is_null()) {
    j["reason"] = "no GPU decode was measured (see measurements)";
    return j;
  }
  j["best"] = best;
  const double rate = best["images_per_s"].get<double>();
  j["consumer_samples_per_s"] = consumer_rate;
  j["keeps_up"] = consumer_rate > 0 && rate >= consumer_rate;
  if (!recommended.is_null() && recommended.contains("workers")) {
    const double workers = recommended["workers"].get<double>();
    j["cpu_loader_workers"] = workers;
    if (j["keeps_up"].get<bool>()) j["workers_freed_estimate"] = std::max(0.0, workers - best["host_cores"].get<double>());
  }
  j["note"] = "decode alone, not a loader: reading, augmenting and collating stay on the CPU with decode=gpu";
  return j;
}

}  // namespace

int tune_dataload(const DataloadTuneOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  check_options(o);

  // Under mpirun/srun the loader recommendation is per rank: rank 0 tunes its own loader with
  // its share of the node's CPUs while the others wait at exit; it alone writes.
  int ranks = 1, per_node = 1;
  if (const std::optional<LaunchInfo> launch = detect_launch()) {
    ranks = launch->size;
    per_node = std::max(1, local_ranks(*launch));
    if (launch->rank != 0) {
      if (!o.quiet) {
        fmt::print(stderr, "gpubench tune dataload: rank {} of {}: rank 0 tunes the loader (the recommendation is per rank)\n",
                   launch->rank, launch->size);
      }
      return 0;
    }
  }

  if (!o.dataset.empty()) ::setenv(dl::kDatasetEnv, o.dataset.c_str(), 1);
  dl::check_dataset_env();

  Context cx;
  cx.o = &o;
  const DeviceInventory inventory = discover_devices();
  // Default device: the first GPU when there is one, else the CPU.
  const std::string device = !o.device.empty() ? o.device : inventory.cuda.empty() ? "cpu" : "cuda:0";
  const DeviceSelection selection = select_devices(device, inventory);
  if (selection.devices.size() != 1 || selection.devices.front().id() != device) {
    const std::string why = device == "cpu" ? "no CPU device" : inventory.cuda.empty() ? inventory.cuda_unavailable_reason
                                                                                       : "no such CUDA device";
    fmt::print(stderr, "gpubench tune dataload: cannot tune on {}: {}\n", device, why);
    return 1;
  }
  cx.device = selection.devices.front();
  const bool cuda = cx.device.is_cuda();
  const bool spin = o.consumer == "spin";
  std::optional<double> rate = o.consumer_rate;
  std::string rate_from;
  if (!o.consumer_from.empty()) {
    auto [r, name] = train_consumer_rate(o.consumer_from);
    rate = r;
    rate_from = fmt::format("{} in {}", name, o.consumer_from);
    if (!(o.batch / r >= 1e-6 && o.batch / r <= 60)) {
      throw UsageError(fmt::format("--consumer-from {}: {:.4g} samples/s gives a step outside 1 us to 60 s for --batch {}",
                                   o.consumer_from, r, o.batch));
    }
  }
  if (spin) {
    const double step = o.step_time_s ? *o.step_time_s : rate ? o.batch / *rate : kDefaultStepTimeS;
    cx.step_us = std::max<std::int64_t>(1, std::llround(step * 1e6));
  }
  // A budget too small to measure anything is refused before anything runs (issue 26: a 2 s
  // budget ran 11.6 s, its final's reserve alone longer than the budget). The floor: the final's
  // reserve (below) and one short measurement of three settings, each with ~0.5 s of set-up.
  {
    const double step_s = spin ? static_cast<double>(cx.step_us) * 1e-6 : 0.05;
    const double short_s = std::clamp(o.budget_s / 100, std::max(0.05, 8 * step_s), 5.0);
    const double reserve_s = 6 * (2 * short_s + 0.5), needed_s = reserve_s + 3 * (short_s + 0.5);
    if (o.budget_s < needed_s) {
      throw UsageError(fmt::format("--budget {:g}: too small to measure anything with this consumer: the final "
                                   "measurements alone need about {:.0f} s; give at least {:.0f}",
                                   o.budget_s, reserve_s, std::ceil(needed_s)));
    }
  }
  const int cpus = kernels::usable_cpus();
  const int max_workers = o.max_workers > 0 ? o.max_workers : std::max(1, cpus / per_node);

  cx.out = o.out.empty() ? default_results_path(host_name()) : fs::path(o.out);
  check_output_path(cx.out, "--out");
  OutputLock lock(cx.out, "--out");
  install_interrupt_handlers(cx.out.string());

  cx.harness.benchmark = parse_benchmark_flags({});
  cx.harness.quiet = true;
  cx.harness.peak = [&cx](const std::string& device, const std::string& key) { return cx.specs.peak(device, key); };
  cx.harness.peak_clock = [&cx](const std::string& device, const std::string& key) {
    return cx.specs.peak_clock(device, key);
  };
  const std::vector<const Suite*> suite = select_suites(suites::all(), {"dataload"});
  RunDescription description{o.command_line, "tune", {"dataload"}, MeasureOptions{}};
  cx.context = capture_context(inventory, {cx.device}, suite, description);

  // The dataset, opened (or generated) once, before the clock of the search starts.
  const dl::Source& source = dl::source();
  const bool has_shard = source.dataset.has_shard;

  Tuning& t = cx.tuning;
  t.target = "dataload";
  t.objective = "samples_per_s";
  t.knobs = {"workers", "prefetch"};
  if (cuda) t.knobs.insert(t.knobs.end(), {"pinned", "aug"});
  t.knobs.insert(t.knobs.end(), {"scale", "format"});
  t.budget_s = o.budget_s;
  t.seed = o.seed;
  t.fixed = {{"device", cx.device.id()},
             {"device_name", cx.device.name},
             {"dataset", source.origin},
             {"batch", o.batch},
             {"consumer", o.consumer},
             {"io", o.io},
             {"max_stall_pct", o.max_stall * 100},
             {"max_workers", max_workers},
             {"default_workers", o.default_workers},
             {"ranks", ranks},
             {"ranks_per_node", per_node},
             {"per_rank", true}};
  if (spin) {
    t.fixed["step_s"] = static_cast<double>(cx.step_us) * 1e-6;
    t.fixed["consumer_samples_per_s"] = o.batch / (static_cast<double>(cx.step_us) * 1e-6);
  }
  if (!rate_from.empty()) t.fixed["consumer_from"] = rate_from;
  if (!has_shard) t.fixed["format_note"] = "the dataset has no shard (gpubench datagen writes one): files only";
  if (ranks > 1) {
    t.fixed["rank_note"] = fmt::format("per rank: rank 0 tuned alone with {} of the node's {} CPUs ({} ranks per node); the "
                                       "other ranks did not load meanwhile",
                                       max_workers, cpus, per_node);
  }
  write_results(cx);

  // The search within the budget less a reserve for the final; its short measurements last about
  // a hundredth of the budget (at least 8 consumer steps).
  const double step_s = spin ? static_cast<double>(cx.step_us) * 1e-6 : 0.05;
  const double short_min_s = std::clamp(o.budget_s / 100, std::max(0.05, 8 * step_s), 5.0);
  std::vector<Candidate> settings = loader_settings(cuda, o.max_scale, has_shard);
  WorkersSearchOptions so;
  so.budget_s = o.budget_s;
  so.max_stall = o.max_stall;
  so.min_workers = 1;
  so.max_workers = max_workers;
  so.seed = o.seed;
  double overhead_s = 0;  // the longest wall time of a case beyond its min-time (setup, verification, warm-up)
  int cases = 0;
  // Kept for the final: its cases (6, or 3 when the default wins) at twice a short
  // measurement's min-time each, plus the overhead a case has shown so far.
  const double final_min_floor_s = 2 * short_min_s;
  so.reserve_s = [&] { return 6 * (final_min_floor_s + (cases > 0 ? overhead_s : 0.5)); };
  const LoaderOracle oracle = [&](const Config& c, int workers, int effort) {
    const auto t0 = std::chrono::steady_clock::now();
    const MeasureOptions m = measure_options(cx, knobs_of(c).prefetch, effort, short_min_s, 0);
    const Run r = run_case(cx, c, workers, o.io, m, effort == 0 ? "short" : "long");
    overhead_s = std::max(overhead_s, seconds_since(t0) - m.min_time_s);
    ++cases;
    LoaderMeasured lm;
    lm.status = r.ok ? Status::Ok : Status::Failed;
    lm.stall = r.stall;
    lm.reason = r.reason;
    lm.figures = run_figures(r);
    // The log so far, in the file with the case (replaced by the search's whole log at its end).
    LogEntry e;
    e.config = with_workers(c, workers);
    e.round = effort;
    e.status = lm.status;
    e.reason = lm.reason;
    e.figures = lm.figures;
    e.cost_s = seconds_since(t0);
    t.search.push_back(log_entry_json(e));
    write_results(cx);
    if (!o.quiet) {
      fmt::print(stderr, "{} {}: {}\n", effort == 0 ? "short" : "long", config_label(with_workers(c, workers)),
                 r.ok ? fmt::format("stall {:.1f}%, {:.0f} samples/s", r.stall * 100, r.samples_per_s) : r.reason);
    }
    return lm;
  };
  const auto search_start = std::chrono::steady_clock::now();
  const Clock clock = [&] { return seconds_since(search_start); };
  const WorkersSearchResult sr = search_workers(settings, oracle, clock, so);
  t.search_s = sr.elapsed_s;
  t.search = Json::array();
  for (const LogEntry& e : sr.log) t.search.push_back(log_entry_json(e));
  t.configurations = {{"candidates", sr.settings},  {"measured", sr.measured},
                      {"failed", sr.failed},        {"skipped", sr.skipped},
                      {"pruned", sr.pruned},        {"measurements", sr.measurements},
                      {"budget_exhausted", sr.budget_exhausted}};
  write_results(cx);

  // The final: the recommended and the default configuration measured again, the same way and
  // longer, with what the budget has left (at least a long measurement's length).
  const Config default_settings = make_config(Knobs{}, cuda);
  const int default_workers = o.default_workers;
  const bool same = sr.best && settings[sr.best->setting].config == default_settings && sr.best->workers == default_workers;
  bool same_after_final = same;  // the default recommended, found so by the final
  const int final_cases = sr.best && !same ? 6 : 3;
  const double left = o.budget_s - seconds_since(started);
  const double per_case_overhead = cases > 0 ? overhead_s : 0.5;
  const double final_min_s = std::clamp(left / final_cases - per_case_overhead, final_min_floor_s, 30.0);
  const auto final_start = std::chrono::steady_clock::now();
  std::vector<LogEntry> final_log;
  if (sr.best) {
    t.recommended = final_measurement(cx, settings[sr.best->setting].config, sr.best->workers, "recommended", final_min_s, final_log);
    if (!t.recommended.is_null()) {
      t.recommended["search_meets_max_stall"] = sr.best->meets_target;
      t.recommended["search_effort"] = sr.best->effort == 0 ? "short" : "long";
    }
  }
  if (same && !t.recommended.is_null()) {
    t.default_config = t.recommended;
    t.default_config["note"] = "the default configuration is the recommended one: measured once";
  } else {
    t.default_config = final_measurement(cx, default_settings, default_workers, "default", final_min_s, final_log);
  }
  for (const LogEntry& e : final_log) {
    Json j = log_entry_json(e);
    j["stage"] = "final";
    t.search.push_back(std::move(j));
  }
  // Never a recommendation that the final measured slower than the default, or that misses the
  // stall target the default meets: the default is recommended then, and the file says why.
  if (!same && !t.recommended.is_null() && !t.default_config.is_null()) {
    if (const auto why = default_beats_recommendation(t.recommended, t.default_config)) {
      Json searched = t.recommended;
      t.recommended = t.default_config;
      t.recommended["note"] = "the default is recommended: " + *why;
      t.recommended["searched_best"] = searched;
      same_after_final = true;
    }
  }
  if (!t.recommended.is_null() && !t.default_config.is_null() && t.default_config["samples_per_s"].get<double>() > 0) {
    t.speedup_vs_default = t.recommended["samples_per_s"].get<double>() / t.default_config["samples_per_s"].get<double>();
    t.recommended["workers_saved_vs_default"] = same_after_final ? 0 : default_workers - sr.best->workers;
  }
  t.final_s = seconds_since(final_start);
  // GPU decode, considered beside the loader: the consumer's rate (a spin's, else what the
  // recommended loader and the real consumer reached together) is what it must keep up with.
  {
    const double consumer_rate = spin ? o.batch / (static_cast<double>(cx.step_us) * 1e-6)
                                 : t.recommended.is_null() ? 0.0
                                                           : t.recommended.value("samples_per_s", 0.0);
    t.sections["decode_gpu"] = consider_gpu_decode(cx, t.recommended, final_min_floor_s, consumer_rate);
  }
  t.wall_s = seconds_since(started);
  t.finished = true;
  write_results(cx);

  // The closing lines: what to use, against the default.
  if (t.recommended.is_null()) {
    fmt::print(stderr, "gpubench tune dataload: no configuration could be recommended ({} failed, {} skipped); results: {}\n",
               sr.failed, sr.skipped, cx.out.string());
    return 1;
  }
  auto line = [&](const char* what, const Json& j) {
    if (j.is_null()) return fmt::format("{:<12} not measured", what);
    std::string knobs;
    for (const std::string& k : t.knobs) {
      const Json& v = j.contains(k) ? j[k] : Json("?");
      knobs += fmt::format("{}={} ", k, v.is_string() ? v.get<std::string>() : v.dump());
    }
    std::string split;
    if (j.contains("prep_stall_pct")) {
      split = fmt::format(" (preparation {:.1f}%, fetch {:.1f}%)", j["prep_stall_pct"].get<double>(),
                          j["fetch_stall_pct"].get<double>());
    }
    return fmt::format("{:<12} {}: stall {:.1f}%{}, {:.0f} samples/s, noise {:.1f}%", what, knobs,
                       j["data_stall_pct"].get<double>(), split, j["samples_per_s"].get<double>(),
                       j["noise_pct"].get<double>());
  };
  fmt::print("{}\n{}\n", line("recommended", t.recommended), line("default", t.default_config));
  if (t.recommended.contains("note")) fmt::print("{}\n", t.recommended["note"].get<std::string>());
  if (!t.recommended.value("meets_max_stall", false)) {
    fmt::print("no configuration kept the stall under {:.1f}% with at most {} workers: the lowest stall is recommended\n",
               o.max_stall * 100, max_workers);
  }
  if (t.speedup_vs_default) fmt::print("speed-up vs default: {:.2f}x\n", *t.speedup_vs_default);
  if (const Json& g = t.sections["decode_gpu"]; g.contains("best")) {
    const Json& b = g["best"];
    std::string verdict = g["keeps_up"].get<bool>()
                              ? fmt::format("keeps up with the consumer's {:.0f} samples/s", g["consumer_samples_per_s"].get<double>())
                              : fmt::format("short of the consumer's {:.0f} samples/s", g["consumer_samples_per_s"].get<double>());
    if (g.contains("workers_freed_estimate")) {
      verdict += fmt::format(": could free about {:.1f} of the loader's {} workers (decode only)",
                             g["workers_freed_estimate"].get<double>(), g["cpu_loader_workers"].get<double>());
    }
    fmt::print("decode=gpu   nvJPEG hw_load={}: {:.0f} images/s with {:.2f} host cores; {}\n", b["hw_load"].get<int>(),
               b["images_per_s"].get<double>(), b["host_cores"].get<double>(), verdict);
  }
  fmt::print(stderr,
             "gpubench tune dataload: {} measurements of {} settings ({} pruned, {} skipped, {} failed) in {:.1f} s "
             "(budget {:.0f} s); results: {}\n",
             sr.measurements, sr.settings, sr.pruned, sr.skipped, sr.failed, t.wall_s, o.budget_s, cx.out.string());
  return 0;
}

}  // namespace gpubench::tune
