#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "bench/core/errors.hpp"
#include "bench/core/harness.hpp"
#include "bench/core/phase.hpp"
#include "fake_suite.hpp"
#include "test_util.hpp"
#include "profilers/nvtx/nvtx.hpp"

namespace gpubench {
namespace {
namespace fs = std::filesystem;

HarnessOptions fast_options() { return testing::fast_harness_options(); }

struct HarnessTest : ::testing::Test {
  testing::FakeSuite suite;
  fs::path file = fs::temp_directory_path() / ("gpubench-harness-" + std::to_string(::getpid()) + ".json");
  ~HarnessTest() override { fs::remove(file); }

  nlohmann::ordered_json run(const std::vector<std::string>& overrides, HarnessOptions h = fast_options(),
                             RunSummary* summary = nullptr) {
    PlanRequest r;
    r.axis_overrides = overrides;
    auto plan = make_plan({&suite}, r, {testing::fake_cpu()});
    ResultsFile results(file, {{"host_name", "test"}});
    RunSummary s = run_plan(plan, h, results);
    if (summary) *summary = s;
    std::ifstream in(file);
    return nlohmann::ordered_json::parse(in);
  }
};

TEST_F(HarnessTest, OkCaseHasGoogleBenchmarkFieldsAndGpubenchFields) {
  RunSummary s;
  auto doc = run({"size=256", "mode=ok"}, fast_options(), &s);
  EXPECT_EQ(s.ok, 1);
  ASSERT_EQ(doc["benchmarks"].size(), 1u);
  const auto& b = doc["benchmarks"][0];
  EXPECT_EQ(b["name"], "fake/size=256/twin=256/mode=ok/cpu");
  EXPECT_EQ(b["run_type"], "iteration");
  EXPECT_EQ(b["time_unit"], "us");
  const auto& g = b["gpubench"];
  EXPECT_EQ(g["status"], "ok");
  EXPECT_EQ(g["suite"], "fake");
  EXPECT_EQ(g["axes"]["size"], 256);
  EXPECT_EQ(g["verification"]["passed"], true);
  const auto& m = g["measurement"];
  // iterations = samples x runs per sample, real_time = mean seconds per run.
  EXPECT_EQ(b["iterations"].get<std::int64_t>(), m["samples"].get<std::int64_t>() * m["runs_per_sample"].get<std::int64_t>());
  EXPECT_NEAR(b["real_time"].get<double>() * 1e-6, m["mean_s"].get<double>(), 1e-3 * m["mean_s"].get<double>());
  EXPECT_GE(m["samples"].get<int>(), 5);
  EXPECT_EQ(m["timer"], "host_steady");
  // Counters are top-level numbers, as Google Benchmark writes them.
  EXPECT_TRUE(b["samples"].is_number());
  EXPECT_TRUE(b["noise_pct"].is_number());
  EXPECT_NEAR(g["metrics"]["tflops"].get<double>(), 256.0 / m["mean_s"].get<double>() / 1e12, 1e-6);
}

TEST_F(HarnessTest, WrongSkippedAndThrowingCasesReportNoTime) {
  RunSummary s;
  auto doc = run({"size=64", "mode=wrong,skip,throw,ok"}, fast_options(), &s);
  EXPECT_EQ(s.ok, 1);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.failed, 2);
  const auto& b = doc["benchmarks"];
  ASSERT_EQ(b.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(b[i]["error_occurred"], true);
    EXPECT_FALSE(b[i].contains("real_time")) << b[i].dump();
    EXPECT_FALSE(b[i]["gpubench"].contains("measurement"));
  }
  EXPECT_EQ(b[0]["gpubench"]["status"], "failed");
  EXPECT_EQ(b[0]["gpubench"]["reason"], "verification failed: sum is wrong");
  EXPECT_EQ(b[0]["gpubench"]["verification"]["passed"], false);
  EXPECT_EQ(b[1]["gpubench"]["status"], "skipped");
  EXPECT_EQ(b[1]["gpubench"]["reason"], "fake: not here");
  EXPECT_EQ(b[2]["gpubench"]["status"], "failed");
  EXPECT_EQ(b[2]["gpubench"]["reason"], "fake: broken");
  EXPECT_EQ(b[3]["gpubench"]["status"], "ok");  // the run went on after the failures
  // The suite's summary sits beside the entries and saw all four.
  EXPECT_EQ(doc["gpubench"]["summaries"]["fake"]["entries"], 4);
  EXPECT_EQ(doc["gpubench"]["summaries"]["fake"]["ok"], 1);
}

TEST_F(HarnessTest, UnsupportedPointIsRecordedAsSkipped) {
  auto doc = run({"mode=gpuonly", "size=8"});
  ASSERT_EQ(doc["benchmarks"].size(), 1u);
  EXPECT_EQ(doc["benchmarks"][0]["gpubench"]["status"], "skipped");
  EXPECT_EQ(doc["benchmarks"][0]["gpubench"]["reason"], "needs a GPU");
}

// Records the hooks it sees, and adds one field per case.
class RecordingInstrument final : public Instrument {
 public:
  std::string name() const override { return "recorder"; }
  void begin_case(const CaseInfo& c) override { log.push_back("case " + c.name + " of " + c.suite); }
  void begin_phase(const char* p) override { log.push_back(std::string("begin ") + p); }
  void end_phase() override { log.push_back("end"); }
  void end_case(const CaseOutcome& outcome, nlohmann::ordered_json& profile) override {
    log.push_back("end case");
    profile["seen"] = true;
    profile["runs"] = outcome.runs;
    profile["flops"] = outcome.metrics.flops;
  }
  std::vector<std::string> log;
};

TEST_F(HarnessTest, InstrumentsSeeEveryPhaseInOrder) {
  RecordingInstrument rec;
  HarnessOptions h = fast_options();
  h.instruments = {&rec};
  auto doc = run({"size=16", "mode=ok"}, h);
  EXPECT_EQ(rec.log, (std::vector<std::string>{"case fake/size=16/twin=16/mode=ok/cpu of fake", "begin setup", "end", "begin verify",
                                               "end", "begin warm-up", "end", "begin measure", "end", "end case"}));
  EXPECT_EQ(doc["benchmarks"][0]["gpubench"]["profile"]["recorder"]["seen"], true);
  EXPECT_EQ(doc["benchmarks"][0]["gpubench"]["profile"]["recorder"]["runs"], doc["benchmarks"][0]["iterations"]);
  EXPECT_EQ(doc["benchmarks"][0]["gpubench"]["profile"]["recorder"]["flops"], 16.0);
}

TEST_F(HarnessTest, SuitePhasesNestInsideTheHarnessPhases) {
  RecordingInstrument rec;
  HarnessOptions h = fast_options();
  h.instruments = {&rec};
  (void)run({"size=16", "mode=phased"}, h);
  // verify() calls run() once: its "inner" phase sits inside "verify"; the timed runs repeat it
  // inside "warm-up" and "measure".
  ASSERT_GE(rec.log.size(), 6u);
  EXPECT_EQ(rec.log[3], "begin verify");
  EXPECT_EQ(rec.log[4], "begin inner");
  EXPECT_EQ(rec.log[5], "end");
  EXPECT_EQ(rec.log[6], "end");
  { PhaseScope outside("outside"); }  // no case running: reaches no instrument
  EXPECT_EQ(std::count(rec.log.begin(), rec.log.end(), "begin outside"), 0);
}

// Wraps the case's timer and asks for a replay pass, as the CUPTI instruments do.
class ReplayingInstrument final : public Instrument {
 public:
  class Wrapped final : public Timer {
   public:
    explicit Wrapped(std::unique_ptr<Timer> base) : base_(std::move(base)) {}
    void start() override { base_->start(); }
    double stop() override { return base_->stop(); }
    const char* kind() const override { return "wrapped"; }

   private:
    std::unique_ptr<Timer> base_;
  };
  std::string name() const override { return "replayer"; }
  void begin_phase(const char* p) override { phases.push_back(p); }
  std::unique_ptr<Timer> timer(std::unique_ptr<Timer> base) override { return std::make_unique<Wrapped>(std::move(base)); }
  bool wants_replay() const override { return true; }
  void replay(const Replay& r) override {
    replay_phase = phases.back();
    r.run();
    r.run();
    r.synchronize();
    replayed += 2;
  }
  void end_case(const CaseOutcome&, nlohmann::ordered_json& profile) override { profile["replayed"] = replayed; }
  std::vector<std::string> phases;
  std::string replay_phase;
  int replayed = 0;
};

TEST_F(HarnessTest, InstrumentsMayWrapTheTimerAndReplayAfterMeasuring) {
  ReplayingInstrument rec;
  HarnessOptions h = fast_options();
  h.instruments = {&rec};
  auto doc = run({"size=16", "mode=ok"}, h);
  const auto& g = doc["benchmarks"][0]["gpubench"];
  EXPECT_EQ(g["measurement"]["timer"], "wrapped");
  EXPECT_EQ(g["profile"]["replayer"]["replayed"], 2);
  EXPECT_EQ(rec.replay_phase, "replay");
  EXPECT_EQ(rec.phases, (std::vector<std::string>{"setup", "verify", "warm-up", "measure", "replay"}));
  // The replay's runs are not counted in the measurement.
  EXPECT_EQ(doc["benchmarks"][0]["iterations"].get<std::int64_t>(),
            g["measurement"]["samples"].get<std::int64_t>() * g["measurement"]["runs_per_sample"].get<std::int64_t>());
}

TEST(Nvtx, RangesAreHarmlessWithoutATool) {
  auto nvtx = profilers::make_nvtx_instrument();
  EXPECT_EQ(nvtx->name(), "nvtx");
  const DeviceInfo cpu;
  nvtx->begin_case({"x", "fake", &cpu});
  nvtx->begin_phase("setup");
  nvtx->end_phase();
  nlohmann::ordered_json profile = nlohmann::ordered_json::object();
  nvtx->end_case({}, profile);
  EXPECT_TRUE(profile.empty());  // NVTX only marks the timeline
}

TEST(BenchmarkFlags, SplitsOwnFlagsAndRejectsUnknown) {
  auto f = parse_benchmark_flags({"--benchmark_filter=gemm", "--benchmark_min_time=0.2", "--benchmark_format=json",
                                  "--benchmark_repetitions=3"});
  EXPECT_EQ(f.filter, "gemm");
  EXPECT_DOUBLE_EQ(*f.min_time_s, 0.2);
  EXPECT_EQ(f.format, "json");
  EXPECT_EQ(f.passthrough, (std::vector<std::string>{"--benchmark_repetitions=3"}));
  EXPECT_THROW(parse_benchmark_flags({"--benchmark_nonsense=1"}), UsageError);
  EXPECT_THROW(parse_benchmark_flags({"--benchmark_min_time=abc"}), UsageError);
  EXPECT_THROW(parse_benchmark_flags({"--benchmark_format=xml"}), UsageError);
  // Google Benchmark would print its usage and exit (found by tests/fuzz/fuzz_cli).
  EXPECT_THROW(parse_benchmark_flags({"--benchmark_out_format=xml"}), UsageError);
  EXPECT_THROW(parse_benchmark_flags({"--benchmark_time_unit=h"}), UsageError);
  EXPECT_THROW(parse_benchmark_flags({"--benchmark_color="}), UsageError);
  EXPECT_EQ(parse_benchmark_flags({"--benchmark_out_format=csv", "--benchmark_time_unit=ms"}).passthrough.size(), 2u);
  parse_benchmark_flags({});  // leave Google Benchmark's flags at their defaults for other tests
}

TEST(DeriveMetrics, RatesAndPercentOfPeak) {
  auto m = derive_metrics(2e12, 3e9, "bf16_tensor", 0.01, 1000.0);
  EXPECT_DOUBLE_EQ(m["tflops"].get<double>(), 200.0);
  EXPECT_DOUBLE_EQ(m["pct_of_peak"].get<double>(), 20.0);
  EXPECT_FALSE(m.contains("gbps"));  // a GEMM's bytes are for intensity, not a bandwidth claim
  auto bw = derive_metrics(0, 4e9, "memory_bandwidth", 0.001, 3350.0);
  EXPECT_DOUBLE_EQ(bw["gbps"].get<double>(), 4000.0);
  EXPECT_NEAR(bw["pct_of_peak"].get<double>(), 119.40, 0.01);
  auto none = derive_metrics(1e9, 0, "fp32", 1.0, std::nullopt);
  EXPECT_FALSE(none.contains("pct_of_peak"));
}

}  // namespace
}  // namespace gpubench
