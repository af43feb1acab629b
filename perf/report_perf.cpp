// Performance goals of the reports (issue 9), measured in one process on synthetic inputs
// written to a temporary folder:
//   - report: 10,000 cases over 4 results files (read, join, every format) in < 1 s
//   - compare: two 5,000-case files (read both, verdicts, Markdown and JUnit) in < 0.5 s
// The best of ROUNDS (default 5) wall-clock times is compared with the goal; the median and the
// process CPU time (all threads) are printed beside it, and the load average, since a busy
// machine inflates wall time.
// Exit status 1 when a goal is missed. Run: build/<preset>/perf/gpubench_perf_reports [ROUNDS]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <time.h>
#include <unistd.h>

#include "reports/compare.hpp"
#include "reports/report.hpp"

namespace {

namespace fs = std::filesystem;
using ordered = nlohmann::ordered_json;
using namespace gpubench::reports;

// A results file of `cases` synthetic cases over four suites, with every field a real file has.
std::string synthetic_file(int cases, const std::string& gpu, const std::string& host, double scale) {
  ordered doc;
  doc["context"] = {{"date", "2025-06-01T00:00:00Z"}, {"host_name", host}, {"num_cpus", 64}};
  doc["context"]["gpubench"] = {
      {"schema_version", 1}, {"version", "0.1.0"}, {"build_type", "Release"}, {"started_utc", "2025-06-01T00:00:00Z"},
      {"cuda", {{"runtime_version", "13.0"}, {"driver_version", "13.0"}, {"available", true}}},
      {"devices", ordered::array({{{"id", "cuda:0"}, {"kind", "cuda"}, {"name", gpu}}})},
      {"libraries", {{"cublas", "13.0.0"}}},
      {"options", {{"preset", "quick"}, {"min_time_s", 0.5}, {"cold", false}}}};
  ordered list = ordered::array();
  const char* suites[] = {"gemm", "memory", "train", "collectives"};
  const char* dtypes[] = {"bf16", "fp16", "fp32", "tf32"};
  for (int i = 0; i < cases; ++i) {
    const char* suite = suites[i % 4];
    const double rate = scale * (100 + i % 97);
    ordered axes = {{"m", 64 * (1 + i / 16)}, {"n", 1024}, {"k", 512 + i % 5}, {"dtype", dtypes[(i / 4) % 4]}};
    ordered metrics = {{"flops", 2e9 * (1 + i % 7)}, {"bytes", 1e6 * (1 + i % 3)}, {"tflops", rate},
                       {"peak_key", "bf16_tensor"}};
    if (std::string(suite) == "train") metrics["tokens_per_s"] = rate * 1000;
    if (std::string(suite) == "collectives") metrics["busbw_gbps"] = rate;
    const double t = 2e9 * (1 + i % 7) / (rate * 1e12);
    const std::string name = fmt::format("{}/case:{}/device:cuda:0", suite, i);
    ordered e = {{"name", name}, {"run_name", name}, {"run_type", "iteration"}, {"repetitions", 1},
                 {"repetition_index", 0}, {"threads", 1}, {"iterations", 100}, {"real_time", t * 1e6},
                 {"cpu_time", 1.0}, {"time_unit", "us"}, {"TFLOP/s", rate}, {"samples", 20}, {"noise_pct", 1.0}};
    e["gpubench"] = {{"suite", suite}, {"device", "cuda:0"}, {"device_name", gpu}, {"axes", axes}, {"status", "ok"},
                     {"metrics", metrics},
                     {"verification", {{"passed", true}, {"checked", 64}, {"max_error", 0.1}, {"method", "synthetic"}}},
                     {"measurement", {{"samples", 20}, {"runs_per_sample", 4}, {"mean_s", t}, {"median_s", t}, {"min_s", t},
                                      {"max_s", t}, {"stddev_s", t / 100}, {"noise_pct", 1.0}, {"noisy", false},
                                      {"cold", false}, {"timer", "cuda_event"}}},
                     {"profile", {{"telemetry", {{"power_w", {{"mean", 500.0}}}}}}}};
    list.push_back(std::move(e));
  }
  doc["benchmarks"] = std::move(list);
  return doc.dump();
}

// CPU time of the whole process (all threads): on a loaded machine wall time measures the
// neighbours too, CPU time what this work costs.
double process_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Times {
  std::vector<double> wall, cpu;
};

template <class F>
Times time_rounds(int rounds, F f) {
  Times t;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_s();
    f();
    t.cpu.push_back(process_cpu_s() - c0);
    t.wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.wall.begin(), t.wall.end());
  std::sort(t.cpu.begin(), t.cpu.end());
  return t;
}

bool report_goal(const char* what, const Times& t, double goal) {
  const bool ok = t.wall.front() < goal;
  fmt::print("{}: wall best {:.3f} s, median {:.3f} s; CPU best {:.3f} s (goal < {} s wall): {}\n", what,
             t.wall.front(), t.wall[t.wall.size() / 2], t.cpu.front(), goal, ok ? "ok" : "MISSED");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const fs::path dir = fs::temp_directory_path() / fmt::format("gpubench-report-perf-{}", ::getpid());
  fs::create_directories(dir);
  const char* gpus[] = {"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA H200", "NVIDIA L40S"};
  std::vector<fs::path> four;
  for (int f = 0; f < 4; ++f) {
    four.push_back(dir / fmt::format("m{}.json", f));
    std::ofstream(four.back()) << synthetic_file(2500, gpus[f], fmt::format("host-{}", f), 1.0 + 0.1 * f);
  }
  const fs::path base = dir / "base.json", next = dir / "new.json";
  std::ofstream(base) << synthetic_file(5000, gpus[0], "ci", 1.0);
  std::ofstream(next) << synthetic_file(5000, gpus[0], "ci", 0.97);

  const SpecSheet specs = SpecSheet::builtin();
  std::size_t sink = 0;
  const auto report = time_rounds(rounds, [&] {
    const std::vector<ResultsFile> files = read_results_files(four);
    ReportOptions o;
    o.prices.add_assignment("H100=3");
    o.train_tokens = 1e10;
    const Report r = build_report(files, specs, o);
    sink += to_markdown(r.doc).size() + to_html(r.doc).size() + r.csv.size() + r.summary.dump().size();
  });
  const auto compare = time_rounds(rounds, [&] {
    const std::vector<ResultsFile> both = read_results_files({base, next});
    const ResultsFile &b = both[0], &n = both[1];
    const Comparison c = compare_results(b, n, {});
    sink += to_markdown(comparison_document(c, b, n, {})).size() + comparison_junit(c, {}).size();
  });
  if (std::getenv("GPUBENCH_KEEP_PERF_INPUTS")) {
    fmt::print("inputs kept in {}\n", dir.string());
  } else {
    fs::remove_all(dir);
  }
  fmt::print("(output bytes per round: {}; load average now: {})\n", sink / static_cast<std::size_t>(rounds), [] {
    std::ifstream in("/proc/loadavg");
    std::string first;
    in >> first;
    return first.empty() ? std::string("?") : first;
  }());
  const bool ok = report_goal("report, 10,000 cases over 4 files, md+html+csv+json", report, 1.0) &
                  report_goal("compare, two 5,000-case files, md+junit", compare, 0.5);
  return ok ? 0 : 1;
}
