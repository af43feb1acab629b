#include "harness.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "errors.hpp"
#include "nvml.hpp"
#include "paths.hpp"
#include "phase.hpp"
#include "resources.hpp"

namespace gpubench {
namespace {

// What one repetition of a case measured (--benchmark_repetitions runs a case several times;
// each repetition's entry carries its own figures).
struct Repetition {
  std::optional<Measurement> measurement;
  std::vector<double> rank_mean_s;  // with a team: each rank's mean seconds per run
  std::vector<double> rank_median_s;  // with a team and a median headline: each rank's median
  nlohmann::ordered_json per_iteration;  // per-iteration timing: percentiles (per_iteration_json)
  nlohmann::ordered_json details = nlohmann::ordered_json::object();  // Case::details
  nlohmann::ordered_json profile = nlohmann::ordered_json::object();  // instruments' fields
};

// Per-iteration timing (SamplingPolicy::per_iteration): percentiles of the single-run samples.
// With a team, each rank's, and as the figure the slowest rank's (the largest over ranks):
// the ranks start every run together (the policy's barrier), and a collective's call ends
// when its slowest rank's does.
nlohmann::ordered_json per_iteration_json(const Measurement& m, Team* team, const std::string& step) {
  const std::pair<const char*, double> mine[] = {
      {"p50_s", m.stats.median}, {"p90_s", m.stats.p90}, {"p99_s", m.stats.p99}, {"max_s", m.stats.max}};
  nlohmann::ordered_json j{{"runs_per_sample", 1}, {"samples", m.samples()}};
  for (const auto& [key, value] : mine) {
    if (team == nullptr) {
      j[key] = value;
      continue;
    }
    const std::vector<double> ranks = team->all_gather(value, step);
    j[key] = *std::max_element(ranks.begin(), ranks.end());
    j[std::string("rank_") + key] = ranks;
  }
  j["statistic"] = team != nullptr ? "the slowest rank's percentile of its single-run times"
                                   : "percentile of the single-run times (linear interpolation)";
  return j;
}

// Everything the harness knows about one registered case, shared by the benchmark function
// (which fills it) and the reporter (which writes it out).
struct CaseSlot {
  const PlannedCase* planned = nullptr;
  std::size_t index = 0;
  std::unique_ptr<Case> instance;  // lives across repetitions; released once reported
  std::string status = "ok";       // ok | skipped | failed
  std::string reason;
  std::optional<Verification> verification;
  std::optional<MeasurePlan> measure_plan;
  Metrics metrics;
  std::string timer_kind;
  std::vector<Repetition> repetitions;  // in the order they ran: Run::repetition_index
  bool reported = false;                // counted and shown (Google Benchmark reports aggregates apart)
  Repetition& current() { return repetitions.back(); }
  // The repetition a run reports, or the last one.
  const Repetition* repetition(std::int64_t index) const {
    if (repetitions.empty()) return nullptr;
    if (index < 0 || static_cast<std::size_t>(index) >= repetitions.size()) return &repetitions.back();
    return &repetitions[static_cast<std::size_t>(index)];
  }
};

// The harness's phases are PhaseScopes too: while a case runs, the instruments observing it
// are the ones PhaseScope reaches (set in run_case), so a suite's own phases nest inside these.
using Phase = PhaseScope;

void fail(benchmark::State& st, CaseSlot& slot, std::string status, std::string reason) {
  slot.status = std::move(status);
  slot.reason = std::move(reason);
  st.SkipWithError((slot.status + ": " + slot.reason).c_str());
}

void run_case_phases(benchmark::State& st, CaseSlot& slot, const HarnessOptions& opt);

void run_case(benchmark::State& st, CaseSlot& slot, const HarnessOptions& opt, RunObserver& console) {
  console.started(slot.index);
  slot.repetitions.emplace_back();
  const CaseInfo info{slot.planned->name(), slot.planned->suite->name(), &slot.planned->device};
  for (Instrument* i : opt.instruments) i->begin_case(info);
  {
    struct Reach {  // PhaseScopes reach these instruments only while this case runs
      explicit Reach(const std::vector<Instrument*>* i) { detail::set_phase_instruments(i); }
      ~Reach() { detail::set_phase_instruments(nullptr); }
    } reach(&opt.instruments);
    run_case_phases(st, slot, opt);
  }
  CaseOutcome outcome;
  outcome.status = slot.status;
  outcome.metrics = slot.metrics;
  Repetition& rep = slot.current();
  if (slot.status == "ok" && rep.measurement) {
    outcome.runs = rep.measurement->runs;
    outcome.mean_s = rep.measurement->stats.mean;
  }
  for (auto it = opt.instruments.rbegin(); it != opt.instruments.rend(); ++it) {
    nlohmann::ordered_json fields = nlohmann::ordered_json::object();
    (*it)->end_case(outcome, fields);
    if (!fields.empty()) rep.profile[(*it)->name()] = std::move(fields);
  }
}

// Runs `step` and returns its outcome ("" or "skipped: why" / "failed: why"), agreed over the
// team when there is one, so that every rank goes on or every rank stops.
template <class F>
std::string agreed_step(const HarnessOptions& opt, const std::string& what, F&& step) {
  std::string outcome;
  try {
    step();
  } catch (const CaseSkipped& e) {
    outcome = std::string("skipped: ") + e.what();
  } catch (const std::exception& e) {
    const std::optional<std::string> exhausted = resource_exhaustion(e);
    outcome = exhausted ? "skipped: " + *exhausted : std::string("failed: ") + e.what();
  }
  if (opt.team != nullptr) outcome = merge_rank_outcomes(opt.team->all_gather(outcome, what));
  return outcome;
}

void fail_with_outcome(benchmark::State& st, CaseSlot& slot, const std::string& outcome) {
  const std::size_t colon = outcome.find(": ");
  slot.instance.reset();  // releases what the case did get before the next case
  fail(st, slot, outcome.substr(0, colon), outcome.substr(colon + 2));
}

void run_case_phases(benchmark::State& st, CaseSlot& slot, const HarnessOptions& opt) {
  const PlannedCase& pc = *slot.planned;
  Team* team = opt.team;
  if (team != nullptr) {
    // Ranks may judge a point differently (another GPU model, less memory): all skip it if one does.
    const std::string mine = pc.skip_reason ? "skipped: " + *pc.skip_reason : "";
    const std::string outcome = merge_rank_outcomes(team->all_gather(mine, "planning of " + pc.name()));
    if (!outcome.empty()) return fail_with_outcome(st, slot, outcome);
  }
  if (pc.skip_reason) return fail(st, slot, "skipped", *pc.skip_reason);
  if (slot.status != "ok") return fail(st, slot, slot.status, slot.reason);  // a later repetition
  if (!slot.instance && opt.stop_at) {
    const double left = std::chrono::duration<double>(*opt.stop_at - std::chrono::system_clock::now()).count();
    const double need = opt.case_estimate_s ? opt.case_estimate_s(pc) : 0;
    std::string mine;
    if (left <= 0 || left < need) {
      mine = fmt::format("skipped: budget spent: {:.0f} s left, the case needs about {:.0f} s", std::max(0.0, left), need);
    }
    if (team != nullptr) mine = merge_rank_outcomes(team->all_gather(mine, "budget of " + pc.name()));
    if (!mine.empty()) return fail_with_outcome(st, slot, mine);
  }
  if (!slot.instance) {
    std::string outcome = agreed_step(opt, "setup of " + pc.name(), [&] {
      Phase phase("setup");
      slot.instance = pc.suite->make_case(pc.device, pc.point);
      slot.instance->setup();
    });
    if (!outcome.empty()) return fail_with_outcome(st, slot, outcome);
    outcome = agreed_step(opt, "verification of " + pc.name(), [&] {
      Phase phase("verify");
      slot.verification = slot.instance->verify();
      slot.metrics = slot.instance->metrics();
    });
    if (!outcome.empty()) return fail_with_outcome(st, slot, outcome);
    if (team != nullptr) {
      std::vector<Verification> all;
      const std::string mine = verification_to_json(*slot.verification)
                                   .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
      for (const std::string& text : team->all_gather(mine, "verification of " + pc.name())) {
        all.push_back(verification_from_json(nlohmann::ordered_json::parse(text)));
      }
      slot.verification = merge_rank_verifications(all);
    }
    if (!slot.verification->passed) {
      slot.instance.reset();
      return fail(st, slot, "failed", "verification failed: " + slot.verification->detail);
    }
    // A case whose check compared nothing has no verified answer: its time is not a result.
    if (slot.verification->checked <= 0) {
      slot.instance.reset();
      return fail(st, slot, "failed", "verification checked nothing (0 values compared): no time is reported "
                                      "without a checked answer");
    }
  }
  try {
    Case& c = *slot.instance;
    std::unique_ptr<Timer> timer = c.make_timer();
    for (Instrument* i : opt.instruments) timer = i->timer(std::move(timer));  // e.g. CUPTI kernel time
    slot.timer_kind = timer->kind();
    // The case's sampling policy: window length, a barrier before each window, the headline.
    const SamplingPolicy policy = c.sampling();
    const MeasureOptions measure = with_policy(opt.measure, policy);
    // Repetitions reuse the first plan: Google Benchmark's aggregates need equal iteration
    // counts, and equal sample counts keep the repetitions comparable.
    {
      Phase phase("warm-up");
      if (slot.measure_plan) {
        (void)warm_up(c, *timer, measure, team);
      } else {
        slot.measure_plan = calibrate(c, *timer, measure, team);
      }
    }
    const MeasurePlan plan = *slot.measure_plan;
    // One pass of Google Benchmark's loop covering exactly the planned runs: it then reports
    // iterations = runs and real_time = the headline time per run (the mean by default; see
    // SamplingPolicy), and its min_time budget is ours. With a team the time reported is the
    // mean over ranks of each rank's headline (as nccl-tests and OSU report by default).
    double mean_s = 0;
    {
      Phase phase("measure");
      while (st.KeepRunningBatch(plan.total_runs())) {
        const std::string step = "timing of " + pc.name();
        Measurement m = collect(c, *timer, plan, measure, team, step);
        double total_s = m.total_s;
        std::vector<double>& rank_mean_s = slot.current().rank_mean_s;
        std::vector<double>& rank_median_s = slot.current().rank_median_s;
        rank_mean_s.clear();
        rank_median_s.clear();
        if (team != nullptr) {
          const std::vector<double> totals = team->all_gather(m.total_s, step);
          total_s = 0;
          for (double t : totals) {
            total_s += t / static_cast<double>(totals.size());
            rank_mean_s.push_back(t / static_cast<double>(m.runs));
          }
        }
        mean_s = total_s / static_cast<double>(m.runs);
        if (policy.headline == SamplingPolicy::Headline::Median) {
          mean_s = headline_s(m, policy.headline);
          if (team != nullptr) {
            rank_median_s = team->all_gather(mean_s, step);
            mean_s = 0;
            for (double t : rank_median_s) mean_s += t / static_cast<double>(rank_median_s.size());
          }
        }
        if (policy.per_iteration) slot.current().per_iteration = per_iteration_json(m, team, step);
        // Google Benchmark divides by the planned runs (it was told them up front); samples
        // added to reach --min-time ran more, so hand it the planned runs' share of the time.
        st.SetIterationTime(mean_s * static_cast<double>(plan.total_runs()));
        slot.current().measurement = std::move(m);
      }
    }
    // Instruments that need their own passes over the work (hardware counters) get them now,
    // after the timing, so they never disturb it.
    if (std::any_of(opt.instruments.begin(), opt.instruments.end(), [](Instrument* i) { return i->wants_replay(); })) {
      Phase phase("replay");
      const Replay replay{[&c] { c.run(); }, [&c] { c.synchronize(); }};
      for (Instrument* i : opt.instruments) {
        if (i->wants_replay()) i->replay(replay);
      }
    }
    const Measurement& m = *slot.current().measurement;
    const double t = mean_s;
    if (m.runs <= 0 || !(t > 0) || !std::isfinite(t)) {  // no work timed: never ok
      slot.instance.reset();
      return fail(st, slot, "failed", fmt::format("the measurement timed no work ({} runs, {} s per run)", m.runs, t));
    }
    if (slot.metrics.flops > 0) st.counters[slot.metrics.integer_ops ? "TOP/s" : "TFLOP/s"] = slot.metrics.flops / t / 1e12;
    if (slot.metrics.bytes > 0 && slot.metrics.flops == 0) st.counters["GB/s"] = slot.metrics.bytes / t / 1e9;
    if (slot.metrics.items > 0) st.counters[slot.metrics.items_unit + "/s"] = slot.metrics.items / t;
    slot.current().details = c.details(m.runs);
    st.counters["samples"] = static_cast<double>(m.seconds_per_run.size());
    st.counters["noise_pct"] = m.stats.rel_noise * 100;
  } catch (const CaseSkipped& e) {
    slot.instance.reset();
    fail(st, slot, "skipped", e.what());
  } catch (const std::exception& e) {
    slot.instance.reset();  // releases what the case did get before the next case
    if (const std::optional<std::string> exhausted = resource_exhaustion(e)) return fail(st, slot, "skipped", *exhausted);
    fail(st, slot, "failed", e.what());
  }
}

nlohmann::ordered_json measurement_json(const CaseSlot& slot, const Measurement& m, const MeasureOptions& opt) {
  return {{"samples", m.seconds_per_run.size()},
          {"planned_samples", m.planned_samples},
          {"runs", m.runs},
          {"runs_per_sample", slot.measure_plan ? slot.measure_plan->runs_per_sample : 0},
          {"mean_s", m.stats.mean},
          {"median_s", m.stats.median},
          {"min_s", m.stats.min},
          {"max_s", m.stats.max},
          {"stddev_s", m.stats.stddev},
          {"noise_pct", m.stats.rel_noise * 100},
          {"noisy", m.noisy},
          {"cold", opt.cold},
          {"timer", slot.timer_kind}};
}

// With a team: the ranks' own mean times (the run's time is their mean; the slowest bounds
// the collective).
void add_rank_times(nlohmann::ordered_json& measurement, const std::vector<double>& rank_mean_s) {
  if (rank_mean_s.empty()) return;
  double sum = 0, max = 0;
  for (double t : rank_mean_s) {
    sum += t;
    max = std::max(max, t);
  }
  measurement["ranks"] = rank_mean_s.size();
  measurement["rank_mean_s"] = rank_mean_s;
  measurement["mean_over_ranks_s"] = sum / static_cast<double>(rank_mean_s.size());
  measurement["max_over_ranks_s"] = max;
}

// A case whose headline is not the mean says how it was computed, and with a team each rank's
// median and the slowest rank's (Case::annotate reports the latter as its slowest-rank time).
void add_headline(nlohmann::ordered_json& measurement, const SamplingPolicy& policy, const MeasureOptions& options,
                  bool team, const std::vector<double>& rank_median_s) {
  if (policy.single_run) {
    measurement["headline"] = {{"statistic", "single run"}};  // no warm-up, one timed run
    return;
  }
  if (policy.headline == SamplingPolicy::Headline::Mean && !policy.barrier && policy.window_s <= 0 && !policy.per_iteration)
    return;
  const MeasureOptions applied = with_policy(options, policy);
  measurement["headline"] = {
      {"statistic", policy.headline == SamplingPolicy::Headline::Median ? "median" : "mean"},
      {"window_s", applied.batch_s},
      {"barrier", policy.barrier && team},  // a barrier needs ranks to meet
  };
  if (policy.per_iteration) {
    measurement["headline"]["per_iteration"] = true;
    measurement["headline"].erase("window_s");  // every sample is one run
  }
  if (rank_median_s.empty()) return;
  double sum = 0, max = 0;
  for (double t : rank_median_s) {
    sum += t;
    max = std::max(max, t);
  }
  measurement["rank_median_s"] = rank_median_s;
  measurement["median_over_ranks_s"] = sum / static_cast<double>(rank_median_s.size());
  measurement["max_median_over_ranks_s"] = max;
}

// With a team, for a suite whose cases each rank measures on its own device: each rank's own
// figures, with who measured them (gpubench.ranks, docs/results-format.md). The rank's device
// is the one of the entry's kind in its identity (under MPI each rank has its own GPU).
nlohmann::ordered_json rank_figures(const PlannedCase& pc, const Metrics& metrics, const std::vector<double>& rank_mean_s,
                                    const HarnessOptions& opt) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  if (opt.team == nullptr || !opt.per_rank_figures || !opt.per_rank_figures(pc) ||
      rank_mean_s.size() != opt.rank_identities.size()) {
    return out;
  }
  for (std::size_t r = 0; r < rank_mean_s.size(); ++r) {
    const nlohmann::ordered_json& who = opt.rank_identities[r];
    nlohmann::ordered_json device = nlohmann::ordered_json::object();
    if (const auto it = who.find("devices"); it != who.end() && it->is_array()) {
      for (const auto& d : *it) {
        const bool cuda = d.value("id", "").rfind("cuda:", 0) == 0;
        if (cuda == pc.device.is_cuda()) {
          device = d;
          if (d.value("id", "") == pc.device.id()) break;  // the same id wins over the same kind
        }
      }
    }
    nlohmann::ordered_json j{{"rank", r}, {"host", who.value("host", "")}};
    j["device"] = device.value("id", pc.device.id());
    j["device_name"] = device.value("name", pc.device.name);
    for (const char* key : {"uuid", "pci_bus_id", "serial"}) {
      if (device.contains(key)) j[key] = device[key];
    }
    j["mean_s"] = rank_mean_s[r];
    // No peak or clock: % of peak is the entry's; a rank's rate is what fleet screening ranks.
    j["metrics"] = derive_metrics(metrics, rank_mean_s[r], std::nullopt);
    out.push_back(std::move(j));
  }
  return out;
}

// Google Benchmark's JSON fields for one run, as its JSONReporter writes them, so compare.py
// reads the file unchanged.
//
// Names are the case names alone: Google Benchmark would append "/iterations:1/manual_time"
// (the harness's fixed settings, see run_plan), which carries nothing and only differs from
// the names people type.
nlohmann::ordered_json run_json(const benchmark::BenchmarkReporter::Run& run) {
  nlohmann::ordered_json j;
  const bool aggregate = run.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate;
  const std::string& case_name = run.run_name.function_name;
  j["name"] = aggregate ? case_name + "_" + run.aggregate_name : case_name;
  j["family_index"] = run.family_index;
  j["per_family_instance_index"] = run.per_family_instance_index;
  j["run_name"] = case_name;
  j["run_type"] = aggregate ? "aggregate" : "iteration";
  j["repetitions"] = run.repetitions;
  if (!aggregate) j["repetition_index"] = run.repetition_index;
  j["threads"] = run.threads;
  if (aggregate) {
    j["aggregate_name"] = run.aggregate_name;
    j["aggregate_unit"] = run.aggregate_unit == benchmark::kPercentage ? "percentage" : "time";
  }
  if (run.error_occurred) {
    j["error_occurred"] = true;
    j["error_message"] = run.error_message;
    return j;  // no time: a case that failed or was skipped reports none
  }
  j["iterations"] = run.iterations;
  if (aggregate && run.aggregate_unit == benchmark::kPercentage) {
    j["real_time"] = run.real_accumulated_time;
    j["cpu_time"] = run.cpu_accumulated_time;
  } else {
    j["real_time"] = run.GetAdjustedRealTime();
    j["cpu_time"] = run.GetAdjustedCPUTime();
    j["time_unit"] = benchmark::GetTimeUnitString(run.time_unit);
  }
  for (const auto& [name, counter] : run.counters) j[name] = counter.value;
  if (!run.report_label.empty()) j["label"] = run.report_label;
  return j;
}

// Forwards everything to the display reporter and writes each finished run, with gpubench's
// fields, to the results file.
class ResultsReporter final : public benchmark::BenchmarkReporter {
 public:
  ResultsReporter(benchmark::BenchmarkReporter& display, ResultsFile& results, std::map<std::string, CaseSlot*> slots,
                  const HarnessOptions& opt, RunObserver& console, RunSummary& summary)
      : display_(display), recorder_(results), slots_(std::move(slots)), opt_(opt), console_(console), summary_(summary) {}

  bool ReportContext(const Context& context) override {
    return opt_.show_context ? display_.ReportContext(context) : true;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    display_.ReportRuns(runs);
    if (runs.empty()) return;
    auto it = slots_.find(runs.front().run_name.function_name);
    if (it == slots_.end()) return;
    CaseSlot& slot = *it->second;
    std::vector<nlohmann::ordered_json> entries;
    for (const Run& run : runs) {
      entries.push_back(entry(run, slot));
      recorder_.add(*slot.planned->suite, entries.back());
    }
    slot.instance.reset();  // every repetition is done: release its memory before the next case
    // With repetitions Google Benchmark reports a case twice (its runs, then its aggregates):
    // it is one case, counted and shown once.
    if (slot.reported) return;
    slot.reported = true;
    if (slot.status == "ok") ++summary_.ok;
    if (slot.status == "skipped") ++summary_.skipped;
    if (slot.status == "failed") ++summary_.failed;
    // The entries as recorded: the results file judged them (gpubench.suspect) when they were added.
    console_.finished(slot.index, recorded_entries(recorder_.file(), entries.size()));
  }

  void Finalize() override { display_.Finalize(); }

 private:
  nlohmann::ordered_json entry(const Run& run, const CaseSlot& slot) const {
    nlohmann::ordered_json j = run_json(run);
    const PlannedCase& pc = *slot.planned;
    nlohmann::ordered_json g{{"suite", pc.suite->name()},
                     {"device", pc.device.id()},
                     {"device_name", pc.device.name},
                     {"axes", pc.point.to_json()},
                     {"status", slot.status}};
    if (!slot.reason.empty()) g["reason"] = slot.reason;
    if (run.run_type == Run::RT_Iteration) {
      if (slot.verification) {
        g["verification"] = verification_to_json(*slot.verification);
        g["verification"].erase("detail");
      }
      const Repetition* rep = slot.repetition(run.repetition_index);
      if (slot.status == "ok" && rep != nullptr && rep->measurement) {
        std::optional<double> peak;
        if (opt_.peak && pc.device.is_cuda() && !slot.metrics.peak_key.empty()) {
          peak = opt_.peak(pc.device.name, slot.metrics.peak_key);
        }
        // Per repetition: this run's own mean time per run.
        const double per_run = run.real_accumulated_time / static_cast<double>(run.iterations);
        std::optional<ClockScale> clock;
        std::optional<double> sheet_clock;  // the clock the spec sheet says its figure assumes
        if (peak && opt_.peak_clock) sheet_clock = opt_.peak_clock(pc.device.name, slot.metrics.peak_key);
        if (const auto mhz = measured_sm_clock(rep->profile)) {
          std::optional<double> assumed = sheet_clock;
          if (!assumed && pc.device.max_sm_clock_mhz > 0) assumed = static_cast<double>(pc.device.max_sm_clock_mhz);
          if (assumed) clock = ClockScale{*mhz, *assumed};
        }
        g["metrics"] = derive_metrics(slot.metrics, per_run, peak, clock);
        // Readers that scale the datasheet figure to a clock measured their own way (the
        // memory suite's ceilings summary: the peak loop's in-kernel clock) need it too.
        if (sheet_clock) g["metrics"]["peak_clock_mhz"] = *sheet_clock;
        if (!rep->details.empty()) g["details"] = rep->details;
        g["measurement"] = measurement_json(slot, *rep->measurement, opt_.measure);
        if (rep->measurement->runs != run.iterations && rep->measurement->runs > 0) {
          // Samples were added to reach --min-time: the file states the runs really timed, and
          // the CPU time Google Benchmark divided by the planned runs per run really timed.
          const double share = static_cast<double>(run.iterations) / static_cast<double>(rep->measurement->runs);
          j["iterations"] = rep->measurement->runs;
          if (j.contains("cpu_time")) j["cpu_time"] = j["cpu_time"].get<double>() * share;
        }
        add_rank_times(g["measurement"], rep->rank_mean_s);
        if (slot.instance) add_headline(g["measurement"], slot.instance->sampling(), opt_.measure, opt_.team != nullptr,
                                        rep->rank_median_s);
        if (!rep->per_iteration.empty()) g["measurement"]["per_iteration"] = rep->per_iteration;
        if (auto ranks = rank_figures(pc, slot.metrics, rep->rank_mean_s, opt_); !ranks.empty()) g["ranks"] = ranks;
        if (slot.instance) slot.instance->annotate(g, per_run);
      }
      if (rep != nullptr && !rep->profile.empty()) g["profile"] = rep->profile;
    }
    j["gpubench"] = std::move(g);
    return j;
  }

  benchmark::BenchmarkReporter& display_;
  Recorder recorder_;
  std::map<std::string, CaseSlot*> slots_;
  const HarnessOptions& opt_;
  RunObserver& console_;
  RunSummary& summary_;
};

// The display of ranks other than 0 in a multi-process run: rank 0 shows the run.
class SilentReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// Google Benchmark's console table, with two changes. Its context loses one line: "Library was
// built as DEBUG. Timings may be affected." That is about how libbenchmark itself was compiled
// (Debian's package is built without NDEBUG) and concerns its own timing loop; gpubench times
// every case itself (manual time), so the warning would only mislead. And a skipped case reads
// "skipped: reason", not "ERROR OCCURRED: 'skipped: reason'": Google Benchmark 1.7 has only
// SkipWithError to end a case early (1.8 added SkipWithMessage).
class GbConsole final : public benchmark::ConsoleReporter {
 public:
  using benchmark::ConsoleReporter::ConsoleReporter;
  void PrintRunData(const Run& run) override {
    if (!run.error_occurred || run.error_message.rfind("skipped: ", 0) != 0) {
      benchmark::ConsoleReporter::PrintRunData(run);
      return;
    }
    GetOutputStream() << fmt::format("{:<{}} {}\n", run.benchmark_name(), name_field_width_, run.error_message);
  }
  bool ReportContext(const Context& context) override {
    std::ostringstream context_text;
    std::ostream& err = GetErrorStream();
    SetErrorStream(&context_text);
    const bool ok = benchmark::ConsoleReporter::ReportContext(context);
    SetErrorStream(&err);
    std::istringstream lines(context_text.str());
    for (std::string line; std::getline(lines, line);) {
      if (line.find("Library was built as DEBUG") == std::string::npos) err << line << '\n';
    }
    return ok;
  }
};

std::unique_ptr<benchmark::BenchmarkReporter> make_display(const std::string& format) {
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  if (format == "csv") {
    // Deprecated upstream but still what --benchmark_format=csv selects in Google Benchmark.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
  }
  return std::make_unique<GbConsole>(::isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                           : benchmark::ConsoleReporter::OO_Tabular);
}

}  // namespace

namespace {

class NoObserver final : public RunObserver {
 public:
  void started(std::size_t) override {}
  void finished(std::size_t, const std::vector<nlohmann::ordered_json>&) override {}
  void done() override {}
};

}  // namespace

std::unique_ptr<RunObserver> make_observer(const std::vector<PlannedCase>& plan, const HarnessOptions& opt, bool leader) {
  if (!opt.observer) return std::make_unique<NoObserver>();
  ObservedRun run;
  run.quiet = opt.quiet || !leader;
  run.tables = opt.benchmark.format == "table";
  std::unique_ptr<RunObserver> o = opt.observer(plan, run);
  return o ? std::move(o) : std::make_unique<NoObserver>();
}

void Recorder::add(const Suite& suite, nlohmann::ordered_json entry) {
  std::vector<nlohmann::ordered_json>& entries = by_suite_[suite.name()];
  entries.push_back(std::move(entry));
  // The summary goes in before the entry so the one rewrite of the file carries both.
  nlohmann::ordered_json summary = suite.summarize(entries);
  if (!summary.empty()) file_.set_summary(suite.name(), std::move(summary));
  file_.add(entries.back());
}

std::string merge_rank_outcomes(const std::vector<std::string>& outcomes) {
  for (const char* kind : {"failed: ", "skipped: "}) {
    for (std::size_t r = 0; r < outcomes.size(); ++r) {
      if (outcomes[r].rfind(kind, 0) == 0) {
        const std::size_t colon = outcomes[r].find(": ");
        return fmt::format("{}rank {}: {}", outcomes[r].substr(0, colon + 2), r, outcomes[r].substr(colon + 2));
      }
    }
  }
  return "";
}

Verification merge_rank_verifications(const std::vector<Verification>& per_rank) {
  Verification out;
  out.passed = true;
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    const Verification& v = per_rank[r];
    out.checked += v.checked;
    out.max_error = std::max(out.max_error, v.max_error);
    if (out.method.empty()) out.method = v.method;
    if (v.wrong) out.wrong = out.wrong.value_or(0) + *v.wrong;
    if (!v.passed && out.passed) {
      out.passed = false;
      out.detail = fmt::format("rank {}: {}", r, v.detail);
    }
  }
  return out;
}

nlohmann::ordered_json verification_to_json(const Verification& v) {
  nlohmann::ordered_json j{
      {"passed", v.passed}, {"checked", v.checked}, {"max_error", v.max_error}, {"method", v.method}};
  if (v.wrong) j["wrong"] = *v.wrong;
  j["detail"] = v.detail;
  return j;
}

Verification verification_from_json(const nlohmann::ordered_json& j) {
  Verification v;
  v.passed = j.at("passed").get<bool>();
  v.checked = j.at("checked").get<std::int64_t>();
  v.max_error = j.at("max_error").get<double>();
  v.method = j.at("method").get<std::string>();
  v.detail = j.value("detail", "");
  if (j.contains("wrong")) v.wrong = j["wrong"].get<std::int64_t>();
  return v;
}

std::vector<nlohmann::ordered_json> recorded_entries(const ResultsFile& results, std::size_t count) {
  const auto& entries = results.document()["benchmarks"];
  const std::size_t first = entries.size() - std::min(count, entries.size());
  return {entries.begin() + static_cast<std::ptrdiff_t>(first), entries.end()};
}

nlohmann::ordered_json failure_entry(const PlannedCase& c, std::size_t index, const std::string& reason) {
  const std::string name = c.name();
  return {{"name", name},
          {"family_index", index},
          {"per_family_instance_index", 0},
          {"run_name", name},
          {"run_type", "iteration"},
          {"repetitions", 1},
          {"repetition_index", 0},
          {"threads", 1},
          {"error_occurred", true},
          {"error_message", "failed: " + reason},
          {"gpubench",
           {{"suite", c.suite->name()},
            {"device", c.device.id()},
            {"device_name", c.device.name},
            {"axes", c.point.to_json()},
            {"status", "failed"},
            {"reason", reason}}}};
}

nlohmann::ordered_json derive_metrics(double flops, double bytes, const std::string& peak_key, double seconds_per_run,
                              std::optional<double> peak) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (seconds_per_run <= 0) return j;
  std::optional<double> rate;
  if (flops > 0) {
    j["flops"] = flops;
    j["tflops"] = flops / seconds_per_run / 1e12;
    rate = j["tflops"].get<double>();
  }
  if (bytes > 0) {
    j["bytes"] = bytes;  // with flops: the minimum traffic, for arithmetic intensity
    if (flops == 0) {
      j["gbps"] = bytes / seconds_per_run / 1e9;
      rate = j["gbps"].get<double>();
    }
  }
  if (!peak_key.empty()) j["peak_key"] = peak_key;
  if (peak && *peak > 0 && rate) {
    j["peak"] = *peak;
    j["pct_of_peak"] = *rate / *peak * 100;
  }
  return j;
}

nlohmann::ordered_json derive_metrics(const Metrics& m, double seconds_per_run, std::optional<double> peak,
                                      std::optional<ClockScale> clock) {
  nlohmann::ordered_json j = derive_metrics(m.flops, m.bytes, m.peak_key, seconds_per_run, peak);
  if (seconds_per_run <= 0) return j;
  if (m.flops > 0) {
    j["rate_unit"] = m.integer_ops ? "TOP/s" : "TFLOP/s";
    if (m.bytes > 0) {
      j["intensity"] = m.flops / m.bytes;
      j["achieved_gbps"] = m.bytes / seconds_per_run / 1e9;
    }
  }
  if (m.footprint_bytes > 0) j["footprint_bytes"] = m.footprint_bytes;
  if (m.items > 0) {
    j["items"] = m.items;
    j["items_unit"] = m.items_unit;
    j["items_per_s"] = m.items / seconds_per_run;  // under one name for readers of any suite
    j[m.items_unit + "_per_s"] = m.items / seconds_per_run;
  }
  if (m.hardware_flops > m.flops) {
    j["hardware_flops"] = m.hardware_flops;
    j["hardware_tflops"] = m.hardware_flops / seconds_per_run / 1e12;
    if (peak && *peak > 0) j["hfu_pct"] = j["hardware_tflops"].get<double>() / *peak * 100;
  }
  // The datasheet peak assumes the boost clock; at a lower (or higher) measured clock the
  // same units deliver peak * measured / boost.
  if (clock && clock->measured_mhz > 0 && clock->reference_mhz > 0) {
    j["sm_clock_mhz"] = clock->measured_mhz;
    if (j.contains("pct_of_peak")) {
      const double at_clock = j["peak"].get<double>() * clock->measured_mhz / clock->reference_mhz;
      j["peak_at_clock"] = at_clock;
      j["pct_of_peak_at_clock"] = j["pct_of_peak"].get<double>() * j["peak"].get<double>() / at_clock;
    }
  }
  for (const auto& [key, value] : m.extra.items()) j[key] = value;
  return j;
}

std::optional<double> measured_sm_clock(const nlohmann::ordered_json& profile) {
  if (!profile.is_object()) return std::nullopt;
  for (const auto& [name, fields] : profile.items()) {
    if (!fields.is_object()) continue;
    // The telemetry instrument writes "sm_clock_mhz": {"min": ..., "mean": ...}.
    const auto it = fields.find("sm_clock_mhz");
    if (it == fields.end() || !it->is_object()) continue;
    const auto mean = it->find("mean");
    if (mean != it->end() && mean->is_number() && mean->get<double>() > 0) return mean->get<double>();
  }
  return std::nullopt;
}

namespace {

bool is_bool_word(const std::string& v) {
  for (const char* w : {"true", "false", "yes", "no", "on", "off", "1", "0"}) {
    if (v == w) return true;
  }
  return false;
}

// A decimal number of seconds in (0, 3600]; Google Benchmark 1.8's "s" suffix is accepted.
double parse_seconds_flag(const std::string& arg, std::string text) {
  if (!text.empty() && text.back() == 's') text.pop_back();
  try {
    std::size_t used = 0;
    const double t = std::stod(text, &used);
    if (used == text.size() && t > 0 && t <= 3600) return t;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("{}: expected seconds above 0 and at most 3600", arg));
}

}  // namespace

BenchmarkFlags parse_benchmark_flags(const std::vector<std::string>& args) {
  BenchmarkFlags flags;
  // Every flag Google Benchmark 1.7 knows is checked here, before any case runs or anything is
  // written: Google Benchmark itself accepts bad values (repetitions=-1 ends in a
  // std::length_error mid-run, 0 runs nothing), and prints its usage and exits on others.
  for (const std::string& a : args) {
    const std::size_t eq = a.find('=');
    const std::string key = a.substr(0, eq);
    const bool has_value = eq != std::string::npos;
    const std::string v = has_value ? a.substr(eq + 1) : "";
    auto need_value = [&] {
      if (!has_value || v.empty()) throw UsageError(fmt::format("{}: expected {}=VALUE", a, key));
    };
    if (key == "--benchmark_filter") {
      need_value();
      flags.filter = v;
      continue;
    }
    if (key == "--benchmark_min_time") {
      need_value();
      flags.min_time_s = parse_seconds_flag(a, v);
      continue;
    }
    if (key == "--benchmark_format") {
      if (v != "console" && v != "json" && v != "csv") throw UsageError(fmt::format("{}: accepted formats are console, json, csv", a));
      flags.format = v;
      continue;
    }
    if (key == "--benchmark_out_format") {
      if (v != "console" && v != "json" && v != "csv") throw UsageError(fmt::format("{}: accepted formats are console, json, csv", a));
    } else if (key == "--benchmark_time_unit") {
      if (v != "ns" && v != "us" && v != "ms" && v != "s") throw UsageError(fmt::format("{}: accepted units are ns, us, ms, s", a));
    } else if (key == "--benchmark_color") {
      if (v != "auto" && !is_bool_word(v)) throw UsageError(fmt::format("{}: expected auto, true or false", a));
    } else if (key == "--benchmark_repetitions") {
      need_value();
      long long n = 0;
      std::size_t used = 0;
      try {
        n = std::stoll(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v.size() || n < 1 || n > kMaxRepetitions) {
        throw UsageError(fmt::format("{}: expected a whole number from 1 to {}", a, kMaxRepetitions));
      }
      flags.repetitions = static_cast<int>(n);
    } else if (key == "--benchmark_report_aggregates_only" || key == "--benchmark_display_aggregates_only" ||
               key == "--benchmark_counters_tabular") {
      if (has_value && !is_bool_word(v)) throw UsageError(fmt::format("{}: expected true or false", a));
    } else if (key == "--benchmark_out") {
      need_value();
      validate_output_file(v, "--benchmark_out");
      flags.out = v;
    } else if (key == "--benchmark_context") {
      need_value();
      std::size_t start = 0;
      while (true) {  // KEY=VALUE[,KEY=VALUE...], as Google Benchmark parses it
        const std::size_t comma = v.find(',', start);
        const std::string item = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item.find('=') == std::string::npos || item.front() == '=') {
          throw UsageError(fmt::format("{}: expected KEY=VALUE[,KEY=VALUE...]", a));
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (key == "--benchmark_list_tests") {
      throw UsageError(fmt::format("{}: use `gpubench list` (same options) to list the cases", a));
    } else if (key == "--benchmark_min_warmup_time") {
      throw UsageError(fmt::format("{}: gpubench warms every case up itself; use --warmup SECONDS", a));
    } else if (key == "--benchmark_enable_random_interleaving") {
      throw UsageError(fmt::format("{}: not supported (gpubench runs a case's repetitions together and releases its "
                                   "memory before the next case)",
                                   a));
    } else if (key == "--benchmark_perf_counters") {
      throw UsageError(fmt::format("{}: not supported; hardware counters come from --profile metrics", a));
    } else {
      throw UsageError(fmt::format("unknown Google Benchmark flag '{}' (see --benchmark_* in `gpubench run --help`)", a));
    }
    flags.passthrough.push_back(a);
  }
  // Let Google Benchmark validate the rest now, before anything runs or is written.
  // Google Benchmark keeps a pointer to argv[0] (its "executable" name): keep the strings alive.
  // Google Benchmark's flags are process globals that keep the last value parsed: restate the
  // defaults of those a run may set first, so one parse never inherits another's repetitions.
  static std::vector<std::string> storage;
  storage = {"gpubench", "--benchmark_repetitions=1", "--benchmark_report_aggregates_only=false",
             "--benchmark_display_aggregates_only=false"};
  storage.insert(storage.end(), flags.passthrough.begin(), flags.passthrough.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  if (argc > 1) {
    throw UsageError(fmt::format("unknown Google Benchmark flag '{}' (see --benchmark_* in `gpubench run --help`)", argv[1]));
  }
  return flags;
}

RunSummary run_plan(const std::vector<PlannedCase>& plan, const HarnessOptions& opt, ResultsFile& results) {
  RunSummary summary;
  std::vector<std::unique_ptr<CaseSlot>> slots;
  std::map<std::string, CaseSlot*> by_name;
  const bool leader = opt.team == nullptr || opt.team->rank() == 0;
  const std::unique_ptr<RunObserver> observer = make_observer(plan, opt, leader);
  RunObserver& console = *observer;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto slot = std::make_unique<CaseSlot>();
    slot->planned = &plan[i];
    slot->index = i;
    CaseSlot* raw = slot.get();
    const std::string name = plan[i].name();
    benchmark::RegisterBenchmark(name.c_str(), [raw, &opt, &console](benchmark::State& st) { run_case(st, *raw, opt, console); })
        ->UseManualTime()
        ->Iterations(1)  // the harness plans the runs itself: see run_case
        ->Unit(benchmark::kMicrosecond);
    by_name[name] = raw;
    slots.push_back(std::move(slot));
  }
  // Google Benchmark's own display only when asked for (--benchmark_format, --console gb):
  // by default the console's tables show the cases. --quiet silences its console table (and
  // its machine banner on stderr), not a json or csv stream asked for on stdout.
  const std::string& format = opt.benchmark.format;
  const bool gb_display = leader && format != "table" && !(opt.quiet && format == "console");
  std::unique_ptr<benchmark::BenchmarkReporter> display =
      gb_display ? make_display(format) : std::make_unique<SilentReporter>();
  ResultsReporter reporter(*display, results, by_name, opt, console, summary);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  console.done();
  return summary;
}

nlohmann::ordered_json rank_identity(const std::string& host, const std::vector<DeviceInfo>& devices) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const DeviceInfo& d : devices) {
    nlohmann::ordered_json j{{"id", d.id()}, {"name", d.name}};
    if (d.is_cuda()) {
      if (!d.uuid.empty()) j["uuid"] = d.uuid;
      if (!d.pci_bus_id.empty()) j["pci_bus_id"] = d.pci_bus_id;
      if (const auto h = nvml::find_by_pci(d.pci_bus_id)) {
        if (const auto serial = nvml::serial(*h)) j["serial"] = *serial;
        if (!j.contains("uuid")) {
          if (const auto uuid = nvml::uuid(*h)) j["uuid"] = *uuid;
        }
      }
    }
    list.push_back(std::move(j));
  }
  return {{"host", host}, {"devices", std::move(list)}};
}

}  // namespace gpubench
