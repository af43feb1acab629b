// gpubench run: plan, check the output path, run every case, write the results file.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <iostream>
#include <sstream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/console.hpp"
#include "apps/gpubench/dry_run.hpp"
#include "apps/gpubench/options.hpp"
#include "apps/gpubench/ranks.hpp"
#include "apps/gpubench/report_output.hpp"
#include "bench/core/busy.hpp"
#include "bench/core/context.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/harness.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/core/launch.hpp"
#include "bench/core/progress.hpp"
#include "bench/core/paths.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/all_suites.hpp"
#include "bench/suites/gemm/gemm_tune.hpp"
#include "profilers/profile.hpp"
#include "reports/outputs.hpp"
#include "reports/plausibility.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::app {
namespace {

constexpr const char* kRunUsage = R"(Usage: gpubench run [options] [--benchmark_FLAG=VALUE ...]

Runs the selected suites on the selected devices and writes a results file (Google Benchmark
JSON plus gpubench fields, rewritten after every case). Stdout shows one table per suite (the
axes that vary as columns), stderr a progress line. Exit status: 0 when every case passed or
was skipped, 1 when a case failed, 2 on bad usage.

Google Benchmark flags pass through: --benchmark_filter=REGEX (applied to case names, '-'
negates), --benchmark_repetitions=N, --benchmark_min_time=SECONDS (same as --min-time),
--benchmark_format=console|json|csv (Google Benchmark's reporter on stdout instead of the
tables), --benchmark_out=FILE and
--benchmark_out_format=json|console|csv (Google Benchmark's own extra copy), and the others
benchmark::Initialize accepts.

Options)";

// The ranges of the numeric options (also in --help and docs/promises.md).
constexpr double kMaxMinTimeS = 3600, kMaxWarmupS = 3600, kMaxBatchTimeS = 60, kMaxCaseTimeoutS = 7 * 86400;
constexpr double kMaxRankTimeoutS = 86400, kMaxSampleFloorS = 86400;
constexpr long long kMaxMinSamples = 1000000;

// One trace per run, named after the results file (the output-name rule of reports/outputs.hpp:
// r.json -> r.trace.json, p.v1.2 -> p.v1.2.trace.json); an --isolate child writes its own.
std::string trace_file_path(const std::string& dir, const std::filesystem::path& out, long isolated_case) {
  validate_output_folder(dir, "--trace-dir");
  const std::string name = isolated_case >= 0 ? fmt::format("case{}-{}.trace.json", isolated_case, ::getpid())
                                              : reports::derived_output_path(out.filename().string(), ".trace.json");
  const std::filesystem::path path = std::filesystem::path(dir) / name;
  validate_output_file(path, "--trace-dir");
  make_folders(dir, "--trace-dir");
  return path.string();
}

// gpubench.profile in the results context: each instrument's "on" or "off: <reason>".
nlohmann::ordered_json profile_context(const std::vector<std::unique_ptr<Instrument>>& instruments, const RunOptions& o) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& i : instruments) j[i->name()] = i->status();
  if (o.profile.telemetry || o.profile.host) j["sample_interval_ms"] = o.sample_interval_ms;
  if (o.cupti_timer) j["timer"] = "cupti";
  return j;
}

// --dry-run: the plan for these arguments and its estimated wall time; nothing runs, nothing is
// written (a --tuning-cache that a tune step has yet to write is not read either).
int dry_run(const RunOptions& o, const reports::SpecSheet& specs) {
  const DeviceInventory inventory = inventory_for(o.selection, specs);
  const DeviceSelection selection = select_devices(o.selection.device, inventory);
  if (!selection.notice.empty()) fmt::print(stderr, "{}\n", selection.notice);
  std::vector<NotApplicable> not_applicable;
  const std::vector<PlannedCase> plan = make_plan(
      suites::all(), to_plan_request(o.selection, o.benchmark.filter.value_or("")), selection.devices, &not_applicable);
  for (const NotApplicable& n : not_applicable) {
    fmt::print(stderr, "{} on {}: not run here: {}\n", n.suite->name(), n.device.id(), n.reason);
  }
  print_plan(plan);
  // o.benchmark.repetitions: validated by parse_benchmark_flags (1 to kMaxRepetitions).
  fmt::print("{}\n", dry_run_line(estimate_run_plan(plan, o.measure, o.benchmark.repetitions, o.isolate,
                                                      o.profile.metrics, rate_lookup(specs))));
  return 0;
}

// The closing line, also under --quiet: what happened and where it went.
std::string summary_line(const RunSummary& s, std::size_t not_applicable, double seconds,
                         const std::filesystem::path& results, const std::vector<std::string>& reports) {
  std::string line = fmt::format("gpubench: {} ok, {} skipped, {} failed", s.ok, s.skipped, s.failed);
  if (not_applicable > 0) line += fmt::format(", {} suite{} not run here", not_applicable, not_applicable == 1 ? "" : "s");
  line += fmt::format(" in {}", format_duration(seconds));
  std::string where = "results: " + results.string();
  if (!reports.empty()) {
    // The console keeps to 160 columns: long paths name the reports by what differs from the
    // results file (they lie beside it, with its stem), and the paths may take a line of their own.
    where += fmt::format("; report: {}", fmt::join(reports, ", "));
    if (line.size() + 2 + where.size() > 160) {
      std::vector<std::string> endings;
      const std::string stem = reports::output_stem(results.string());
      for (const std::string& r : reports) endings.push_back(r.rfind(stem, 0) == 0 ? r.substr(stem.size()) : r);
      where = fmt::format("results: {} (report beside it: {})", results.string(), fmt::join(endings, ", "));
    }
  }
  return line.size() + 2 + where.size() <= 160 ? line + "; " + where : line + "\ngpubench: " + where;
}

}  // namespace

RunOptions parse_run_options(const std::vector<std::string>& all_args) {
  std::vector<std::string> args, bench_args;
  for (const std::string& a : all_args) (a.rfind("--benchmark_", 0) == 0 ? bench_args : args).push_back(a);

  RunOptions o;
  SelectionOptions& sel = o.selection;
  MeasureOptions& m = o.measure;
  double max_noise_pct = m.max_noise * 100;
  std::string &out = o.out, &spec_sheet = o.spec_sheet;
  std::string profile = profilers::kDefaultProfile, timer = "default";
  po::options_description desc(kRunUsage);
  add_selection_options(desc, sel);
  desc.add_options()
      ("out,o", po::value(&out), "results file (default results/<host>-<UTC time>.json)")
      ("min-time", po::value(&m.min_time_s)->default_value(m.min_time_s), "seconds of timed samples per case, at least (above 0, at most 3600)")
      ("min-samples", po::value(&m.min_samples)->default_value(m.min_samples), "timed samples per case, at least (2 to 1000000)")
      ("max-noise", po::value(&max_noise_pct)->default_value(max_noise_pct),
       "flag a case as noisy when stddev/mean of its samples exceeds this many percent (above 0, at most 1000)")
      ("warmup", po::value(&m.warmup_s)->default_value(m.warmup_s, "0.05"), "seconds of untimed warm-up runs per case (above 0, at most 3600)")
      ("batch-time", po::value(&m.batch_s)->default_value(m.batch_s),
       "seconds one timed sample (a batch of runs) should last (above 0, at most 60)")
      ("cold", po::bool_switch(&m.cold), "flush the L2 (CPU: last-level) cache before every sample; one run per sample")
      ("profile", po::value(&profile)->default_value(profile),
       "instruments observing every case, a comma list: nvtx (NVTX ranges for Nsight Systems), telemetry (NVML power, "
       "energy, clocks, throttling), host (process CPU and memory), trace (CUPTI kernel breakdown), "
       "metrics[=NAME:NAME...] (CUPTI hardware counters, replayed after timing); or none")
      ("trace-dir", po::value(&o.trace_dir), "write a Chrome/Perfetto trace of the run into this folder (implies trace)")
      ("timer", po::value(&timer)->default_value(timer),
       "GPU case timer: default (CUDA events around batches) or cupti (sum of the case's kernel durations)")
      ("sample-interval", po::value(&o.sample_interval_ms)->default_value(o.sample_interval_ms),
       "milliseconds between telemetry and host samples (above 0, at most 60000)")
      ("spec-sheet", po::value(&spec_sheet), "GPU spec sheet JSON replacing the built-in data/gpus.json")
      ("exclusive", po::bool_switch(&o.exclusive), "refuse to run when another process computes on a selected GPU")
      ("isolate", po::bool_switch(&o.isolate),
       "run every case in its own process: a crash or a sticky CUDA error fails only that case")
      ("case-timeout", po::value(&o.case_timeout_s),
       "seconds a case may take (setup, verification and timing) before it is killed and recorded as failed; "
       "implies --isolate (above 0, at most 604800). Default with --isolate: 300 s plus 20 times the case's planned "
       "time (warm-up plus min-time per repetition)")
      ("lt-candidates", po::value(&o.lt_candidates)->default_value(o.lt_candidates),
       "gemm: cuBLASLt heuristic algorithms the cublaslt-tuned provider times (the fastest is kept)")
      ("tuning-cache", po::value(&o.tuning_cache),
       "gemm: cuBLASLt tuning cache from `gpubench tune gemm`; cublaslt-tuned uses its algorithms")
      ("rank-timeout", po::value(&o.rank_timeout_s)->default_value(o.rank_timeout_s),
       "under mpirun/srun: seconds a rank may take to join, to reach each agreement step, or to complete a collective "
       "before the run ends naming it (above 0, at most 86400)")
      ("report", po::value(&o.report_formats),
       "after the run, write `gpubench report` in these formats (comma list of md, html, csv, json, openmetrics) beside the "
       "results file: <results>.md, ...")
      ("console", po::value<std::string>()->default_value("table"),
       "what stdout shows: table (one table per suite) or gb (Google Benchmark's console reporter)")
      ("quiet,q", po::bool_switch(), "only errors, warnings and the final summary line")
      ("dry-run", po::bool_switch(&o.dry_run),
       "print the cases and the plan's estimated wall time (last line: 'dry-run: N to run, K skipped, about S s'); "
       "run nothing, write nothing")
      ("help,h", "show this help");
  // Used by --isolate to start one case in a child process; not for people.
  po::options_description internal;
  internal.add_options()
      ("isolated-case", po::value(&o.isolated_case))
      ("isolated-out", po::value(&o.isolated_out))
      ("budget-end", po::value(&o.budget_end));
  po::options_description all;
  all.add(desc).add(internal);
  po::variables_map vm = parse_or_throw(args, all);
  if (take_help(vm, desc, o.help, o.help_text)) return o;
  // Finite, documented ranges (docs/promises.md): an absurd value would make a case endless or be
  // ignored.
  in_range(m.min_time_s, "--min-time", 0, kMaxMinTimeS);
  in_range(m.warmup_s, "--warmup", 0, kMaxWarmupS);
  in_range(m.batch_s, "--batch-time", 0, kMaxBatchTimeS);
  in_range(static_cast<long long>(m.min_samples), "--min-samples", 2, kMaxMinSamples);
  if (static_cast<double>(m.min_samples) * m.batch_s > kMaxSampleFloorS) {
    throw UsageError(fmt::format("--min-samples {} x --batch-time {}: the samples alone would take over {} s per case",
                                 m.min_samples, m.batch_s, kMaxSampleFloorS));
  }
  m.max_noise = in_range(max_noise_pct, "--max-noise", 0, 1000) / 100;
  if (vm.count("case-timeout")) in_range(o.case_timeout_s, "--case-timeout", 0, kMaxCaseTimeoutS);
  if (o.lt_candidates < 1 || o.lt_candidates > suites::gemm::kMaxLtCandidates) {
    throw UsageError(fmt::format("--lt-candidates {}: expected 1 to {}", o.lt_candidates, suites::gemm::kMaxLtCandidates));
  }
  in_range(o.rank_timeout_s, "--rank-timeout", 0, kMaxRankTimeoutS);
  if (vm.count("out") && out.empty()) throw UsageError("--out: empty path");
  o.isolate = o.isolated_case < 0 && (o.isolate || o.case_timeout_s > 0);
  o.profile = profilers::parse_profile(profile);
  if (!o.trace_dir.empty()) o.profile.trace = true;
  if (timer != "default" && timer != "cupti") {
    throw UsageError(fmt::format("--timer '{}': accepted timers are default, cupti", timer));
  }
  o.cupti_timer = timer == "cupti";
  o.profile_explicit = !vm["profile"].defaulted() || !o.trace_dir.empty() || o.cupti_timer;
  in_range(o.sample_interval_ms, "--sample-interval", 0, 60000);

  // Every output path is checked now, before anything is planned, run or created.
  if (vm.count("out")) validate_output_file(out, "--out");
  if (vm.count("trace-dir")) validate_output_folder(o.trace_dir, "--trace-dir");
  if (vm.count("isolated-out")) validate_output_file(o.isolated_out, "--isolated-out");
  o.benchmark = parse_benchmark_flags(bench_args);
  const std::string console = vm["console"].as<std::string>();
  if (console != "table" && console != "gb") {
    throw UsageError(fmt::format("--console '{}': accepted values are table, gb", console));
  }
  if (console == "gb" && o.benchmark.format == "table") o.benchmark.format = "console";
  if (vm.count("report") && o.report_formats.empty()) throw UsageError("--report: empty list (give md, html, csv, json or openmetrics)");
  (void)report_paths(o.report_formats, "results.json");  // a bad format must not wait for the end of the run
  if (o.isolate) {
    for (const std::string& a : bench_args) {
      if (a.rfind("--benchmark_out", 0) == 0) {
        throw UsageError(fmt::format("{}: not available with --isolate (each case runs in its own process)", a));
      }
    }
  }
  if (o.benchmark.min_time_s) m.min_time_s = *o.benchmark.min_time_s;
  if (!sel.assume.empty() && !o.dry_run) {
    throw UsageError(fmt::format("--assume {}: a run cannot measure a GPU that is not here; add --dry-run to plan for it",
                                 sel.assume));
  }
  o.quiet = vm["quiet"].as<bool>();
  return o;
}

int cmd_run(const std::vector<std::string>& all_args) {
  const auto started = std::chrono::steady_clock::now();
  const RunOptions o = parse_run_options(all_args);
  if (o.help) return print_help(o.help_text);
  const SelectionOptions& sel = o.selection;
  const MeasureOptions& m = o.measure;
  const std::string &out = o.out, &spec_sheet = o.spec_sheet;

  HarnessOptions h;
  h.observer = console_observer();  // the tables and the progress line (apps/gpubench/console.hpp)
  h.benchmark = o.benchmark;
  h.measure = m;
  h.quiet = o.quiet;
  const reports::SpecSheet specs = spec_sheet.empty() ? reports::SpecSheet::builtin() : reports::SpecSheet::from_file(spec_sheet);
  h.peak = [&specs](const std::string& device, const std::string& key) { return specs.peak(device, key); };
  h.peak_clock = [&specs](const std::string& device, const std::string& key) { return specs.peak_clock(device, key); };

  if (o.budget_end > 0) {  // evaluate's budget: a case that would end past it is not started
    h.stop_at = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(o.budget_end)));
    evaluate::EstimateSettings es;
    es.measure = m;
    es.repetitions = o.benchmark.repetitions;
    es.metrics = o.profile.metrics;
    es.allowances = true;
    es.rates = rate_lookup(specs);
    h.case_estimate_s = [es](const PlannedCase& pc) { return evaluate::estimate_case(pc, es).seconds; };
  }

  // Started as one of several ranks (mpirun, srun): join them, or refuse without MPI support
  // rather than run as N independent jobs.
  mpi::Session* team = nullptr;
  if (const std::optional<LaunchInfo> launch = detect_launch()) {
    if (!mpi::built_with_mpi()) throw UsageError(launch_without_mpi_message(*launch));
    if (!launch->unjoinable.empty()) throw UsageError(launch->unjoinable);
    if (o.isolate || o.isolated_case >= 0) throw UsageError("--isolate and --case-timeout: not available under MPI");
    team = mpi::session(o.rank_timeout_s);
    if (const std::string m = team_size_mismatch_message(*launch, team->size()); !m.empty()) throw UsageError(m);
    h.team = team;
  }
  const bool leader = team == nullptr || team->rank() == 0;

  if (o.dry_run) return dry_run(o, specs);

  const DeviceInventory inventory = inventory_for(sel, specs);  // with the spec sheet's video engines
  DeviceSelection selection = select_devices(sel.device, inventory);
  if (team != nullptr) narrow_to_local_gpu(selection, *team);
  // The gemm suite's options; a malformed tuning cache is a usage error naming the file.
  const std::string cache_warning = suites::gemm::apply_run_settings(o.lt_candidates, o.tuning_cache, selection.devices);
  if (!cache_warning.empty() && o.isolated_case < 0 && leader) fmt::print(stderr, "{}\n", cache_warning);
  const PlanRequest request = to_plan_request(sel, h.benchmark.filter.value_or(""));
  std::vector<NotApplicable> not_applicable;
  std::vector<PlannedCase> plan = make_plan(suites::all(), request, selection.devices, &not_applicable);
  const std::vector<const Suite*> selected = select_suites(suites::all(), request.suites);
  RunDescription description{"gpubench run " + join_args(all_args), sel.preset, {}, m};
  for (const Suite* s : selected) description.suites.push_back(s->name());

  // Instruments: made before any case touches CUDA (CUPTI must see the first context), once the
  // output path is known to be good.
  std::filesystem::path out_path = out.empty() ? default_results_path(host_name()) : std::filesystem::path(out);
  std::vector<std::unique_ptr<Instrument>> instruments;
  auto start_instruments = [&] {
    profilers::InstrumentOptions io;
    io.selection = o.profile;
    io.cupti_timer = o.cupti_timer;
    io.sample_interval_ms = o.sample_interval_ms;
    io.devices = selection.devices;
    io.no_cuda_reason = inventory.cuda.empty() ? inventory.cuda_unavailable_reason : "no CUDA device selected";
    // Under --isolate the children run the cases, and each writes its own trace.
    if (!o.trace_dir.empty() && !o.isolate) io.trace_path = trace_file_path(o.trace_dir, out_path, o.isolated_case);
    instruments = profilers::make_instruments(io);
    for (const auto& i : instruments) h.instruments.push_back(i.get());
  };

  if (o.isolated_case >= 0) {  // a child of --isolate: run case N of the same plan into isolated-out
    if (static_cast<std::size_t>(o.isolated_case) >= plan.size() || o.isolated_out.empty()) {
      throw UsageError("--isolated-case: no such case in this plan");
    }
    plan = {plan[static_cast<std::size_t>(o.isolated_case)]};
    h.show_context = false;  // the parent's run already showed the machine
    start_instruments();
    nlohmann::ordered_json context = capture_context(inventory, selection.devices, selected, description);
    context["gpubench"]["profile"] = profile_context(instruments, o);
    ResultsFile results(o.isolated_out, std::move(context));
    const RunSummary s = run_plan(plan, h, results);
    return s.failed > 0 ? 1 : 0;
  }

  if (team != nullptr) {
    // Every rank must run the same cases in the same order, or a collective would wait forever.
    const std::vector<double> sizes = team->all_gather(static_cast<double>(plan.size()), "planning");
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      if (sizes[r] != sizes[0]) {
        throw std::runtime_error(fmt::format("rank {} planned {} cases, rank 0 {}: the ranks see different machines "
                                             "or arguments",
                                             r, sizes[r], sizes[0]));
      }
    }
    if (leader) out_path = team->broadcast(out_path.string(), "the results path");
    else out_path = team->broadcast("", "the results path");
    // Who each rank is (host, device UUID, PCI bus id, serial): rank 0's file keys every rank's
    // own figures by it (fleet screening).
    h.rank_identities = gather_rank_identities(*team, selection.devices);
    // Every rank measures its own device, except in a collective or a data-parallel training
    // step (dp axis other than none), whose time is the team's.
    h.per_rank_figures = [](const PlannedCase& pc) {
      const nlohmann::ordered_json axes = pc.point.to_json();
      const bool data_parallel = axes.contains("dp") && axes["dp"] != "none";
      return pc.suite->name() != "collectives" && !data_parallel;
    };
  }
  // The results file: checked (its folders created), locked for the run's lifetime so two runs
  // never write one file, and the leftovers of runs that were killed beside it removed.
  OutputLock out_lock;
  if (leader) {
    // Every output of the run, against each other, the spec sheet it reads and other gpubench
    // processes' locks (paths.hpp); the reports' paths too, before the first case, not after it.
    std::vector<NamedPath> outputs{{out_path, "--out"}};
    if (!o.benchmark.out.empty()) outputs.push_back({o.benchmark.out, "--benchmark_out"});
    for (const auto& [format, path] : report_paths(o.report_formats, out_path)) {
      const std::string option = "--report " + format;
      validate_output_file(path, option);
      outputs.push_back({path, option});
    }
    std::vector<NamedPath> inputs;
    if (!spec_sheet.empty()) inputs.push_back({spec_sheet, "--spec-sheet"});
    check_path_clashes(inputs, outputs);
    check_output_path(out_path, "--out");
    out_lock = OutputLock(out_path, "--out");
    remove_stale_leftovers(out_path.has_parent_path() ? out_path.parent_path() : ".", out_path.filename().string() + ".tmp");
    if (!o.benchmark.out.empty()) check_output_path(o.benchmark.out, "--benchmark_out");
    if (o.isolate) remove_stale_leftovers(temp_folder(), kIsolateScratchPrefix);
  }
  start_instruments();

  // What this launch cannot run is said once per suite, with how to run it.
  auto show_not_applicable = [&] {
    for (const NotApplicable& n : not_applicable) {
      fmt::print(stderr, "{} on {}: not run here: {}\n", n.suite->name(), n.device.id(), n.reason);
    }
  };
  // A GPU asked for by name that is not there fails the run (after the CPU cases, if any): an
  // error, said even under --quiet.
  const bool missing_gpu = selection.cuda_requested_explicitly && inventory.cuda.empty();
  if (!selection.notice.empty() && leader && (!o.quiet || missing_gpu)) fmt::print(stderr, "{}\n", selection.notice);
  if (plan.empty()) {
    if (leader) show_not_applicable();
    fmt::print(stderr, "gpubench: no case matches the selection; nothing to run\n");
    return missing_gpu ? 1 : 0;
  }
  if (leader && !o.quiet) show_not_applicable();

  // Other processes on a GPU being measured make its numbers untrustworthy: say so, or refuse.
  const std::vector<BusyDevice> busy =
      find_busy_devices(selection.devices, nvml::compute_processes, static_cast<unsigned>(::getpid()));
  for (const BusyDevice& b : busy) {
    fmt::print(stderr, "{}: {}; its measurements are not trustworthy\n",
               o.exclusive ? "error" : "warning", describe(b));
  }
  if (!busy.empty() && o.exclusive) {
    fmt::print(stderr, "gpubench: refusing to run on a busy GPU (--exclusive)\n");
    return 1;
  }

  nlohmann::ordered_json context = capture_context(inventory, selection.devices, selected, description);
  for (const BusyDevice& b : busy) context["gpubench"]["busy_devices"].push_back(to_json(b));
  context["gpubench"]["profile"] = profile_context(instruments, o);
  for (const NotApplicable& n : not_applicable) {
    context["gpubench"]["not_applicable"].push_back(
        {{"suite", n.suite->name()}, {"device", n.device.id()}, {"reason", n.reason}});
  }
  for (const auto& i : instruments) {  // asked-for instruments that cannot work here say so
    if (o.profile_explicit && leader && i->status() != "on") {
      fmt::print(stderr, "gpubench: --profile {}: {}\n", i->name(), i->status());
    }
  }
  if (team != nullptr) {
    context["gpubench"]["mpi"] = mpi_context(*team, h.rank_identities);
  }
  // Only rank 0 writes: the others keep their entries in memory (their times reach rank 0).
  ResultsFile results(leader ? out_path : std::filesystem::path(), std::move(context));
  // Figures above their datasheet peak or the measured ceilings are marked as they are written.
  results.set_judge([lookup = plausibility::memoized(h.peak),
                      clock = plausibility::memoized(h.peak_clock)](nlohmann::ordered_json& doc) {
    plausibility::mark_document(doc, lookup, clock);
  });
  // SIGPIPE ends the run like SIGTERM; under MPI the library's own sockets keep their handling.
  if (leader) install_interrupt_handlers(out_path.string(), team == nullptr);
  RunSummary s;
  if (o.isolate) {
    IsolationOptions iso;
    iso.case_timeout_s = o.case_timeout_s;
    if (iso.case_timeout_s <= 0) {  // a hang costs only its case, also without --case-timeout
      iso.case_timeout_s = default_case_timeout_s(m, o.benchmark.repetitions);
      iso.timeout_is_default = true;
    }
    for (const std::string& a : all_args) {
      // Children re-plan from the same arguments; the harness adds --quiet and the case.
      if (a != "--isolate" && a != "--quiet" && a != "-q") iso.child_args.push_back(a);
    }
    iso.child_args.insert(iso.child_args.begin(), "run");
    s = run_plan_isolated(plan, h, iso, results);
  } else {
    s = run_plan(plan, h, results);
  }
  const int status = s.failed > 0 || missing_gpu ? 1 : 0;
  if (leader) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::vector<std::string> written;
    for (const auto& [format, path] : report_paths(o.report_formats, out_path)) {
      try {
        if (cmd_report({out_path.string(), "--format", format, "--out", path.string()}) == 0) {
          written.push_back(path.string());
        }
      } catch (const std::exception& e) {  // the results stay; the report's problem is said
        fmt::print(stderr, "gpubench: --report {}: {}\n", format, e.what());
      }
    }
    fmt::print(stderr, "{}\n", summary_line(s, not_applicable.size(), seconds, out_path, written));
  }
  return status;
}

}  // namespace gpubench::app
