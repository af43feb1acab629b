// `gpubench tune dataload` through the real binary: a short CPU tuning run (its results file,
// the gpubench.tuning object, every configuration a verified case), bad options as one-line
// usage errors (exit 2), and the ranks other than 0 of a launcher leaving the tuning to rank 0.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench {
namespace {

namespace fs = std::filesystem;
using e2e::Output;

struct TuneDataload : e2e::CliTest {};

TEST_F(TuneDataload, CpuRunRecommendsMeasuredWorkersWithinTheBudget) {
  const fs::path out = dir / "D.json";
  const double budget = 8;
  Output r = gpubench(fmt::format("tune dataload --device cpu --budget {} --step-time 0.02 --batch 4 --out {}", budget,
                                  out.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("recommended"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(e2e::slurp(out));
  const auto& t = j["gpubench"]["tuning"];
  EXPECT_EQ(t["target"], "dataload");
  ASSERT_TRUE(t.contains("recommended")) << t.dump();
  ASSERT_TRUE(t["recommended"].contains("workers"));
  ASSERT_TRUE(t["recommended"]["workers"].is_number_integer()) << t["recommended"].dump();
  const int workers = t["recommended"]["workers"].get<int>();
  EXPECT_GE(workers, 1);
  EXPECT_LE(workers, t["fixed"]["max_workers"].get<int>());
  for (const char* figure : {"samples_per_s", "data_stall_pct", "prep_stall_pct", "fetch_stall_pct", "noise_pct"}) {
    EXPECT_TRUE(t["recommended"].contains(figure)) << figure;
    EXPECT_TRUE(t["default"].contains(figure)) << figure;
  }
  EXPECT_GT(t["recommended"]["samples_per_s"].get<double>(), 0);
  EXPECT_TRUE(t.contains("speedup_vs_default"));
  EXPECT_EQ(t["budget_s"], budget);
  // The search stays within its share of the budget; the whole command close to the budget
  // (the final's cases get at least a long measurement's length each).
  EXPECT_LE(t["search_s"].get<double>(), budget);
  EXPECT_LT(t["wall_s"].get<double>(), budget + 15);
  ASSERT_FALSE(t["search"].empty());
  bool final_stage = false;
  for (const auto& s : t["search"]) {
    ASSERT_TRUE(s.contains("workers") || s["status"] == "skipped") << s.dump();
    if (s["stage"] == "final") final_stage = true;
  }
  EXPECT_TRUE(final_stage);
  // GPU decode is considered only where it can run: here it says why not, and measures nothing.
  ASSERT_TRUE(t.contains("decode_gpu")) << t.dump();
  EXPECT_FALSE(t["decode_gpu"]["considered"].get<bool>());
  EXPECT_NE(t["decode_gpu"]["reason"].get<std::string>().find("CUDA device"), std::string::npos);
  EXPECT_EQ(r.out.find("decode=gpu"), std::string::npos) << r.out;
  // Every configuration tried is a case of the results file, verified before it was timed.
  ASSERT_FALSE(j["benchmarks"].empty());
  bool recommended_case = false;
  for (const auto& b : j["benchmarks"]) {
    const auto& g = b["gpubench"];
    EXPECT_EQ(g["suite"], "dataload");
    EXPECT_EQ(g["axes"]["stage"], "pipeline");
    ASSERT_TRUE(g.contains("tune")) << b.dump();
    if (g["status"] == "ok") {
      EXPECT_TRUE(g["verification"]["passed"].get<bool>()) << b.dump();
    }
    if (b["name"] == t["recommended"]["case"]) recommended_case = true;
  }
  EXPECT_TRUE(recommended_case);
  EXPECT_TRUE(j["gpubench"]["summaries"].contains("dataload"));
  // The reports read it like any results file.
  Output rep = gpubench(fmt::format("report {} --format md --out {}", out.string(), (dir / "r.md").string()));
  EXPECT_EQ(rep.code, 0) << rep.err;
}

TEST_F(TuneDataload, BadOptionsAreOneLineUsageErrors) {
  const std::string out = (dir / "D.json").string();
  const std::vector<std::string> bad = {"--budget 0", "--budget -3", "--budget abc", "--budget nan", "--max-stall 0",
                                 "--max-stall 100", "--max-stall -1", "--dataset " + (dir / "missing").string(),
                                 "--step-time 0.01 --consumer-rate 100", "--device gpu", "--max-scale 3",
                                 "--consumer train-768 --step-time 0.01", "--io direct",
                                         "--consumer-from " + (dir / "missing.json").string()};
  for (const std::string& args : bad) {
    const std::string device = args.rfind("--device", 0) == 0 ? "" : "--device cpu ";
    Output r = gpubench(fmt::format("tune dataload {}{} --out {}", device, args, out));
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}

TEST_F(TuneDataload, RanksOtherThanZeroLeaveTheTuningToRankZero) {
  const fs::path out = dir / "D.json";
  Output r = gpubench(fmt::format("tune dataload --device cpu --budget 5 --out {}", out.string()),
                      "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("rank 0 tunes"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace gpubench
