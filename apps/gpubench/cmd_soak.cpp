// gpubench soak: sustained load on every selected device at once, a time series, and a
// pass/fail verdict (docs/soak.md). The loop lives in bench/soak/; this file parses options,
// writes the results file as samples arrive, and turns the verdict into the exit status.
#include <fmt/format.h>

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <map>
#include <sstream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "apps/gpubench/parse_soak.hpp"
#include "apps/gpubench/ranks.hpp"
#include "bench/core/context.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/harness.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/core/launch.hpp"
#include "bench/core/paths.hpp"
#include "bench/core/power_sweep.hpp"
#include "bench/mpi/session.hpp"
#include "bench/core/results.hpp"
#include "bench/soak/document.hpp"
#include "bench/soak/loads.hpp"
#include "bench/soak/rules.hpp"
#include "bench/soak/runner.hpp"
#include "bench/suites/all_suites.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::app {
namespace {



// Seconds a soak's load has after the first signal before the watchdog restores the settings.
constexpr double kRestoreAfterSignalS = 3;

// Seconds after the first signal during which further signals are taken as the same request:
// the soak is ending and writing its file (every sample, an interrupted verdict, no lock). A
// signal after that means the load did not stop (a GPU hung in a synchronize): the settings go
// back, the lock goes, and the process ends the default way; the file holds what the last flush
// wrote (at most a few seconds old).
constexpr double kSecondSignalGraceS = 10;

volatile std::sig_atomic_t g_signal = 0;
std::atomic<bool> g_stop{false};
timespec g_first_signal{};  // CLOCK_MONOTONIC when the first signal came

extern "C" void on_soak_signal(int sig) {
  if (!g_stop.load()) {
    g_signal = sig;
    ::clock_gettime(CLOCK_MONOTONIC, &g_first_signal);  // async-signal-safe
    g_stop = true;  // lock-free atomic<bool>: async-signal-safe
    return;
  }
  // SIGPIPE again and again (every progress line to a closed pipe): the same closed reader.
  if (sig == SIGPIPE) return;
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const double since = static_cast<double>(now.tv_sec - g_first_signal.tv_sec) +
                       1e-9 * static_cast<double>(now.tv_nsec - g_first_signal.tv_nsec);
  if (since < kSecondSignalGraceS) return;  // the soak is ending: let it write its file
  run_interrupt_restore();
  run_interrupt_cleanup();  // the lock file
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// `pipe`: SIGPIPE too (a reader of stderr or stdout that went away, as in `soak ... | head`),
// not under MPI, whose transports may rely on their own handling (as run does).
void install_soak_handlers(bool pipe) {
  struct sigaction sa {};
  sa.sa_handler = on_soak_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) install_unless_ignored(sig, sa);
  if (pipe) install_unless_ignored(SIGPIPE, sa);
}


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

// The soaked devices with who they are (host, rank, UUID, PCI bus id, serial): gpubench.soak.devices,
// which fleet screening keys each device's throughput by. `prefix` renames devices of rank r in a
// gathered file ("rank1/cpu") so the series and rules keep them apart.
nlohmann::ordered_json device_identities(const std::vector<DeviceInfo>& devices, std::optional<int> rank,
                                         const std::string& prefix) {
  const nlohmann::ordered_json who = rank_identity(host_name(), devices);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& d : who["devices"]) {
    nlohmann::ordered_json j{{"device", prefix + d.value("id", "")}, {"id", d.value("id", "")}, {"host", who["host"]}};
    if (rank) j["rank"] = *rank;
    j["device_name"] = d.value("name", "");
    for (const char* key : {"uuid", "pci_bus_id", "serial"}) {
      if (d.contains(key)) j[key] = d[key];
    }
    out.push_back(std::move(j));
  }
  return out;
}

// A sweep phase's figures: the last half of its samples (the first are the transition to the new
// setting), throughput and power summed over the GPUs (the devices whose limits the sweep sets;
// over every device on the CPU alone, whose rates share one unit).
PhaseFigures phase_figures(const std::vector<soak::Sample>& samples, double seconds) {
  PhaseFigures f;
  f.seconds = seconds;
  auto is_gpu = [](const soak::Sample& s) { return s.device.find("cuda:") != std::string::npos; };
  const bool gpus = std::any_of(samples.begin(), samples.end(), is_gpu);
  double t_end = 0, t_begin = 1e300;
  for (const soak::Sample& s : samples) {
    t_end = std::max(t_end, s.t_s);
    t_begin = std::min(t_begin, s.t_s - s.interval_s);
  }
  const double from = t_begin + (t_end - t_begin) / 2;
  std::map<std::string, std::vector<double>> rate, power;
  bool all_power = true;
  for (const soak::Sample& s : samples) {
    if (s.mismatches > 0 || !s.error.empty()) f.verified = false;
  }
  // The last half; every sample when none with a rate lies wholly in it (a phase of one or two
  // samples would otherwise report a throughput of 0 with no unit).
  for (const bool last_half : {true, false}) {
    for (const soak::Sample& s : samples) {
      if ((last_half && s.t_s - s.interval_s < from - 1e-9) || (gpus && !is_gpu(s))) continue;
      if (s.rate) rate[s.device].push_back(*s.rate), f.unit = s.unit;
      if (s.power_w) power[s.device].push_back(*s.power_w);
      else all_power = false;  // the CPU alone: no board power
    }
    if (!rate.empty()) break;
    power.clear();
    all_power = true;
  }
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  for (const auto& [device, v] : rate) f.throughput += mean(v);
  if (all_power && !power.empty()) {
    double w = 0;
    for (const auto& [device, v] : power) w += mean(v);
    f.power_w = w;
  }
  return f;
}

struct SweepStopped {};

}  // namespace

int cmd_soak(const std::vector<std::string>& args) {
  const auto started = std::chrono::steady_clock::now();
  SoakOptions a = parse_soak_options(args);
  // From the start: a signal during the set-up (device discovery, the first case's set-up) is
  // remembered, and the soak then ends at once with its file written (interrupted, not passed).
  install_soak_handlers(/*pipe=*/false);
  if (a.help) return print_help(a.help_text);
  const soak::Settings& settings = a.settings;
  const std::vector<std::string>& loads = a.loads;
  const std::vector<PowerStep>& steps = a.steps;

  // Started as one of several ranks: join them (each soaks its own device; rank 0 writes).
  mpi::Session* team = nullptr;
  if (const std::optional<LaunchInfo> launch = detect_launch()) {
    if (!mpi::built_with_mpi()) throw UsageError(launch_without_mpi_message(*launch));
    if (!launch->unjoinable.empty()) throw UsageError(launch->unjoinable);
    team = mpi::session(a.rank_timeout_s);
    if (const std::string m = team_size_mismatch_message(*launch, team->size()); !m.empty()) throw UsageError(m);
  }
  const bool leader = team == nullptr || team->rank() == 0;
  if (!leader) a.quiet = true;

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
  DeviceSelection selection = select_devices(device_spec, inventory);
  if (team != nullptr) narrow_to_local_gpu(selection, *team);
  if (!selection.notice.empty() && leader) fmt::print(stderr, "{}\n", selection.notice);
  if (selection.devices.empty()) {
    fmt::print(stderr, "gpubench soak: no device to soak\n");
    return 1;
  }

  std::filesystem::path out_path = a.out.empty() ? default_results_path(host_name()) : std::filesystem::path(a.out);
  if (team != nullptr) out_path = team->broadcast(leader ? out_path.string() : "", "the results path");
  OutputLock out_lock;
  if (leader) {
    check_output_path(out_path, "--out");
    out_lock = OutputLock(out_path, "--out");
    remove_stale_leftovers(out_path.has_parent_path() ? out_path.parent_path() : ".", out_path.filename().string() + ".tmp");
  }

  soak::SoakOptions so;
  so.loads = loads;
  so.verify_every_s = settings.verify_every_s;
  so.peak = peak;
  soak::Soak soak(selection.devices, so);

  std::vector<std::string> suite_names;
  for (const std::string& l : loads) suite_names.push_back(l);
  RunDescription description{"gpubench soak " + join_args(args), "soak", suite_names, {}};
  description.measure.min_time_s = settings.duration_s;  // each summary entry times the whole soak
  nlohmann::ordered_json context =
      capture_context(inventory, selection.devices, select_suites(suites::all(), suite_names), description);
  // Under a launcher the team goes where `run` records it (context.gpubench.mpi): every rank
  // gathers the identities here, at the same point.
  if (team != nullptr) {
    context["gpubench"]["mpi"] = mpi_context(*team, gather_rank_identities(*team, selection.devices));
  }
  // Only rank 0 writes; the others keep theirs in memory and hand their series over at the end.
  ResultsFile results(leader ? out_path : std::filesystem::path(), std::move(context));
  const std::string prefix = team != nullptr && team->size() > 1 ? fmt::format("rank{}/", team->rank()) : "";
  nlohmann::ordered_json identities = device_identities(
      selection.devices, team != nullptr ? std::optional<int>(team->rank()) : std::nullopt, prefix);
  nlohmann::ordered_json sweep_json_doc, power_json;

  std::vector<soak::Sample> series;
  // Under a launcher every rank streams what it measured to rank 0 at each flush (its devices,
  // its new samples, its entries so far): a rank killed or stopped later has handed over what it
  // measured up to its last post, and rank 0's file holds every rank's samples as they come.
  struct RankStream {
    nlohmann::ordered_json devices = nlohmann::ordered_json::array(), entries = nlohmann::ordered_json::array();
    std::vector<soak::Sample> series;
  };
  std::map<int, RankStream> streamed;  // rank 0: what the other ranks posted
  // Rank 0's series with what the others streamed, in time order (the file's series).
  auto with_streamed = [&](const std::vector<soak::Sample>& own) {
    std::vector<soak::Sample> all = own;
    for (const auto& [rank, r] : streamed) all.insert(all.end(), r.series.begin(), r.series.end());
    std::stable_sort(all.begin(), all.end(), [](const soak::Sample& x, const soak::Sample& y) { return x.t_s < y.t_s; });
    return all;
  };
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  const double flush_every_s = std::max(2.0, settings.interval_s);
  auto last_flush = std::chrono::steady_clock::now();
  // `final_series`: the whole run's, judged; else (a flush while it runs) rank 0's own and the
  // streamed ones.
  std::optional<std::vector<soak::Sample>> final_series;
  bool identities_all = false;  // `identities` holds every rank's devices (after the hand-over)
  auto write = [&](const std::optional<soak::Verdict>& verdict, const std::optional<soak::Interruption>& interrupted) {
    nlohmann::ordered_json sec = soak::section(settings, soak.loads(), final_series ? *final_series : with_streamed(series),
                                               soak.xid_status(), elapsed(), verdict, interrupted);
    sec["devices"] = identities;
    for (const auto& [rank, r] : streamed) {
      if (identities_all) break;
      for (const auto& d : r.devices) sec["devices"].push_back(d);
    }
    if (!sweep_json_doc.is_null()) sec["sweep"] = sweep_json_doc;
    if (!power_json.is_null()) sec["power_control"] = power_json;
    results.set_section("soak", std::move(sec));
    last_flush = std::chrono::steady_clock::now();
  };
  write(std::nullopt, std::nullopt);
  if (!a.quiet) {
    for (const soak::LoadInfo& l : soak.loads()) {
      fmt::print(stderr, "soak: {} runs {}{}\n", l.device, l.planned.suite ? l.planned.name() : l.load,
                 l.note.empty() ? "" : " (" + l.note + ")");
    }
  }

  // This process's summary entries (one per device and load) over its series so far; under a
  // launcher each rank's are named and tagged with its rank, so the gathered file has one entry
  // per rank and load.
  auto own_entries = [&] {
    std::vector<soak::Sample> own;
    for (const soak::Sample& s : series) {
      own.push_back(s);
      own.back().device = s.device.substr(prefix.size());
    }
    std::vector<nlohmann::ordered_json> out = soak::summary_entries(settings, soak.loads(), own, peak);
    for (std::size_t i = 0; i < out.size(); ++i) {
      nlohmann::ordered_json& e = out[i];
      e["family_index"] = i;
      if (prefix.empty()) continue;
      e["name"] = e["run_name"] = prefix + e["name"].get<std::string>();
      e["gpubench"]["device"] = prefix + e["gpubench"]["device"].get<std::string>();
      e["gpubench"]["rank"] = team->rank();
      e["gpubench"]["host"] = host_name();
    }
    return out;
  };
  std::size_t posted = 0;  // ranks other than 0: samples already streamed
  auto stream = [&] {
    if (team == nullptr || team->size() < 2) return;
    if (!leader) {
      nlohmann::ordered_json post{{"devices", identities}, {"series", nlohmann::ordered_json::array()}};
      post["entries"] = own_entries();
      for (; posted < series.size(); ++posted) post["series"].push_back(soak::to_json(series[posted]));
      team->post_to_root(post.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      return;
    }
    for (const auto& [rank, text] : team->take_posts()) {
      const nlohmann::ordered_json got = nlohmann::ordered_json::parse(text, nullptr, false);
      if (got.is_discarded()) continue;
      RankStream& r = streamed[rank];
      r.devices = got["devices"];
      r.entries = got["entries"];
      for (const auto& x : got["series"]) r.series.push_back(soak::sample_from_json(x));
    }
  };
  // Rank 0's own entries and the ones the others streamed (a flush while it runs).
  auto flush_entries = [&] {
    std::vector<nlohmann::ordered_json> out = own_entries();
    for (const auto& [rank, r] : streamed) {
      for (const auto& e : r.entries) out.push_back(e);
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i]["family_index"] = i;
    return out;
  };
  if (team == nullptr) install_soak_handlers(/*pipe=*/true);
  double last_progress = -1e9;
  auto on_samples = [&](const std::vector<soak::Sample>& in) {
    std::vector<soak::Sample> batch = in;
    for (soak::Sample& s : batch) s.device = prefix + s.device;
    series.insert(series.end(), batch.begin(), batch.end());
    if (!a.quiet && !batch.empty() && batch.front().t_s - last_progress >= std::max(10.0, settings.interval_s) - 1e-9) {
      progress(batch, settings.duration_s);
      last_progress = batch.front().t_s;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - last_flush).count() >= flush_every_s) {
      stream();
      if (!leader) {
        last_flush = std::chrono::steady_clock::now();
        return;
      }
      // The summary entries so far too: a file whose soak was killed (SIGKILL, a lost node)
      // still reports what it measured (report, compare), not only its series.
      results.set_entries(flush_entries());
      write(std::nullopt, std::nullopt);
    }
  };
  if (steps.empty()) {
    (void)soak.run_phase(settings.duration_s, settings.interval_s, "", 0, g_stop, on_samples);
  } else {
    // A sweep: one phase of --duration per setting. PowerControl puts the original limits and
    // clocks back when it goes out of scope (the end, an exception) and on a second signal.
    std::vector<PowerTarget> targets;
    for (const DeviceInfo& d : selection.devices) {
      if (d.is_cuda()) targets.push_back({d.id(), d.pci_bus_id});
    }
    PowerControl control(targets, /*install_handlers=*/false);
    // After a first signal the load gets kRestoreAfterSignalS to stop; a worker hung on the GPU
    // past that gets its power limits and clocks put back anyway (a SIGKILL may follow).
    RestoreWatchdog watchdog(g_stop, kRestoreAfterSignalS);
    power_json = control.original_json();
    double t0 = 0;
    std::vector<SweepPoint> points;
    std::ostringstream said;
    try {
      points = run_sweep(control, steps,
                         [&](const SweepPoint& p) {
                           if (g_stop) throw SweepStopped{};
                           const std::vector<soak::Sample> got =
                               soak.run_phase(settings.duration_s, settings.interval_s, p.setting, t0, g_stop, on_samples);
                           t0 += settings.duration_s;
                           if (g_stop) throw SweepStopped{};
                           PhaseFigures f = phase_figures(got, settings.duration_s);
                           if (!a.quiet) {
                             fmt::print(stderr, "soak sweep {}: {:.4g} {}{}\n", p.setting, f.throughput, f.unit,
                                        f.power_w ? fmt::format(", {:.0f} W, {:.4g} {} per W", *f.power_w,
                                                                f.throughput / *f.power_w, f.unit)
                                                  : std::string());
                           }
                           return f;
                         },
                         said);
    } catch (const SweepStopped&) {
    }
    if (!said.str().empty()) fmt::print(stderr, "{}", said.str());
    sweep_json_doc = sweep_json(steps, points);
    control.restore();
  }

  std::optional<soak::Interruption> interrupted;
  if (g_signal != 0) interrupted = soak::Interruption{static_cast<int>(g_signal), elapsed()};
  std::vector<nlohmann::ordered_json> entries = own_entries();
  soak::Verdict verdict;
  auto judge = [&](const std::vector<int>& missing_ranks) {
    verdict = soak::judge(series, settings.thresholds);
    if (interrupted) soak::mark_interrupted(verdict, series, interrupted->signal, interrupted->at_s);
    for (int r : missing_ranks) {
      verdict.passed = false;
      const auto s = streamed.find(r);
      const std::string kept =
          s == streamed.end() || s->second.series.empty()
              ? "its samples are missing"
              : fmt::format("its {} sample(s) up to {:.0f} s that it streamed are kept, the later ones are missing",
                            s->second.series.size(), s->second.series.back().t_s);
      verdict.failures.push_back({fmt::format("rank{}", r), "rank", 0, 0,
                                  fmt::format("rank {} did not hand over its series within --rank-timeout {} s (killed or "
                                              "stopped): {}",
                                              r, a.rank_timeout_s, kept)});
    }
  };
  auto write_all = [&] {
    for (std::size_t i = 0; i < entries.size(); ++i) entries[i]["family_index"] = i;
    results.set_entries(entries);
    write(verdict, interrupted);
  };
  std::vector<int> missing;  // ranks that did not hand over their series
  if (team != nullptr) {
    // Rank 0's own file first, complete: a launcher that kills the job once one rank died (Open
    // MPI does) must not cost rank 0 what it measured. Then every rank's series, devices and
    // entries to rank 0, which judges them together (the spread rule then compares the ranks'
    // devices) and writes them; a rank that does not hand over in time is named in the verdict.
    std::vector<int> not_yet;
    for (int r = 1; r < team->size(); ++r) not_yet.push_back(r);
    if (leader) {
      // What the others streamed is in this first file (judged with rank 0's own series).
      stream();
      const std::vector<soak::Sample> own = series;
      series = with_streamed(own);
      final_series = series;
      entries = flush_entries();
      judge(not_yet);
      write_all();
      series = own;
      entries = own_entries();
      // Interrupted: the launcher's SIGKILL may come during the hand-over, and must not leave
      // the lock file behind (the file is complete; one more rewrite follows if the ranks answer).
      if (interrupted) out_lock = OutputLock();
    }
    nlohmann::ordered_json mine{{"devices", identities}, {"series", nlohmann::ordered_json::array()}, {"entries", entries}};
    for (const soak::Sample& s : series) mine["series"].push_back(soak::to_json(s));
    // Interrupted (a launcher ending the job sends every rank its signal): the others are
    // ending too, so a short wait; a launcher's SIGKILL follows soon after.
    const double wait_s = interrupted ? std::min(a.rank_timeout_s, 5.0) : a.rank_timeout_s;
    const std::vector<std::optional<std::string>> all =
        team->gather_to_root(mine.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), wait_s);
    if (!leader) return interrupted ? 128 + interrupted->signal : 0;  // rank 0 judges and reports for everyone
    stream();  // the posts that came while it waited
    series.clear();
    entries.clear();
    identities = nlohmann::ordered_json::array();
    for (std::size_t r = 0; r < all.size(); ++r) {
      if (!all[r]) {
        // Killed or stopped: what it streamed stands for it.
        missing.push_back(static_cast<int>(r));
        if (const auto s = streamed.find(static_cast<int>(r)); s != streamed.end()) {
          for (const auto& d : s->second.devices) identities.push_back(d);
          series.insert(series.end(), s->second.series.begin(), s->second.series.end());
          for (const auto& e : s->second.entries) entries.push_back(e);
        }
        continue;
      }
      const nlohmann::ordered_json got = nlohmann::ordered_json::parse(*all[r]);
      for (const auto& d : got["devices"]) identities.push_back(d);
      for (const auto& x : got["series"]) series.push_back(soak::sample_from_json(x));
      for (const auto& e : got["entries"]) entries.push_back(e);
    }
    std::stable_sort(series.begin(), series.end(),
                     [](const soak::Sample& x, const soak::Sample& y) { return x.t_s < y.t_s; });
    final_series = series;
    identities_all = true;
    judge(missing);
  } else {
    judge({});
  }
  write_all();

  for (const soak::Failure& f : verdict.failures) fmt::print(stderr, "gpubench soak: FAIL {}\n", f.message);
  if (!a.quiet) {
    for (const std::string& n : verdict.notes) fmt::print(stderr, "gpubench soak: note: {}\n", n);
  }
  const std::string how = interrupted ? fmt::format("interrupted (signal {}) after {:.0f} s", interrupted->signal,
                                                    interrupted->at_s)
                                      : fmt::format("{:.0f} s", elapsed());
  fmt::print(stderr, "gpubench soak: {} ({} sample(s), {} failed rule(s)) in {}; results: {}\n",
             verdict.passed ? (interrupted ? "no rule failed" : "passed") : "FAILED", series.size(), verdict.failures.size(), how, out_path.string());
  // A rank that never handed over (stopped, hung) would hold MPI's finalisation forever: the
  // file is complete, so end every rank now (exit 1).
  if (!missing.empty()) team->abort_run(fmt::format("{} rank(s) did not hand over their series; results: {}", missing.size(), out_path.string()));
  if (interrupted) return 128 + interrupted->signal;
  return verdict.passed ? 0 : 1;
}

}  // namespace gpubench::app
