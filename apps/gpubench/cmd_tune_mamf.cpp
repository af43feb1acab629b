// gpubench tune gemm --mamf: the maximum achievable matmul FLOP/s over a sweep of shapes
// (bench/tune/mamf.hpp), measured through the gemm suite's own verified cases, with the shape,
// the clock, and the rate as % of the datasheet, of the published MAMF and (CPU) of the
// machine's measured FMA ceiling (docs/tune.md).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/core/context.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/harness.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/core/paths.hpp"
#include "bench/core/plan.hpp"
#include "bench/core/results.hpp"
#include "bench/suites/all_suites.hpp"
#include "bench/tune/mamf.hpp"
#include "kernels/memory/host_pool.hpp"
#include "reports/cases.hpp"
#include "reports/plausibility.hpp"
#include "reports/reference.hpp"
#include "reports/results_reader.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::app {
namespace {

using ordered = nlohmann::ordered_json;

constexpr const char* kMamfUsage = R"(Usage: gpubench tune gemm --mamf [options]

The maximum achievable matmul FLOP/s (MAMF, as ml-engineering's mamf-finder measures it): the
gemm suite's verified case (cuBLASLt on a GPU, OpenBLAS on the CPU) over the shapes of the m, n
and k ranges, pruned before measuring by tile and wave quantisation (m, n multiples of the tile,
k of its depth, the tiles filling the SMs or CPU threads in whole waves to 90% or more), every
kept shape measured briefly (largest first, 60% of the budget), the best 4 again longer. The
results file holds every measurement and gpubench.mamf: dtype, TFLOP/s, the shape, the clock
during the best measurement, % of the datasheet peak, of the published MAMF (data/reference.json)
and, on the CPU, of the FMA ceiling measured in the same run. Ranges: START:STOP:STEP, a comma
list or one number. Exit status: 0 a MAMF was found, 1 none could be measured, 2 bad usage.

Options)";

struct MamfOptions {
  SelectionOptions selection;
  std::string m, n, k, out;
  double budget_s = 180;
  bool quiet = false;
};

std::string axis_value(const std::vector<std::string>& axes, const std::string& name) {
  std::string v;
  for (const std::string& a : axes) {
    for (const std::string& item : split_list(a, "--axis")) {
      if (item.rfind(name + "=", 0) == 0) v = item.substr(name.size() + 1);
    }
  }
  return v;
}

}  // namespace

int cmd_tune_mamf(const std::vector<std::string>& args) {
  const auto started = std::chrono::steady_clock::now();
  MamfOptions o;
  o.selection.device = "";
  po::options_description desc(kMamfUsage);
  add_selection_options(desc, o.selection);
  desc.add_options()
      ("mamf", "search the MAMF (this command)")
      ("mamf-m", po::value(&o.m), "m range (default GPU 2048:16384:2048, CPU 256:2048:256)")
      ("mamf-n", po::value(&o.n), "n range (default as m)")
      ("mamf-k", po::value(&o.k), "k range (default as m)")
      ("budget", po::value(&o.budget_s)->default_value(o.budget_s), "seconds for the whole search (5 to 86400)")
      ("out,o", po::value(&o.out), "results file (default results/<host>-<UTC time>.json)")
      ("quiet,q", po::bool_switch(&o.quiet), "no progress on stderr")
      ("help,h", "show this help");
  po::positional_options_description positional;
  positional.add("target", 1);
  po::options_description hidden;
  std::string target;
  hidden.add_options()("target", po::value(&target));
  po::options_description all;
  all.add(desc).add(hidden);
  po::variables_map vm = parse_or_throw(args, all, &positional);
  if (vm.count("help")) return print_help(help_text(desc));
  in_range(o.budget_s, "--budget", 5, 86400, true);
  if (vm.count("out") && o.out.empty()) throw UsageError("--out: empty path");
  if (!o.out.empty()) validate_output_file(o.out, "--out");

  const DeviceInventory inventory = discover_devices();
  const std::string spec = o.selection.device.empty() ? (inventory.cuda.empty() ? "cpu" : "cuda:0") : o.selection.device;
  const DeviceSelection selection = select_devices(spec, inventory);
  if (selection.devices.size() != 1) {
    throw UsageError(fmt::format("--device {}: the MAMF is searched on one device (cpu or cuda:N)", spec));
  }
  const DeviceInfo device = selection.devices.front();
  const bool gpu = device.is_cuda();
  std::string dtype = axis_value(o.selection.axes, "dtype");
  if (dtype.empty()) dtype = gpu ? "bf16" : "fp32";
  const std::string defaults = gpu ? "2048:16384:2048" : "256:2048:256";
  const std::vector<long long> ms = tune::parse_mamf_range(o.m.empty() ? defaults : o.m, "--mamf-m");
  const std::vector<long long> ns = tune::parse_mamf_range(o.n.empty() ? (o.m.empty() ? defaults : o.m) : o.n, "--mamf-n");
  const std::vector<long long> ks = tune::parse_mamf_range(o.k.empty() ? (o.m.empty() ? defaults : o.m) : o.k, "--mamf-k");
  tune::Quantisation q;
  if (gpu) {
    q.units = std::max(1, device.sm_count);
  } else {
    q.units = std::max(1, kernels::usable_cpus());  // OpenBLAS splits the output over its threads
    q.tile_m = q.tile_n = q.tile_k = 64;
  }
  std::size_t pruned = 0;
  const std::vector<tune::MamfShape> candidates = tune::mamf_candidates(ms, ns, ks, q, &pruned);
  if (candidates.empty()) {
    throw UsageError(fmt::format("--mamf-m/-n/-k: all {} shapes are pruned by tile ({}x{}x{}) and wave ({} units) "
                                 "quantisation; give multiples of the tile",
                                 pruned, q.tile_m, q.tile_n, q.tile_k, q.units));
  }
  // The gemm suite's case for a shape, as `run` plans it (the dtype checked by the suite).
  auto plan_shape = [&](const tune::MamfShape& s) {
    PlanRequest r;
    r.suites = {"gemm"};
    r.preset = "quick";
    r.axis_overrides = {fmt::format("provider={}", gpu ? "cublaslt" : "openblas"), "dtype=" + dtype,
                        fmt::format("m={}", s.m), fmt::format("n={}", s.n), fmt::format("k={}", s.k), "shape=mnk",
                        "batch=1", "pad=0", "epilogue=none"};
    if (dtype.rfind("fp8", 0) == 0) r.axis_overrides.push_back("layout=tn");
    else r.axis_overrides.push_back("layout=nn");
    const std::vector<PlannedCase> plan = make_plan(suites::all(), r, {device});
    if (plan.size() != 1) throw UsageError(fmt::format("dtype={}: planned {} gemm cases for one shape", dtype, plan.size()));
    return plan.front();
  };
  if (const PlannedCase probe = plan_shape(candidates.front()); probe.skip_reason) {
    throw UsageError(fmt::format("-a dtype={} on {}: {}", dtype, device.id(), *probe.skip_reason));
  }

  const std::filesystem::path out_path = o.out.empty() ? default_results_path(host_name()) : std::filesystem::path(o.out);
  check_output_path(out_path, "--out");
  OutputLock lock(out_path, "--out");
  const reports::SpecSheet specs = reports::SpecSheet::builtin();
  HarnessOptions h;
  h.benchmark = parse_benchmark_flags({});
  h.quiet = true;
  h.peak = [&specs](const std::string& d, const std::string& key) { return specs.peak(d, key); };
  h.peak_clock = [&specs](const std::string& d, const std::string& key) { return specs.peak_clock(d, key); };
  RunDescription description{"gpubench tune gemm " + join_args(args), "mamf", {"gemm"}, h.measure};
  ResultsFile results(out_path, capture_context(inventory, {device}, select_suites(suites::all(), {"gemm"}), description));
  results.set_judge([lookup = plausibility::memoized(h.peak), clock = plausibility::memoized(h.peak_clock)](ordered& doc) {
    plausibility::mark_document(doc, lookup, clock);
  });
  install_interrupt_handlers(out_path.string());

  // Seconds of samples per measurement: the sweep's share of the budget over the shapes, 20 ms
  // to 0.5 s; a final is three times that.
  const double short_s = std::clamp(0.6 * o.budget_s / (3.0 * static_cast<double>(candidates.size())), 0.02, 0.5);
  std::map<std::string, int> repetitions;  // per case name
  // One measured case of the gemm suite; its entry is kept (the results file holds them all).
  auto run_entry = [&](const PlannedCase& pc, double min_time, std::int64_t samples, const std::string& stage) {
    HarnessOptions hh = h;
    hh.measure.min_time_s = min_time;
    hh.measure.min_samples = samples;
    hh.measure.warmup_s = std::min(hh.measure.warmup_s, min_time);
    ResultsFile scratch({}, results.document().at("context"));
    (void)run_plan({pc}, hh, scratch);
    ordered e = scratch.document()["benchmarks"].empty() ? ordered() : scratch.document()["benchmarks"].back();
    if (!e.is_null()) {
      e["gpubench"]["tune"] = {{"stage", stage}};
      // The same shape measured again (its final): the next repetition of the case, as the
      // readers count repetitions, not the same one twice.
      e["repetition_index"] = repetitions[e.value("name", "")]++;
      results.add(e);
    }
    return e;
  };
  std::map<std::string, ordered> final_entries;
  const tune::MamfOracle measure = [&](const tune::MamfShape& s, int stage, std::string& why) -> std::optional<double> {
    const ordered e = run_entry(plan_shape(s), stage == 0 ? short_s : 3 * short_s, stage == 0 ? 3 : 5,
                                stage == 0 ? "mamf-short" : "mamf-final");
    const ordered& g = e.is_null() ? ordered::object() : e["gpubench"];
    if (e.is_null() || g.value("status", "failed") != "ok" || !g["metrics"].contains("tflops")) {
      why = e.is_null() ? "no entry" : g.value("status", "failed") + ": " + g.value("reason", "");
      return std::nullopt;
    }
    if (stage == 1) final_entries[s.label()] = e;
    if (!o.quiet) fmt::print(stderr, "tune mamf: {} {}: {:.4g} TFLOP/s\n", stage == 0 ? "short" : "final", s.label(),
                             g["metrics"]["tflops"].get<double>());
    return g["metrics"]["tflops"].get<double>();
  };
  if (!o.quiet) {
    fmt::print(stderr, "tune mamf: {} {} on {}: {} shapes ({} pruned by tile and wave quantisation); budget {:g} s\n",
               gpu ? "cuBLASLt" : "OpenBLAS", dtype, device.id(), candidates.size(), pruned, o.budget_s);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const tune::MamfResult r = tune::mamf_search(
      candidates, measure, [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); },
      tune::MamfSearchOptions{o.budget_s * (gpu ? 1.0 : 0.9), 4});  // the CPU keeps a tenth for its FMA ceiling

  ordered mamf{{"dtype", dtype}, {"provider", gpu ? "cublaslt" : "openblas"}, {"device", device.id()},
               {"device_name", device.name}, {"budget_s", o.budget_s}};
  int status = 0;
  if (!r.best) {
    mamf["reason"] = "no shape could be measured";
    status = 1;
  } else {
    const ordered& best = final_entries[r.best->label()];
    const ordered& metrics = best["gpubench"]["metrics"];
    mamf["tflops"] = r.tflops;
    mamf["shape"] = {{"m", r.best->m}, {"n", r.best->n}, {"k", r.best->k}};
    if (metrics.contains("sm_clock_mhz")) {
      mamf["sm_clock_mhz"] = metrics["sm_clock_mhz"];
    } else if (auto c = reports::number_at(best["gpubench"].value("profile", ordered::object()), {"host", "cpu_clock_mhz"})) {
      mamf["cpu_clock_mhz"] = *c;
    } else {
      mamf["clock"] = "unavailable: no clock was recorded during the best measurement (no NVML reading; no CPU cycle counter)";
    }
    if (metrics.contains("pct_of_peak")) {
      mamf["pct_of_datasheet"] = metrics["pct_of_peak"];
      mamf["datasheet_tflops"] = metrics["peak"];  // the figure the harness held the case against
      mamf["peak_key"] = metrics.value("peak_key", "");
    } else {
      mamf["pct_of_datasheet_reason"] = fmt::format("{} has no datasheet entry for {} in data/gpus.json", device.name, dtype);
    }
    const reports::GpuSpec* sheet = specs.find(device.name);
    const reports::ResultEntry entry = reports::read_result_entry(best);
    if (sheet == nullptr) {
      mamf["pct_of_published_reason"] = fmt::format("{} is not a GPU of data/gpus.json: no published figure", device.name);
    } else if (auto m = reports::ReferenceTable::builtin().match(sheet->key, entry, "tflops", r.tflops)) {
      mamf["pct_of_published"] = m->pct;
      mamf["published"] = {{"id", m->row->id}, {"value", m->row->value}, {"source", m->row->source_url}};
    } else {
      mamf["pct_of_published_reason"] = fmt::format("data/reference.json has no {} MAMF row for {}", dtype, sheet->key);
    }
    if (!gpu) {
      // The CPU's own ceiling, measured now: the memory suite's FMA loop of the dtype.
      const std::string fma = dtype == "fp64" ? "fma_fp64" : "fma_fp32";
      PlanRequest pr;
      pr.suites = {"memory"};
      pr.axis_overrides = {"test=" + fma, "size=0"};
      const std::vector<PlannedCase> plan = make_plan(suites::all(), pr, {device});
      if (plan.size() == 1 && !plan.front().skip_reason) {
        const ordered e = run_entry(plan.front(), 0.3, 3, "fma-ceiling");
        if (!e.is_null() && e["gpubench"].value("status", "") == "ok" && e["gpubench"]["metrics"].contains("tflops")) {
          const double ceiling = e["gpubench"]["metrics"]["tflops"].get<double>();
          mamf["fma_ceiling_tflops"] = ceiling;
          mamf["pct_of_fma_ceiling"] = 100 * r.tflops / ceiling;
        }
      }
    }
  }
  mamf["search"] = {{"candidates", r.candidates}, {"pruned", pruned},         {"measured", r.measured},
                    {"failed", r.failed},         {"finalists", r.finalists}, {"budget_exhausted", r.budget_exhausted},
                    {"search_s", r.elapsed_s}};
  mamf["quantisation"] = {{"units", q.units}, {"tile", {q.tile_m, q.tile_n, q.tile_k}}, {"min_wave_efficiency", q.min_wave_efficiency}};
  mamf["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  mamf["log"] = r.log;
  results.set_gpubench("mamf", mamf);
  if (status != 0) {
    fmt::print(stderr, "gpubench tune: no MAMF: {} of {} shapes failed; results: {}\n", r.failed, r.measured, out_path.string());
    return status;
  }
  std::cout << fmt::format("MAMF {} on {}: {:.4g} TFLOP/s at {} ({}{}{})\n", dtype, device.name, r.tflops, r.best->label(),
                           mamf.contains("pct_of_datasheet") ? fmt::format("{:.1f}% of the datasheet", mamf["pct_of_datasheet"].get<double>())
                                                             : std::string("no datasheet figure"),
                           mamf.contains("pct_of_published") ? fmt::format(", {:.1f}% of the published MAMF", mamf["pct_of_published"].get<double>())
                                                             : std::string(),
                           mamf.contains("pct_of_fma_ceiling") ? fmt::format(", {:.1f}% of the measured FMA ceiling", mamf["pct_of_fma_ceiling"].get<double>())
                                                               : std::string());
  fmt::print(stderr, "gpubench tune: {} of {} shapes measured ({} pruned), {} finalists, {:.1f} s of a {:g} s budget; results: {}\n",
             r.measured, r.candidates, pruned, r.finalists, mamf["wall_s"].get<double>(), o.budget_s, out_path.string());
  return 0;
}

}  // namespace gpubench::app
