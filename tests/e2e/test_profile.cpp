// --profile end to end on a machine without a GPU: the run completes and the results context
// says why each GPU instrument is off (the "done when"), the host sampler reports, and
// bad --profile/--timer/--sample-interval values are usage errors.
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct Profile : CliTest {
  nlohmann::json run(const std::string& extra, const std::string& env = "") {
    const fs::path out = dir / "r.json";
    last = gpubench(fmt::format("run --device cpu --suite memory --axis test=triad --axis size=64k --min-time 0.02 "
                                "--warmup 0.005 -o {} {}",
                                out.string(), extra),
                    env);
    EXPECT_EQ(last.code, 0) << last.err;
    return nlohmann::json::parse(slurp(out));
  }
  Output last;
};

TEST_F(Profile, EveryGpuInstrumentSaysWhyItIsOffAndTheRunGoesOn) {
  const auto doc = run("--profile trace,metrics,telemetry --trace-dir " + (dir / "traces").string());
  const auto& p = doc["context"]["gpubench"]["profile"];
  for (const char* name : {"trace", "metrics", "telemetry"}) {
    ASSERT_TRUE(p.contains(name)) << p;
    const std::string status = p[name];
    EXPECT_EQ(status.rfind("off: no CUDA device", 0), 0u) << name << ": " << status;
    EXPECT_NE(last.err.find(fmt::format("--profile {}: off: ", name)), std::string::npos) << last.err;
  }
  EXPECT_FALSE(p.contains("nvtx"));  // not asked for
  ASSERT_EQ(doc["benchmarks"].size(), 1u);
  EXPECT_EQ(doc["benchmarks"][0]["gpubench"]["status"], "ok");
  EXPECT_FALSE(doc["benchmarks"][0]["gpubench"].contains("profile"));  // no instrument had anything to add
  EXPECT_TRUE(fs::is_empty(dir / "traces"));  // tracing off: no trace written
}

TEST_F(Profile, WithTheFakeNvmlTelemetryIsStillOffForACpuRun) {
  // NVML is there (the fake), but no CUDA device is in the run: nothing to sample.
  const auto doc = run("--profile telemetry", fmt::format("LD_LIBRARY_PATH={}/current", GPUBENCH_FAKE_NVML_DIR));
  EXPECT_EQ(doc["context"]["gpubench"]["profile"]["telemetry"].get<std::string>().rfind("off: no CUDA device in this run", 0), 0u);
}

TEST_F(Profile, DefaultsAreNvtxTelemetryAndTheHostSampler) {
  const auto doc = run("--sample-interval 5");
  const auto& p = doc["context"]["gpubench"]["profile"];
  EXPECT_EQ(p["nvtx"], "on");
  EXPECT_EQ(p["host"], "on");
  EXPECT_EQ(p["sample_interval_ms"], 5.0);
  EXPECT_EQ(p["telemetry"].get<std::string>().rfind("off: ", 0), 0u);
  const auto& host = doc["benchmarks"][0]["gpubench"]["profile"]["host"];
  EXPECT_GT(host["cpu_pct"].get<double>(), 0);
  EXPECT_GT(host["rss_max_bytes"].get<double>(), 0);
  EXPECT_GE(host["samples"].get<int>(), 2);
}

TEST_F(Profile, NoneWritesNoInstrument) {
  const auto doc = run("--profile none");
  EXPECT_TRUE(doc["context"]["gpubench"]["profile"].empty());
  EXPECT_FALSE(doc["benchmarks"][0]["gpubench"].contains("profile"));
}

TEST_F(Profile, BadValuesAreUsageErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--profile nvtx,cupti", "--profile 'cupti': unknown instrument"},
      {"--profile nvtx,", "--profile 'nvtx,': empty item"},
      {"--profile none,trace", "none cannot be combined"},
      {"--profile 'metrics=sm__x:bad name'", "bad metric name 'bad name'"},
      {"--profile trace=1", "only metrics takes a value"},
      {"--timer wall", "--timer 'wall': accepted timers are default, cupti"},
      {"--sample-interval 0", "--sample-interval 0: expected a number above 0"},
  };
  for (const auto& [args, expected] : cases) {
    const Output r = gpubench("run --device cpu " + args + " -o " + (dir / "x.json").string());
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir / "x.json")) << args;
  }
}

}  // namespace
}  // namespace gpubench::e2e
