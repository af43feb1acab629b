// gpubench soak: sustained load on every selected device at once, a time series, and a
// pass/fail verdict (docs/soak.md). The loop lives in bench/soak/; this file parses options,
// writes the results file as samples arrive, and turns the verdict into the exit status.
#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/core/context.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/paths.hpp"
#include "bench/core/results.hpp"
#include "bench/soak/document.hpp"
#include "bench/soak/loads.hpp"
#include "bench/soak/rules.hpp"
#include "bench/soak/runner.hpp"
#include "bench/suites/all_suites.hpp"
#include "reports/spec_sheet.hpp"

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

Options)";

constexpr double kMaxDurationS = 30 * 86400.0;

volatile std::sig_atomic_t g_signal = 0;
std::atomic<bool> g_stop{false};

extern "C" void on_soak_signal(int sig) {
  g_signal = sig;
  g_stop = true;  // lock-free atomic<bool>: async-signal-safe
}

void install_soak_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_soak_signal;
  sigemptyset(&sa.sa_mask);
  // A second signal of the same kind ends the process the default way (a stuck GPU).
  sa.sa_flags = SA_RESETHAND;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

struct SoakArgs {
  std::string device, duration = "10m", interval = "1s", warmup, verify_every = "10s", load = "gemm", out, spec_sheet;
  double max_drop = 5, max_spread = 5;
  bool quiet = false;
};

std::string rate_text(const soak::Sample& s) {
  return s.rate ? fmt::format("{:.4g} {}", *s.rate, s.unit) : std::string("-");
}

// One progress line: the time and every device's latest figures.
void progress(const std::vector<soak::Sample>& batch, double duration_s) {
  if (batch.empty()) return;
  std::string line = fmt::format("soak {:.0f}/{:.0f} s:", batch.front().t_s, duration_s);
  for (const soak::Sample& s : batch) {
    line += fmt::format(" {} {} {}", s.device, s.load, rate_text(s));
    if (s.power_w) line += fmt::format(" {:.0f} W", *s.power_w);
    if (s.temperature_c) line += fmt::format(" {:.0f} C", *s.temperature_c);
    if (s.sm_clock_mhz) line += fmt::format(" {:.0f} MHz", *s.sm_clock_mhz);
    if (s.mismatches) line += " MISMATCH";
    if (!s.error.empty()) line += " stopped: " + s.error;
    line += ";";
  }
  line.pop_back();
  fmt::print(stderr, "{}\n", line);
}

}  // namespace

int cmd_soak(const std::vector<std::string>& args) {
  const auto started = std::chrono::steady_clock::now();
  SoakArgs a;
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
      ("quiet,q", po::bool_switch(&a.quiet), "no progress lines; failures and the closing line only")
      ("help,h", "show this help");
  po::variables_map vm = parse_or_throw(args, desc);
  if (vm.count("help")) return print_help(help_text(desc));

  soak::Settings settings;
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
  const std::vector<std::string> loads = soak::parse_load(a.load);
  if (vm.count("out") && a.out.empty()) throw UsageError("--out: empty path");
  if (vm.count("out")) validate_output_file(a.out, "--out");

  const reports::SpecSheet specs =
      a.spec_sheet.empty() ? reports::SpecSheet::builtin() : reports::SpecSheet::from_file(a.spec_sheet);
  const soak::PeakLookup peak = [&specs](const std::string& device, const std::string& key) { return specs.peak(device, key); };

  const DeviceInventory inventory = discover_devices();
  std::string device_spec = a.device;
  if (device_spec.empty()) {
    device_spec = inventory.cuda.empty() ? "cpu" : "cuda";
    if (inventory.cuda.empty() && !a.quiet) {
      fmt::print(stderr, "gpubench soak: no CUDA device ({}): soaking the CPU\n", inventory.cuda_unavailable_reason);
    }
  }
  const DeviceSelection selection = select_devices(device_spec, inventory);
  if (!selection.notice.empty()) fmt::print(stderr, "{}\n", selection.notice);
  if (selection.devices.empty()) {
    fmt::print(stderr, "gpubench soak: no device to soak\n");
    return 1;
  }

  const std::filesystem::path out_path = a.out.empty() ? default_results_path(host_name()) : std::filesystem::path(a.out);
  check_output_path(out_path, "--out");
  OutputLock out_lock(out_path, "--out");
  remove_stale_leftovers(out_path.has_parent_path() ? out_path.parent_path() : ".", out_path.filename().string() + ".tmp");

  soak::SoakOptions so;
  so.loads = loads;
  so.verify_every_s = settings.verify_every_s;
  so.peak = peak;
  soak::Soak soak(selection.devices, so);

  std::vector<std::string> suite_names;
  for (const std::string& l : loads) suite_names.push_back(l);
  RunDescription description{"gpubench soak " + join_args(args), "soak", suite_names, {}};
  nlohmann::ordered_json context =
      capture_context(inventory, selection.devices, select_suites(suites::all(), suite_names), description);
  ResultsFile results(out_path, std::move(context));

  std::vector<soak::Sample> series;
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  const double flush_every_s = std::max(2.0, settings.interval_s);
  auto last_flush = std::chrono::steady_clock::now();
  auto write = [&](const std::optional<soak::Verdict>& verdict, const std::optional<soak::Interruption>& interrupted) {
    results.set_section("soak", soak::section(settings, soak.loads(), series, soak.xid_status(), elapsed(), verdict, interrupted));
    last_flush = std::chrono::steady_clock::now();
  };
  write(std::nullopt, std::nullopt);
  if (!a.quiet) {
    for (const soak::LoadInfo& l : soak.loads()) {
      fmt::print(stderr, "soak: {} runs {}{}\n", l.device, l.planned.suite ? l.planned.name() : l.load,
                 l.note.empty() ? "" : " (" + l.note + ")");
    }
  }

  install_soak_handlers();
  double last_progress = -1e9;
  (void)soak.run_phase(settings.duration_s, settings.interval_s, "", 0, g_stop, [&](const std::vector<soak::Sample>& batch) {
    series.insert(series.end(), batch.begin(), batch.end());
    if (!a.quiet && !batch.empty() && batch.front().t_s - last_progress >= std::max(10.0, settings.interval_s) - 1e-9) {
      progress(batch, settings.duration_s);
      last_progress = batch.front().t_s;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - last_flush).count() >= flush_every_s) {
      write(std::nullopt, std::nullopt);
    }
  });

  std::optional<soak::Interruption> interrupted;
  if (g_signal != 0) interrupted = soak::Interruption{static_cast<int>(g_signal), series.empty() ? 0 : series.back().t_s};
  const soak::Verdict verdict = soak::judge(series, settings.thresholds);
  for (nlohmann::ordered_json& e : soak::summary_entries(settings, soak.loads(), series, peak)) results.add(std::move(e));
  write(verdict, interrupted);

  for (const soak::Failure& f : verdict.failures) fmt::print(stderr, "gpubench soak: FAIL {}\n", f.message);
  if (!a.quiet) {
    for (const std::string& n : verdict.notes) fmt::print(stderr, "gpubench soak: note: {}\n", n);
  }
  const std::string how = interrupted ? fmt::format("interrupted (signal {}) after {:.0f} s", interrupted->signal,
                                                    interrupted->at_s)
                                      : fmt::format("{:.0f} s", elapsed());
  fmt::print(stderr, "gpubench soak: {} ({} sample(s), {} failed rule(s)) in {}; results: {}\n",
             verdict.passed ? "passed" : "FAILED", series.size(), verdict.failures.size(), how, out_path.string());
  if (interrupted) return 128 + interrupted->signal;
  return verdict.passed ? 0 : 1;
}

}  // namespace gpubench::app
