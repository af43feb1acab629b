// End-to-end tests: run the real gpubench binary as a user would and check exit codes, the
// one-line errors, the results file, the report, and that Google Benchmark's compare.py
// reads the results unchanged.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench {
namespace {
namespace fs = std::filesystem;

using e2e::Output;
using e2e::slurp;

struct Cli : e2e::CliTest {
  // A short CPU run: two small GEMMs.
  Output quick_cpu_run(const fs::path& out, const std::string& extra = "") {
    return gpubench(fmt::format("run --device cpu --suite gemm --axis m=48,64 --axis dtype=fp32 --min-time 0.02 --warmup 0.005 "
                                "--min-samples 3 -q -o {} {}",
                                out.string(), extra));
  }
};

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// The name of a square OpenBLAS case of the gemm suite at the default layout and scalars.
std::string gemm_cpu_name(int m, const std::string& dtype) {
  return fmt::format("gemm/shape=mnk/model=none/tp=1/provider=openblas/dtype={}/layout=nn/m={}/n={}/k={}/batch=1/pad=0/alpha=1/beta=0/epilogue=none/"
                     "fusion=fused/threads=0/cpu",
                     dtype, m, m, m);
}

TEST_F(Cli, RunThenReport) {
  const fs::path results = dir / "r.json";
  Output run = quick_cpu_run(results);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find("gpubench: 2 ok, 0 skipped, 0 failed"), std::string::npos) << run.err;
  // -q: the closing line alone (no Google Benchmark header, no table), naming the results.
  EXPECT_EQ(count_lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("results: " + results.string()), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
  auto doc = nlohmann::json::parse(slurp(results));
  ASSERT_EQ(doc["benchmarks"].size(), 2u);
  EXPECT_EQ(doc["context"]["gpubench"]["schema_version"], 1);
  EXPECT_EQ(doc["context"]["gpubench"]["devices"][0]["id"], "cpu");
  const auto& b = doc["benchmarks"][0];
  EXPECT_EQ(b["name"], gemm_cpu_name(48, "fp32"));
  EXPECT_EQ(b["gpubench"]["verification"]["passed"], true);
  EXPECT_GT(b["TFLOP/s"].get<double>(), 0);
  EXPECT_GT(b["real_time"].get<double>(), 0);

  const fs::path md = dir / "r.md";
  Output rep = gpubench(fmt::format("report {} -o {}", results.string(), md.string()));
  ASSERT_EQ(rep.code, 0) << rep.err;
  const std::string text = slurp(md);
  EXPECT_NE(text.find("gemm"), std::string::npos);
  EXPECT_NE(text.find("| 48 |"), std::string::npos) << text;
  EXPECT_NE(text.find("TFLOP/s"), std::string::npos);
  Output to_stdout = gpubench("report " + results.string());
  EXPECT_EQ(to_stdout.code, 0);
  EXPECT_EQ(to_stdout.out, text);
}

TEST_F(Cli, NoGpuLineAndCpuCasesByDefault) {
  Output list = gpubench("list");
  ASSERT_EQ(list.code, 0) << list.err;
  if (list.err.find("no CUDA device:") == std::string::npos) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_NE(list.err.find("; GPU cases skipped"), std::string::npos);
  EXPECT_NE(list.out.find(gemm_cpu_name(256, "fp32")), std::string::npos);
  EXPECT_NE(list.out.find("memory/test=triad/size=67108864/peer=0/cpu"), std::string::npos);
  // gemm: 4 quick CPU cases; memory: 6 bandwidth + host_latency + 4 FMA; dataload: decode, decode_augment and 5
  // pipeline cases, at 1 worker and at every usable CPU (once on a 1-CPU machine); train: 2;
  // attention: flash and naive, prefill fwd/bwd causal or not (8) and one decode each (2);
  // infer: 12 prefill, 8 decode and 6 serve cases of llama-small; storage: fio's four reference
  // points with io_uring and the two at depth 1 with psync (6); video: x264 veryfast and medium
  // encodes and the H.264 decode (3);
  // collectives: not run on the CPU outside mpirun/srun, said in one line instead of 48 cases
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const int dataload = CPU_COUNT(&set) > 1 ? 14 : 7;
  EXPECT_EQ(count_lines(list.out), 4 + 11 + dataload + 2 + 10 + 26 + 6 + 3);
  EXPECT_NE(list.err.find("collectives on cpu: not run here: the MPI CPU backend"), std::string::npos) << list.err;
  // Asking for a GPU explicitly on a machine without one fails, with the same line.
  Output run = gpubench("run --device cuda -q -o " + (dir / "x.json").string());
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("no CUDA device:"), std::string::npos);
}

// A suite that cannot run in this launch (CPU collectives outside mpirun/srun) is one line
// saying how to run it, and one record in the results context: not a skipped case per point.
TEST_F(Cli, SuitesThatCannotRunHereAreOneLine) {
  const fs::path out = dir / "r.json";
  Output r = gpubench("run --suite gemm,collectives --device cpu --axis m=8 --axis dtype=fp32 --min-time 0.01 -o " +
                      out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("collectives on cpu: not run here: the MPI CPU backend runs across ranks: start gpubench under "
                       "mpirun"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("collectives"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("1 suite not run here"), std::string::npos) << r.err;
  const auto doc = nlohmann::json::parse(std::ifstream(out));
  for (const auto& e : doc["benchmarks"]) EXPECT_NE(e["gpubench"]["suite"], "collectives") << e.dump();
  ASSERT_EQ(doc["context"]["gpubench"]["not_applicable"].size(), 1u) << doc["context"].dump();
  EXPECT_EQ(doc["context"]["gpubench"]["not_applicable"][0]["suite"], "collectives");
  EXPECT_EQ(doc["context"]["gpubench"]["not_applicable"][0]["device"], "cpu");
  // Only that suite selected: nothing to run, and the line says why.
  Output only = gpubench("run --suite collectives --device cpu -o " + (dir / "c.json").string());
  EXPECT_EQ(only.code, 0) << only.err;
  EXPECT_NE(only.err.find("not run here"), std::string::npos) << only.err;
}

// run --report names its reports by the output-name rule (docs/report-compare-history.md#output-names):
// a results file named p.v1.2 gets p.v1.2.md, not p.v1.md; r.json gets r.md and r.report.json.
TEST_F(Cli, RunReportsKeepTheWholeNameOfTheResultsFile) {
  for (const auto& [results, reports] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"p.v1.2", {"p.v1.2.md", "p.v1.2.html", "p.v1.2.report.json", "p.v1.2.prom"}},
           {"r.json", {"r.md", "r.html", "r.report.json", "r.prom"}}}) {
    const fs::path folder = dir / results;
    fs::create_directories(folder);
    const fs::path out = folder / results;
    Output r = gpubench(fmt::format("run --device cpu --suite memory -a test=copy -a size=1M --min-time 0.02 --warmup 0.005 "
                                    "--min-samples 3 -q --report md,html,json,openmetrics --out {}",
                                    out.string()));
    ASSERT_EQ(r.code, 0) << r.err;
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(folder)) found.push_back(e.path().filename().string());
    std::vector<std::string> expected = reports;
    expected.push_back(results);
    std::sort(found.begin(), found.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(found, expected) << r.err;
    // The closing line names them as written: in full, or by what follows the results file's stem.
    const bool full = r.err.find("report: " + (folder / reports[0]).string()) != std::string::npos;
    const bool compact = r.err.find("(report beside it: " + reports[0].substr(reports[0].size() - 3)) != std::string::npos;
    EXPECT_TRUE(full || compact) << r.err;
    // The report of one run (scripts/run.sh's) leads with what the run measured, not a scorecard
    // of the run against itself (issue 49).
    std::ifstream md(folder / reports[0]);
    const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("## What the run measured"), std::string::npos) << text.substr(0, 2000);
    EXPECT_NE(text.find("| memory | 1 | "), std::string::npos) << text.substr(0, 2000);
    EXPECT_EQ(text.find("## Scorecard"), std::string::npos);
    EXPECT_EQ(text.find("1.00x"), std::string::npos);
  }
}

// The default console: one table per suite (varying axes as columns, constant ones above),
// no line wider than 160 characters, no Google Benchmark header, the summary line last.
TEST_F(Cli, ConsoleShowsOneTablePerSuiteWithinTheWidth) {
  const fs::path out = dir / "t.json";
  Output r = gpubench(fmt::format("run --device cpu --suite gemm,memory,collectives --axis m=48,64 --axis dtype=fp32,fp16 "
                                  "--axis test=triad,dot --axis size=1M --min-time 0.02 --warmup 0.005 --min-samples 3 "
                                  "--report md -o {}",
                                  out.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string* text : {&r.out, &r.err}) {
    std::istringstream lines(*text);
    for (std::string l; std::getline(lines, l);) EXPECT_LE(l.size(), 160u) << l;
  }
  EXPECT_EQ(r.err.find("Run on ("), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("/iterations:1/manual_time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm: 4 cases on cpu ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("collectives"), std::string::npos) << r.out;  // not run here: one stderr line
  EXPECT_NE(r.out.find("constant: shape=mnk model=none tp=1 provider=openblas layout=nn"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TFLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GB/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped: OpenBLAS has no fp16 GEMM"), std::string::npos) << r.out;
  // The closing line names the results file and the report written beside it (by its
  // extension, on a line of its own, when the paths are long).
  EXPECT_NE(r.err.find("gpubench: 4 ok, 2 skipped, 0 failed, 1 suite not run here in "), std::string::npos) << r.err;
  const fs::path md = dir / "t.md";
  const bool full = r.err.find("results: " + out.string() + "; report: " + md.string() + "\n") != std::string::npos;
  const bool compact = r.err.find("results: " + out.string() + " (report beside it: .md)\n") != std::string::npos;
  EXPECT_TRUE(full || compact) << r.err;
  EXPECT_TRUE(fs::exists(md));
  // Google Benchmark's own console on request, with its header (less the DEBUG warning:
  // gpubench times cases itself).
  Output gb = gpubench(fmt::format("run --device cpu --suite gemm --axis m=48 --axis dtype=fp32 --min-time 0.02 "
                                   "--warmup 0.005 --min-samples 3 --console gb -o {}",
                                   (dir / "gb.json").string()));
  ASSERT_EQ(gb.code, 0) << gb.err;
  EXPECT_NE(gb.err.find("Run on ("), std::string::npos) << gb.err;
  EXPECT_EQ(gb.err.find("Library was built as DEBUG"), std::string::npos) << gb.err;
  EXPECT_NE(gb.out.find(gemm_cpu_name(48, "fp32") + "/iterations:1/manual_time"), std::string::npos) << gb.out;
  EXPECT_EQ(gpubench("run --console fancy").code, 2);
  EXPECT_EQ(gpubench("run --report pdf").code, 2);
}

// Each library once (gemm and train both use OpenBLAS and cuBLASLt).
TEST_F(Cli, VersionListsEachLibraryOnce) {
  Output v = gpubench("version");
  ASSERT_EQ(v.code, 0) << v.err;
  std::istringstream lines(v.out);
  std::set<std::string> seen;
  for (std::string l; std::getline(lines, l);) {
    const std::string key = l.substr(0, l.find(':'));
    EXPECT_TRUE(seen.insert(key).second) << "listed twice: " << l << "\n" << v.out;
  }
}

TEST_F(Cli, ListShowsAxesAndSkips) {
  Output list = gpubench("list --device cpu --axis m=8 --axis dtype=fp16,fp32");
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find(gemm_cpu_name(8, "fp16") + "  [gemm shape=mnk model=none tp=1 provider=openblas dtype=fp16 layout=nn m=8 n=8 k=8 "),
            std::string::npos)
      << list.out;
  EXPECT_NE(list.out.find("threads=0] skipped: OpenBLAS has no fp16 GEMM"), std::string::npos) << list.out;
  Output axes = gpubench("list --axes");
  EXPECT_EQ(axes.code, 0);
  EXPECT_NE(axes.out.find("dtype"), std::string::npos);
  EXPECT_NE(axes.out.find("quick"), std::string::npos);
}

TEST_F(Cli, BadInputIsOneLineAndExitTwo) {
  const fs::path out = dir / "never.json";
  std::ofstream(dir / "file") << "x";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"frobnicate", "unknown command 'frobnicate'"},
      {"run --bogus", "unrecognised option '--bogus'"},
      {"run --suite nope", "--suite 'nope': unknown suite (available: gemm, memory, dataload, storage, train, attention, infer, collectives, video)"},
      {"run --axis q=1", "unknown axis 'q'"},
      {"run --axis m=abc", "'abc' is not an integer"},
      {"run --axis m=", "empty value list"},
      {"run --axis m=10:1:1", "stop < start"},
      {"run --axis dtype=fp7", "unknown value 'fp7'"},
      {"run --preset huge", "--preset 'huge'"},
      {"run --device gpu", "--device 'gpu': unknown device"},
      {"run --min-time -1", "--min-time"},
      {"run --profile cupti", "--profile 'cupti': unknown instrument"},
      {"run --benchmark_bogus=1", "unknown Google Benchmark flag '--benchmark_bogus=1'"},
      // Found by tests/fuzz/fuzz_cli: Google Benchmark printed its usage and exited 0 on these,
      // and Boost.Program_options never finished an error message quoting a %placeholder%.
      {"run --benchmark_out_format=xml", "--benchmark_out_format=xml: accepted formats are console, json, csv"},
      {"run --benchmark_time_unit=h", "accepted units are ns, us, ms, s"},
      {"run --min-time %value%", "--min-time '%value%': expected a number"},
      {"list --x%canonical_option%%option%", "unrecognised option '--x%canonical_option%%option%'"},
      {"run -o " + (dir / "file" / "r.json").string(), "not a folder"},
      {"run -o " + dir.string(), "is a folder"},
      {"report", "no results file given"},
      {"report " + (dir / "missing.json").string(), "cannot open"},
      {"report " + (dir / "file").string(), "not valid JSON"},
      // Found by tests/fuzz/fuzz_cli: an empty file name passed as one of compare's two files.
      {"compare '' " + (dir / "file").string(), "an input file name is empty"},
  };
  for (const auto& [args, expected] : cases) {
    Output r = gpubench(args + " -o " + out.string());
    if (args.rfind("run -o", 0) == 0 || args.rfind("report", 0) == 0) r = gpubench(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(out));  // nothing written half-way
}

TEST_F(Cli, HelpAndVersion) {
  for (const char* cmd : {"--help", "run --help", "list --help", "report --help", "version"}) {
    Output r = gpubench(cmd);
    EXPECT_EQ(r.code, 0) << cmd << r.err;
    EXPECT_FALSE(r.out.empty()) << cmd;
  }
  EXPECT_NE(gpubench("run --help").out.find("--axis"), std::string::npos);
  const std::string version = gpubench("version").out;
  EXPECT_NE(version.find("cublas"), std::string::npos);
  // The minimum driver follows the toolkit of the build (CUDA 13 in the ci preset, 12.4 in CI's CUDA 12 stage).
  const std::string minimum = version.find("CUDA runtime 12.") != std::string::npos ? "525.60.13" : "580.65.06";
  EXPECT_NE(version.find("\nminimum NVIDIA driver: " + minimum + " (built with CUDA "), std::string::npos) << version;
  EXPECT_EQ(gpubench("").code, 2);
}

TEST_F(Cli, GoogleBenchmarkFlagsPassThrough) {
  const fs::path results = dir / "r.json", gb = dir / "gb.json";
  Output run = quick_cpu_run(results, fmt::format("--benchmark_filter=m=64 --benchmark_repetitions=2 "
                                                  "--benchmark_out={} --benchmark_out_format=json",
                                                  gb.string()));
  ASSERT_EQ(run.code, 0) << run.err;
  auto doc = nlohmann::json::parse(slurp(results));
  // One case (filtered), two repetitions and four aggregates (mean, median, stddev, cv).
  ASSERT_EQ(doc["benchmarks"].size(), 6u);
  EXPECT_EQ(doc["benchmarks"][0]["gpubench"]["axes"]["m"], 64);
  EXPECT_EQ(doc["benchmarks"][2]["name"], gemm_cpu_name(64, "fp32") + "_mean");
  // Each repetition states the runs it really timed (--min-time is a floor: a repetition may
  // add samples to its plan), so the two may differ; each matches its own measurement.
  for (int i : {0, 1}) {
    EXPECT_EQ(doc["benchmarks"][i]["iterations"], doc["benchmarks"][i]["gpubench"]["measurement"]["runs"]);
    EXPECT_GE(doc["benchmarks"][i]["gpubench"]["measurement"]["samples"].get<std::int64_t>(),
              doc["benchmarks"][i]["gpubench"]["measurement"]["planned_samples"].get<std::int64_t>());
  }
  EXPECT_TRUE(fs::exists(gb));  // Google Benchmark's own output file
}

TEST_F(Cli, CompareDotPyReadsTwoResultsFiles) {
  if (!fs::exists(GPUBENCH_COMPARE_PY)) GTEST_SKIP() << "libbenchmark-tools is not installed";
  const fs::path a = dir / "a.json", b = dir / "b.json";
  ASSERT_EQ(quick_cpu_run(a).code, 0);
  ASSERT_EQ(quick_cpu_run(b).code, 0);
  Output cmp = sh(fmt::format("/usr/bin/python3 {} benchmarks {} {}", GPUBENCH_COMPARE_PY, a.string(), b.string()));
  ASSERT_EQ(cmp.code, 0) << cmp.err;
  EXPECT_NE(cmp.out.find(gemm_cpu_name(48, "fp32")), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find(gemm_cpu_name(64, "fp32")), std::string::npos) << cmp.out;
}

TEST_F(Cli, InterruptedRunKeepsFinishedCases) {
  const fs::path results = dir / "r.json";
  const std::string cmd = fmt::format("{} run --device cpu --axis m=32:512:32 --axis dtype=fp32 --min-time 0.2 -q -o {}",
                                      GPUBENCH_BINARY, results.string());
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + cmd + " >/dev/null 2>&1").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until at least one case is in the file, then interrupt.
  std::size_t finished = 0;
  for (int i = 0; i < 600 && finished == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!fs::exists(results)) continue;
    finished = nlohmann::json::parse(slurp(results))["benchmarks"].size();  // always valid JSON
  }
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_GT(finished, 0u);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  auto doc = nlohmann::json::parse(slurp(results));
  EXPECT_GE(doc["benchmarks"].size(), finished);
  EXPECT_LT(doc["benchmarks"].size(), 16u);  // it was really interrupted
}

// Fault injection through the `selftest` suite (enabled by GPUBENCH_ENABLE_SELFTEST=1).
struct Faults : Cli {
  Output selftest(const std::string& modes, const std::string& extra = "", const std::string& prefix = "") {
    return sh(fmt::format("{} GPUBENCH_ENABLE_SELFTEST=1 {} run --suite selftest --device cpu --axis mode={} --min-time 0.01 "
                          "--warmup 0.001 --min-samples 3 -q -o {} {}",
                          prefix, GPUBENCH_BINARY, modes, (dir / "r.json").string(), extra));
  }
  std::vector<std::pair<std::string, std::string>> outcomes() {
    std::vector<std::pair<std::string, std::string>> out;
    const auto doc = nlohmann::json::parse(slurp(dir / "r.json"));
    for (const auto& b : doc["benchmarks"]) {
      out.emplace_back(b["gpubench"]["status"].get<std::string>(), b["gpubench"].value("reason", ""));
    }
    return out;
  }
};

TEST_F(Faults, ThrowingAndWrongCasesFailAndTheRunGoesOn) {
  Output r = selftest("throw,wrong,ok");
  EXPECT_EQ(r.code, 1) << r.err;  // a failed case fails the run, after the others ran
  auto o = outcomes();
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o[0], (std::pair<std::string, std::string>{"failed", "selftest: setup threw on purpose"}));
  EXPECT_EQ(o[1].first, "failed");
  EXPECT_NE(o[1].second.find("verification failed"), std::string::npos);
  EXPECT_EQ(o[2].first, "ok");
}

TEST_F(Faults, UnboundedAllocationIsSkippedAndReleased) {
  // ulimit -v makes the allocation fail instead of waking the kernel's OOM killer.
  Output r = selftest("alloc,ok", "", "ulimit -v 2000000;");
  EXPECT_EQ(r.code, 0) << r.err;
  auto o = outcomes();
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0], (std::pair<std::string, std::string>{"skipped", "out of host memory"}));
  EXPECT_EQ(o[1].first, "ok");  // the memory was given back: the next case ran
}

TEST_F(Faults, IsolationSurvivesCrashesAndTimeouts) {
  Output r = selftest("crash,hang,ok", "--case-timeout 3");
  EXPECT_EQ(r.code, 1) << r.err;
  auto o = outcomes();
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o[0].first, "failed");
  EXPECT_NE(o[0].second.find("crashed: signal 11"), std::string::npos) << o[0].second;
  EXPECT_EQ(o[1].first, "failed");
  EXPECT_NE(o[1].second.find("timed out after 3 s"), std::string::npos) << o[1].second;
  EXPECT_EQ(o[2].first, "ok");  // the run went on after both
  auto doc = nlohmann::json::parse(slurp(dir / "r.json"));
  EXPECT_EQ(doc["benchmarks"][2]["family_index"], 2);
  EXPECT_GT(doc["benchmarks"][2]["real_time"].get<double>(), 0);
}

TEST_F(Faults, SigtermDuringAnIsolatedHangKeepsResults) {
  const fs::path results = dir / "r.json";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("GPUBENCH_ENABLE_SELFTEST", "1", 1);
    const std::string out = results.string();
    execl(GPUBENCH_BINARY, "gpubench", "run", "--suite", "selftest", "--device", "cpu", "--axis", "mode=ok,hang", "--isolate",
          "--min-time", "0.01", "-q", "-o", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::size_t finished = 0;
  for (int i = 0; i < 600 && finished == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (fs::exists(results)) finished = nlohmann::json::parse(slurp(results))["benchmarks"].size();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the hanging child is running now
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  auto doc = nlohmann::json::parse(slurp(results));
  ASSERT_EQ(doc["benchmarks"].size(), 1u);
  EXPECT_EQ(doc["benchmarks"][0]["gpubench"]["status"], "ok");
  // The hanging child was killed with its parent: nothing of it is left running.
  // (The pattern names this test's own results path, so other tests' children do not count.)
  EXPECT_NE(std::system(fmt::format("pgrep -f '{}.*--isolated-cas[e]' >/dev/null", results.string()).c_str()), 0);
}

TEST_F(Cli, IsolateRejectsBenchmarkOut) {
  Output r = gpubench("run --isolate --benchmark_out=x.json -o " + (dir / "r.json").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not available with --isolate"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpubench
