#pragma once
// A minimal run-time binding to NVML (libnvidia-ml.so.1), loaded with dlopen so the binary
// starts where there is no driver. The toolkit on build machines ships no nvml.h, so the few
// types and entry points used are declared here from NVML's documented C API.
#include <optional>
#include <string>

namespace gpubench::nvml {

struct Clocks {
  std::optional<int> sm_mhz, memory_mhz, max_sm_mhz;
};

// True when libnvidia-ml.so.1 loaded and nvmlInit_v2 succeeded (tried once per process).
bool available();
std::string unavailable_reason();
std::optional<std::string> driver_version();
// Clocks of the device with this PCI bus id ("0000:17:00.0"), as far as NVML reports them.
Clocks clocks(const std::string& pci_bus_id);

}  // namespace gpubench::nvml
