#pragma once
// Whether this process was started by a parallel launcher (OpenMPI's mpirun, an MPICH/PMI
// launcher, Slurm's srun) as one of several ranks, read from the environment the launcher sets.
// A build without MPI support uses this to refuse instead of running N independent jobs that
// would each write a results file of their own.
#include <functional>
#include <optional>
#include <string>

namespace gpubench {

struct LaunchInfo {
  std::string launcher;  // "OpenMPI (OMPI_COMM_WORLD_SIZE)", "PMI (PMI_SIZE)", "Slurm (SLURM_NTASKS)", ...
  int size = 1;          // ranks in the job
  int rank = 0;          // this process's rank, when the launcher says
  // Set when the launcher started the ranks without a way for MPI to join them (srun without
  // an MPI plugin: SLURM_* variables but no PMIX_RANK/PMI_RANK): the refusal to give instead.
  std::string unjoinable;
};

// `getenv` is std::getenv by default; tests pass a fake environment. Returns nullopt when no
// launcher variable says there is more than one rank.
std::optional<LaunchInfo> detect_launch(const std::function<const char*(const char*)>& getenv);
std::optional<LaunchInfo> detect_launch();

// The one-line refusal of a binary built without MPI that was started as one of several ranks.
std::string launch_without_mpi_message(const LaunchInfo& launch);
// The refusal when MPI joined fewer ranks than the launcher started (each process would run the
// whole plan alone and write the same results file); empty when the sizes agree.
std::string team_size_mismatch_message(const LaunchInfo& launch, int mpi_size);

}  // namespace gpubench
