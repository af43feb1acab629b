// `gpubench soak`'s options (parse_soak.hpp): parsed and checked before anything runs.
#include "apps/gpubench/parse_soak.hpp"

#include <fmt/format.h>

#include "apps/gpubench/options.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/paths.hpp"
#include "bench/soak/loads.hpp"
#include "bench/soak/rules.hpp"
#include "bench/soak/runner.hpp"

namespace gpubench::app {
namespace {

constexpr const char* kSoakUsage = R"(Usage: gpubench soak [options]

Runs a sustained load on every selected device at once for --duration, samples each device every
--sample-interval (throughput; on GPUs NVML clocks, temperatures, power, fan, throttle reasons,
ECC, retired pages / remapped rows, PCIe replays, XID events; on the CPU this process's CPU use
and memory), checks an answer against the reference every --verify-every, and judges the series
(docs/soak.md). The results file holds the series and verdict (gpubench.soak) and one summary
entry per device and load; it is rewritten as samples arrive, so an interrupted soak keeps every
sample (and says it was interrupted). Exit status: 0 pass, 1 a rule failed (one line each), 2 bad
usage, 128+signal when interrupted. Durations: a number with ms, s, m or h (30s, 10m, 2h); a bare
number is seconds.

Sweeps: --power-limits 100%,90%,80% (percent of the default limit, or watts) or --lock-clocks
MHz,... run the load for --duration at each setting (a phase) and record throughput, power and
perf per watt per setting (gpubench.soak.sweep); the original limits and clocks are always put
back. Without the privilege one line says so and the load runs once at the current settings.
Under mpirun/srun every rank soaks its own device and rank 0's file holds every rank's series.

Options)";

constexpr double kMaxDurationS = 30 * 86400.0;

// The options as typed; parse_soak_options turns them into SoakOptions.
struct Args {
  std::string device, duration = "10m", interval = "1s", warmup, verify_every = "10s", load = "gemm", out, spec_sheet;
  std::string power_limits, lock_clocks;
  double rank_timeout_s = 300;
  double max_drop = 5, max_spread = 5;
  bool quiet = false;
};

}  // namespace

SoakOptions parse_soak_options(const std::vector<std::string>& args) {
  SoakOptions o;
  Args a;
  po::options_description desc(kSoakUsage);
  desc.add_options()
      ("device", po::value(&a.device), "devices, a comma list of cuda, cuda:N, cpu, all (default: every GPU, or the CPU "
       "when there is none)")
      ("duration", po::value(&a.duration)->default_value(a.duration), "how long the load runs (above 0, at most 30 days)")
      ("load", po::value(&a.load)->default_value(a.load),
       "gemm (Tensor Core GEMM at the highest datasheet peak; CPU: OpenBLAS sgemm), memory (triad), train (a training "
       "step) or mixed (the three in turn, one sample interval each)")
      ("sample-interval", po::value(&a.interval)->default_value(a.interval),
       "time between samples (50ms to 1h, at most the duration)")
      ("warmup", po::value(&a.warmup),
       "time at the start that is recorded but not judged by the drop, spread and throttle rules (default: 1 minute or "
       "10 % of the duration, whichever is shorter; 0 for none)")
      ("verify-every", po::value(&a.verify_every)->default_value(a.verify_every),
       "time between checks of an answer against the reference (at least 1s)")
      ("max-drop", po::value(&a.max_drop)->default_value(a.max_drop),
       "fail when a device's throughput drops by this many percent or more from the first to the last window (0 to 100)")
      ("max-spread", po::value(&a.max_spread)->default_value(a.max_spread),
       "fail when a device is this many percent or more below the median device (0 to 100)")
      ("out,o", po::value(&a.out), "results file (default results/<host>-<UTC time>.json)")
      ("spec-sheet", po::value(&a.spec_sheet), "GPU spec sheet JSON replacing the built-in data/gpus.json")
      ("power-limits", po::value(&a.power_limits),
       "sweep: run the load for --duration at each power limit, a comma list of percents of the default limit "
       "(100%,90%,80%) or watts (700,500); needs root or an administrator's grant")
      ("lock-clocks", po::value(&a.lock_clocks), "sweep: run the load for --duration at each locked SM clock (MHz,...)")
      ("rank-timeout", po::value(&a.rank_timeout_s)->default_value(a.rank_timeout_s),
       "under mpirun/srun: seconds a rank may take to join and to hand its series to rank 0 (above 0, at most 86400)")
      ("quiet,q", po::bool_switch(&a.quiet), "no progress lines; failures and the closing line only")
      ("help,h", "show this help");
  po::variables_map vm = parse_or_throw(args, desc);
  if (take_help(vm, desc, o.help, o.help_text)) return o;

  soak::Settings& settings = o.settings;
  settings.load = a.load;
  settings.duration_s = soak::parse_duration(a.duration, "--duration");
  in_range(settings.duration_s, "--duration", 0, kMaxDurationS);
  settings.interval_s = soak::parse_duration(a.interval, "--sample-interval");
  in_range(settings.interval_s, "--sample-interval", 0.05, 3600, true);
  if (settings.interval_s > settings.duration_s) {
    throw UsageError(fmt::format("--sample-interval {}: longer than --duration {}", a.interval, a.duration));
  }
  settings.verify_every_s = soak::parse_duration(a.verify_every, "--verify-every");
  in_range(settings.verify_every_s, "--verify-every", 1, kMaxDurationS, true);
  settings.thresholds.max_drop_pct = in_range(a.max_drop, "--max-drop", 0, 100, true);
  settings.thresholds.max_spread_pct = in_range(a.max_spread, "--max-spread", 0, 100, true);
  if (!vm.count("warmup")) {
    settings.thresholds.warmup_s = soak::default_warmup_s(settings.duration_s);
  } else if (a.warmup == "0") {
    settings.thresholds.warmup_s = 0;
  } else {
    settings.thresholds.warmup_s = soak::parse_duration(a.warmup, "--warmup");
    if (settings.thresholds.warmup_s >= settings.duration_s) {
      throw UsageError(fmt::format("--warmup {}: not shorter than --duration {}", a.warmup, a.duration));
    }
  }
  o.loads = soak::parse_load(a.load);
  if (vm.count("power-limits") && vm.count("lock-clocks")) {
    throw UsageError("--power-limits and --lock-clocks: one sweep at a time");
  }
  if (vm.count("power-limits")) o.steps = parse_power_limits(a.power_limits);
  if (vm.count("lock-clocks")) o.steps = parse_lock_clocks(a.lock_clocks);
  in_range(a.rank_timeout_s, "--rank-timeout", 0, 86400);
  o.rank_timeout_s = a.rank_timeout_s;
  o.device = a.device;
  o.quiet = a.quiet;
  o.out = a.out;
  o.spec_sheet = a.spec_sheet;
  o.out_given = vm.count("out") > 0;
  if (o.out_given && a.out.empty()) throw UsageError("--out: empty path");
  if (o.out_given) {
    validate_output_file(a.out, "--out");
    // The file it reads is not an output (paths.hpp); a live gpubench's file is refused by the lock.
    if (!a.spec_sheet.empty()) check_path_clashes({{a.spec_sheet, "--spec-sheet"}}, {{a.out, "--out"}});
  }
  return o;
}

}  // namespace gpubench::app
