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

}  // namespace gpubench
