// `gpubench tune storage` (storage_tune.hpp): the workload resolved, one AU run per N of the
// search, every run an entry of the results file, the verdict printed.
#include "bench/tune/storage_tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "bench/core/context.hpp"
#include "bench/core/device.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/core/paths.hpp"
#include "bench/core/plan.hpp"
#include "bench/core/results.hpp"
#include "bench/suites/all_suites.hpp"
#include "bench/suites/dataload/io.hpp"
#include "bench/suites/storage/au.hpp"
#include "bench/tune/dataload_tune.hpp"

namespace gpubench::tune {
namespace {

namespace fs = std::filesystem;
namespace st = suites::storage;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct Resolved {
  st::AuWorkload w;
  std::string step_from;  // where the step time comes from
};

Resolved resolve(const StorageTuneOptions& o) {
  Resolved r;
  if (o.workload != "custom") {
    r.w = *st::find_workload(o.workload, o.accelerator);
    r.step_from = fmt::format("published: {} on {} ({})", r.w.name, r.w.accelerator, r.w.source);
  } else {
    r.w.name = "custom";
    r.w.accelerator = "custom";
    r.w.source = "the command line";
  }
  if (o.sample_bytes) r.w.sample_bytes = *o.sample_bytes;
  if (o.batch) r.w.batch = *o.batch;
  if (o.read_threads) r.w.read_threads = *o.read_threads;
  if (o.au_pct) r.w.au_min = *o.au_pct / 100;
  if (o.step_time_s) {
    r.w.compute_s = *o.step_time_s;
    r.step_from = fmt::format("--step-time {:g}", *o.step_time_s);
  }
  if (!o.consumer_from.empty()) {
    // A train case measured earlier on a GPU: its samples/s at this batch gives the step.
    auto [rate, name] = train_consumer_rate(o.consumer_from);
    r.w.compute_s = r.w.batch / rate;
    if (!(r.w.compute_s >= 0.001 && r.w.compute_s <= 60)) {
      throw UsageError(fmt::format("--consumer-from {}: {:.4g} samples/s gives a step outside 1 ms to 60 s for a batch of {}",
                                   o.consumer_from, rate, r.w.batch));
    }
    r.step_from = fmt::format("measured: {} in {} ({:.4g} samples/s)", name, o.consumer_from, rate);
  }
  if (o.workload != "custom" && (o.sample_bytes || o.batch || o.step_time_s || !o.consumer_from.empty())) {
    r.w.source += " (changed on the command line)";
  }
  return r;
}

Json entry_json(const Resolved& rw, const st::AuRun& r, const DeviceInfo& cpu, int direct, const Json& file,
                const std::string& cache) {
  const st::AuWorkload& w = rw.w;
  const std::string name = fmt::format("storage/au/workload={}/accelerator={}/accelerators={}/cpu", w.name,
                                       w.accelerator, r.accelerators);
  Json e;
  e["name"] = name;
  e["run_name"] = name;
  e["run_type"] = "iteration";
  e["repetitions"] = 1;
  e["repetition_index"] = 0;
  e["threads"] = r.accelerators * (w.read_threads + 1);
  e["iterations"] = r.steps_done;
  e["real_time"] = r.steps_done > 0 ? r.wall_s / static_cast<double>(r.steps_done) * r.accelerators * 1e6 : 0.0;
  e["time_unit"] = "us";
  Json& g = e["gpubench"];
  g["suite"] = "storage";
  g["device"] = "cpu";
  g["device_name"] = cpu.name;
  g["axes"] = {{"workload", w.name},
               {"accelerator", w.accelerator},
               {"accelerators", r.accelerators},
               {"sample_bytes", w.sample_bytes},
               {"batch", w.batch},
               {"read_threads", w.read_threads},
               {"direct", direct}};
  g["status"] = "ok";
  g["verification"] = {{"passed", true},
                       {"checked", r.reads_checked},
                       {"max_error", 0.0},
                       {"method", r.reads_checked > 0 ? "the first and last 64 bytes of every read compared with the generated file's content"
                                                      : "every read's length (a given file's content is not known)"}};
  g["metrics"] = {{"au_pct", r.au * 100},
                  {"au_min_pct", r.au_min * 100},
                  {"au_first_step_pct", r.au_first_step * 100},
                  {"samples_per_s", r.samples_per_s},
                  {"gbps", r.bytes_per_s / 1e9},
                  {"wait_ms_p50", r.wait_p50_s * 1e3},
                  {"wait_ms_p99", r.wait_p99_s * 1e3},
                  {"accelerators", r.accelerators}};
  g["details"] = {{"file", file},
                  {"cache", cache},
                  {"step_s", w.compute_s},
                  {"step_from", rw.step_from},
                  {"au_threshold_pct", w.au_min * 100},
                  {"passed", r.passed(w.au_min)},
                  {"steps_per_accelerator", r.steps},
                  {"fill_steps", r.fill},
                  {"au_method", "steady: compute / run time over the steps after the queue's fill (read_threads x prefetch "
                                "batches); au_first_step_pct leaves out only the first step's wait, as MLPerf Storage does"},
                  {"bytes_read", r.bytes_read},
                  {"steps_done", r.steps_done},
                  {"wall_s", r.wall_s}};
  if (r.cut_short) g["details"]["cut_short"] = "the run reached its time limit: the waits it was in count as waiting";
  return e;
}

std::string verdict_line(const st::AuWorkload& w, int largest, const std::string& bound, const std::vector<Json>& curve) {
  const std::string who = w.name == "custom" ? std::string("a custom workload") : fmt::format("{} on emulated {}", w.name, w.accelerator);
  const std::string what = fmt::format("{}: {} x {} B per {:.3g} s step, {:.3g} GB/s each", who, w.batch, w.sample_bytes,
                                       w.compute_s, w.demand_bytes_per_s() / 1e9);
  if (largest == 0) {
    const double au = curve.empty() ? 0.0 : curve.front().value("au_pct", 0.0);
    return fmt::format("verdict: this storage feeds 0 GPUs at AU >= {:g}% ({}; one accelerator's AU is {:.1f}%)", w.au_min * 100,
                       what, au);
  }
  const std::string at_least = bound == "failure" ? "" : "at least ";
  const std::string why = bound == "max_accelerators" ? "; the most tried, --max-accelerators"
                          : bound == "budget"          ? "; the budget ended the search"
                                                       : "";
  return fmt::format("verdict: this storage feeds {}{} GPUs at AU >= {:g}% ({}{})", at_least, largest, w.au_min * 100, what, why);
}

}  // namespace

int tune_storage(const StorageTuneOptions& o) {
  check_storage_option_values(o);
  const Resolved rw = resolve(o);
  const st::AuWorkload& w = rw.w;
  if (!o.out.empty()) validate_output_file(o.out, "--out");
  if (!o.consumer_from.empty() && !o.out.empty()) check_path_clashes({{o.consumer_from, "--consumer-from"}}, {{o.out, "--out"}});
  st::check_environment();

  const DeviceInventory inventory = discover_devices();
  const DeviceSelection selection = select_devices("cpu", inventory);
  if (selection.devices.empty()) throw UsageError("tune storage: no CPU device");
  const DeviceInfo cpu = selection.devices.front();

  const fs::path out = o.out.empty() ? default_results_path(host_name()) : fs::path(o.out);
  check_output_path(out, "--out");
  OutputLock lock(out, "--out");
  install_interrupt_handlers(out.string());

  // The file: two batches at least (a run of N accelerators cycles through it).
  const std::int64_t slot = st::aligned_sample_bytes(w.sample_bytes);
  const std::int64_t need = 2 * slot * w.batch;
  // The generated file: --size, else 1 GiB; a given file (GPUBENCH_STORAGE_FILE) is read whole and
  // needs only the two batches unless --size asks for more.
  const char* given = std::getenv(st::kFileEnv);
  const std::int64_t fallback = given != nullptr && *given != '\0' ? need : std::int64_t{1} << 30;
  const std::int64_t size = std::max(o.size > 0 ? o.size / st::kAlign * st::kAlign : fallback, need);
  if (o.size > 0 && o.size < need) {
    throw UsageError(fmt::format("--size {}: a run needs two batches ({} samples of {} bytes): at least {}", o.size, 2 * w.batch, slot, need));
  }
  st::FileInfo file;
  try {
    file = st::file_for(size);
  } catch (const CaseSkipped& e) {
    throw UsageError(e.what());
  }
  if (!file.generated) {
    file.origin = fmt::format("{}={} (all {} bytes)", st::kFileEnv, file.path.string(), file.bytes);
  }
  const Json file_json = {{"path", file.path.string()}, {"bytes", file.bytes}, {"origin", file.origin}, {"filesystem", file.filesystem}};
  const std::string cache = o.direct ? "bypassed: O_DIRECT reads the device, never the page cache"
                                     : "through the page cache, its pages of the file dropped (POSIX_FADV_DONTNEED) before each run; "
                                       "a file larger than memory keeps later epochs cold";

  const std::vector<const Suite*> suite = select_suites(suites::all(), {"storage"});
  const Json context = capture_context(inventory, {cpu}, suite, RunDescription{o.command_line, "tune", {"storage"}, MeasureOptions{}});
  std::vector<Json> entries, curve;
  std::vector<std::pair<int, bool>> tried;
  std::string bound = "failure";
  auto write = [&](bool finished) {
    Json doc;
    doc["context"] = context;
    doc["benchmarks"] = Json::array();
    for (const Json& e : entries) doc["benchmarks"].push_back(e);
    const int largest = largest_passing(tried);
    Json au = {{"workload", w.name},
               {"accelerator", w.accelerator},
               {"sample_bytes", w.sample_bytes},
               {"read_bytes_per_sample", slot},
               {"batch", w.batch},
               {"step_s", w.compute_s},
               {"step_from", rw.step_from},
               {"source", w.source},
               {"au_threshold_pct", w.au_min * 100},
               {"read_threads", w.read_threads},
               {"prefetch", 2},
               {"demand_gbps_per_accelerator", w.demand_bytes_per_s() / 1e9},
               {"direct", o.direct},
               {"cache", cache},
               {"file", file_json},
               {"curve", curve},
               {"largest_passing", largest},
               {"bounded_by", bound},
               {"finished", finished}};
    if (finished) au["verdict"] = verdict_line(w, largest, bound, curve);
    doc["gpubench"]["storage_au"] = au;
    InterruptsHeld held;
    write_file_atomically(out, doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  };
  write(false);

  // Each run: the queue's fill, then at least run_s of steady steps (8 at least); cut at 3x that.
  const int steps = std::max(8, static_cast<int>(std::ceil(o.run_s / w.compute_s)));
  const double run_wall = (steps + 2 * w.read_threads) * w.compute_s;
  const Clock::time_point t0 = Clock::now();
  if (!o.quiet) {
    fmt::print(stderr, "gpubench tune storage: {} on emulated {} ({} x {} B per {:.3g} s step: {:.3g} GB/s per accelerator), AU >= {:g}%, "
               "{} + {} steps per run (the queue's fill, then the steady ones), {}\n",
               w.name, w.accelerator, w.batch, w.sample_bytes, w.compute_s, w.demand_bytes_per_s() / 1e9, w.au_min * 100, 2 * w.read_threads,
               steps, file.origin);
  }
  int exit_code = 0;
  while (std::optional<int> n = next_accelerators(tried, o.max_accelerators)) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!tried.empty() && elapsed + run_wall > o.budget_s) {
      bound = "budget";
      break;
    }
    if (!o.direct) {
      if (std::optional<std::string> why = suites::dataload::evict(file.path)) throw std::runtime_error(*why);
    }
    st::AuRunOptions ro;
    ro.accelerators = *n;
    ro.steps = steps;
    ro.io = o.direct ? st::Io::Direct : st::Io::Buffered;
    ro.seed = o.seed + static_cast<std::uint64_t>(tried.size());
    ro.max_wall_s = 3 * run_wall + 5;
    st::AuRun r;
    try {
      r = st::run_au(w, ro, file);
    } catch (const CaseSkipped& e) {
      throw UsageError(fmt::format("tune storage: {}", e.what()));
    } catch (const std::exception& e) {
      fmt::print(stderr, "gpubench tune storage: the run of {} accelerators failed: {}\n", *n, e.what());
      exit_code = 1;
      break;
    }
    const bool passed = r.passed(w.au_min);
    tried.emplace_back(*n, passed);
    entries.push_back(entry_json(rw, r, cpu, o.direct, file_json, cache));
    curve.push_back({{"accelerators", *n},
                     {"au_pct", r.au * 100},
                     {"au_min_pct", r.au_min * 100},
                     {"au_first_step_pct", r.au_first_step * 100},
                     {"samples_per_s", r.samples_per_s},
                     {"gbps", r.bytes_per_s / 1e9},
                     {"wait_ms_p99", r.wait_p99_s * 1e3},
                     {"passed", passed},
                     {"case", entries.back()["name"]}});
    if (r.cut_short) curve.back()["cut_short"] = true;
    write(false);
    if (!o.quiet) {
      fmt::print(stderr, "  {:>3} accelerators: AU {:5.1f}% (lowest {:5.1f}%; first step only {:5.1f}%), {:.4g} samples/s, {:.3g} GB/s{} {}\n",
                 *n, r.au * 100, r.au_min * 100, r.au_first_step * 100, r.samples_per_s, r.bytes_per_s / 1e9, r.cut_short ? " (cut at its time limit)" : "",
                 passed ? "pass" : "miss");
    }
  }
  if (bound == "failure" && !tried.empty() && largest_passing(tried) >= o.max_accelerators) bound = "max_accelerators";
  write(exit_code == 0);
  // The curve in N order, then the verdict.
  std::vector<Json> sorted = curve;
  std::sort(sorted.begin(), sorted.end(), [](const Json& a, const Json& b) { return a["accelerators"].get<int>() < b["accelerators"].get<int>(); });
  fmt::print("{:>12}  {:>7}  {:>7}  {:>10}  {:>7}  {:>11}\n", "accelerators", "AU", "lowest", "samples/s", "GB/s", "wait p99 ms");
  for (const Json& c : sorted) {
    fmt::print("{:>12}  {:>6.1f}%  {:>6.1f}%  {:>10.4g}  {:>7.3g}  {:>11.3g}{}\n", c["accelerators"].get<int>(), c["au_pct"].get<double>(),
               c["au_min_pct"].get<double>(), c["samples_per_s"].get<double>(), c["gbps"].get<double>(),
               c["wait_ms_p99"].get<double>(), c["passed"].get<bool>() ? "" : "  below the threshold");
  }
  if (exit_code == 0) fmt::print("{}\n", verdict_line(w, largest_passing(tried), bound, sorted));
  fmt::print(stderr, "gpubench tune storage: results: {}\n", out.string());
  return exit_code;
}

}  // namespace gpubench::tune
