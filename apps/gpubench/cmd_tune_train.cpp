// gpubench tune train: search precision x micro-batch x accumulation x recompute for one model
// at one global batch on one device, within a time budget; confirm the recommendation and the
// default with a final measurement each; write a results file with gpubench.tuning
// (bench/tune/train_tuner.hpp, docs/tune.md).
#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/core/context.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/core/launch.hpp"
#include "bench/core/paths.hpp"
#include "bench/suites/all_suites.hpp"
#include "bench/tune/train_tuner.hpp"
#include "reports/plausibility.hpp"
#include "reports/spec_sheet.hpp"

#include <unistd.h>

namespace gpubench::app {
namespace {

constexpr const char* kTuneTrainUsage = R"(Usage: gpubench tune train --model M [options]

Searches precision (GPU: fp32, tf32, fp16-amp, bf16-amp; CPU: fp32) x micro-batch x gradient
accumulation (micro-batch x accumulation x ranks = the global batch) x activation recompute
(transformers) for one model of the train suite on one device, within --budget seconds:
successive halving, short measurements first and longer ones for the best third, every
configuration verified before it is timed. Then the recommended and the default configuration
are measured again (after the budget) and compared: speed-up, throughput, noise, memory, MFU.
Writes a results file (every configuration tried is an entry) with gpubench.tuning; `gpubench
report` renders it. Exit status: 0 when a configuration was recommended, 1 when none could be,
2 on bad usage.

Options)";

constexpr double kMaxBudgetS = 86400;

struct TuneTrainOptions {
  bool help = false;
  std::string help_text;
  std::string device, model, out, budget_text = "60";
  std::vector<std::string> axes;
  std::optional<std::int64_t> global_batch;
  double budget_s = 60;
  std::uint64_t seed = 1;
  bool quiet = false;
};

TuneTrainOptions parse(const std::vector<std::string>& args) {
  TuneTrainOptions o;
  std::int64_t global_batch = 0;
  po::options_description desc(kTuneTrainUsage);
  desc.add_options()
      ("device,d", po::value(&o.device), "cpu or cuda:N (default: cuda:0 when a GPU is here, else cpu)")
      ("model", po::value(&o.model), "mlp, transformer (the quick preset's dimensions) or a named train preset: "
                                      "gpt2-124m, gpt2-350m, gpt-1.3b, llama7b-block")
      ("axis,a", po::value(&o.axes)->composing(),
       "NAME=VALUE for a model-shape axis (layers, hidden, heads, ffn_mult, seq, vocab); repeatable")
      ("global-batch", po::value(&global_batch),
       "sequences (mlp: samples) per optimizer step over all ranks (default: the preset's micro-batch x accumulation)")
      ("budget", po::value(&o.budget_text)->default_value(o.budget_text),
       "seconds the search may take (above 0, at most 86400); the final confirmation comes after it")
      ("seed", po::value(&o.seed)->default_value(o.seed), "orders candidates of equal prior; same seed, same order")
      ("out,o", po::value(&o.out), "results file (default results/<host>-<UTC time>.json)")
      ("quiet,q", po::bool_switch(&o.quiet), "no progress on stderr")
      ("help,h", "show this help");
  po::variables_map vm = parse_or_throw(args, desc);
  if (vm.count("help")) {
    o.help = true;
    o.help_text = help_text(desc);
    return o;
  }
  // The budget is read here so that every malformed one gets the same line.
  try {
    std::size_t used = 0;
    o.budget_s = std::stod(o.budget_text, &used);
    if (used != o.budget_text.size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw UsageError(fmt::format("--budget '{}': expected seconds (a number above 0, at most {})", o.budget_text, kMaxBudgetS));
  }
  in_range(o.budget_s, "--budget", 0, kMaxBudgetS);
  if (o.model.empty()) throw UsageError("tune train: --model is required (mlp, transformer, gpt2-124m, ...)");
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

std::string format_rate(const nlohmann::ordered_json& c, const std::string& objective) {
  if (!c.is_object() || !c.contains(objective)) return "not measured";
  std::string s = fmt::format("{:.4g} {} (noise {:.1f}%", c[objective].get<double>(), objective,
                              c.value("noise_pct", 0.0));
  if (c.contains("memory_bytes")) s += fmt::format(", memory {:.3g} MB", c["memory_bytes"].get<double>() / 1e6);
  if (c.contains("mfu_pct")) s += fmt::format(", MFU {:.1f}%", c["mfu_pct"].get<double>());
  return s + ")";
}

std::string knob_text(const nlohmann::ordered_json& c, const std::vector<std::string>& knobs) {
  std::string s;
  for (const std::string& k : knobs) {
    if (!c.contains(k)) continue;
    s += (s.empty() ? "" : " ") + k + "=" + (c[k].is_string() ? c[k].get<std::string>() : c[k].dump());
  }
  return s;
}

}  // namespace

int cmd_tune_train(const std::vector<std::string>& args) {
  const auto started = std::chrono::steady_clock::now();
  const TuneTrainOptions o = parse(args);
  if (o.help) return print_help(o.help_text);
  if (const std::optional<LaunchInfo> launch = detect_launch()) {
    (void)launch;
    throw UsageError("tune train under mpirun/srun: the data-parallel train step is not in this build; "
                     "run it as one process");
  }

  const DeviceInventory inventory = discover_devices();
  const std::string spec = o.device.empty() ? (inventory.cuda.empty() ? "cpu" : "cuda:0")
                                            : (o.device == "cuda" ? "cuda:0" : o.device);
  const DeviceSelection selection = select_devices(spec, inventory);
  if (selection.devices.size() != 1) {
    const std::string why = inventory.cuda.empty() ? inventory.cuda_unavailable_reason : "no such device";
    fmt::print(stderr, "gpubench tune train: no device {} to tune on: {}\n", spec, why);
    return 1;
  }
  tune::TrainTuneRequest request;
  request.device = selection.devices.front();
  request.model = o.model;
  request.shape_axes = o.axes;
  request.global_batch = o.global_batch;
  request.budget_s = o.budget_s;
  request.seed = o.seed;
  const double memory = request.device.is_cuda()
                            ? static_cast<double>(request.device.memory_bytes)
                            : static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  const tune::TrainSpace space = tune::make_train_space(request, memory);

  // The results file, checked and locked before anything runs.
  const std::filesystem::path out_path = o.out.empty() ? default_results_path(host_name()) : std::filesystem::path(o.out);
  check_output_path(out_path, "--out");
  OutputLock lock(out_path, "--out");
  const reports::SpecSheet specs = reports::SpecSheet::builtin();
  tune::TrainTuneSettings settings;
  settings.harness.benchmark = parse_benchmark_flags({});
  settings.harness.peak = [&specs](const std::string& device, const std::string& key) { return specs.peak(device, key); };
  settings.judge = [lookup = plausibility::memoized(settings.harness.peak)](nlohmann::ordered_json& doc) {
    plausibility::mark_document(doc, lookup);
  };
  if (!o.quiet) settings.progress = [](const std::string& line) { fmt::print(stderr, "tune train: {}\n", line); };

  RunDescription description{"gpubench tune train " + join_args(args), space.preset, {"train"}, settings.harness.measure};
  const std::vector<const Suite*> selected = select_suites(suites::all(), {"train"});
  ResultsFile results(out_path, capture_context(inventory, selection.devices, selected, description));
  results.set_judge(settings.judge);
  install_interrupt_handlers(out_path.string(), true);
  if (!o.quiet) {
    fmt::print(stderr, "tune train: {} on {}, global batch {}: {} candidate(s), {} beyond memory; budget {} s\n", o.model,
               request.device.id(), space.global_batch, space.candidates.size(), space.unfit.size(), o.budget_s);
  }
  const tune::Tuning t = tune::tune_train(request, space, results, settings);

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << fmt::format("Tuning report: {} on {}, global batch {} ({} of {} configurations measured, "
                           "search {:.1f} s of a {:.0f} s budget, final confirmation {:.1f} s)\n",
                           o.model, request.device.id(), space.global_batch, t.configurations.value("measured", 0),
                           t.configurations.value("candidates", 0), t.search_s, t.budget_s, t.final_s);
  std::cout << fmt::format("  default:     {}: {}\n", knob_text(t.default_config, t.knobs),
                           format_rate(t.default_config, t.objective));
  if (t.recommended.is_null()) {
    std::cout << "  recommended: none (no configuration was measured without failing)\n";
    fmt::print(stderr, "gpubench tune train: nothing to recommend in {:.1f} s; results: {}\n", wall, out_path.string());
    return 1;
  }
  std::cout << fmt::format("  recommended: {}: {}\n", knob_text(t.recommended, t.knobs),
                           format_rate(t.recommended, t.objective));
  if (t.speedup_vs_default) std::cout << fmt::format("  speed-up vs default: {:.3f}x\n", *t.speedup_vs_default);
  std::cout << fmt::format("  run it: {}\n", t.recommended.value("command", ""));
  fmt::print(stderr, "gpubench tune train: done in {:.1f} s; results: {}\n", wall, out_path.string());
  return 0;
}

}  // namespace gpubench::app
