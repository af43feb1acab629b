// `gpubench tune train` under mpirun: two ranks search the data-parallel step (dp=ddp) and its
// gradient bucket cap together (and ZeRO-1 when asked for), rank 0 writes the results and prints
// the report once; a global batch the ranks do not divide is one line and exit 2. Skipped when
// mpirun is missing or gpubench was built without MPI (as test_fleet_mpi.cpp).
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <set>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

using nlohmann::json;

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }
std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

struct TuneTrainMpi : CliTest {
  void SetUp() override {
    CliTest::SetUp();
    if (sh("command -v mpirun").code != 0) GTEST_SKIP() << "mpirun not installed (openmpi-bin)";
    if (gpubench("version").out.find("\nmpi: ") == std::string::npos) GTEST_SKIP() << "gpubench built without MPI";
  }
  Output mpirun2(const std::string& args) {
    return sh(fmt::format("cd {} && timeout 120 mpirun {} --oversubscribe --bind-to none -np 2 {} {}", dir.string(),
                          ::geteuid() == 0 ? "--allow-run-as-root" : "", GPUBENCH_BINARY, args));
  }
};

TEST_F(TuneTrainMpi, TwoRanksSearchTheBucketCapAndRankZeroReports) {
  const fs::path out = dir / "T.json";
  Output r = mpirun2(fmt::format("tune train --device cpu --model mlp --budget 20 --out {}", out.string()));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // Only rank 0 prints the report (and its progress).
  EXPECT_EQ(count(r.out, "Tuning report"), 1u) << r.out;
  EXPECT_EQ(count(r.err, "gpubench tune train: done"), 1u) << r.err;
  EXPECT_EQ(count(r.err, "[1] short"), 1u) << r.err;

  const json doc = json::parse(slurp(out));
  const json& t = doc["gpubench"]["tuning"];
  EXPECT_EQ(t["knobs"], json({"precision", "micro_batch", "accum", "recompute", "dp", "bucket_mb"}));
  EXPECT_EQ(t["fixed"]["ranks"], 2);
  EXPECT_EQ(t["fixed"]["global_batch"], 8);  // the quick preset's micro-batch 4 on each rank
  const json& rec = t["recommended"];
  const json& def = t["default"];
  ASSERT_TRUE(rec.is_object()) << t.dump();
  ASSERT_TRUE(rec.contains("bucket_mb")) << rec.dump();
  EXPECT_EQ(rec["dp"], "ddp");
  EXPECT_EQ(rec["micro_batch"].get<int>() * rec["accum"].get<int>() * 2, 8);
  EXPECT_EQ(def["bucket_mb"], 25);
  EXPECT_EQ(def["dp"], "ddp");
  ASSERT_TRUE(t["speedup_vs_default"].is_number());
  EXPECT_EQ(rec["command"].get<std::string>().rfind("mpirun -np 2 gpubench run --suite train", 0), 0u) << rec["command"];
  EXPECT_TRUE(contains(rec["command"].get<std::string>(), "--axis dp=ddp --axis bucket_mb=")) << rec["command"];
  // The mlp's 1.1 MiB gradient: caps 1 (two buckets) and 25 (one; 5 and 100 give the same).
  std::set<std::string> caps;
  for (const json& e : t["search"]) caps.insert(e["bucket_mb"].dump());
  EXPECT_EQ(caps, (std::set<std::string>{"1", "25"}));
  // Every configuration measured is the data-parallel step of both ranks, verified.
  int measured = 0;
  for (const json& b : doc["benchmarks"]) {
    const json& g = b["gpubench"];
    ASSERT_TRUE(g.contains("tune")) << b["name"];
    if (g["status"] != "ok") continue;
    ++measured;
    EXPECT_EQ(g["metrics"]["ranks"], 2) << b["name"];
    EXPECT_EQ(g["axes"]["dp"], "ddp") << b["name"];
    EXPECT_EQ(g["verification"]["passed"], true) << b["name"];
  }
  EXPECT_GE(measured, 2);
  EXPECT_EQ(doc["context"]["gpubench"]["mpi"]["ranks"], 2);

  Output md = gpubench(fmt::format("report {} -f md", out.string()));
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_TRUE(contains(md.out, "## Tuning report")) << md.out;
  EXPECT_TRUE(contains(md.out, "```\nmpirun -np 2 gpubench run --suite train")) << md.out;
  EXPECT_TRUE(contains(md.out, "| bucket\\_mb |")) << md.out;
}

TEST_F(TuneTrainMpi, DpZero1IsSearchedWhenAskedFor) {
  const fs::path out = dir / "Z.json";
  // Global batch 4: micro-batches 1 and 2 per rank, caps 1 and 25, zero1 first (the default's).
  Output r = mpirun2(fmt::format("tune train --device cpu --model mlp --global-batch 4 --dp zero1,ddp --budget 6 -q --out {}",
                                 out.string()));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json doc = json::parse(slurp(out));
  const json& t = doc["gpubench"]["tuning"];
  EXPECT_EQ(t["configurations"]["candidates"], 8);
  EXPECT_EQ(t["default"]["dp"], "zero1");
  EXPECT_EQ(t["default"]["micro_batch"], 2);
  int zero1 = 0;
  for (const json& b : doc["benchmarks"]) {
    const json& g = b["gpubench"];
    if (g["status"] != "ok") continue;
    EXPECT_EQ(g["metrics"]["dp"], g["axes"]["dp"]) << b["name"];
    EXPECT_EQ(g["verification"]["passed"], true) << b["name"];
    if (g["axes"]["dp"] == "zero1") ++zero1;
  }
  EXPECT_GE(zero1, 1);
}

TEST_F(TuneTrainMpi, AGlobalBatchTheRanksDoNotDivideIsOneLine) {
  const fs::path out = dir / "T.json";
  Output r = mpirun2(fmt::format("tune train --device cpu --model mlp --global-batch 5 --out {}", out.string()));
  EXPECT_EQ(r.code, 2) << r.err;
  // One line from gpubench (rank 0's); mpirun adds its own banner about the exit status.
  EXPECT_EQ(count(r.err, "gpubench tune"), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "gpubench tune: --global-batch 5: not divisible by the 2 ranks\n")) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace gpubench::e2e
