// `gpubench soak --power-limits / --lock-clocks` through the real binary on the CPU: the sweep's
// plumbing (options, the one-line notice, gpubench.soak.sweep and power_control) and its usage
// errors. The power control itself, its refusal and its restore (also after SIGTERM) are tested
// against the fake NVML in tests/nvml/test_power_control.cpp.
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

using PowerSweep = CliTest;

TEST_F(PowerSweep, OnTheCpuItSaysSoAndMeasuresOnceAtTheCurrentSettings) {
  const fs::path out = dir / "sweep.json";
  const Output o = gpubench(fmt::format("soak --device cpu --load memory --duration 2s --sample-interval 250ms "
                                        "--power-limits 100%,80% --out {}",
                                        out.string()));
  ASSERT_TRUE(o.code == 0 || o.code == 1) << o.code << o.err;
  EXPECT_NE(o.err.find("power limit: off: no GPU selected (a CPU's power is not set through NVML)\n"), std::string::npos)
      << o.err;
  const auto doc = nlohmann::json::parse(slurp(out));
  const auto& soak = doc["gpubench"]["soak"];
  ASSERT_TRUE(soak.contains("sweep")) << soak.dump().substr(0, 2000);
  EXPECT_EQ(soak["sweep"]["kind"], "power_limit");
  ASSERT_EQ(soak["sweep"]["points"].size(), 1u);
  const auto& p = soak["sweep"]["points"][0];
  EXPECT_EQ(p["setting"], "current");
  EXPECT_EQ(p["status"], "off: no GPU selected (a CPU's power is not set through NVML)");
  EXPECT_GT(p["throughput"].get<double>(), 0);
  EXPECT_EQ(p["unit"], "GB/s");
  EXPECT_EQ(soak["power_control"]["status"], "off: no GPU selected (a CPU's power is not set through NVML)");
  for (const auto& s : soak["series"]) EXPECT_EQ(s["phase"], "current");
}

TEST_F(PowerSweep, BadSettingsAreUsageErrors) {
  Output o = gpubench("soak --device cpu --duration 1s --power-limits 120%");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--power-limits '120%': a percent of the default limit must be above 0 and at most 100"),
            std::string::npos)
      << o.err;
  o = gpubench("soak --device cpu --duration 1s --power-limits 90% --lock-clocks 1410");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--power-limits and --lock-clocks: one sweep at a time"), std::string::npos) << o.err;
  o = gpubench("soak --device cpu --duration 1s --lock-clocks 1410.5");
  EXPECT_EQ(o.code, 2);
}

}  // namespace
}  // namespace gpubench::e2e
