// Reading results files: the fixture of docs/results-format.md, and the errors for files
// that are missing, not JSON, not gpubench output or of another schema version.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.hpp"
#include "bench/core/errors.hpp"
#include "reports/results_reader.hpp"

namespace {

using gpubench::UsageError;
using gpubench::reports::read_results;
using gpubench::reports::ResultsFile;

const std::filesystem::path kFixtures = GPUBENCH_FIXTURES_DIR;

using gpubench::testing::usage_error;

std::string read_error(const std::filesystem::path& path) {
  return usage_error([&] { read_results(path); });
}

// Writes `text` to a file under the test temp directory and returns its path.
std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path;
}

// A minimal valid results file with one entry whose timing fields are `timing` (JSON members).
std::string one_entry_file(const std::string& timing) {
  return R"({"context": {"host_name": "h", "gpubench": {"schema_version": 1}},
            "benchmarks": [{"name": "copy/bytes:1024", "run_type": "iteration", )" +
         timing +
         R"(, "gpubench": {"suite": "copy", "device": "cuda:0", "device_name": "NVIDIA H200",
            "axes": {"bytes": 1024}, "status": "ok"}}]})";
}

TEST(ResultsReader, ReadsTheSmallFixture) {
  const ResultsFile file = read_results(kFixtures / "results_small.json");
  EXPECT_EQ(file.path, kFixtures / "results_small.json");
  EXPECT_EQ(file.host(), "gpu-node-07");
  EXPECT_EQ(file.context["gpubench"]["version"], "0.1.0");
  ASSERT_EQ(file.entries.size(), 3u);

  const auto& cpu = file.entries[0];
  EXPECT_EQ(cpu.name, "gemm/m:1024/n:1024/k:1024/dtype:fp32/device:cpu");
  EXPECT_EQ(cpu.run_type, "iteration");
  EXPECT_EQ(cpu.suite, "gemm");
  EXPECT_EQ(cpu.device, "cpu");
  EXPECT_EQ(cpu.status, "ok");
  ASSERT_TRUE(cpu.real_time_s.has_value());
  EXPECT_DOUBLE_EQ(*cpu.real_time_s, 12.5e-3);  // 12.5 ms
  EXPECT_EQ(cpu.iterations, 40);
  EXPECT_EQ(cpu.measurement["timer"], "host_steady");

  const auto& gpu = file.entries[1];
  EXPECT_EQ(gpu.device, "cuda:0");
  EXPECT_EQ(gpu.device_name, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(gpu.real_time_s.has_value());
  EXPECT_DOUBLE_EQ(*gpu.real_time_s, 1400e-6);  // 1400 us
  EXPECT_EQ(gpu.axes["dtype"], "bf16");
  EXPECT_EQ(gpu.axes["m"], 8192);
  // Axes keep the order the file lists them in, not json's sorted order.
  EXPECT_EQ(gpu.axis_names, (std::vector<std::string>{"m", "n", "k", "dtype"}));
  EXPECT_EQ(gpu.metrics["peak_key"], "bf16_tensor");
  EXPECT_EQ(gpu.verification["passed"], true);
  EXPECT_EQ(gpu.measurement["samples"], 30);

  const auto& skipped = file.entries[2];
  EXPECT_EQ(skipped.status, "skipped");
  EXPECT_EQ(skipped.reason, "needs 206.2 GB of device memory, cuda:0 has 84.9 GB");
  EXPECT_FALSE(skipped.real_time_s.has_value());
  EXPECT_FALSE(skipped.iterations.has_value());
  EXPECT_TRUE(skipped.metrics.empty());
}

TEST(ResultsReader, MissingFile) {
  const auto path = kFixtures / "no_such_results.json";
  EXPECT_EQ(read_error(path), path.string() + ": cannot open: it does not exist");
}

TEST(ResultsReader, DirectoryCannotBeOpened) {
  const std::string msg = read_error(kFixtures);
  EXPECT_EQ(msg.rfind(kFixtures.string() + ": cannot open", 0), 0u) << msg;
}

TEST(ResultsReader, NotJson) {
  const auto path = kFixtures / "not_json.json";
  const std::string msg = read_error(path);
  EXPECT_EQ(msg.rfind(path.string() + ": not valid JSON (", 0), 0u) << msg;
  EXPECT_EQ(msg.back(), ')') << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(ResultsReader, EmptyFileIsNotJson) {
  const auto path = write_temp("gpubench_empty.json", "");
  const std::string msg = read_error(path);
  EXPECT_EQ(msg.rfind(path.string() + ": not valid JSON (", 0), 0u) << msg;
}

TEST(ResultsReader, PlainGoogleBenchmarkOutputIsRejected) {
  const auto path = kFixtures / "plain_gbench.json";
  EXPECT_EQ(read_error(path),
            path.string() + ": not a gpubench results file (no context.gpubench)");
}

TEST(ResultsReader, EntryWithoutGpubenchObjectIsRejected) {
  const auto path = kFixtures / "entry_without_gpubench.json";
  const std::string msg = read_error(path);
  EXPECT_EQ(msg.rfind(path.string() + ": not a gpubench results file (", 0), 0u) << msg;
  EXPECT_NE(msg.find("benchmarks[1] \"BM_Sort/1024\""), std::string::npos) << msg;
}

TEST(ResultsReader, OtherSchemaVersionIsRejected) {
  const auto path = kFixtures / "schema_v2.json";
  EXPECT_EQ(read_error(path),
            path.string() + ": schema_version 2 is not supported (this gpubench reads 1)");
}

TEST(ResultsReader, ConvertsEveryTimeUnitToSeconds) {
  const std::vector<std::pair<std::string, double>> cases = {
      {R"("real_time": 250, "time_unit": "ns")", 250e-9},
      {R"("real_time": 250, "time_unit": "us")", 250e-6},
      {R"("real_time": 250, "time_unit": "ms")", 250e-3},
      {R"("real_time": 2.5, "time_unit": "s")", 2.5},
      {R"("real_time": 250)", 250e-9},  // Google Benchmark's default unit
  };
  for (const auto& [timing, seconds] : cases) {
    const auto path = write_temp("gpubench_units.json", one_entry_file(timing));
    const ResultsFile file = read_results(path);
    ASSERT_EQ(file.entries.size(), 1u);
    ASSERT_TRUE(file.entries[0].real_time_s.has_value()) << timing;
    EXPECT_DOUBLE_EQ(*file.entries[0].real_time_s, seconds) << timing;
  }
}

TEST(ResultsReader, UnknownTimeUnitIsAnError) {
  const auto path =
      write_temp("gpubench_bad_unit.json", one_entry_file(R"("real_time": 1, "time_unit": "min")"));
  const std::string msg = read_error(path);
  EXPECT_EQ(msg.rfind(path.string() + ": benchmarks[0] \"copy/bytes:1024\": \"time_unit\"", 0),
            0u)
      << msg;
}

// Found by tests/fuzz/fuzz_results_reader: nlohmann reports a number beyond double as
// out_of_range, not parse_error, and it escaped as an uncaught non-usage error.
TEST(ResultsReader, NumberTooLargeIsNotJson) {
  const auto path = write_temp("gpubench_huge_number.json", one_entry_file(R"("real_time": 1e999)"));
  const std::string msg = read_error(path);
  EXPECT_EQ(msg.rfind(path.string() + ": not valid JSON (number overflow", 0), 0u) << msg;
}

TEST(ResultsReader, TextOverloadReadsLikeTheFile) {
  const std::string text = one_entry_file(R"("real_time": 2, "time_unit": "ms", "iterations": 5)");
  const ResultsFile file = gpubench::reports::read_results_text(text, "in-memory.json");
  EXPECT_EQ(file.path, "in-memory.json");
  ASSERT_EQ(file.entries.size(), 1u);
  EXPECT_DOUBLE_EQ(*file.entries[0].real_time_s, 2e-3);
  const std::string msg = usage_error([] { gpubench::reports::read_results_text("{", "in-memory.json"); });
  EXPECT_EQ(msg.rfind("in-memory.json: not valid JSON (", 0), 0u) << msg;
}

TEST(ResultsReader, FileWithNoFinishedCaseHasNoEntries) {
  const auto path = write_temp(
      "gpubench_no_cases.json",
      R"({"context": {"host_name": "h", "gpubench": {"schema_version": 1}}, "benchmarks": []})");
  const ResultsFile file = read_results(path);
  EXPECT_TRUE(file.entries.empty());
  EXPECT_EQ(file.host(), "h");
}

}  // namespace
