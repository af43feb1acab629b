// gpubench evaluate: a node's evaluation in parts (check, screen, depth, node, input), each an
// ordinary `gpubench run` or `gpubench soak` of chosen cases, fitted to --budget before anything
// runs (bench/evaluate/plan.hpp), and merged into one results file whose report leads with the
// node card. The screen runs one worker per GPU at once (bench/evaluate/scheduler.hpp); under
// mpirun/srun every rank is one GPU's worker and the items run in this process, together.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <filesystem>
#include <fstream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/dry_run.hpp"
#include "apps/gpubench/options.hpp"
#include "apps/gpubench/ranks.hpp"
#include "apps/gpubench/report_output.hpp"
#include "bench/core/context.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/core/launch.hpp"
#include "bench/core/paths.hpp"
#include "bench/core/results.hpp"
#include "bench/core/team.hpp"
#include "bench/doctor/checks.hpp"
#include "bench/doctor/probe.hpp"
#include "bench/evaluate/document.hpp"
#include "bench/evaluate/plan.hpp"
#include "bench/evaluate/scheduler.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/all_suites.hpp"
#include "reports/outputs.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::app {
namespace {

namespace fs = std::filesystem;
using evaluate::EvaluationPlan;
using evaluate::Item;
using evaluate::Where;
using json = nlohmann::ordered_json;

constexpr const char* kUsage = R"(Usage: gpubench evaluate [options]

Evaluates a node (its GPUs, or the CPU) within a time budget and writes one results file whose
report begins with the node card: what the node delivers, as % of published figures, whether it
is healthy, and (report --price) what it costs. The evaluation is in parts, each ordinary cases
of the suites and soak: check (doctor; an error stops the run unless --force), screen (every GPU
at once: bf16 and fp8 GEMM, HBM triad, a short soak; an outlier GPU is named), depth (one GPU,
the screen's median: attention, Llama 3 8B prefill/decode/serve, training steps), node (2 GPUs or
more: peer copies, host concurrency, NCCL collectives to 8 GiB) and input (data loading on every
GPU at once). The plan is fitted to --budget before anything runs: items are kept in priority
order (docs/evaluate.md) and what does not fit is dropped and named; while running, no case
starts that would end past the budget. Under mpirun/srun each rank evaluates its own GPU and
rank 0 writes the file. Exit status: 0 when every case passed or was skipped, 1 when a case
failed or the check found an error, 2 on bad usage.

Options)";

struct EvaluateOptions {
  std::string budget = "30m";
  double budget_s = 0;
  std::string device;  // empty: every GPU, or the CPU where there is none
  std::string assume;
  std::string slo_text;
  reports::serving::ki::Slo slo;  // the serve item's targets (--slo): goodput on the card counts requests meeting them
  std::string out;
  std::string report_formats;
  std::string spec_sheet;
  bool dry_run = false, force = false, quiet = false;
  double rank_timeout_s = 300;
  bool help = false;
  std::string help_text;
};

EvaluateOptions parse(const std::vector<std::string>& args) {
  EvaluateOptions o;
  po::options_description desc(kUsage);
  desc.add_options()
      ("budget", po::value(&o.budget)->default_value(o.budget),
       "wall time for the whole evaluation: a number with s, m or h (90s, 30m, 2h), a bare number is seconds")
      ("device,d", po::value(&o.device), "devices: cuda (every GPU), cuda:N,..., or cpu (default: every GPU, else the CPU)")
      ("out,o", po::value(&o.out), "results file (default results/evaluate-<host>-<UTC time>.json); each item's own "
                                   "files go to <results>.parts/ beside it")
      ("report", po::value(&o.report_formats), "then write `gpubench report` in these formats beside it (md, html, csv, json)")
      ("dry-run", po::bool_switch(&o.dry_run), "print the per-part plan fitted to the budget; run nothing, write nothing")
      ("assume", po::value(&o.assume), "with --dry-run: plan for MODEL[:N] of the spec sheet (h100-sxm:8) instead of the devices here")
      ("slo", po::value(&o.slo_text), "the serving SLO the card's goodput counts against: ttft=2s,tpot=100ms (ttft and "
                                      "tpot, each a number with us, ms or s; default: none, every request counts)")
      ("force", po::bool_switch(&o.force), "go on when doctor finds an error")
      ("spec-sheet", po::value(&o.spec_sheet), "GPU spec sheet JSON replacing the built-in data/gpus.json")
      ("rank-timeout", po::value(&o.rank_timeout_s)->default_value(o.rank_timeout_s),
       "under mpirun/srun: seconds a rank may take to reach each agreement step (above 0, at most 86400)")
      ("quiet,q", po::bool_switch(&o.quiet), "only errors, warnings and the final summary line")
      ("help,h", "show this help");
  po::variables_map vm = parse_or_throw(args, desc);
  if (take_help(vm, desc, o.help, o.help_text)) return o;
  o.budget_s = evaluate::parse_budget(o.budget);
  in_range(o.rank_timeout_s, "--rank-timeout", 0, 86400);
  if (!o.assume.empty() && !o.dry_run) {
    throw UsageError(fmt::format("--assume {}: an evaluation cannot measure a GPU that is not here; add --dry-run", o.assume));
  }
  if (vm.count("out")) {
    if (o.out.empty()) throw UsageError("--out: empty path");
    validate_output_file(o.out, "--out");
  }
  if (vm.count("slo")) {
    o.slo = parse_slo(o.slo_text);
    if (o.slo.itl_s || o.slo.e2el_s) throw UsageError(fmt::format("--slo '{}': evaluate's card counts ttft and tpot only", o.slo_text));
  }
  if (vm.count("report") && o.report_formats.empty()) throw UsageError("--report: empty list (give md, html, csv or json)");
  (void)report_paths(o.report_formats, "results.json");  // a bad format fails now, not after the run
  return o;
}

const char* where_text(Where w) {
  switch (w) {
    case Where::Host: return "host";
    case Where::EveryGpu: return "every device";
    case Where::OneGpu: return "one device";
    case Where::AllGpus: return "all devices";
    case Where::HostCpu: return "the host's cpu";
  }
  return "";
}

void print_plan_table(const EvaluationPlan& plan, const std::string& label) {
  fmt::print("evaluate: {}, budget {:.0f} s\n", label, plan.budget_s);
  fmt::print("{:<7} {:<20} {:<13} {:>5} {:>9}  {}\n", "part", "item", "where", "cases", "planned", "status");
  for (const Item& i : plan.items) {
    fmt::print("{:<7} {:<20} {:<13} {:>5} {:>7.1f} s  {}\n", i.part, i.name, where_text(i.where),
               i.kind == Item::Kind::Doctor ? std::string("-") : std::to_string(i.cases), i.planned_s, i.status);
  }
  for (const char* part : evaluate::kParts) {
    double s = 0;
    std::size_t kept = 0, all = 0;
    for (const Item& i : plan.items) {
      if (i.part != part) continue;
      ++all;
      if (i.status == "planned") ++kept, s += i.planned_s;
    }
    fmt::print("part {}: {} of {} items, about {:.0f} s\n", part, kept, all, s);
  }
  for (const Item* d : plan.dropped()) fmt::print("dropped: {}/{} ({})\n", d->part, d->name, d->status.substr(9));
  std::size_t skipped = 0;
  for (const Item& i : plan.items) skipped += i.status.rfind("skipped", 0) == 0;
  fmt::print("evaluate dry-run: {} items planned, {} dropped, {} skipped, about {:.0f} s of the {:.0f} s budget\n",
             plan.kept().size(), plan.dropped().size(), skipped, plan.planned_s, plan.budget_s);
}

double now_epoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

json read_json_file(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return json();
  try {
    return json::parse(in);
  } catch (const std::exception&) {
    return json();
  }
}

void write_json_atomically(const fs::path& path, const json& doc) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
  }
  fs::rename(tmp, path);
}

// An item's status from its results entries: stopped when the budget kept a case from starting.
std::string item_status(const json& file, int rc, std::size_t* entries) {
  std::size_t ok = 0, failed = 0, budget = 0, n = 0;
  if (file.contains("benchmarks") && file["benchmarks"].is_array()) {
    for (const json& e : file["benchmarks"]) {
      const json g = e.value("gpubench", json::object());
      ++n;
      const std::string s = g.value("status", "");
      ok += s == "ok";
      failed += s == "failed";
      if (s == "skipped" && g.value("reason", "").find("budget spent") != std::string::npos) ++budget;
    }
  }
  *entries = n;
  if (failed > 0) return fmt::format("failed: {} case(s) failed", failed);
  if (budget > 0) return fmt::format("stopped: budget spent ({} case(s) not started)", budget);
  if (n == 0) return rc == 0 ? "skipped: no case ran" : fmt::format("failed: exit status {}", rc);
  return ok > 0 ? "ok" : "skipped: every case skipped";
}

// Set by SIGINT, SIGTERM or SIGHUP during a plain evaluation: the running item's workers are
// interrupted (each keeps what it finished), the evaluation merges what they left, writes its
// file and report, and exits 128 + the signal.
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
void on_interrupt(int sig) {
  if (g_stop) ::_exit(128 + sig);  // a second one: at once
  g_signal = sig;
  g_stop = true;
}

// The first executable NAME in $PATH's folders; "" when none.
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return {};
}

class Evaluation {
 public:
  Evaluation(const EvaluateOptions& o, EvaluationPlan& plan, mpi::Session* team, fs::path out)
      : o_(o), plan_(plan), team_(team), out_(std::move(out)), doc_(plan) {
    json slo = json::object();
    if (o.slo.ttft_s) slo["ttft_ms"] = *o.slo.ttft_s * 1e3;
    if (o.slo.tpot_s) slo["tpot_ms"] = *o.slo.tpot_s * 1e3;
    if (!slo.empty()) doc_.set_slo(slo);
  }

  int run() {
    const bool leader = team_ == nullptr || team_->rank() == 0;
    parts_ = fs::path(reports::derived_output_path(out_.string(), ".parts"));
    if (leader) make_folders(parts_, "--out");
    const double start = now_epoch();
    double end = start + plan_.budget_s;
    if (team_ != nullptr) end = std::stod(team_->broadcast(leader ? fmt::format("{:.6f}", end) : "", "the budget"));
    bool budget_spent = false;
    int status = 0;
    if (team_ == nullptr) {  // (under a team, each rank's in-process items handle their own)
      struct sigaction sa {};
      sa.sa_handler = on_interrupt;
      sigemptyset(&sa.sa_mask);
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) install_unless_ignored(sig, sa);
    }
    for (const Item& item : plan_.items) {
      if (g_stop) break;  // the rest stay "not run"
      if (item.status != "planned") continue;
      const double t0 = now_epoch();
      evaluate::ItemOutcome outcome;
      if (item.kind == Item::Kind::Doctor) {
        if (!check(outcome)) {
          finish(start, false);
          return 1;
        }
      } else if (t0 >= end) {
        outcome.status = "stopped: budget spent";
        budget_spent = true;
      } else {
        run_item(item, end, outcome);
        if (outcome.status.rfind("stopped: budget", 0) == 0) budget_spent = true;
      }
      outcome.measured_s = now_epoch() - t0;
      doc_.set_outcome(item, outcome);
      if (!o_.quiet && leader) {
        fmt::print(stderr, "evaluate: {}/{}: {} in {:.1f} s (planned {:.1f} s)\n", item.part, item.name, outcome.status,
                   outcome.measured_s, item.planned_s);
      }
      doc_.set_measured(now_epoch() - start, budget_spent);
      if (leader) write_json_atomically(out_, doc_.to_json());  // after every item: an interruption keeps them
      if (item.part == "screen" && item.name == "gemm-bf16") pick_depth_device();
    }
    if (doc_.failed_entries() > 0) status = 1;
    finish(start, budget_spent);
    if (g_stop) {
      fmt::print(stderr, "gpubench evaluate: interrupted (signal {}); every item finished so far, and the cases the "
                         "interrupted one finished, are in {}\n",
                 g_signal.load(), out_.string());
      return 128 + g_signal;
    }
    return status;
  }

 private:
  // Doctor's findings; false when an error stops the run.
  bool check(evaluate::ItemOutcome& outcome) {
    const std::string results_dir = out_.has_parent_path() ? out_.parent_path().string() : ".";
    const std::vector<doctor::Finding> findings = doctor::run_checks(doctor::probe_system(results_dir));
    const json j = doctor::to_json(findings);
    doc_.set_check(j, o_.force);
    double errors = doctor::exit_code(findings) != 0 ? 1 : 0;
    if (team_ != nullptr) errors = team_sum(*team_, errors, "the check");
    outcome.status = errors > 0 ? (o_.force ? "ok: errors found, going on (--force)" : "failed: doctor found errors") : "ok";
    if (errors > 0 && !o_.force) {
      fmt::print(stderr, "{}", doctor::format_text(findings));
      fmt::print(stderr, "gpubench evaluate: doctor found an error (above, with its remedy); fix it, or add --force to "
                         "evaluate anyway\n");
      doc_.set_outcome(plan_.items.front(), outcome);
      return false;
    }
    return true;
  }

  // The --device value of one item's process.
  std::string device_for(const Item& item) const {
    if (item.where == Where::HostCpu) return "cpu";
    if (team_ != nullptr) return plan_.devices.front().is_cuda() ? "cuda" : "cpu";  // each rank narrows to its GPU
    if (item.where == Where::OneGpu) return depth_device_.empty() ? plan_.devices.front().id() : depth_device_;
    std::vector<std::string> ids;
    for (const DeviceInfo& d : plan_.devices) ids.push_back(d.id());
    return fmt::format("{}", fmt::join(ids, ","));
  }

  void run_item(const Item& item, double end, evaluate::ItemOutcome& outcome) {
    std::vector<std::string> args = item.arguments();
    const std::string stem = item.part + "-" + item.name;
    const bool timed = item.kind == Item::Kind::Soak || item.kind == Item::Kind::TuneStorage || item.kind == Item::Kind::TuneDataload;
    if (timed) {
      // A soak's duration or a tune's --budget: what the item asks, cut to what is left.
      const double left = end - now_epoch() - 4;  // the process's start and end
      if (left < 5) {
        outcome.status = "stopped: budget spent";
        return;
      }
      const double seconds = std::min(item.soak_s, left);
      if (item.kind == Item::Kind::Soak) {
        args[4] = fmt::format("{:.0f}s", seconds);
      } else {
        args[3] = fmt::format("{:.0f}", seconds);
        args.push_back("--quiet");
      }
      // Every GPU fed at once: one GPU's loader gets its share of the node's CPUs (under a team
      // tune divides them among a node's ranks itself).
      if (item.kind == Item::Kind::TuneDataload && team_ == nullptr && plan_.devices.size() > 1) {
        const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
        args.insert(args.end(), {"--max-workers", std::to_string(std::max<std::size_t>(1, cpus / plan_.devices.size()))});
      }
    } else {
      args.insert(args.end(), {"--quiet", "--budget-end", fmt::format("{:.3f}", end)});
    }
    std::vector<fs::path> files;
    int rc = 0;
    if (item.where == Where::HostCpu && team_ != nullptr) {
      outcome.status = "skipped: the node's storage is read by a plain evaluation (one process a node); under mpirun/srun "
                       "every rank would read it at once";
      return;
    }
    if (!item.env.empty() && team_ != nullptr) {
      outcome.status = fmt::format("skipped: {} runs in a process of its own, in a plain evaluation (under mpirun/srun "
                                   "set it for the whole run instead)",
                                   fmt::join(item.env, " "));
      return;
    }
    if (team_ == nullptr) {
      // A plain evaluation runs every item in processes of its own (a fresh exec of gpubench):
      // one per GPU at once for the screen, else one, or mpirun's ranks for one rank per GPU. A
      // crash or an interruption then costs that item alone; the evaluation merges what it left.
      std::string program = "/proc/self/exe";
      std::vector<evaluate::Worker> ws;
      auto worker = [&](std::vector<std::string> prefix, const std::string& device, const std::string& tag) {
        files.push_back(parts_ / (tag.empty() ? stem + ".json" : fmt::format("{}.{}.json", stem, tag)));
        evaluate::Worker w;
        w.args = std::move(prefix);
        w.args.insert(w.args.end(), args.begin(), args.end());
        w.args.insert(w.args.end(), {"--device", device, "--out", files.back().string()});
        w.log = (parts_ / (tag.empty() ? stem + ".log" : fmt::format("{}.{}.log", stem, tag))).string();
        w.env = item.env;  // NCCL reads NCCL_ALGO when it makes a communicator
        ws.push_back(std::move(w));
      };
      if (item.ranks_per_device) {
        program = find_on_path("mpirun");
        if (!mpi::built_with_mpi() || program.empty()) {
          outcome.status = !mpi::built_with_mpi() ? "skipped: one rank per GPU needs a gpubench built with MPI"
                                                  : "skipped: one rank per GPU needs mpirun on PATH (or run evaluate "
                                                    "under mpirun -np N / srun)";
          return;
        }
        // Open MPI refuses root without these (containers run as root); other MPIs ignore them.
        ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
        ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
        worker({"-np", std::to_string(plan_.devices.size()), fs::read_symlink("/proc/self/exe").string()}, "cuda", "");
      } else if (item.where == Where::EveryGpu && plan_.devices.size() > 1) {
        for (const DeviceInfo& d : plan_.devices) worker({}, d.id(), d.id() == "cpu" ? "cpu" : "cuda-" + std::to_string(d.ordinal));
      } else {
        worker({}, device_for(item), "");
      }
      // A worker past the budget by 5% is stopped (SIGINT: it keeps what it finished), as is
      // every worker when the evaluation itself is interrupted.
      const auto stop_at = evaluate::Clock::now() + std::chrono::duration_cast<evaluate::Clock::duration>(
                                                        std::chrono::duration<double>((end - now_epoch()) * 1.05 + 1));
      for (const evaluate::WorkerResult& r : evaluate::run_workers(program, ws, stop_at, 10, &g_stop)) {
        if (r.exit_code != 0) rc = r.exit_code != -1 ? r.exit_code : 128 + r.signal;
        if (r.stopped) outcome.status = g_stop ? "stopped: interrupted" : "stopped: budget spent";
      }
      // Every case of an NCCL_ALGO variant failed: NCCL does not offer that algorithm here. A
      // finding about the node, not a failed measurement.
      if (!item.env.empty()) {
        if (const std::string why = evaluate::refused_everywhere(read_json_file(files.back())); !why.empty()) {
          outcome.status = fmt::format("skipped: NCCL refused {} here: {}", fmt::join(item.env, " "), why);
          return;
        }
      }
    } else {
      // Under mpirun/srun every rank runs the item in this process, with the team.
      files.push_back(parts_ / (stem + ".json"));
      std::vector<std::string> call(args.begin() + 1, args.end());
      // (tune takes one device by its id: the rank's own.)
      const std::string device = item.kind == Item::Kind::TuneDataload ? plan_.devices.front().id() : device_for(item);
      call.insert(call.end(), {"--device", device, "--out", files.back().string()});
      try {
        rc = args.front() == "soak" ? cmd_soak(call) : args.front() == "tune" ? cmd_tune(call) : cmd_run(call);
      } catch (const std::exception& e) {
        outcome.status = fmt::format("failed: {}", e.what());
        rc = 1;
      }
    }
    std::size_t total = 0;
    std::string status;
    for (const fs::path& f : files) {
      const json file = read_json_file(f);
      std::size_t n = 0;
      const std::string s = item_status(file, rc, &n);
      if (status.empty() || s.rfind("failed", 0) == 0 || (s.rfind("stopped", 0) == 0 && status == "ok")) status = s;
      total += n;
      doc_.add_results(item, file);
      if (!file.is_null()) outcome.files.push_back(fs::relative(f, out_.has_parent_path() ? out_.parent_path() : ".").string());
    }
    outcome.entries = total;
    // A stopped worker's exit status (130) is its interruption, not a failure; failed cases are.
    const bool stopped = outcome.status.rfind("stopped", 0) == 0;
    const bool cases_failed = status.find("case(s) failed") != std::string::npos;
    if (outcome.status == "ok" || cases_failed || (!stopped && status.rfind("failed", 0) == 0)) outcome.status = status;
  }

  void pick_depth_device() {
    if (team_ != nullptr || plan_.devices.size() < 2) return;
    if (const auto d = evaluate::median_device(doc_.benchmarks())) {
      depth_device_ = *d;
      doc_.set_depth_device(*d);
    }
  }

  void finish(double start, bool budget_spent) {
    doc_.set_measured(now_epoch() - start, budget_spent);
    if (team_ != nullptr && team_->rank() != 0) return;
    write_json_atomically(out_, doc_.to_json());
    std::vector<std::string> written;
    for (const auto& [format, path] : report_paths(o_.report_formats, out_)) {
      try {
        if (cmd_report({out_.string(), "--format", format, "--out", path.string()}) == 0) written.push_back(path.string());
      } catch (const std::exception& e) {
        fmt::print(stderr, "gpubench evaluate: --report {}: {}\n", format, e.what());
      }
    }
    fmt::print(stderr, "gpubench evaluate: {} entries ({} failed) in {:.0f} s of the {:.0f} s budget{}; results: {}{}\n",
               doc_.entries(), doc_.failed_entries(), now_epoch() - start, plan_.budget_s,
               budget_spent ? " (budget spent: cases left unstarted)" : "", out_.string(),
               written.empty() ? "" : fmt::format("; report: {}", fmt::join(written, ", ")));
  }

  const EvaluateOptions& o_;
  EvaluationPlan& plan_;
  mpi::Session* team_;
  fs::path out_, parts_;
  evaluate::EvaluationDocument doc_;
  std::string depth_device_;
};

}  // namespace

int cmd_evaluate(const std::vector<std::string>& args) {
  const EvaluateOptions o = parse(args);
  if (o.help) return print_help(o.help_text);
  const reports::SpecSheet specs = o.spec_sheet.empty() ? reports::SpecSheet::builtin() : reports::SpecSheet::from_file(o.spec_sheet);

  mpi::Session* team = nullptr;
  if (const std::optional<LaunchInfo> launch = detect_launch(); launch && !o.dry_run) {
    if (!mpi::built_with_mpi()) throw UsageError(launch_without_mpi_message(*launch));
    if (!launch->unjoinable.empty()) throw UsageError(launch->unjoinable);
    team = mpi::session(o.rank_timeout_s);
    if (const std::string m = team_size_mismatch_message(*launch, team->size()); !m.empty()) throw UsageError(m);
  }
  SelectionOptions sel;
  sel.assume = o.assume;
  const DeviceInventory inventory = inventory_for(sel, specs);
  sel.device = !o.device.empty() ? o.device : inventory.cuda.empty() ? "cpu" : "cuda";
  DeviceSelection selection = select_devices(sel.device, inventory);
  if (team != nullptr) narrow_to_local_gpu(selection, *team);
  std::vector<DeviceInfo> devices = selection.devices;
  // A node is its GPUs or its CPU: with both selected, the GPUs are evaluated.
  if (std::any_of(devices.begin(), devices.end(), [](const DeviceInfo& d) { return d.is_cuda(); })) {
    devices.erase(std::remove_if(devices.begin(), devices.end(), [](const DeviceInfo& d) { return !d.is_cuda(); }),
                  devices.end());
  }
  if (devices.empty()) throw UsageError(fmt::format("--device {}: no such device here", sel.device));

  evaluate::EstimateSettings es;
  es.allowances = true;
  es.rates = rate_lookup(specs);
  EvaluationPlan plan = evaluate::plan_evaluation(suites::all(), devices, o.budget_s, es, team != nullptr ? team->size() : 1);
  const std::string label = fmt::format("{} x {}{}", devices.size(), devices.front().name,
                                        o.assume.empty() ? "" : fmt::format(" (assumed: {})", o.assume));
  if (o.dry_run) {
    print_plan_table(plan, label);
    return 0;
  }
  const bool leader = team == nullptr || team->rank() == 0;
  fs::path out = o.out.empty() ? fs::path(default_results_path("evaluate-" + host_name())) : fs::path(o.out);
  if (team != nullptr) out = team->broadcast(leader ? out.string() : "", "the results path");
  OutputLock lock;
  if (leader) {
    std::vector<NamedPath> outputs{{out, "--out"}};
    for (const auto& [format, path] : report_paths(o.report_formats, out)) {
      validate_output_file(path, "--report " + format);
      outputs.push_back({path, "--report " + format});
    }
    std::vector<NamedPath> inputs;
    if (!o.spec_sheet.empty()) inputs.push_back({o.spec_sheet, "--spec-sheet"});
    check_path_clashes(inputs, outputs);
    check_output_path(out, "--out");
    lock = OutputLock(out, "--out");
    if (!o.quiet) print_plan_table(plan, label);
  }
  return Evaluation(o, plan, team, out).run();
}

}  // namespace gpubench::app
