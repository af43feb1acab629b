#pragma once
// Options shared by `run` and `list`: which suites, preset, axis values and devices.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "bench/core/harness.hpp"
#include "bench/core/measure.hpp"
#include "bench/core/plan.hpp"
#include "bench/tune/dataload_tune.hpp"
#include "bench/tune/storage_tune.hpp"
#include "profilers/profile.hpp"
#include "reports/outputs.hpp"
#include "reports/scaling.hpp"
#include "reports/serving.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::app {

namespace po = boost::program_options;

struct SelectionOptions {
  std::vector<std::string> suites;  // comma lists allowed: --suite gemm,memory
  std::string preset = "quick";
  std::vector<std::string> axes;
  std::string device = "all";
  std::string assume;  // --assume MODEL: plan against this spec-sheet GPU model (dry runs only)
};

void add_selection_options(po::options_description& desc, SelectionOptions& opts);

// Parses `args` against `desc`; a parse error becomes a UsageError naming the option. Words
// that no option takes (beyond `positional`) are usage errors, never ignored.
po::variables_map parse_or_throw(const std::vector<std::string>& args, const po::options_description& desc,
                                 const po::positional_options_description* positional = nullptr);

// The same, with every positional argument (the reports' input files) appended to `positional`.
po::variables_map parse_with_inputs(const std::vector<std::string>& args, const po::options_description& desc,
                                    std::vector<std::string>& positional);

// The reports' `--out PATH` and its alias `-o/--output PATH`: one path, or a UsageError when
// the two name different files.
void merge_output_alias(std::string& out, const std::string& output);

PlanRequest to_plan_request(const SelectionOptions& opts, const std::string& filter);

// The devices to plan for: those discovered here, or with --assume the host CPU and the named
// GPU model (apps/gpubench/dry_run.hpp).
DeviceInventory inventory_for(const SelectionOptions& opts, const reports::SpecSheet& specs);

// Every numeric option has a finite, documented range: a value outside it (NaN and infinities
// included) is a UsageError naming the option and the range. Returns the value.
double in_range(double value, const char* option, double lo, double hi, bool lo_inclusive = false);
long long in_range(long long value, const char* option, long long lo, long long hi);

std::string join_args(const std::vector<std::string>& args);

// A command's --help: the options' description as text, and printing it (returns exit code 0).
std::string help_text(const po::options_description& desc);
// --help given: sets `help` and `text` (the usage, help_text) and returns true; the parsers then
// return at once, before checking anything else.
bool take_help(const po::variables_map& vm, const po::options_description& desc, bool& help, std::string& text);
int print_help(const std::string& text);

// Splits a comma list (parse_list, bench/core/numbers.hpp: no empty item, none twice).
std::vector<std::string> split_list(const std::string& text, const char* option);
// --slo "ttft=450ms,tpot=40ms": each key (ttft, tpot, itl, e2el) once, each value a number with
// a unit (us, ms, s), at most a day; UsageError naming what was wrong (serving, evaluate).
reports::serving::ki::Slo parse_slo(const std::string& text);

// Each command's options, parsed and checked before anything is run, read or written
// (the fuzzers in tests/fuzz drive these). `help` is set by --help, with the text to print.
struct RunOptions {
  bool help = false;
  std::string help_text;
  SelectionOptions selection;
  MeasureOptions measure;    // --benchmark_min_time applied
  BenchmarkFlags benchmark;
  std::string out, spec_sheet;
  bool quiet = false;
  profilers::ProfileSelection profile;  // --profile, validated (all false for none)
  bool profile_explicit = false;        // --profile, --trace-dir or --timer cupti given
  std::string trace_dir;                // --trace-dir (implies trace)
  bool cupti_timer = false;             // --timer cupti
  double sample_interval_ms = 50;       // --sample-interval
  bool exclusive = false;
  bool isolate = false;        // --isolate, or implied by --case-timeout
  double case_timeout_s = 0;   // 0: none
  double rank_timeout_s = 300; // under mpirun/srun: join, agreement and collective timeout
  long isolated_case = -1;     // set in the child processes of --isolate
  std::string isolated_out;
  // `gpubench evaluate`'s budget: no case starts that would end after this time (seconds since
  // the epoch; 0: none). Internal, like the isolation options.
  double budget_end = 0;
  int lt_candidates = 32;      // gemm: cuBLASLt algorithms cublaslt-tuned times
  std::string tuning_cache;    // gemm: --tuning-cache FILE (read by cmd_run, not by the parser)
  bool dry_run = false;        // --dry-run: print the plan and its estimated time, run nothing
  std::string report_formats;  // --report: `gpubench report` formats written beside the results
};
RunOptions parse_run_options(const std::vector<std::string>& args);  // cmd_run.cpp

struct ListOptions {
  bool help = false;
  std::string help_text;
  SelectionOptions selection;
  std::string filter;
  bool axes = false;
};
ListOptions parse_list_options(const std::vector<std::string>& args);  // cmd_list.cpp

struct ReportOptions {
  bool help = false;
  std::string help_text;
  std::vector<std::string> files;
  std::string out, spec_sheet, format = "md";
  std::vector<reports::OutputTarget> outputs;  // from --format and --out
  std::string baseline, prices_file, train_filter;
  std::vector<std::string> price_assignments;
  std::optional<double> train_tokens, train_samples;
  double outlier_mads = 3, outlier_pct = 3;  // fleet screening (reports/fleet.hpp)
};
ReportOptions parse_report_options(const std::vector<std::string>& args);  // cmd_report.cpp

struct CompareOptions {
  bool help = false;
  std::string help_text;
  std::string base, next, out, format = "md", junit;
  std::vector<reports::OutputTarget> outputs;
  double threshold_pct = 5, alpha = 0.05;
  double contended_pct = 10;       // --contended
  bool allow_different_devices = false;
  bool fail_on_ambiguous = false;  // --fail-on-ambiguous
};
CompareOptions parse_compare_options(const std::vector<std::string>& args);  // cmd_compare.cpp

// `gpubench tune train` (parse_tune.cpp).
struct TuneTrainOptions {
  bool help = false;
  std::string help_text;
  std::string device, model, out, budget_text = "60";
  std::vector<std::string> axes;
  std::vector<std::string> dp_modes = {"ddp"};
  bool dp_given = false;
  std::optional<std::int64_t> global_batch;
  double budget_s = 60;
  double rank_timeout_s = 300;
  std::uint64_t seed = 1;
  bool quiet = false;
};
TuneTrainOptions parse_tune_train_options(const std::vector<std::string>& args);

// `gpubench tune gemm` (parse_tune.cpp).
struct TuneOptions {
  bool help = false;
  std::string help_text;
  std::string target;
  SelectionOptions selection;
  std::string cache = "gemm-tuning.json";
  int lt_candidates = 32;
  bool quiet = false;
  bool dry_run = false;
};
TuneOptions parse_tune_options(const std::vector<std::string>& args);

// `gpubench tune dataload` (parse_tune.cpp): the options, their values checked (not yet the
// files they name).
struct TuneDataloadCli {
  bool help = false;
  std::string help_text;
  tune::DataloadTuneOptions options;
};
TuneDataloadCli parse_tune_dataload_options(const std::vector<std::string>& args);

// `gpubench tune storage` (parse_tune.cpp): the options, their values checked.
struct TuneStorageCli {
  bool help = false;
  std::string help_text;
  tune::StorageTuneOptions options;
};
TuneStorageCli parse_tune_storage_options(const std::vector<std::string>& args);

// `gpubench scaling` (cmd_scaling.cpp).
struct ScalingCli {
  bool help = false;
  std::string help_text;
  std::vector<std::string> files;
  std::string out, format = "md", prices_file;
  std::vector<std::string> price_assignments;
  std::vector<reports::OutputTarget> outputs;
  reports::scaling::ScalingOptions model;
};
ScalingCli parse_scaling_options(const std::vector<std::string>& args);

// `gpubench serving` (cmd_serving.cpp).
struct ServingCli {
  bool help = false;
  std::string help_text;
  std::vector<std::string> files;
  std::string out, format = "md";
  std::vector<reports::OutputTarget> outputs;
  reports::serving::ServingOptions model;
};
ServingCli parse_serving_options(const std::vector<std::string>& args);

struct HistoryOptions {
  bool help = false;
  std::string help_text;
  std::vector<std::string> inputs;
  std::string out, format = "md";
  std::vector<reports::OutputTarget> outputs;
  double alpha = 0.05, min_shift_pct = 5;
  int permutations = 1000;
};
HistoryOptions parse_history_options(const std::vector<std::string>& args);  // cmd_history.cpp

}  // namespace gpubench::app
