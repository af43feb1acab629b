// The collectives suite end to end under MPI: `mpirun -np 2 gpubench run --suite collectives
// --device cpu` writes one results file with every operation's figures and no wrong element,
// and a rank that does not arrive ends the run with a message naming it. Skipped when mpirun is
// missing or gpubench was built without MPI.
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <map>
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
                                        "sendrecv", "alltoallv"}));
  EXPECT_EQ(ok, 2 * 8 + 2 * 5);  // two sizes; in place for five operations
  EXPECT_FALSE(doc["gpubench"]["summaries"]["collectives"]["groups"].empty());
}

// Issue 31's contract: every call timed alone (timing=per_iter) with its percentiles, for a
// reducing operation and the uneven all-to-all-v.
TEST_F(CollectivesMpi, PerIterationTimingReportsPercentilesOfSingleCalls) {
  const fs::path results = dir / "C.json";
  const Output o = sh(fmt::format("{} {} run --device cpu --suite collectives -a op=all_reduce,alltoallv -a timing=per_iter "
                                  "-a size=8,64k --min-time 0.02 --warmup 0.005 --out {}",
                                  mpirun(2), GPUBENCH_BINARY, results.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto doc = nlohmann::json::parse(slurp(results));
  int ok = 0;
  for (const auto& b : doc["benchmarks"]) {
    const auto& g = b["gpubench"];
    ASSERT_EQ(g["status"], "ok") << g.dump();
    ++ok;
    EXPECT_EQ(g["verification"]["wrong"], 0);
    const auto& m = g["metrics"];
    const double p50 = m["time_p50_us"].get<double>(), p90 = m["time_p90_us"].get<double>();
    const double p99 = m["time_p99_us"].get<double>(), slowest = m["time_slowest_call_us"].get<double>();
    EXPECT_GT(p50, 0);
    EXPECT_LE(p50, p90);
    EXPECT_LE(p90, p99);
    EXPECT_LE(p99, slowest);
    EXPECT_EQ(g["measurement"]["runs_per_sample"], 1);
    EXPECT_EQ(g["measurement"]["per_iteration"]["rank_p99_s"].size(), 2u);
    EXPECT_EQ(g["collective"]["timing"], "per_iter");
    EXPECT_EQ(g["measurement"]["noisy"], false);  // the spread of single calls is the figure
  }
  EXPECT_EQ(ok, 4);
  // The report's table of the percentiles, one row per case.
  const Output r = gpubench(fmt::format("report {} --format md --out {}", results.string(), (dir / "report.md").string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = slurp(dir / "report.md");
  const auto at = md.find("## Collectives: time per call");
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_NE(md.find("p99 us", at), std::string::npos);
  EXPECT_NE(md.find("| alltoallv | fp32 | 2 | calls | 65536 |", at), std::string::npos) << md.substr(at, 2000);
}

// alltoallv's uneven blocks and moe_dispatch's round trip, checked exactly on 3 ranks (an odd
// count, so no block is a power-of-two share) in a 16-, an 8- and a 32-bit type.
TEST_F(CollectivesMpi, UnevenExchangesAreCheckedExactly) {
  const fs::path results = dir / "M.json";
  const Output o = sh(fmt::format("{} {} run --device cpu --suite collectives -a op=alltoallv,moe_dispatch "
                                  "-a dtype=bf16,fp8_e4m3,int32 -a size=4096,1M --min-time 0.01 --warmup 0.005 --out {}",
                                  mpirun(3), GPUBENCH_BINARY, results.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto doc = nlohmann::json::parse(slurp(results));
  std::map<std::string, int> ok;
  for (const auto& b : doc["benchmarks"]) {
    const auto& g = b["gpubench"];
    ASSERT_EQ(g["status"], "ok") << g.dump();
    EXPECT_EQ(g["verification"]["wrong"], 0);
    const auto& x = g["collective"]["exchange"];
    const std::string op = g["axes"]["op"];
    ++ok[op];
    ASSERT_EQ(x["received_elements"].size(), 3u);
    std::int64_t received = 0;
    for (const auto& r : x["received_elements"]) received += r.get<std::int64_t>();
    const std::int64_t elements = g["axes"]["size"].get<std::int64_t>() / (g["axes"]["dtype"] == "bf16" ? 2 : g["axes"]["dtype"] == "int32" ? 4 : 1);
    EXPECT_EQ(received, 3 * elements) << op;  // everything sent arrives somewhere
    // Every element of every rank checked: what it received (alltoallv), and what it received
    // plus its own tokens back in place (moe_dispatch).
    EXPECT_EQ(g["verification"]["checked"], op == "alltoallv" ? received : received + 3 * elements) << op;
    EXPECT_GT(g["metrics"]["busbw_gbps"].get<double>(), 0);
  }
  EXPECT_EQ(ok["alltoallv"], 6);
  EXPECT_EQ(ok["moe_dispatch"], 6);
}

// The contract's moe_dispatch run on the default sizes.
TEST_F(CollectivesMpi, MoeDispatchRunsVerifiedAtTheDefaultSizes) {
  const fs::path results = dir / "M.json";
  const Output o = sh(fmt::format("{} {} run --device cpu --suite collectives -a op=moe_dispatch --min-time 0.01 "
                                  "--warmup 0.005 --out {}",
                                  mpirun(2), GPUBENCH_BINARY, results.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto doc = nlohmann::json::parse(slurp(results));
  ASSERT_FALSE(doc["benchmarks"].empty());
  for (const auto& b : doc["benchmarks"]) {
    const auto& g = b["gpubench"];
    ASSERT_EQ(g["status"], "ok") << g.dump();
    EXPECT_TRUE(g["verification"]["passed"].get<bool>());
    EXPECT_EQ(g["verification"]["wrong"], 0);
    EXPECT_GE(g["collective"]["exchange"]["tokens_per_rank"].get<int>(), 1);
  }
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
