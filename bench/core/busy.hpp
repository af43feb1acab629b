#pragma once
// Busy-GPU detection: other processes computing on a GPU being measured share its SMs, memory
// bandwidth and power budget, so its numbers are not trustworthy. The run warns (or refuses,
// with --exclusive) and records who else was there.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device.hpp"
#include "nvml.hpp"

namespace gpubench {

struct BusyDevice {
  DeviceInfo device;
  std::vector<nvml::GpuProcess> others;
};

using ProcessQuery = std::function<std::optional<std::vector<nvml::GpuProcess>>(const std::string& pci_bus_id)>;

// CUDA devices among `devices` on which a process other than `self_pid` computes. Devices NVML
// cannot answer for are not reported (unknown is not busy).
std::vector<BusyDevice> find_busy_devices(const std::vector<DeviceInfo>& devices, const ProcessQuery& query,
                                          unsigned self_pid);

// "cuda:0 (NVIDIA H200) is in use by 2 other processes: 4242 python (10.5 GiB), 77"
std::string describe(const BusyDevice& busy);
nlohmann::ordered_json to_json(const BusyDevice& busy);

}  // namespace gpubench
