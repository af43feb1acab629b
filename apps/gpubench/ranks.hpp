#pragma once
// What the commands that run under mpirun/srun (run, soak, tune train) share: which GPU a rank
// takes, who the ranks are, and how the results' context records the team.
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/device.hpp"
#include "bench/mpi/session.hpp"

namespace gpubench::app {

// Of the CUDA devices selected, the one at the rank's local index (ranks on a host take its
// GPUs in rank order); the other devices stay. A single selected GPU is kept.
void narrow_to_local_gpu(DeviceSelection& selection, const mpi::Session& team);

// Every rank's identity (host, device UUID, PCI bus id, serial: rank_identity in harness.hpp),
// in rank order; every rank calls it at the same point.
std::vector<nlohmann::ordered_json> gather_rank_identities(mpi::Session& team, const std::vector<DeviceInfo>& devices);

// context.gpubench.mpi (docs/results-format.md).
nlohmann::ordered_json mpi_context(const mpi::Session& team, const std::vector<nlohmann::ordered_json>& rank_devices);

}  // namespace gpubench::app
