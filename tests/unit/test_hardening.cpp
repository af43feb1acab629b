// The hardening helpers of issue 19, one layer down from tests/e2e/test_robustness.cpp: the
// output-path validator, the results lock, stale leftovers, size products, Google Benchmark
// flag checks, resource exhaustion, and the harness's "checked nothing is never ok".
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
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

// describe_path, behind every message that says what a path is: one case per kind.
TEST(PathMessages, EachKindIsSaidAsWhatItIs) {
  TempDir t;
  const std::string d = t.path.string();
  std::ofstream(t.path / "plain") << "x";
  fs::create_directories(t.path / "folder");
  ASSERT_EQ(::mkfifo((t.path / "fifo").c_str(), 0644), 0);
  fs::create_symlink(t.path / "fifo", t.path / "to-fifo");
  fs::create_symlink(t.path / "gone", t.path / "dangling");
  fs::create_symlink(t.path / "folder", t.path / "to-folder");
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock_path = d + "/sock";
  ASSERT_LT(sock_path.size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, sock_path.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(describe_path(d + "/plain"), "is a regular file");
  EXPECT_EQ(describe_path(d + "/folder"), "is a folder");
  EXPECT_EQ(describe_path(d + "/fifo"), "is a FIFO");
  EXPECT_EQ(describe_path(sock_path), "is a socket");
  EXPECT_EQ(describe_path("/dev/null"), "is a character device");
  EXPECT_EQ(describe_path(d + "/to-fifo"), "is a symbolic link to a FIFO");
  EXPECT_EQ(describe_path(d + "/to-folder"), "is a symbolic link to a folder");
  EXPECT_EQ(describe_path(d + "/dangling"), "is a symbolic link to nothing (its target does not exist)");
  EXPECT_EQ(describe_path(d + "/missing"), "does not exist");
  EXPECT_EQ(describe_path(d + "/plain/r.json"), "does not exist: " + d + "/plain is a regular file, not a folder");
  EXPECT_EQ(describe_path(d + "/plain/a/b/r.json"), "does not exist: " + d + "/plain is a regular file, not a folder");
  EXPECT_EQ(describe_path(d + "/fifo/r.json"), "does not exist: " + d + "/fifo is a FIFO, not a folder");
  EXPECT_EQ(file_kind(S_IFREG | 0644), "a regular file");
  ::close(sock);

  // The validator's messages, per kind: what is there, never "not a regular file" for a regular one.
  auto out_file = [&](const std::string& p) { return usage_message([&] { validate_output_file(p, "--out"); }); };
  auto out_folder = [&](const std::string& p) { return usage_message([&] { validate_output_folder(p, "--out"); }); };
  EXPECT_EQ(out_folder(d + "/plain"), "--out '" + d + "/plain': " + d + "/plain is a regular file, not a folder");
  EXPECT_EQ(out_folder(d + "/fifo"), "--out '" + d + "/fifo': " + d + "/fifo is a FIFO, not a folder");
  EXPECT_EQ(out_folder("/dev/null"), "--out '/dev/null': /dev/null is a character device, not a folder");
  EXPECT_EQ(out_folder(d + "/plain/sub"), "--out '" + d + "/plain/sub': " + d + "/plain is a regular file, not a folder");
  EXPECT_EQ(out_folder(d + "/missing/sub"), "") << "a missing folder is created later";
  EXPECT_EQ(out_file(d + "/folder"), "--out '" + d + "/folder': is a folder; give a file name");
  EXPECT_EQ(out_file(d + "/fifo"),
            "--out '" + d + "/fifo': exists and is a FIFO; gpubench writes only regular files (it replaces them whole)");
  EXPECT_NE(out_file(d + "/to-fifo").find("exists and is a symbolic link to a FIFO"), std::string::npos);
  EXPECT_NE(out_file("/dev/null").find("exists and is a character device"), std::string::npos);
  EXPECT_EQ(out_file(d + "/plain/r.json"), "--out '" + d + "/plain/r.json': " + d + "/plain is a regular file, not a folder");
  EXPECT_EQ(out_file(d + "/plain"), "") << "an existing regular file is replaced";
  EXPECT_EQ(out_file(d + "/dangling"), "") << "a dangling link is replaced by the output";
  // Unwritable: root writes everywhere, so only as another user (the e2e test runs as nobody too).
  if (::geteuid() != 0) {
    fs::create_directories(t.path / "ro");
    fs::permissions(t.path / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_NE(out_file(d + "/ro/r.json").find("folder " + d + "/ro is not writable"), std::string::npos);
    fs::permissions(t.path / "ro", fs::perms::owner_all);
  }
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
