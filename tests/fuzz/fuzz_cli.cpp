// libFuzzer target: command-line parsing of `gpubench run`, `list`, `report`, `compare`, `history`.
//
// Input: an argument vector, arguments separated by NUL bytes; the first is the command
// (run, list, report, compare, history, scaling, serving, soak, tune-train, tune-gemm, tune-dataload, tune-storage or numbers; anything else is ignored), the rest its arguments, as main() passes
// them. The target takes the commands' real path up to the point where they would touch the
// machine: parse_run_options / parse_list_options / parse_report_options (Boost.Program_options,
// the numeric checks, parse_benchmark_flags with benchmark::Initialize), then for run and list
// select_devices, to_plan_request, make_plan and select_suites against the real suites, with a
// fake inventory (a CPU, an sm_90 and an sm_70 GPU; and none) instead of discover_devices.
// Nothing is measured, read or written. UsageError is the expected rejection; any other
// exception, a crash, a hang, a sanitizer report, or accepted options breaking the documented
// limits (docs/promises.md: the numeric ranges, Google Benchmark's pass-through flags checked
// and the refused ones kept out, output paths that pass the validator) is a finding. Output
// paths are only checked (stat, access): the target never creates or writes a file.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "apps/gpubench/options.hpp"
#include "apps/gpubench/parse_soak.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"
#include "bench/core/paths.hpp"
#include "bench/suites/all_suites.hpp"
#include "tests/unit/fake_suite.hpp"

namespace {

using namespace gpubench;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_cli: broken promise: %s\n", what);
  std::abort();
}

const DeviceInventory& inventory_with_gpus() {
  static const DeviceInventory inv = [] {
    DeviceInventory i;
    i.cpu = testing::fake_cpu();
    i.cuda.push_back(testing::fake_gpu(0));
    DeviceInfo old = testing::fake_gpu(1);
    old.name = "Tesla V100-SXM2-16GB";
    old.cc_major = 7;
    i.cuda.push_back(old);
    i.runtime_version = 13000;
    i.driver_version = 13000;
    return i;
  }();
  return inv;
}

const DeviceInventory& inventory_without_gpus() {
  static const DeviceInventory inv = [] {
    DeviceInventory i;
    i.cpu = testing::fake_cpu();
    i.cuda_unavailable_reason = "fuzz: no driver";
    return i;
  }();
  return inv;
}

// Known, left alone: --benchmark_filter is a std::regex (as in Google Benchmark), whose
// backtracking takes exponential time on a quantified group ('(.*)*x' does not finish on a
// 60-character case name, in gpubench as in Google Benchmark). Such filters, and filters with
// more than three quantifiers, are planned without the filter, so that the fuzzer does not keep
// rediscovering it.
std::string usable_filter(const std::string& filter) {
  for (const char* group : {")*", ")+", ")?", "){"}) {
    if (filter.find(group) != std::string::npos) return {};
  }
  const auto quantifiers =
      std::count_if(filter.begin(), filter.end(), [](char c) { return c == '*' || c == '+' || c == '?' || c == '{'; });
  return quantifiers > 3 ? std::string() : filter;
}

// What cmd_run and cmd_list do between parsing and touching the machine.
void plan(const app::SelectionOptions& sel, const std::string& filter) {
  (void)select_devices(sel.device, inventory_without_gpus());
  const DeviceSelection selection = select_devices(sel.device, inventory_with_gpus());
  const PlanRequest request = app::to_plan_request(sel, usable_filter(filter));
  for (const PlannedCase& c : make_plan(suites::all(), request, selection.devices)) (void)c.name();
  (void)select_suites(suites::all(), request.suites);
}

void fuzz_run(const std::vector<std::string>& args) {
  const app::RunOptions o = app::parse_run_options(args);
  if (o.help) return;
  const MeasureOptions& m = o.measure;
  require(std::isfinite(m.min_time_s) && m.min_time_s > 0, "--min-time is a positive finite number");
  require(std::isfinite(m.warmup_s) && m.warmup_s > 0, "--warmup is a positive finite number");
  require(std::isfinite(m.batch_s) && m.batch_s > 0, "--batch-time is a positive finite number");
  require(std::isfinite(m.max_noise) && m.max_noise > 0, "--max-noise is a positive finite number");
  require(m.min_samples >= 2, "--min-samples is at least 2");
  // The documented ranges (docs/promises.md) and the pass-through flags (issue 19).
  require(m.min_time_s <= 3600 && m.warmup_s <= 3600 && m.batch_s <= 60, "times are within their ranges");
  require(m.min_samples <= 1000000 && static_cast<double>(m.min_samples) * m.batch_s <= 86400,
          "--min-samples is within its range");
  require(std::isfinite(o.sample_interval_ms) && o.sample_interval_ms > 0 && o.sample_interval_ms <= 60000,
          "--sample-interval is within its range");
  require(std::isfinite(o.rank_timeout_s) && o.rank_timeout_s > 0 && o.rank_timeout_s <= 86400,
          "--rank-timeout is within its range");
  require(o.case_timeout_s >= 0 && o.case_timeout_s <= 7 * 86400, "--case-timeout is within its range");
  require(o.benchmark.repetitions >= 1 && o.benchmark.repetitions <= kMaxRepetitions,
          "--benchmark_repetitions is within its range");
  for (const std::string& f : o.benchmark.passthrough) {
    require(f.rfind("--benchmark_", 0) == 0, "only --benchmark_ flags pass through");
    require(f.rfind("--benchmark_list_tests", 0) != 0 && f.rfind("--benchmark_min_warmup_time", 0) != 0 &&
                f.rfind("--benchmark_enable_random_interleaving", 0) != 0 && f.rfind("--benchmark_perf_counters", 0) != 0,
            "refused Google Benchmark flags do not pass through");
  }
  for (const std::string& p : {o.out, o.benchmark.out}) {
    if (p.empty()) continue;
    // An accepted output path passes the validator again (it creates nothing).
    validate_output_file(p, "--out");
  }
  plan(o.selection, o.benchmark.filter.value_or(""));
}

void fuzz_list(const std::vector<std::string>& args) {
  const app::ListOptions o = app::parse_list_options(args);
  if (o.help) return;
  if (o.axes) {
    (void)select_suites(suites::all(), app::to_plan_request(o.selection, o.filter).suites);
    return;
  }
  plan(o.selection, o.filter);
}

void fuzz_report(const std::vector<std::string>& args) {
  const app::ReportOptions o = app::parse_report_options(args);
  if (o.help) return;
  require(!o.files.empty(), "report has a file to read");
  require(!o.outputs.empty(), "report has an output");
  for (const auto& t : o.outputs) {
    require(t.format == "md" || t.format == "html" || t.format == "csv" || t.format == "json",
            "report's formats are md, html, csv, json");
  }
}

void fuzz_compare(const std::vector<std::string>& args) {
  const app::CompareOptions o = app::parse_compare_options(args);
  if (o.help) return;
  require(!o.base.empty() && !o.next.empty(), "compare has two files");
  require(o.threshold_pct >= 0 && o.alpha > 0 && o.alpha < 1, "compare's threshold and alpha are in range");
}

void fuzz_history(const std::vector<std::string>& args) {
  const app::HistoryOptions o = app::parse_history_options(args);
  if (o.help) return;
  require(!o.inputs.empty(), "history has an input");
  require(o.permutations >= 100 && o.permutations <= 100000, "history's permutations are in range");
}

// Issue 32 item 3: the newer commands' parsers too.
void fuzz_scaling(const std::vector<std::string>& args) {
  const app::ScalingCli o = app::parse_scaling_options(args);
  if (o.help) return;
  require(!o.files.empty(), "scaling has an input");
  require(!o.model.gpus.empty(), "scaling projects to at least one GPU count");
  for (int g : o.model.gpus) require(g >= 1 && g <= (1 << 24), "scaling's GPU counts are in range");
}

// docs/serving.md's options: rates > 0, SLO targets in range, trace sizes in range.
void fuzz_serving(const std::vector<std::string>& args) {
  const app::ServingCli o = app::parse_serving_options(args);
  if (o.help) return;
  require(!o.files.empty(), "serving has an input");
  require(!o.model.rates.empty(), "serving projects at least one rate");
  for (double r : o.model.rates) require(r > 0 && r <= 1e6, "serving's rates are in range");
  for (const auto* t : {&o.model.slo.ttft_s, &o.model.slo.tpot_s, &o.model.slo.itl_s, &o.model.slo.e2el_s}) {
    require(!t->has_value() || (**t > 0 && **t <= 86400), "serving's SLO targets are in range");
  }
  require(!o.model.max_batch || (*o.model.max_batch >= 1 && *o.model.max_batch <= 4096), "serving's max batch is in range");
  require(!o.model.requests || (*o.model.requests >= 1 && *o.model.requests <= (1 << 20)), "serving's requests are in range");
}

// The promises of docs/soak.md's options: every duration in range and consistent.
void fuzz_soak(const std::vector<std::string>& args) {
  const app::SoakOptions o = app::parse_soak_options(args);
  if (o.help) return;
  const auto& s = o.settings;
  require(s.duration_s > 0 && s.duration_s <= 30 * 86400.0, "soak's duration is in range");
  require(s.interval_s >= 0.05 && s.interval_s <= 3600 && s.interval_s <= s.duration_s, "soak's interval is in range");
  require(s.verify_every_s >= 1, "soak verifies at most every second");
  require(s.thresholds.warmup_s >= 0 && s.thresholds.warmup_s < s.duration_s, "soak's warm-up is shorter than it");
  require(s.thresholds.max_drop_pct >= 0 && s.thresholds.max_drop_pct <= 100, "soak's --max-drop is a percentage");
  require(!o.loads.empty() && o.loads.size() <= 3, "soak has one to three loads");
  require(o.rank_timeout_s > 0 && o.rank_timeout_s <= 86400, "soak's rank timeout is in range");
  require(!o.out_given || !o.out.empty(), "soak's --out is not empty");
}

void fuzz_tune_train(const std::vector<std::string>& args) {
  const app::TuneTrainOptions o = app::parse_tune_train_options(args);
  if (o.help) return;
  require(!o.model.empty(), "tune train has a model");
  require(o.budget_s > 0 && o.budget_s <= 86400, "tune train's budget is in range");
  require(!o.dp_modes.empty(), "tune train has a data-parallel mode");
  require(!o.global_batch || *o.global_batch >= 1, "tune train's global batch is at least 1");
}

void fuzz_tune_storage(const std::vector<std::string>& args) {
  const app::TuneStorageCli cli = app::parse_tune_storage_options(args);
  if (cli.help) return;
  const auto& o = cli.options;
  require(o.budget_s > 0 && o.budget_s <= 86400, "tune storage's budget is in range");
  require(o.max_accelerators >= 1 && o.max_accelerators <= 256, "tune storage's --max-accelerators is in range");
  require(!o.au_pct || (*o.au_pct > 0 && *o.au_pct < 100), "tune storage's --au is a percentage below 100");
  require(!o.step_time_s || (*o.step_time_s >= 0.001 && *o.step_time_s <= 60), "tune storage's step time is in range");
  require(o.workload != "custom" || (o.sample_bytes && o.batch), "a custom workload has its sample size and batch");
}

void fuzz_tune_gemm(const std::vector<std::string>& args) {
  const app::TuneOptions o = app::parse_tune_options(args);
  if (o.help) return;
  require(o.target == "gemm", "tune gemm's target is gemm");
  require(o.lt_candidates >= 1 && o.lt_candidates <= 1024, "tune gemm's --lt-candidates is in range");
}

void fuzz_tune_dataload(const std::vector<std::string>& args) {
  const app::TuneDataloadCli cli = app::parse_tune_dataload_options(args);
  if (cli.help) return;
  const auto& o = cli.options;
  require(o.budget_s > 0 && o.budget_s <= 86400, "tune dataload's budget is in range");
  require(o.max_stall > 0 && o.max_stall < 1, "tune dataload's --max-stall is a share below 1");
  require(o.batch >= 1 && o.batch <= 4096, "tune dataload's batch is in range");
  require(o.max_workers >= 0 && o.default_workers >= 1, "tune dataload's workers are in range");
  require(!o.step_time_s || (*o.step_time_s >= 1e-6 && *o.step_time_s <= 60), "tune dataload's step time is in range");
  const int consumers = (o.step_time_s ? 1 : 0) + (o.consumer_rate ? 1 : 0) + (o.consumer_from.empty() ? 0 : 1);
  require(consumers <= 1, "tune dataload takes one consumer");
}

// The command line's one number and list syntax (bench/core/numbers.hpp, issue 26): what it
// accepts is finite, made of the syntax's characters only, and a list is its items joined back.
void fuzz_numbers(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (const auto v = read_real(a)) {
      require(std::isfinite(*v), "read_real accepted a non-finite number");
      require(a.find_first_not_of("0123456789+-.eE") == std::string::npos, "read_real accepted a foreign character");
    }
    if (read_integer(a)) {
      require(a.find_first_not_of("0123456789+-") == std::string::npos, "read_integer accepted a foreign character");
    }
    try {
      const std::vector<std::string> items = parse_list(a, "--x");
      std::string joined;
      for (std::size_t i = 0; i < items.size(); ++i) {
        require(!items[i].empty(), "parse_list kept an empty item");
        require(std::count(items.begin(), items.end(), items[i]) == 1, "parse_list kept an item twice");
        joined += (i ? "," : "") + items[i];
      }
      require(joined == a, "parse_list lost or changed text");
    } catch (const UsageError&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(data[i]));
    }
  }
  const std::string command = args.front();
  args.erase(args.begin());
  try {
    if (command == "run") {
      fuzz_run(args);
    } else if (command == "list") {
      fuzz_list(args);
    } else if (command == "report") {
      fuzz_report(args);
    } else if (command == "compare") {
      fuzz_compare(args);
    } else if (command == "history") {
      fuzz_history(args);
    } else if (command == "numbers") {
      fuzz_numbers(args);
    } else if (command == "scaling") {
      fuzz_scaling(args);
    } else if (command == "serving") {
      fuzz_serving(args);
    } else if (command == "soak") {
      fuzz_soak(args);
    } else if (command == "tune-train") {
      fuzz_tune_train(args);
    } else if (command == "tune-dataload") {
      fuzz_tune_dataload(args);
    } else if (command == "tune-storage") {
      fuzz_tune_storage(args);
    } else if (command == "tune-gemm") {
      fuzz_tune_gemm(args);
    }
  } catch (const UsageError&) {
  }
  return 0;
}
