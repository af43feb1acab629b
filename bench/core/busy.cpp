#include "busy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpubench {

std::vector<BusyDevice> find_busy_devices(const std::vector<DeviceInfo>& devices, const ProcessQuery& query,
                                          unsigned self_pid) {
  std::vector<BusyDevice> out;
  for (const DeviceInfo& d : devices) {
    if (!d.is_cuda()) continue;
    const auto processes = query(d.pci_bus_id);
    if (!processes) continue;
    BusyDevice busy{d, {}};
    for (const nvml::GpuProcess& p : *processes) {
      if (p.pid != self_pid) busy.others.push_back(p);
    }
    if (!busy.others.empty()) out.push_back(std::move(busy));
  }
  return out;
}

std::string describe(const BusyDevice& b) {
  std::vector<std::string> who;
  for (const nvml::GpuProcess& p : b.others) {
    std::string s = std::to_string(p.pid);
    if (!p.name.empty()) s += " " + p.name;
    if (p.used_memory_bytes) s += fmt::format(" ({:.1f} GiB)", static_cast<double>(*p.used_memory_bytes) / (1 << 30));
    who.push_back(std::move(s));
  }
  return fmt::format("{} ({}) is in use by {} other process{}: {}", b.device.id(), b.device.name, b.others.size(),
                     b.others.size() == 1 ? "" : "es", fmt::join(who, ", "));
}

nlohmann::ordered_json to_json(const BusyDevice& b) {
  nlohmann::ordered_json procs = nlohmann::ordered_json::array();
  for (const nvml::GpuProcess& p : b.others) {
    nlohmann::ordered_json j{{"pid", p.pid}, {"name", p.name}};
    if (p.used_memory_bytes) j["used_memory_bytes"] = *p.used_memory_bytes;
    procs.push_back(std::move(j));
  }
  return {{"device", b.device.id()}, {"other_processes", std::move(procs)}};
}

}  // namespace gpubench
