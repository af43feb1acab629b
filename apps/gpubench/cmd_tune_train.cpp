// gpubench tune train: search precision x micro-batch x accumulation x recompute for one model
// at one global batch on one device, within a time budget; confirm the recommendation and the
// default with a final measurement each; write a results file with gpubench.tuning
// (bench/tune/train_tuner.hpp, docs/tune.md).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "apps/gpubench/ranks.hpp"
#include "bench/core/context.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/core/launch.hpp"
#include "bench/core/paths.hpp"
#include "bench/core/harness.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/all_suites.hpp"
#include "bench/tune/train_tuner.hpp"
#include "reports/plausibility.hpp"
#include "reports/spec_sheet.hpp"

#include <unistd.h>

namespace gpubench::app {
namespace {


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

// How the recommended command is started: srun for a Slurm job step that Open MPI's mpirun did
// not start (srun --mpi=pmix sets PMIX_* or PMI_*, and SLURM_STEP_ID), else mpirun (Open MPI's,
// or MPICH's, which takes -np too).
std::string launcher_prefix(const LaunchInfo& launch, int ranks) {
  const bool srun = launch.launcher.rfind("OpenMPI", 0) != 0 && std::getenv("SLURM_STEP_ID") != nullptr;
  return fmt::format("{} {}", srun ? "srun -n" : "mpirun -np", ranks);
}

}  // namespace

int cmd_tune_train(const std::vector<std::string>& args) {
  const auto started = std::chrono::steady_clock::now();
  // Under mpirun/srun every rank runs the whole command in step: the search is the same on every
  // rank (bench/tune/team_agreement.hpp), rank 0 writes the results and prints; the others print
  // nothing. Every rank parses the same arguments, so a usage error found before the ranks join
  // is the same on all of them: only rank 0 says it.
  const std::optional<LaunchInfo> launch = detect_launch();
  const bool quiet_rank = launch && launch->rank != 0;
  TuneTrainOptions o;
  mpi::Session* team = nullptr;
  try {
    o = parse_tune_train_options(args);
    if (o.help) return quiet_rank ? 0 : print_help(o.help_text);
    if (!launch && o.dp_given) {
      throw UsageError("--dp: a data-parallel mode needs several ranks: start tune train under mpirun or srun");
    }
    if (launch) {
      if (!mpi::built_with_mpi()) throw UsageError(launch_without_mpi_message(*launch));
      if (!launch->unjoinable.empty()) throw UsageError(launch->unjoinable);
    }
  } catch (const UsageError&) {
    if (quiet_rank) return 2;
    throw;
  }
  if (launch) {
    team = mpi::session(o.rank_timeout_s);
    if (const std::string m = team_size_mismatch_message(*launch, team->size()); !m.empty()) {
      if (team->rank() != 0) return 2;
      throw UsageError(m);
    }
  }
  const bool leader = team == nullptr || team->rank() == 0;

  // What each rank finds on its own (its device, the knob space, rank 0's output file) is
  // agreed before the ranks go on together: one rank's usage error or missing device ends every
  // rank with the same exit status, and rank 0 says why.
  const DeviceInventory inventory = discover_devices();
  tune::TrainTuneRequest request;
  std::optional<tune::TrainSpace> space;
  const std::filesystem::path out_path = o.out.empty() ? default_results_path(host_name()) : std::filesystem::path(o.out);
  OutputLock lock;
  std::string problem;  // "" or "<exit status>:<message>"
  try {
    std::string spec = o.device.empty() ? (inventory.cuda.empty() ? "cpu" : "cuda") : o.device;
    if (spec == "cuda" && team == nullptr) spec = "cuda:0";
    DeviceSelection selection = select_devices(spec, inventory);
    if (spec == "cuda" && !selection.devices.empty()) {
      // Each rank its local GPU, as `gpubench run` does under a launcher; the command says `cuda`.
      narrow_to_local_gpu(selection, *team);
      request.command_device = "cuda";
    }
    if (selection.devices.size() != 1) {
      const std::string why = inventory.cuda.empty() ? inventory.cuda_unavailable_reason : "no such device";
      throw std::runtime_error(fmt::format("no device {} to tune on: {}", spec, why));
    }
    request.device = selection.devices.front();
    request.model = o.model;
    request.shape_axes = o.axes;
    request.global_batch = o.global_batch;
    request.budget_s = o.budget_s;
    request.seed = o.seed;
    request.dp_modes = o.dp_modes;
    if (team != nullptr) {
      request.ranks = team->size();
      request.launcher = launcher_prefix(*launch, team->size());
    }
    const double memory = request.device.is_cuda()
                              ? static_cast<double>(request.device.memory_bytes)
                              : static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
    space = tune::make_train_space(request, memory);
    // The results file, checked and locked before anything runs (rank 0's only).
    if (leader) {
      check_output_path(out_path, "--out");
      lock = OutputLock(out_path, "--out");
    }
  } catch (const UsageError& e) {
    if (team == nullptr) throw;  // one process: main says it, as for every command
    problem = fmt::format("2:{}", e.what());
  } catch (const std::exception& e) {
    problem = fmt::format("1:{}", e.what());
  }
  if (team != nullptr) {
    const std::vector<std::string> all = team->all_gather(problem, "tune train's setup");
    for (std::size_t r = 0; r < all.size() && problem.empty(); ++r) {
      if (!all[r].empty()) problem = r == 0 ? all[r] : all[r].substr(0, 2) + fmt::format("rank {}: ", r) + all[r].substr(2);
    }
  }
  if (!problem.empty()) {
    // The prefix main gives a usage error ("gpubench tune: "), or this command's.
    const int status = problem[0] == '2' ? 2 : 1;
    if (leader) fmt::print(stderr, "gpubench tune{}: {}\n", status == 2 ? "" : " train", problem.substr(2));
    return status;
  }

  const reports::SpecSheet specs = reports::SpecSheet::builtin();
  tune::TrainTuneSettings settings;
  settings.harness.benchmark = parse_benchmark_flags({});
  settings.harness.peak = [&specs](const std::string& device, const std::string& key) { return specs.peak(device, key); };
  settings.harness.peak_clock = [&specs](const std::string& device, const std::string& key) {
    return specs.peak_clock(device, key);
  };
  settings.harness.team = team;
  settings.judge = [lookup = plausibility::memoized(settings.harness.peak),
                    clock = plausibility::memoized(settings.harness.peak_clock)](nlohmann::ordered_json& doc) {
    plausibility::mark_document(doc, lookup, clock);
  };
  if (!o.quiet && leader) settings.progress = [](const std::string& line) { fmt::print(stderr, "tune train: {}\n", line); };

  RunDescription description{"gpubench tune train " + join_args(args), space->preset, {"train"}, settings.harness.measure};
  const std::vector<const Suite*> selected = select_suites(suites::all(), {"train"});
  nlohmann::ordered_json context = capture_context(inventory, {request.device}, selected, description);
  if (team != nullptr) {
    // As `gpubench run` records a multi-rank run: who the ranks are and the MPI library.
    settings.harness.rank_identities = gather_rank_identities(*team, {request.device});
    context["gpubench"]["mpi"] = mpi_context(*team, settings.harness.rank_identities);
  }
  // Only rank 0 writes: the others keep their entries in memory.
  ResultsFile results(leader ? out_path : std::filesystem::path(), std::move(context));
  results.set_judge(settings.judge);
  if (leader) install_interrupt_handlers(out_path.string(), team == nullptr);
  if (!o.quiet && leader) {
    fmt::print(stderr, "tune train: {} on {}{}, global batch {}: {} candidate(s), {} beyond memory; budget {} s\n", o.model,
               request.device.id(), team != nullptr ? fmt::format(" x {} ranks", team->size()) : "",
               space->global_batch, space->candidates.size(), space->unfit.size(), o.budget_s);
  }
  const tune::Tuning t = tune::tune_train(request, *space, results, settings);
  // Every rank took the same decisions: the same exit status; only rank 0 reports.
  const int status = t.recommended.is_null() ? 1 : 0;
  if (!leader) return status;

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string ranks = team != nullptr ? fmt::format(" x {} ranks", team->size()) : "";
  std::cout << fmt::format("Tuning report: {} on {}{}, global batch {} ({} of {} configurations measured, "
                           "search {:.1f} s of a {:.0f} s budget, final confirmation {:.1f} s)\n",
                           o.model, request.device.id(), ranks, space->global_batch, t.configurations.value("measured", 0),
                           t.configurations.value("candidates", 0), t.search_s, t.budget_s, t.final_s);
  std::cout << fmt::format("  default:     {}: {}\n", knob_text(t.default_config, t.knobs),
                           format_rate(t.default_config, t.objective));
  if (t.recommended.is_null()) {
    std::cout << "  recommended: none (no configuration was measured without failing)\n";
    fmt::print(stderr, "gpubench tune train: nothing to recommend in {:.1f} s; results: {}\n", wall, out_path.string());
    return status;
  }
  std::cout << fmt::format("  recommended: {}: {}\n", knob_text(t.recommended, t.knobs),
                           format_rate(t.recommended, t.objective));
  if (t.speedup_vs_default) std::cout << fmt::format("  speed-up vs default: {:.3f}x\n", *t.speedup_vs_default);
  std::cout << fmt::format("  run it: {}\n", t.recommended.value("command", ""));
  fmt::print(stderr, "gpubench tune train: done in {:.1f} s; results: {}\n", wall, out_path.string());
  return status;
}

}  // namespace gpubench::app
