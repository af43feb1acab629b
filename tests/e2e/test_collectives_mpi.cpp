// The collectives suite end to end under MPI: `mpirun -np 2 gpubench run --suite collectives
// --device cpu` writes one results file with every operation's figures and no wrong element,
// and a rank that does not arrive ends the run with a message naming it. Skipped when mpirun is
// missing or gpubench was built without MPI.
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <set>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct CollectivesMpi : CliTest {
  void SetUp() override {
    if (sh("command -v mpirun").code != 0) GTEST_SKIP() << "mpirun not installed (openmpi-bin)";
    if (gpubench("version").out.find("\nmpi: ") == std::string::npos) GTEST_SKIP() << "gpubench built without MPI";
  }
  // OpenMPI refuses to start as root unless told that is intended (CI containers run as root);
  // --oversubscribe lets 2 ranks start on a 1- or 2-core CI machine.
  std::string mpirun(int ranks) const {
    return fmt::format("mpirun {} --oversubscribe -np {}", ::geteuid() == 0 ? "--allow-run-as-root" : "", ranks);
  }
};

TEST_F(CollectivesMpi, TwoRanksWriteOneResultsFileWithEveryOperation) {
  const fs::path results = dir / "results.json";
  const Output o =
      sh(fmt::format("{} {} run --suite collectives --device cpu --min-time 0.01 --warmup 0.005 "
                     "-a size=8,64k -a inplace=0,1 -o {} -q",
                     mpirun(2), GPUBENCH_BINARY, results.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  // Only rank 0 wrote: one results file (beside the captured stdout and stderr).
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"results.json", "stdout", "stderr"}));
  const auto doc = nlohmann::json::parse(slurp(results));
  EXPECT_EQ(doc["context"]["gpubench"]["mpi"]["ranks"], 2);
  std::set<std::string> ops;
  int ok = 0;
  for (const auto& b : doc["benchmarks"]) {
    const auto& g = b["gpubench"];
    if (g["status"] == "skipped") {
      // In place exists for all but alltoall and sendrecv.
      EXPECT_EQ(g["axes"]["inplace"], 1) << g.dump();
      continue;
    }
    ASSERT_EQ(g["status"], "ok") << g.dump();
    ++ok;
    ops.insert(g["axes"]["op"].get<std::string>());
    EXPECT_EQ(g["verification"]["wrong"], 0);
    EXPECT_GT(g["verification"]["checked"].get<int>(), 0);
    const auto& m = g["metrics"];
    EXPECT_EQ(m["wrong_elements"], 0);
    EXPECT_GT(m["time_us"].get<double>(), 0);
    EXPECT_GE(m["time_max_us"].get<double>(), m["time_us"].get<double>() * 0.999);
    EXPECT_GT(m["algbw_gbps"].get<double>(), 0);
    EXPECT_NEAR(m["busbw_gbps"].get<double>(), m["algbw_gbps"].get<double>() * m["bus_factor"].get<double>(), 1e-9);
    EXPECT_EQ(g["collective"]["ranks"], 2);
    EXPECT_EQ(g["collective"]["nodes"], 1);
    EXPECT_EQ(g["collective"]["backend"], "mpi");
    EXPECT_EQ(g["measurement"]["rank_mean_s"].size(), 2u);
    // The MPI backend's headline: the median over barrier-separated windows, per rank, then
    // the mean over ranks; the mean of every call beside it.
    const auto& h = g["measurement"]["headline"];
    EXPECT_EQ(h["statistic"], "median");
    EXPECT_EQ(h["barrier"], true);
    EXPECT_LE(h["window_s"].get<double>(), 200e-6);
    ASSERT_EQ(g["measurement"]["rank_median_s"].size(), 2u);
    EXPECT_NEAR(m["time_us"].get<double>(), g["measurement"]["median_over_ranks_s"].get<double>() * 1e6,
                1e-6 * m["time_us"].get<double>());
    EXPECT_NEAR(m["time_max_us"].get<double>(), g["measurement"]["max_median_over_ranks_s"].get<double>() * 1e6,
                1e-6 * m["time_max_us"].get<double>());
    EXPECT_GT(m["time_mean_us"].get<double>(), 0);
  }
  EXPECT_EQ(ops, (std::set<std::string>{"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall",
                                        "sendrecv"}));
  EXPECT_EQ(ok, 2 * 7 + 2 * 5);  // two sizes; in place for five operations
  EXPECT_FALSE(doc["gpubench"]["summaries"]["collectives"]["groups"].empty());
}

TEST_F(CollectivesMpi, ARankThatDoesNotArriveEndsTheRunNamingIt) {
  // Rank 1 plans more timed samples (a longer --min-time) than rank 0: it keeps calling
  // MPI_Allreduce while rank 0 waits for it at the timing step.
  const std::string args = "run --suite collectives --device cpu -a op=all_reduce -a size=8 --warmup 0.005 -q";
  const Output o =
      sh(fmt::format("timeout 120 mpirun {} --oversubscribe -np 1 {} {} --min-time 0.01 --rank-timeout 2 "
                     "-o {} : -np 1 {} {} --min-time 30 --rank-timeout 2 -o {}",
                     ::geteuid() == 0 ? "--allow-run-as-root" : "", GPUBENCH_BINARY, args, (dir / "r.json").string(),
                     GPUBENCH_BINARY, args, (dir / "r.json").string()));
  EXPECT_NE(o.code, 0);
  EXPECT_NE(o.code, 124) << "the run hung until timeout(1) ended it";
  EXPECT_NE((o.err + o.out).find("rank 1 did not reach timing of collectives/op=all_reduce"), std::string::npos)
      << o.err;
}

TEST_F(CollectivesMpi, ACollectiveThatDoesNotCompleteEndsTheRunNamingIt) {
  // Now rank 0 warms up longer: it blocks in an MPI_Allreduce rank 1 never joins (rank 1 has
  // gone on to the barrier before the first timed window, with a long timeout), and rank 0's
  // watchdog ends the run. (Timed windows start at a barrier, so a difference in planned
  // samples stops at the barrier instead: the test above.)
  const std::string args = "run --suite collectives --device cpu -a op=all_reduce -a size=8 --min-time 0.01 -q";
  const Output o = sh(fmt::format("timeout 120 mpirun {} --oversubscribe -np 1 {} {} --warmup 30 --rank-timeout 2 "
                                  "-o {} : -np 1 {} {} --warmup 0.005 --rank-timeout 60 -o {}",
                                  ::geteuid() == 0 ? "--allow-run-as-root" : "", GPUBENCH_BINARY, args,
                                  (dir / "r.json").string(), GPUBENCH_BINARY, args, (dir / "r.json").string()));
  EXPECT_NE(o.code, 0);
  EXPECT_NE(o.code, 124) << "the run hung until timeout(1) ended it";
  EXPECT_NE((o.err + o.out).find("rank 0 of 2: all_reduce (8 bytes, fp32) made no progress for 2 s"), std::string::npos)
      << o.err;
}

}  // namespace
}  // namespace gpubench::e2e
