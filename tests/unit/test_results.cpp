#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "gpubench/version.hpp"
#include "bench/core/context.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/results.hpp"
#include "fake_suite.hpp"

namespace gpubench {
namespace {
namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("gpubench-test-" + std::to_string(::getpid()) + "-" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

nlohmann::ordered_json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::ordered_json::parse(in);
}

TEST(Results, FileIsValidAfterEveryCaseAndHasNoTempLeft) {
  TempDir dir;
  const fs::path file = dir.path / "r.json";
  ResultsFile results(file, {{"host_name", "h"}});
  EXPECT_EQ(read_json(file)["benchmarks"].size(), 0u);
  results.add({{"name", "a"}});
  results.add({{"name", "b"}});
  auto doc = read_json(file);
  ASSERT_EQ(doc["benchmarks"].size(), 2u);
  EXPECT_EQ(doc["benchmarks"][1]["name"], "b");
  EXPECT_EQ(doc["context"]["host_name"], "h");
  std::size_t files = 0;
  for (auto& e : fs::directory_iterator(dir.path)) (void)e, ++files;
  EXPECT_EQ(files, 1u);  // the temporary file was renamed, not left behind
}

TEST(Results, AtomicWriteReplacesWholeFile) {
  TempDir dir;
  const fs::path file = dir.path / "x.json";
  write_file_atomically(file, std::string(100000, 'a'));
  write_file_atomically(file, "short");
  std::ifstream in(file);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "short");
}

TEST(Results, OutputPathChecks) {
  TempDir dir;
  EXPECT_NO_THROW(check_output_path(dir.path / "new" / "sub" / "r.json"));  // creates folders
  EXPECT_TRUE(fs::is_directory(dir.path / "new" / "sub"));
  EXPECT_THROW(check_output_path(dir.path), UsageError);  // a directory
  std::ofstream(dir.path / "plain") << "x";
  EXPECT_THROW(check_output_path(dir.path / "plain" / "r.json"), UsageError);  // parent is a file
  EXPECT_THROW(check_output_path(""), UsageError);
}

TEST(Results, DefaultPathHasHostAndUtcTimestamp) {
  const std::string p = default_results_path("node7").string();
  EXPECT_EQ(p.rfind("results/node7-", 0), 0u);
  EXPECT_EQ(p.size(), std::string("results/node7-20261202T101010Z.json").size());
  EXPECT_EQ(p.substr(p.size() - 6), "Z.json");
}

TEST(Context, RecordsBuildCpuDevicesAndLibrariesWithoutAGpu) {
  testing::FakeSuite suite;
  DeviceInventory inv;
  inv.cpu = testing::fake_cpu();
  inv.runtime_version = 13000;
  inv.cuda_unavailable_reason = "no NVIDIA driver is loaded (cudaErrorInsufficientDriver)";
  DeviceInfo gpu = testing::fake_gpu(0);
  gpu.sm_count = 132;
  gpu.memory_bytes = 80LL << 30;
  gpu.current_sm_clock_mhz = 1980;
  RunDescription run{"gpubench run", "quick", {"fake"}, MeasureOptions{}};
  auto ctx = capture_context(inv, {inv.cpu, gpu}, {&suite}, run);
  // Google Benchmark's fields, which its tools expect.
  for (const char* key : {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "cpu_scaling_enabled", "caches",
                          "load_avg", "library_build_type"}) {
    EXPECT_TRUE(ctx.contains(key)) << key;
  }
  const auto& g = ctx["gpubench"];
  EXPECT_EQ(g["schema_version"], kResultsSchemaVersion);
  EXPECT_FALSE(g["version"].get<std::string>().empty());
  EXPECT_TRUE(g.contains("git_revision"));
  EXPECT_EQ(g["cpu"]["model"], "Test CPU");
  EXPECT_EQ(g["cuda"]["runtime_version"], kBuiltWithCuda ? "13.0" : kNotBuiltWithCuda);
  EXPECT_TRUE(g["cuda"]["driver_version"].is_null());
  EXPECT_EQ(g["cuda"]["available"], false);
  EXPECT_NE(g["cuda"]["reason"].get<std::string>().find("no NVIDIA driver"), std::string::npos);
  ASSERT_EQ(g["devices"].size(), 2u);
  EXPECT_EQ(g["devices"][1]["id"], "cuda:0");
  EXPECT_EQ(g["devices"][1]["sm_count"], 132);
  EXPECT_EQ(g["devices"][1]["current_sm_clock_mhz"], 1980);
  EXPECT_FALSE(g["devices"][1].contains("current_memory_clock_mhz"));  // unknown: absent, not invented
  EXPECT_EQ(g["libraries"]["fakelib"], "1.2.3");
  EXPECT_EQ(g["options"]["preset"], "quick");
}

}  // namespace
}  // namespace gpubench
