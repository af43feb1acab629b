// `gpubench run` started by srun without an MPI plugin (Slurm's job-step variables, no PMIx/PMI
// ones) refuses with exit 2 and one line naming the variables, before it measures or writes
// anything: otherwise each task would run the whole plan alone into the same results file.
// scripts/test-slurm.sh checks the same against a real srun.
#include <algorithm>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct SlurmLaunchCli : CliTest {};

TEST_F(SlurmLaunchCli, SrunWithoutAnMpiPluginIsAUsageErrorNamingTheVariables) {
  const fs::path results = dir / "r.json";
  const Output o = gpubench(
      fmt::format("run --device cpu --suite memory --min-time 0.01 -q -o {}", results.string()),
      "env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_SIZE -u PMIX_RANK -u PMI_RANK "
      "SLURM_NTASKS=2 SLURM_PROCID=1 SLURM_STEP_ID=0 SLURM_JOB_ID=7");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("SLURM_NTASKS=2, SLURM_PROCID=1"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("srun --mpi=pmix"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_FALSE(fs::exists(results));
}

TEST_F(SlurmLaunchCli, TheBatchStepRunsAsOneProcess) {
  // Inside `sbatch --ntasks=2` but outside any srun step: one process, nothing to join.
  const fs::path results = dir / "r.json";
  const Output o = gpubench(
      fmt::format("run --device cpu --suite memory -a test=copy -a size=64k --min-time 0.01 --warmup 0.005 -q -o {}", results.string()),
      "env -u SLURM_STEP_ID SLURM_NTASKS=2 SLURM_PROCID=0 SLURM_JOB_ID=7");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(fs::exists(results));
}

}  // namespace
}  // namespace gpubench::e2e
