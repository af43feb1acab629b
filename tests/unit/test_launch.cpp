// Launch detection under Slurm's srun: a job step whose tasks MPI can join (an MPI plugin set
// PMIX_RANK or PMI_RANK) is a run of N ranks; one without (srun --mpi=none) is refused, naming
// the variables seen, rather than run as N independent jobs writing one results file.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "bench/core/launch.hpp"

namespace gpubench {
namespace {

auto env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(SlurmLaunch, SrunWithPmixIsARunOfItsTasks) {
  const auto l = detect_launch(env({{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "1"}, {"SLURM_STEP_ID", "0"},
                                    {"PMIX_RANK", "1"}, {"PMIX_NAMESPACE", "slurm.pmix.5.0"}}));
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->size, 2);
  EXPECT_EQ(l->rank, 1);
  EXPECT_EQ(l->launcher, "Slurm srun (SLURM_NTASKS=2)");
  EXPECT_TRUE(l->unjoinable.empty()) << l->unjoinable;
}

TEST(SlurmLaunch, SrunWithPmi2IsARunOfItsTasks) {
  const auto l = detect_launch(env({{"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "3"}, {"SLURM_STEP_ID", "0"},
                                    {"PMI_SIZE", "4"}, {"PMI_RANK", "3"}}));
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->size, 4);
  EXPECT_EQ(l->rank, 3);
  EXPECT_TRUE(l->unjoinable.empty());
}

TEST(SlurmLaunch, SrunWithoutAnMpiPluginIsRefusedNamingTheVariables) {
  const auto l =
      detect_launch(env({{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}}));
  ASSERT_TRUE(l.has_value());
  EXPECT_NE(l->unjoinable.find("SLURM_NTASKS=2"), std::string::npos) << l->unjoinable;
  EXPECT_NE(l->unjoinable.find("SLURM_PROCID=0"), std::string::npos) << l->unjoinable;
  EXPECT_NE(l->unjoinable.find("2 independent jobs"), std::string::npos) << l->unjoinable;
  EXPECT_NE(l->unjoinable.find("srun --mpi=pmix"), std::string::npos) << l->unjoinable;
  EXPECT_EQ(l->unjoinable.find('\n'), std::string::npos);  // one line
}

TEST(SlurmLaunch, MpirunInsideAnAllocationIsOpenMpis) {
  // mpirun's ranks inherit the allocation's SLURM_* variables; Open MPI's own come first.
  const auto l = detect_launch(env({{"SLURM_NTASKS", "8"}, {"SLURM_JOB_ID", "5"}, {"OMPI_COMM_WORLD_SIZE", "8"},
                                    {"OMPI_COMM_WORLD_RANK", "2"}}));
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->launcher, "OpenMPI (OMPI_COMM_WORLD_SIZE=8)");
  EXPECT_TRUE(l->unjoinable.empty());
}

TEST(SlurmLaunch, TheBatchStepAloneIsNoLaunch) {
  // sbatch --ntasks=8 runs its script once: SLURM_NTASKS without a job step's SLURM_STEP_ID.
  EXPECT_FALSE(detect_launch(env({{"SLURM_NTASKS", "8"}, {"SLURM_JOB_ID", "5"}})).has_value());
  EXPECT_FALSE(detect_launch(env({{"SLURM_NTASKS", "1"}, {"SLURM_STEP_ID", "0"}})).has_value());  // srun -n1
}

TEST(SlurmLaunch, MpiJoiningFewerRanksThanStartedIsRefused) {
  LaunchInfo l;
  l.launcher = "Slurm srun (SLURM_NTASKS=4)";
  l.size = 4;
  l.rank = 2;
  EXPECT_TRUE(team_size_mismatch_message(l, 4).empty());
  const std::string m = team_size_mismatch_message(l, 1);
  EXPECT_NE(m.find("rank 2 of 4 by Slurm srun (SLURM_NTASKS=4)"), std::string::npos) << m;
  EXPECT_NE(m.find("MPI joined 1 rank(s)"), std::string::npos) << m;
}

}  // namespace
}  // namespace gpubench
