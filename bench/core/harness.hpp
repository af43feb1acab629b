#pragma once
// The harness registers each planned case with Google Benchmark, drives it through
// setup -> verify -> warm-up -> measure, and writes every finished case to the results file.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_observer.hpp"
#include "instrument.hpp"
#include "measure.hpp"
#include "plan.hpp"
#include "results.hpp"
#include "team.hpp"

namespace gpubench {

// Google Benchmark flags gpubench interprets itself; the rest pass through to the library.
struct BenchmarkFlags {
  std::vector<std::string> passthrough;     // given to benchmark::Initialize
  std::optional<std::string> filter;        // --benchmark_filter: applied while planning
  std::optional<double> min_time_s;         // --benchmark_min_time: same as --min-time
  // What stdout shows: "table" (gpubench's tables, see console.hpp) unless --benchmark_format
  // (or --console gb, which means console) asks for Google Benchmark's console|json|csv.
  std::string format = "table";
  int repetitions = 1;                      // --benchmark_repetitions (1 to kMaxRepetitions)
  std::string out;                          // --benchmark_out (validated like --out)
};
inline constexpr int kMaxRepetitions = 1000;
// Splits and validates --benchmark_* arguments; UsageError for unknown or malformed ones.
BenchmarkFlags parse_benchmark_flags(const std::vector<std::string>& args);

// Looks up the datasheet figure for a device and peak key (from the spec sheet).
using PeakLookup = std::function<std::optional<double>(const std::string& device_name, const std::string& peak_key)>;

struct HarnessOptions {
  MeasureOptions measure;
  BenchmarkFlags benchmark;
  bool quiet = false;
  bool show_context = true;  // Google Benchmark's machine banner (off in --isolate children)
  PeakLookup peak;
  // The SM clock (MHz) each datasheet figure assumes (spec sheet peak_clock_mhz), for
  // pct_of_peak_at_clock; where it is unknown, the device's maximum clock.
  PeakLookup peak_clock;
  std::vector<Instrument*> instruments;  // observe every case (not owned)
  // What the run shows while it goes (gpubench run: its console tables); empty: nothing.
  RunObserverFactory observer;
  // The ranks of a multi-process run (not owned); null in one process. With a team every rank
  // runs the same plan in step (see team.hpp); only rank 0 displays and its file is written.
  Team* team = nullptr;
  // With a team: who each rank is, indexed by rank: {"host", "devices": [{"id", "name", "uuid",
  // "pci_bus_id", "serial"}]} (rank_identity, gathered by the command), and which suites'
  // cases each rank measures on its own device. Their entries then also carry each rank's own
  // figures as gpubench.ranks. A collective's time belongs to the team (every rank waits for
  // the slowest), so the command leaves such suites out.
  std::vector<nlohmann::ordered_json> rank_identities;
  std::function<bool(const PlannedCase& planned)> per_rank_figures;
  // A time budget (`gpubench evaluate`): a case is not started when its estimate would end it
  // after `stop_at`; it is recorded as skipped ("budget spent: ..."), agreed over the team.
  std::optional<std::chrono::system_clock::time_point> stop_at;
  std::function<double(const PlannedCase& planned)> case_estimate_s;  // empty: 0 (start while time is left)
};

// This process's part of HarnessOptions::rank_identities: the host and the selected devices
// (the CUDA ones with their UUID, PCI bus id and, where NVML has one, board serial).
nlohmann::ordered_json rank_identity(const std::string& host, const std::vector<DeviceInfo>& devices);

// The observer of a run over `plan`: HarnessOptions::observer's, told to stay quiet with quiet
// or on ranks other than 0 and whether Google Benchmark's reporter prints the cases; one that
// shows nothing when there is no factory. Never null.
std::unique_ptr<RunObserver> make_observer(const std::vector<PlannedCase>& plan, const HarnessOptions& options,
                                           bool leader = true);

struct RunSummary {
  int ok = 0, skipped = 0, failed = 0;
};

// Appends entries to the results file and keeps each suite's summary (Suite::summarize) current.
class Recorder {
 public:
  explicit Recorder(ResultsFile& file) : file_(file) {}
  void add(const Suite& suite, nlohmann::ordered_json entry);
  const ResultsFile& file() const { return file_; }

 private:
  ResultsFile& file_;
  std::map<std::string, std::vector<nlohmann::ordered_json>> by_suite_;
};

// Runs the plan in this process; every case outcome (ok, skipped, failed) lands in `results`
// as it finishes.
RunSummary run_plan(const std::vector<PlannedCase>& plan, const HarnessOptions& options, ResultsFile& results);

// Runs each case of the plan in a child process (`gpubench run` with the same arguments plus
// --isolated-case N), so a crash, a sticky CUDA error or a hang costs only that case. The
// parent collects each child's entries into `results`; a child that crashes, or outlives
// `case_timeout_s` (0: no limit) and is killed, is recorded as a failed case.
struct IsolationOptions {
  std::string executable = "/proc/self/exe";
  std::vector<std::string> child_args;  // the run's arguments; the harness adds the case and output
  double case_timeout_s = 0;
  bool timeout_is_default = false;  // case_timeout_s is default_case_timeout_s, not --case-timeout
};
// Isolated cases' scratch folders: <temp>/gpubench-isolate-<pid> (stale ones of dead runs are
// removed at the next isolated run's start).
inline constexpr const char* kIsolateScratchPrefix = "gpubench-isolate-";
// --isolate's case timeout when --case-timeout is not given: 300 s for setup and verification
// plus 20 times the case's planned time (warm-up and min-time per repetition).
double default_case_timeout_s(const MeasureOptions& m, int repetitions);
RunSummary run_plan_isolated(const std::vector<PlannedCase>& plan, const HarnessOptions& options,
                             const IsolationOptions& isolation, ResultsFile& results);

// Multi-process agreement (pure, for the tests). A step's outcome on one rank is "" when it
// went well, else "skipped: why" or "failed: why"; the merged outcome is "" when every rank
// went well, else the first failure (or, without one, the first skip) prefixed with its rank.
std::string merge_rank_outcomes(const std::vector<std::string>& outcomes);
// Every rank's verification as one: passed when all passed, counts summed, the worst error,
// and the first failing rank's detail.
Verification merge_rank_verifications(const std::vector<Verification>& per_rank);
nlohmann::ordered_json verification_to_json(const Verification& v);  // the results-file fields, plus detail
Verification verification_from_json(const nlohmann::ordered_json& j);

// The last `count` entries of `results` as recorded, i.e. after the file judged their
// plausibility (gpubench.suspect, reports/plausibility.hpp): what the console shows.
std::vector<nlohmann::ordered_json> recorded_entries(const ResultsFile& results, std::size_t count);

// A results entry for a case that produced no Google Benchmark run (it crashed or hung).
nlohmann::ordered_json failure_entry(const PlannedCase& c, std::size_t index, const std::string& reason);

// Derived metrics for one run of a case: rates in decimal units and % of the datasheet peak.
nlohmann::ordered_json derive_metrics(double flops, double bytes, const std::string& peak_key, double seconds_per_run,
                              std::optional<double> peak);

// The SM clock a case ran at (an instrument's mean) and the clock the datasheet peak assumes
// (the spec sheet's peak_clock_mhz, else the device's maximum clock), for "% of the peak at the
// measured clock".
struct ClockScale {
  double measured_mhz = 0;
  double reference_mhz = 0;
};
// The above plus: rate_unit (TFLOP/s or TOP/s), intensity (flops per byte of minimal traffic),
// achieved_gbps (minimal traffic / time), footprint_bytes, the items rate, hardware FLOPs
// (hardware_tflops, hfu_pct), pct_of_peak_at_clock, and the case's own extra fields.
nlohmann::ordered_json derive_metrics(const Metrics& m, double seconds_per_run, std::optional<double> peak,
                                      std::optional<ClockScale> clock = std::nullopt);
// The mean SM clock an instrument measured during the case: the first `sm_clock_mhz.mean`
// among the instruments' fields (gpubench.profile.<instrument>, as telemetry writes it).
std::optional<double> measured_sm_clock(const nlohmann::ordered_json& profile);

}  // namespace gpubench
