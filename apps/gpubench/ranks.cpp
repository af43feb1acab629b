#include "apps/gpubench/ranks.hpp"

#include "bench/core/context.hpp"
#include "bench/core/harness.hpp"

namespace gpubench::app {

void narrow_to_local_gpu(DeviceSelection& selection, const mpi::Session& team) {
  std::vector<DeviceInfo> cuda, others;
  for (const DeviceInfo& d : selection.devices) (d.is_cuda() ? cuda : others).push_back(d);
  if (cuda.size() <= 1) return;
  others.push_back(cuda[static_cast<std::size_t>(team.local_rank()) % cuda.size()]);
  selection.devices = std::move(others);
}

std::vector<nlohmann::ordered_json> gather_rank_identities(mpi::Session& team, const std::vector<DeviceInfo>& devices) {
  std::vector<nlohmann::ordered_json> out;
  const std::string mine =
      rank_identity(host_name(), devices).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  for (const std::string& text : team.all_gather(mine, "the ranks' devices")) {
    out.push_back(nlohmann::ordered_json::parse(text));
  }
  return out;
}

nlohmann::ordered_json mpi_context(const mpi::Session& team, const std::vector<nlohmann::ordered_json>& rank_devices) {
  return {{"ranks", team.size()},
          {"nodes", team.nodes()},
          {"hosts", team.hosts()},
          {"library", mpi::library_version()},
          {"library_settings", mpi::library_settings()},
          {"rank_timeout_s", team.timeout_s()},
          {"rank_devices", rank_devices}};
}

}  // namespace gpubench::app
