#include "launch.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace gpubench {
namespace {

std::optional<int> positive_int(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 1 || v > 1'000'000) return std::nullopt;
  return static_cast<int>(v);
}

}  // namespace

std::optional<LaunchInfo> detect_launch(const std::function<const char*(const char*)>& getenv) {
  // (size variable, rank variable, launcher). OpenMPI's mpirun sets OMPI_COMM_WORLD_*; MPICH's
  // Hydra and Intel MPI set PMI_*; PMIx launchers PMIX_*; srun sets SLURM_NTASKS/SLURM_PROCID
  // for every task it starts (SLURM_NTASKS alone is also set inside an sbatch allocation, so
  // srun is recognised by SLURM_STEP_ID, which exists only in a job step).
  struct Source {
    const char* size;
    const char* rank;
    const char* name;
    const char* requires_var;
  };
  static constexpr Source kSources[] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OpenMPI", nullptr},
      {"PMI_SIZE", "PMI_RANK", "PMI", nullptr},
      {"PMIX_SIZE", "PMIX_RANK", "PMIx", nullptr},
      {"SLURM_NTASKS", "SLURM_PROCID", "Slurm srun", "SLURM_STEP_ID"},
  };
  for (const Source& s : kSources) {
    if (s.requires_var != nullptr && getenv(s.requires_var) == nullptr) continue;
    const std::optional<int> size = positive_int(getenv(s.size));
    if (!size || *size < 2) continue;
    LaunchInfo info;
    info.launcher = fmt::format("{} ({}={})", s.name, s.size, *size);
    info.size = *size;
    const char* rank = getenv(s.rank);
    if (rank != nullptr) info.rank = std::atoi(rank);
    // srun wires MPI through a plugin (--mpi=pmix sets PMIX_RANK, --mpi=pmi2 PMI_RANK). Without
    // one (--mpi=none, the default MpiDefault) each task's MPI_Init finds no peers: Open MPI
    // aborts with "OPAL ERROR: Unreachable", others run N singletons writing one file.
    if (s.requires_var != nullptr && getenv("PMIX_RANK") == nullptr && getenv("PMI_RANK") == nullptr) {
      info.unjoinable = fmt::format(
          "started by srun as task {} of {} ({}={}, {}={}) without an MPI plugin (no PMIX_RANK or PMI_RANK set): "
          "the tasks cannot join one run and would run as {} independent jobs writing one results file. "
          "Launch with `srun --mpi=pmix` (see `srun --mpi=list`), or with mpirun inside the allocation",
          info.rank, *size, s.size, *size, s.rank, rank != nullptr ? rank : "unset", *size);
    }
    return info;
  }
  return std::nullopt;
}

std::optional<LaunchInfo> detect_launch() {
  return detect_launch([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

std::string launch_without_mpi_message(const LaunchInfo& launch) {
  return fmt::format(
      "started as rank {} of {} by {}, but this gpubench was built without MPI support: the ranks would run as {} "
      "independent jobs. Rebuild with MPI (libopenmpi-dev; CMake option GPUBENCH_WITH_MPI) or run without the launcher",
      launch.rank, launch.size, launch.launcher, launch.size);
}

std::string team_size_mismatch_message(const LaunchInfo& launch, int mpi_size) {
  if (mpi_size == launch.size) return {};
  return fmt::format(
      "started as rank {} of {} by {}, but MPI joined {} rank(s): the processes would run as independent jobs "
      "writing one results file. Start them with an MPI launcher this gpubench's MPI understands (mpirun, or srun "
      "--mpi=pmix)",
      launch.rank, launch.size, launch.launcher, mpi_size);
}

}  // namespace gpubench
