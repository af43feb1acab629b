// Issue 27 item 4-5, end to end: `compare` does not call a regression what a lower clock or
// other processes' load explains (ambiguous, exit 0; --fail-on-ambiguous fails it), and with
// the clock unchanged the same slowdown is still a regression (exit 1).
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct CompareClock : CliTest {
  // compare_base.json with every headline rate scaled by `rate` (times by 1/rate), and each ok
  // entry recording `clock` MHz (metrics.sm_clock_mhz, as the harness writes it) and the outside
  // load `load` % (profile.host.other_cpu_pct, as the host instrument writes it).
  fs::path crafted(const std::string& name, double rate, double clock, double load = 0) {
    auto doc = nlohmann::json::parse(slurp(fs::path(GPUBENCH_FIXTURES_DIR) / "reports" / "compare_base.json"));
    for (auto& e : doc["benchmarks"]) {
      auto& g = e["gpubench"];
      if (g.value("status", "ok") != "ok") continue;
      for (const char* k : {"tflops", "gbps", "tokens_per_s", "samples_per_s"}) {
        if (g["metrics"].contains(k)) g["metrics"][k] = g["metrics"][k].get<double>() * rate;
      }
      if (e.contains("real_time")) e["real_time"] = e["real_time"].get<double>() / rate;
      if (g.contains("measurement") && g["measurement"].contains("mean_s")) {
        g["measurement"]["mean_s"] = g["measurement"]["mean_s"].get<double>() / rate;
        g["measurement"]["median_s"] = g["measurement"]["median_s"].get<double>() / rate;
      }
      g["metrics"]["sm_clock_mhz"] = clock;
      g["profile"]["host"]["other_cpu_pct"] = load;
    }
    const fs::path p = dir / name;
    std::ofstream(p) << doc.dump();
    return p;
  }
};

TEST_F(CompareClock, ASlowdownThatTheClockExplainsIsAmbiguousNotARegression) {
  const fs::path base = crafted("base.json", 1.0, 1980);
  // The CLI contract: new is 10% slower and its clock 10% lower.
  const fs::path slow_clock = crafted("slow_clock.json", 0.9, 1782);
  Output o = gpubench(fmt::format("compare {} {}", base.string(), slow_clock.string()));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("ambiguous"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("clock 1980 -&gt; 1782 MHz"), std::string::npos) << o.out;  // Markdown escapes '>'
  EXPECT_EQ(o.out.find("| regressed | gemm"), std::string::npos) << o.out;
  const auto j = nlohmann::json::parse(gpubench(fmt::format("compare {} {} -f json", base.string(), slow_clock.string())).out);
  EXPECT_EQ(j["regressions"], 0);
  EXPECT_GT(j["ambiguous"].get<int>(), 0);
  // --fail-on-ambiguous: the same comparison fails, and JUnit says so.
  o = gpubench(fmt::format("compare {} {} --fail-on-ambiguous --junit {}", base.string(), slow_clock.string(),
                           (dir / "j.xml").string()));
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_NE(slurp(dir / "j.xml").find("<failure type=\"ambiguous\""), std::string::npos);
  // The clock unchanged: the same slowdown is a regression.
  const fs::path slow = crafted("slow.json", 0.9, 1980);
  o = gpubench(fmt::format("compare {} {}", base.string(), slow.string()));
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_NE(o.out.find("regressed"), std::string::npos) << o.out;
  // A slowdown larger than the clock explains stays a regression (per clock still -11%).
  const fs::path slower = crafted("slower.json", 0.8, 1782);
  EXPECT_EQ(gpubench(fmt::format("compare {} {}", base.string(), slower.string())).code, 1);
}

TEST_F(CompareClock, ASlowdownUnderOutsideLoadIsAmbiguous) {
  const fs::path base = crafted("base.json", 1.0, 1980);
  const fs::path loaded = crafted("loaded.json", 0.7, 1980, 35);
  const Output o = gpubench(fmt::format("compare {} {} --format json", base.string(), loaded.string()));
  EXPECT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["regressions"], 0);
  EXPECT_GT(j["ambiguous"].get<int>(), 0);
  bool said = false;
  for (const auto& c : j["cases"]) said = said || c["detail"].get<std::string>().find("load: in the new run") != std::string::npos;
  EXPECT_TRUE(said) << o.out.substr(0, 2000);
  // Below the threshold (--contended 50) the load is not an excuse.
  EXPECT_EQ(gpubench(fmt::format("compare {} {} --contended 50", base.string(), loaded.string())).code, 1);
  // Another process on the GPU while it was timed (the telemetry instrument's NVML count).
  auto doc = nlohmann::json::parse(slurp(crafted("shared.json", 0.7, 1980)));
  for (auto& e : doc["benchmarks"]) e["gpubench"]["profile"]["telemetry"]["other_gpu_processes"] = 1;
  std::ofstream(dir / "shared.json") << doc.dump();
  const Output g = gpubench(fmt::format("compare {} {} -f json", base.string(), (dir / "shared.json").string()));
  EXPECT_EQ(g.code, 0) << g.err;
  EXPECT_NE(g.out.find("other process(es) held the GPU"), std::string::npos) << g.out.substr(0, 2000);
}

}  // namespace
}  // namespace gpubench::e2e
