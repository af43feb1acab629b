// The Markdown report (render_markdown: `gpubench report` with default options): environment
// table, per-suite tables with % of peak, single-device measurement columns, skipped cases.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/document.hpp"
#include "reports/markdown.hpp"

namespace {

using gpubench::reports::read_results;
using gpubench::reports::render_markdown;
using gpubench::reports::ResultEntry;
using gpubench::reports::ResultsFile;
using gpubench::reports::SpecSheet;

const std::filesystem::path kFixtures = GPUBENCH_FIXTURES_DIR;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The line of `text` that contains `part` ("" if none), to assert on whole table rows.
std::string line_with(const std::string& text, const std::string& part) {
  const auto at = text.find(part);
  if (at == std::string::npos) return {};
  const auto begin = text.rfind('\n', at) + 1;  // npos + 1 == 0 for the first line
  const auto end = text.find('\n', at);
  return text.substr(begin, end - begin);
}

ResultsFile small_fixture() { return read_results(kFixtures / "results_small.json"); }

// An ok GPU entry built in code, for the cases the fixture does not cover.
ResultEntry gpu_entry(const std::string& suite, double seconds) {
  ResultEntry e;
  e.name = suite + "/case";
  e.run_type = "iteration";
  e.suite = suite;
  e.device = "cuda:0";
  e.device_name = "NVIDIA H100 80GB HBM3";
  e.status = "ok";
  e.real_time_s = seconds;
  e.axes = {{"bytes", 1 << 30}};
  e.axis_names = {"bytes"};
  e.measurement = {{"samples", 12}, {"noise_pct", 0.3}, {"noisy", false}};
  return e;
}

TEST(Markdown, RendersTheFixture) {
  const std::string md = render_markdown({small_fixture()}, SpecSheet::builtin());

  EXPECT_EQ(md.rfind("# gpubench report\n", 0), 0u);
  EXPECT_TRUE(contains(md, "1 TFLOP/s = 1e12 FLOP/s, 1 GB/s = 1e9 B/s"));

  // Environment.
  EXPECT_TRUE(contains(md, "## Environment\n"));
  const std::string run = line_with(md, "| #1 |");
  EXPECT_TRUE(contains(run, "| gpu-node-07 |")) << run;
  EXPECT_TRUE(contains(run, "| 2025-06-02T14:03:11Z |")) << run;
  EXPECT_TRUE(contains(run, "| 0.1.0 Release |")) << run;
  EXPECT_TRUE(contains(run, "cuda:0: NVIDIA H100 80GB HBM3 (SM clock 1980/1980 MHz)")) << run;
  EXPECT_TRUE(contains(run, "cublas 13.0.0, openblas 0.3.21 (DYNAMIC\\_ARCH, pthreads)")) << run;

  // The suite table: axes in the file's order, then one column group per device.
  EXPECT_TRUE(contains(md, "## gemm\n"));
  // The first GPU is the baseline: the CPU column gets the ratio column.
  EXPECT_TRUE(contains(md, "| m | n | k | dtype | AMD EPYC 9354 32-Core Processor @ gpu-node-07 | x base | "
                           "NVIDIA H100 80GB HBM3 @ gpu-node-07 | % peak | % of published |\n"));
  // 2 * 8192^3 FLOP in 1.4 ms = 785.4 TFLOP/s; against the H100 SXM dense bf16 figure of
  // 989.5 that is 79.4%. The fixture records no pct_of_peak, so this comes from the sheet.
  // Against the published H100 bf16 MAMF (794.5, data/reference.json): 98.9%.
  EXPECT_EQ(line_with(md, "| 8192 | 8192"), "| 8192 | 8192 | 8192 | bf16 | - | - | 785 TFLOP/s | 79.4% | 98.9% |");
  // The CPU is not in the sheet: no % of peak.
  EXPECT_EQ(line_with(md, "| 1024 | 1024"), "| 1024 | 1024 | 1024 | fp32 | 0.172 TFLOP/s | - | - | - | - |");

  // The skipped case is listed with its reason, and only there.
  const auto problems = md.find("## Skipped and failed\n");
  ASSERT_NE(problems, std::string::npos);
  EXPECT_FALSE(contains(md.substr(0, problems), "131072"));
  EXPECT_EQ(line_with(md, "| gemm/m:131072"),
            "| #1 | gemm | gemm/m:131072/n:131072/k:131072/dtype:fp32/device:cuda:0 | cuda:0 | skipped | "
            "needs 206.2 GB of device memory, cuda:0 has 84.9 GB |");
}

TEST(Markdown, UnknownDeviceHasNoPercentOfPeak) {
  const SpecSheet empty = SpecSheet::from_json_text(R"({"schema_version": 1, "gpus": []})", "t");
  const std::string md = render_markdown({small_fixture()}, empty);
  EXPECT_EQ(line_with(md, "| 8192 | 8192"), "| 8192 | 8192 | 8192 | bf16 | - | - | 785 TFLOP/s |");
}

TEST(Markdown, RecordedPercentOfPeakWins) {
  ResultsFile file = small_fixture();
  file.entries[1].metrics["peak"] = 7850.0;  // the recording binary's figure: 10%
  const std::string md = render_markdown({file}, SpecSheet::builtin());
  EXPECT_TRUE(contains(line_with(md, "| 8192 | 8192"), "| 785 TFLOP/s | 10.0% |"));
}

TEST(Markdown, OneDeviceShowsTimeNoiseAndSamples) {
  ResultsFile file;
  file.path = "t.json";
  ResultEntry copy = gpu_entry("copy", 400e-6);
  copy.metrics = {{"bytes", 1.2e9}, {"gbps", 3000.0}, {"tflops", 0.001}, {"peak_key", "memory_bandwidth"}};
  file.entries.push_back(copy);
  const std::string md = render_markdown({file}, SpecSheet::builtin());
  EXPECT_TRUE(contains(md, "## copy\n"));
  // One case: its axes are said once above the table, which keeps only the measurements.
  EXPECT_TRUE(contains(md, "Every case: bytes=1073741824.\n")) << md;
  EXPECT_TRUE(contains(md, "| NVIDIA H100 80GB HBM3 | % peak | time per run | noise % | samples |"));
  // 3000 GB/s against the H100 SXM's 3350 GB/s: in the suite's table, and in the one-run lead.
  EXPECT_EQ(line_with(md, "| 3000 GB/s | 89.6%"), "| 3000 GB/s | 89.6% | 400 us | 0.3 | 12 |");
  EXPECT_TRUE(contains(md, "| copy | GB/s (1 case) | 3000 GB/s | bytes=1073741824 | no ceiling measured | 89.6% |")) << md;
}

TEST(Markdown, TimesUseAReadableUnitWithThreeSignificantDigits) {
  const std::vector<std::pair<double, std::string>> cases = {
      {5e-9, "5.00 ns"}, {123.4e-9, "123 ns"}, {999.7e-6, "1.00 ms"}, {1.25e-5, "12.5 us"}, {2.5, "2.50 s"}, {1234.0, "1234 s"},
  };
  for (const auto& [seconds, text] : cases) EXPECT_EQ(gpubench::reports::format_duration(seconds), text);
}

TEST(Markdown, EscapesPipesAndNewlinesInCells) {
  ResultsFile file = small_fixture();
  file.entries[2].reason = "cuBLAS said: unsupported | try\nanother dtype";
  const std::string md = render_markdown({file}, SpecSheet::builtin());
  EXPECT_TRUE(contains(md, "| cuBLAS said: unsupported \\| try another dtype |"));
}

TEST(Markdown, MarksNoisyMeasurements) {
  ResultsFile file = small_fixture();
  file.entries[1].measurement["noise_pct"] = 7.3;
  file.entries[1].measurement["noisy"] = true;
  const std::string md = render_markdown({file}, SpecSheet::builtin());
  EXPECT_TRUE(contains(line_with(md, "| 8192 | 8192"), "| 785 TFLOP/s (noisy) |"));
  EXPECT_TRUE(contains(md, "### Throttled or noisy cases"));
}

TEST(Markdown, AxisColumnsAreTheUnionInOrderOfFirstAppearance) {
  ResultsFile file;
  file.path = "t.json";
  ResultEntry a = gpu_entry("s", 1e-3);
  a.axes = {{"n", 4}, {"dtype", "bf16"}};
  a.axis_names = {"n", "dtype"};
  ResultEntry b = gpu_entry("s", 2e-3);
  b.axes = {{"n", 8}, {"batch", 2}};
  b.axis_names = {"n", "batch"};
  file.entries = {a, b};
  const std::string md = render_markdown({file}, SpecSheet::builtin());
  EXPECT_TRUE(contains(md, "| n | dtype | batch | NVIDIA H100 80GB HBM3 | time per run |"));
  EXPECT_TRUE(contains(md, "| 4 | bf16 | - | 1000 runs/s | 1.00 ms |"));
  EXPECT_TRUE(contains(md, "| 8 | - | 2 | 500 runs/s | 2.00 ms |"));
}

TEST(Markdown, SeveralFilesJoinTheSameCaseOnOneRow) {
  ResultsFile second = small_fixture();
  second.context["host_name"] = "gpu-node-08";
  second.entries[1].real_time_s = 2.8e-3;  // half the speed
  second.entries[1].metrics["tflops"] = 785.0 / 2;
  ResultEntry mean = second.entries[1];
  mean.run_type = "aggregate";
  mean.aggregate_name = "mean";
  second.entries.push_back(mean);  // aggregates are not rows
  const std::string md = render_markdown({small_fixture(), second}, SpecSheet::builtin());
  const std::string row = line_with(md, "| 8192 | 8192");
  EXPECT_TRUE(contains(row, "| 785 TFLOP/s | 79.4% |")) << row;
  EXPECT_TRUE(contains(row, "| 392 TFLOP/s | 0.500x | 39.7% |")) << row;
  EXPECT_TRUE(contains(md, "| #2 | gemm | gemm/m:131072"));
}

TEST(Markdown, NoProblemsSectionWhenEverythingRan) {
  ResultsFile file = small_fixture();
  file.entries.pop_back();  // drop the skipped case
  const std::string md = render_markdown({file}, SpecSheet::builtin());
  EXPECT_FALSE(contains(md, "Skipped and failed"));
}

}  // namespace
