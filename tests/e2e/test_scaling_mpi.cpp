// End-to-end, measured: `mpirun -np 2` collectives (MPI backend, CPU) and train dp=none and
// dp=ddp at 2 ranks, then `gpubench scaling` on the two files must print projections up to
// 4096 GPUs and a validation row for the measured 2-rank case. The projection's error is
// reported, not asserted (issue 17's 15% goal is measured on a quiet machine, not in CI).
// Skipped when mpirun is missing or gpubench was built without MPI.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

using ScalingMpi = CliTest;

TEST_F(ScalingMpi, MeasuredDdpGetsAValidationRow) {
  if (sh("command -v mpirun").code != 0 || gpubench("version").out.find("\nmpi: ") == std::string::npos) {
    GTEST_SKIP() << "mpirun not installed or gpubench built without MPI";
  }
  const std::string mpirun = fmt::format("timeout 240 mpirun {} --oversubscribe -np 2 {}",
                                         ::geteuid() == 0 ? "--allow-run-as-root" : "", GPUBENCH_BINARY);
  const fs::path net = dir / "net.json", train = dir / "train.json";
  const Output c = sh(fmt::format("{} run --suite collectives --device cpu --axis op=all_reduce --axis size=1k:4M:x4 "
                                  "--min-time 0.01 --warmup 0.002 -q -o {}",
                                  mpirun, net.string()));
  ASSERT_EQ(c.code, 0) << c.err << c.out;
  const Output t = sh(fmt::format("{} run --suite train --device cpu --axis model=mlp --axis layers=3 --axis hidden=128 "
                                  "--axis micro_batch=4 --axis vocab=512 --axis bucket_mb=0.25 --axis dp=none,ddp "
                                  "--min-time 0.02 --warmup 0.005 -q -o {}",
                                  mpirun, train.string()));
  ASSERT_EQ(t.code, 0) << t.err << t.out;

  const Output s = gpubench(fmt::format("scaling {} {} --format json", net.string(), train.string()));
  ASSERT_EQ(s.code, 0) << s.err;
  const auto j = nlohmann::json::parse(s.out);
  ASSERT_EQ(j["projections"].size(), 4u) << s.out;  // 8, 64, 512, 4096 with ddp, the mode measured
  EXPECT_EQ(j["projections"][3]["gpus"], 4096);
  for (const auto& p : j["projections"]) {
    EXPECT_GT(p["step_s"].get<double>(), 0) << p.dump();
    EXPECT_GT(p["scaling_efficiency"].get<double>(), 0) << p.dump();
    EXPECT_LE(p["scaling_efficiency"].get<double>(), 1) << p.dump();
    EXPECT_TRUE(p.contains("samples_per_s")) << p.dump();
  }
  ASSERT_EQ(j["validation"].size(), 1u) << s.out;
  const auto& v = j["validation"][0];
  EXPECT_EQ(v["ranks"], 2);
  EXPECT_EQ(v["dp"], "ddp");
  EXPECT_EQ(v["basis"], "single-device case");
  EXPECT_GT(v["measured_s"].get<double>(), 0);
  EXPECT_GT(v["projected_s"].get<double>(), 0);
  EXPECT_TRUE(v["error_pct"].is_number());
  std::printf("[ scaling ] 2-rank ddp: measured %.4g s, projected %.4g s, error %+.1f%%\n", v["measured_s"].get<double>(),
              v["projected_s"].get<double>(), v["error_pct"].get<double>());

  // The report's data-parallel section on the same files.
  const Output r = gpubench(fmt::format("report {} {}", net.string(), train.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("## Data-parallel scaling"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpubench::e2e
