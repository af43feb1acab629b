// The hardening helpers of issue 19, one layer down from tests/e2e/test_robustness.cpp: the
// output-path validator, the results lock, stale leftovers, size products, Google Benchmark
// flag checks, resource exhaustion, and the harness's "checked nothing is never ok".
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "bench/core/errors.hpp"
#include "bench/core/harness.hpp"
#include "bench/core/paths.hpp"
#include "bench/core/resources.hpp"
#include "bench/core/sizes.hpp"
#include "fake_suite.hpp"
#include "test_util.hpp"

namespace gpubench {
namespace {
namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("gpubench-hardening-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(OutputPaths, RefusesWhatIsNotARegularFileAndCreatesNothing) {
  TempDir t;
  const fs::path fifo = t.path / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_NE(usage_message([&] { validate_output_file(fifo, "--junit"); }).find("--junit"), std::string::npos);
  EXPECT_NE(usage_message([&] { validate_output_file(fifo, "--out"); }).find("FIFO"), std::string::npos);
  EXPECT_THROW(validate_output_file("/dev/null", "--out"), UsageError);
  EXPECT_THROW(validate_output_file(t.path, "--out"), UsageError);  // a folder
  EXPECT_THROW(validate_output_file("", "--out"), UsageError);
  EXPECT_THROW(validate_output_file(t.path / "new/", "--out"), UsageError);
  EXPECT_THROW(validate_output_file(t.path / std::string(300, 'a'), "--out"), UsageError);
  EXPECT_THROW(validate_output_file(t.path / (std::string(245, 'a') + ".json"), "--out"), UsageError);  // no room for .tmpPID
  EXPECT_THROW(validate_output_file(t.path / "x\xff.json", "--out"), UsageError);
  EXPECT_THROW(validate_output_file(t.path / "\xc0\xaf.json", "--out"), UsageError);  // overlong UTF-8
  EXPECT_NO_THROW(validate_output_file(t.path / "caf\xc3\xa9.json", "--out"));      // valid UTF-8
  std::ofstream(t.path / "plain") << "x";
  EXPECT_NE(usage_message([&] { validate_output_file(t.path / "plain" / "r.json", "--out"); }).find("not a folder"),
            std::string::npos);
  EXPECT_NO_THROW(validate_output_file(t.path / "a" / "b" / "r.json", "--out"));
  EXPECT_FALSE(fs::exists(t.path / "a")) << "validation creates nothing";
  EXPECT_NO_THROW(validate_output_folder(t.path / "trace", "--trace-dir"));
  EXPECT_THROW(validate_output_folder(fifo, "--trace-dir"), UsageError);
  EXPECT_THROW(validate_output_folder(t.path / "plain", "--trace-dir"), UsageError);
  EXPECT_NO_THROW(check_output_path(t.path / "a" / "b" / "r.json"));
  EXPECT_TRUE(fs::is_directory(t.path / "a" / "b")) << "check_output_path creates the folders once valid";
}

TEST(OutputPaths, MessagesShortenAndEscapePaths) {
  EXPECT_EQ(printable_path("a\xff" "b"), "a\\xffb");
  const std::string shown = printable_path(std::string(5000, 'x'));
  EXPECT_LT(shown.size(), 200u);
  EXPECT_NE(shown.find("5000 bytes"), std::string::npos);
}

TEST(OutputPaths, AtomicWritesNeverReplaceADeviceNodeOrAFifo) {
  TempDir t;
  const fs::path fifo = t.path / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_THROW(write_file_atomically(fifo, "{}"), std::runtime_error);
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(std::distance(fs::directory_iterator(t.path), fs::directory_iterator()), 1) << "no temporary file left";
}

TEST(OutputLock, ASecondHolderIsRefusedNamingTheFirst) {
  TempDir t;
  const fs::path out = t.path / "r.json";
  {
    OutputLock first(out, "--out");
    EXPECT_TRUE(fs::exists(out.string() + ".lock"));
    // flock locks belong to open file descriptions: another open of the file in this process
    // conflicts as another process's would.
    const std::string msg = usage_message([&] { OutputLock second(out, "--out"); });
    EXPECT_NE(msg.find(fmt::format("pid {}", ::getpid())), std::string::npos) << msg;
  }
  EXPECT_FALSE(fs::exists(out.string() + ".lock")) << "released and removed";
  EXPECT_NO_THROW(OutputLock again(out, "--out"));
}

TEST(StaleLeftovers, OnlyThoseOfDeadProcessesAreRemoved) {
  TempDir t;
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  std::ofstream(t.path / ("r.json.tmp" + std::to_string(dead))) << "{";
  std::ofstream(t.path / ("r.json.tmp" + std::to_string(::getppid()))) << "{";  // alive
  std::ofstream(t.path / "r.json.tmpabc") << "{";                               // not a pid
  fs::create_directories(t.path / ("gpubench-isolate-" + std::to_string(dead)) / "x");
  EXPECT_EQ(remove_stale_leftovers(t.path, "r.json.tmp"), 1);
  EXPECT_EQ(remove_stale_leftovers(t.path, "gpubench-isolate-"), 1);
  EXPECT_FALSE(fs::exists(t.path / ("r.json.tmp" + std::to_string(dead))));
  EXPECT_TRUE(fs::exists(t.path / ("r.json.tmp" + std::to_string(::getppid()))));
  EXPECT_TRUE(fs::exists(t.path / "r.json.tmpabc"));
}

TEST(Sizes, ProductsAreOverflowCheckedAndLimited) {
  EXPECT_EQ(checked_size("t", {{"m", 1024}, {"n", 1024}, {"bytes", 4}}), 4 << 20);
  const std::string msg = usage_message([] { checked_size("gemm", {{"m", std::int64_t{1} << 62}, {"n", 4}}); });
  EXPECT_NE(msg.find("m=4611686018427387904 x n=4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("16 TiB"), std::string::npos) << msg;
  EXPECT_THROW(checked_size("t", {{"m", kMaxCaseBytes}, {"bytes", 2}}), UsageError);
  EXPECT_THROW(checked_size("t", {{"m", -1}}), UsageError);
  EXPECT_THROW(checked_sum("t", {"m", INT64_MAX}, {"pad", 1}), UsageError);
  EXPECT_EQ(checked_sum("t", {"m", 10}, {"pad", 2}), 12);
}

TEST(BenchmarkFlagChecks, EveryFlagIsValidatedBeforeAnyCase) {
  for (const char* bad : {"--benchmark_repetitions=-1", "--benchmark_repetitions=0", "--benchmark_repetitions=1001",
                          "--benchmark_repetitions=", "--benchmark_repetitions=2x", "--benchmark_min_time=inf",
                          "--benchmark_min_time=1e308", "--benchmark_min_time=nan", "--benchmark_list_tests",
                          "--benchmark_min_warmup_time=1", "--benchmark_enable_random_interleaving=true",
                          "--benchmark_perf_counters=CYCLES", "--benchmark_counters_tabular=maybe",
                          "--benchmark_context=x", "--benchmark_out=", "--benchmark_out=/dev/null"}) {
    EXPECT_THROW(parse_benchmark_flags({bad}), UsageError) << bad;
  }
  const BenchmarkFlags f = parse_benchmark_flags({"--benchmark_repetitions=3", "--benchmark_min_time=0.5s",
                                                  "--benchmark_counters_tabular=true", "--benchmark_context=a=b,c=d"});
  EXPECT_EQ(f.repetitions, 3);
  EXPECT_DOUBLE_EQ(*f.min_time_s, 0.5);
  parse_benchmark_flags({});  // Google Benchmark's flags back to their defaults for other tests
}

TEST(Resources, ExhaustionIsRecognisedAndAddressSpaceIsProbed) {
  EXPECT_TRUE(resource_exhaustion(std::bad_alloc()));
  EXPECT_TRUE(resource_exhaustion(std::system_error(EAGAIN, std::generic_category(), "thread")));
  EXPECT_TRUE(resource_exhaustion(std::system_error(EMFILE, std::generic_category(), "open")));
  EXPECT_FALSE(resource_exhaustion(std::system_error(EINVAL, std::generic_category(), "bad")));
  EXPECT_FALSE(resource_exhaustion(std::runtime_error("wrong answer")));
  EXPECT_NO_THROW(require_address_space(1 << 20, "a small probe"));
  EXPECT_THROW(require_address_space(std::size_t{1} << 62, "an impossible probe"), CaseSkipped);
}

TEST(Isolation, DefaultCaseTimeoutFollowsThePlannedTime) {
  MeasureOptions m;
  m.warmup_s = 1;
  m.min_time_s = 2;
  EXPECT_DOUBLE_EQ(default_case_timeout_s(m, 1), 300 + 20 * 3);
  EXPECT_DOUBLE_EQ(default_case_timeout_s(m, 5), 300 + 20 * 11);
}

struct HardenedHarness : ::testing::Test {
  testing::FakeSuite suite;
  fs::path file = fs::temp_directory_path() / ("gpubench-hardened-" + std::to_string(::getpid()) + ".json");
  ~HardenedHarness() override { fs::remove(file); }
  nlohmann::ordered_json run(const std::vector<std::string>& overrides, RunSummary& s) {
    PlanRequest r;
    r.axis_overrides = overrides;
    auto plan = make_plan({&suite}, r, {testing::fake_cpu()});
    ResultsFile results(file, {{"host_name", "test"}});
    s = run_plan(plan, testing::fast_harness_options(), results);
    std::ifstream in(file);
    return nlohmann::ordered_json::parse(in);
  }
};

TEST_F(HardenedHarness, ACaseThatCheckedNothingIsNeverOk) {
  RunSummary s;
  const auto doc = run({"size=64", "mode=unchecked"}, s);
  EXPECT_EQ(s.failed, 1);
  const auto& g = doc["benchmarks"][0]["gpubench"];
  EXPECT_EQ(g["status"], "failed");
  EXPECT_NE(g["reason"].get<std::string>().find("checked nothing"), std::string::npos);
  EXPECT_FALSE(doc["benchmarks"][0].contains("real_time"));
}

TEST_F(HardenedHarness, AThreadThatCannotBeCreatedSkipsTheCase) {
  RunSummary s;
  const auto doc = run({"size=64", "mode=nothreads,ok"}, s);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.ok, 1);
  EXPECT_EQ(doc["benchmarks"][0]["gpubench"]["status"], "skipped");
  EXPECT_NE(doc["benchmarks"][0]["gpubench"]["reason"].get<std::string>().find("out of resources"), std::string::npos);
}

TEST(AxisLimits, ValuesAboveAnAxisMaximumAreUsageErrors) {
  const AxisSpec spec{"batch", AxisKind::Int, "samples", {}, 1, {}, 4096};
  EXPECT_NO_THROW(parse_axis_values(spec, "4096"));
  EXPECT_THROW(parse_axis_values(spec, "4097"), UsageError);
  EXPECT_THROW(parse_axis_values(spec, "1:8192:x2"), UsageError);
}

}  // namespace
}  // namespace gpubench
