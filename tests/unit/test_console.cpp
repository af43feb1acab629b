// The console: short labels, one table per suite with the varying axes as columns, statuses,
// notes for statuses too long for a row, the width limit; and repetitions through the harness.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/gpubench/console.hpp"
#include "bench/core/harness.hpp"
#include "fake_suite.hpp"
#include "test_util.hpp"

namespace gpubench {
namespace {
namespace fs = std::filesystem;
using app::Console;
using app::ConsoleOptions;
using app::ConsoleRow;
using app::console_row;
using app::wrap_words;

// A FILE* whose contents the test can read.
struct Capture {
  char* data = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  ~Capture() {
    std::fclose(f);
    std::free(data);
  }
  std::string text() {
    std::fflush(f);
    return std::string(data, size);
  }
};

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

nlohmann::ordered_json ok_entry(double mean_s, double noise_pct, double tflops) {
  return {{"name", "x"},
          {"run_type", "iteration"},
          {"iterations", 10},
          {"real_time", mean_s * 1e6},
          {"time_unit", "us"},
          {"gpubench",
           {{"suite", "fake"},
            {"device", "cpu"},
            {"status", "ok"},
            {"metrics", {{"tflops", tflops}}},
            {"measurement", {{"mean_s", mean_s}, {"noise_pct", noise_pct}, {"noisy", false}}}}}};
}

nlohmann::ordered_json skipped_entry(const std::string& reason) {
  return {{"name", "x"},
          {"run_type", "iteration"},
          {"error_occurred", true},
          {"error_message", "skipped: " + reason},
          {"gpubench", {{"suite", "fake"}, {"device", "cpu"}, {"status", "skipped"}, {"reason", reason}}}};
}

struct ConsoleTest : ::testing::Test {
  testing::FakeSuite suite;
  std::vector<PlannedCase> plan(const std::vector<std::string>& overrides) {
    PlanRequest r;
    r.axis_overrides = overrides;
    return make_plan({&suite}, r, {testing::fake_cpu()});
  }
};

TEST(ConsoleRow, StatusRateTimeNoise) {
  ConsoleRow r = console_row({ok_entry(1.25e-3, 0.5, 12.3)});
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.rate, "12.3 TFLOP/s");
  EXPECT_EQ(r.time, "1.25 ms");
  EXPECT_EQ(r.noise, "0.5%");
  EXPECT_EQ(console_row({skipped_entry("needs a GPU")}).status, "skipped: needs a GPU");
  auto suspect = ok_entry(1e-3, 0.1, 5000);
  suspect["gpubench"]["suspect"] = {"above the datasheet peak (989 TFLOP/s) by 405%"};
  EXPECT_EQ(console_row({suspect}).status, "suspect: above the datasheet peak (989 TFLOP/s) by 405%");
  auto noisy = ok_entry(1e-3, 9, 1);
  noisy["gpubench"]["measurement"]["noisy"] = true;
  EXPECT_EQ(console_row({noisy}).status, "noisy");
  auto failed = skipped_entry("x");
  failed["gpubench"]["status"] = "failed";
  failed["gpubench"]["reason"] = "verification failed: sum is wrong";
  EXPECT_EQ(console_row({failed}).status, "FAILED: verification failed: sum is wrong");
  // Repetitions: the mean of their rates and times, the largest noise.
  r = console_row({ok_entry(1e-3, 0.5, 10), ok_entry(3e-3, 2.5, 20)});
  EXPECT_EQ(r.rate, "15.0 TFLOP/s");
  EXPECT_EQ(r.time, "2 ms");
  EXPECT_EQ(r.noise, "2.5%");
}

TEST_F(ConsoleTest, ShortLabelsKeepOnlyTheAxesThatVary) {
  const auto p = plan({"size=64,128", "mode=ok"});
  Console c(p, ConsoleOptions{true});
  EXPECT_EQ(c.short_label(0), "fake size=64 twin=64");
  EXPECT_EQ(c.short_label(1), "fake size=128 twin=128");
}

// Issue 27: under a suite's table, its cases' "% of published" (data/reference.json), furthest
// below first: a bf16 GEMM at 700 TFLOP/s on an H100 SXM is 88% of the published MAMF 794.5.
TEST_F(ConsoleTest, PercentOfPublishedIsSaidUnderTheTable) {
  const auto p = plan({"size=64,128", "mode=ok"});
  Capture out, err;
  Console c(p, ConsoleOptions{false, true, false, 160, out.f, err.f});
  auto h100 = [](double tflops) {
    nlohmann::ordered_json e = ok_entry(1e-3, 0.5, tflops);
    e["gpubench"]["suite"] = "gemm";
    e["gpubench"]["device"] = "cuda:0";
    e["gpubench"]["device_name"] = "NVIDIA H100 80GB HBM3";
    e["gpubench"]["axes"] = {{"provider", "cublaslt"}, {"dtype", "bf16"}, {"m", 8192}, {"n", 8192}, {"k", 8192}};
    return e;
  };
  c.started(0);
  c.finished(0, {h100(700)});
  c.started(1);
  c.finished(1, {h100(750)});
  c.done();
  const std::string text = out.text();
  const auto at = text.find("% of published (data/reference.json): fake size=64 twin=64 88% of 794.5 TFLOP/s (ml-engineering MAMF");
  EXPECT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("; fake size=128 twin=128"), std::string::npos) << text;
  EXPECT_NE(text.find("94% of 794.5"), std::string::npos) << text;
  for (const auto& l : lines_of(text)) EXPECT_LE(l.size(), 160u) << l;
}

TEST_F(ConsoleTest, OneTablePerSuiteWithConstantAxesAbove) {
  const auto p = plan({"size=64,128", "mode=ok"});
  Capture out, err;
  ConsoleOptions o;
  o.out = out.f;
  o.err = err.f;
  Console c(p, o);
  c.started(0);
  c.finished(0, {ok_entry(1.25e-3, 0.5, 12.3)});
  c.started(1);
  c.finished(1, {skipped_entry("needs a GPU")});
  c.done();
  const auto lines = lines_of(out.text());
  ASSERT_GE(lines.size(), 4u) << out.text();
  EXPECT_EQ(lines[0], "fake: 2 cases on cpu (Test CPU); constant: mode=ok");
  EXPECT_NE(lines[1].find("size  twin"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("rate"), std::string::npos);
  EXPECT_NE(lines[1].find("time/run"), std::string::npos);
  EXPECT_NE(lines[1].find("status"), std::string::npos);
  EXPECT_NE(lines[2].find("12.3 TFLOP/s"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("1.25 ms"), std::string::npos);
  EXPECT_EQ(lines[2].substr(lines[2].size() - 2), "ok");
  EXPECT_NE(lines[3].find("skipped: needs a GPU"), std::string::npos) << lines[3];
  EXPECT_EQ(err.text(), "");  // not a terminal: no progress line (the rows are the progress)
}

TEST_F(ConsoleTest, NoLineIsWiderThanTheLimitAndLongStatusesBecomeNotes) {
  const auto p = plan({"size=64,128,256", "mode=ok"});
  Capture out, err;
  ConsoleOptions o;
  o.out = out.f;
  o.err = err.f;
  o.width = 80;
  Console c(p, o);
  const std::string reason(150, 'r');
  c.finished(0, {skipped_entry(reason)});
  c.finished(1, {skipped_entry(reason)});
  c.finished(2, {skipped_entry("short")});
  c.done();
  const std::string text = out.text();
  for (const std::string& l : lines_of(text)) EXPECT_LE(l.size(), 80u) << l;
  EXPECT_NE(text.find("skipped [1]"), std::string::npos) << text;
  EXPECT_EQ(text.find("skipped [2]"), std::string::npos) << "the same reason is one note";
  EXPECT_NE(text.find("skipped: short"), std::string::npos) << text;
  EXPECT_NE(text.find("  [1] skipped:"), std::string::npos) << text;
  EXPECT_NE(text.find("      rrrr"), std::string::npos) << text;
}

TEST_F(ConsoleTest, LiveLineOnATerminalAndProgressLinesWithoutTables) {
  const auto p = plan({"size=64,128", "mode=ok"});
  Capture out, err;
  ConsoleOptions o;
  o.out = out.f;
  o.err = err.f;
  o.live = true;
  Console live(p, o);
  live.started(0);
  EXPECT_NE(err.text().find("[1/2 0s, ? left] fake size=64 twin=64"), std::string::npos) << err.text();
  live.finished(0, {ok_entry(1e-3, 1, 1)});
  live.done();
  EXPECT_EQ(err.text().substr(err.text().size() - 4), "\r\033[K");  // the line is cleared
  // Google Benchmark's reporter prints the cases: the console gives one progress line per case.
  Capture out2, err2;
  ConsoleOptions g;
  g.out = out2.f;
  g.err = err2.f;
  g.tables = false;
  Console plain(p, g);
  plain.finished(0, {ok_entry(1e-3, 1, 1)});
  EXPECT_EQ(out2.text(), "");
  EXPECT_NE(err2.text().find("[1/2] fake size=64 twin=64: ok, 1 ms, 1.00 TFLOP/s"), std::string::npos) << err2.text();
}

TEST(WrapWords, KeepsEveryLineWithinTheWidth) {
  const auto lines = wrap_words("aaa bbb ccc ddd", 8, "  ");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "aaa bbb");
  EXPECT_EQ(lines[1], "  ccc");
  EXPECT_EQ(lines[2], "  ddd");
  for (const auto& l : wrap_words(std::string(30, 'x'), 10, "  ")) EXPECT_LE(l.size(), 10u);
}

// --benchmark_repetitions=N: one case, counted once; each repetition's entry carries its own
// measurement (compare's noise rule reads mean_s and noise_pct per repetition).
TEST_F(ConsoleTest, RepetitionsAreOneCaseWithTheirOwnMeasurements) {
  const fs::path file = fs::temp_directory_path() / ("gpubench-console-" + std::to_string(::getpid()) + ".json");
  HarnessOptions h = testing::fast_harness_options();
  h.benchmark = parse_benchmark_flags({"--benchmark_repetitions=3"});
  const auto p = plan({"size=4096", "mode=ok"});
  RunSummary s;
  {
    ResultsFile results(file, {{"host_name", "test"}});
    s = run_plan(p, h, results);
  }
  (void)parse_benchmark_flags({});  // back to Google Benchmark's defaults for the other tests
  EXPECT_EQ(s.ok, 1);
  EXPECT_EQ(s.skipped + s.failed, 0);
  std::ifstream in(file);
  const auto doc = nlohmann::ordered_json::parse(in);
  fs::remove(file);
  std::vector<double> means;
  for (const auto& e : doc["benchmarks"]) {
    if (e["run_type"] != "iteration") continue;
    const double mean_s = e["gpubench"]["measurement"]["mean_s"].get<double>();
    // real_time (us per run) is this repetition's own time, and so is its measurement block.
    EXPECT_NEAR(e["real_time"].get<double>() * 1e-6, mean_s, 1e-3 * mean_s) << e.dump();
    means.push_back(mean_s);
  }
  ASSERT_EQ(means.size(), 3u);
  EXPECT_FALSE(means[0] == means[1] && means[1] == means[2]) << "every repetition carries the same figures";
}

}  // namespace
}  // namespace gpubench
