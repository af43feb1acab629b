#include "nvml.hpp"

#include <dlfcn.h>

#include <mutex>

namespace gpubench::nvml {
namespace {

// From NVML's public API (nvml.h): return codes are ints, 0 is NVML_SUCCESS; devices are
// opaque handles; clock types NVML_CLOCK_GRAPHICS=0, NVML_CLOCK_SM=1, NVML_CLOCK_MEM=2.
using Return = int;
using Device = struct nvmlDevice_st*;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;

struct Api {
  void* lib = nullptr;
  std::string reason;
  Return (*init)() = nullptr;
  Return (*get_handle_by_pci)(const char*, Device*) = nullptr;
  Return (*get_clock)(Device, int, unsigned*) = nullptr;
  Return (*get_max_clock)(Device, int, unsigned*) = nullptr;
  Return (*driver_version)(char*, unsigned) = nullptr;
};

template <typename F>
bool resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    a.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a.lib) {
      a.reason = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
      return;
    }
    if (!resolve(a.lib, "nvmlInit_v2", a.init) ||
        !resolve(a.lib, "nvmlDeviceGetHandleByPciBusId_v2", a.get_handle_by_pci) ||
        !resolve(a.lib, "nvmlDeviceGetClockInfo", a.get_clock) ||
        !resolve(a.lib, "nvmlDeviceGetMaxClockInfo", a.get_max_clock) ||
        !resolve(a.lib, "nvmlSystemGetDriverVersion", a.driver_version)) {
      a.reason = "libnvidia-ml.so.1 lacks an expected entry point";
      a.init = nullptr;
      return;
    }
    if (Return r = a.init(); r != 0) {
      a.reason = "nvmlInit_v2 failed with code " + std::to_string(r);
      a.init = nullptr;
    }
  });
  return a;
}

}  // namespace

bool available() { return api().init != nullptr; }
std::string unavailable_reason() { return api().reason; }

std::optional<std::string> driver_version() {
  if (!available()) return std::nullopt;
  char buf[96] = {};
  if (api().driver_version(buf, sizeof buf) != 0) return std::nullopt;
  return std::string(buf);
}

Clocks clocks(const std::string& pci_bus_id) {
  Clocks c;
  if (!available() || pci_bus_id.empty()) return c;
  Device dev = nullptr;
  if (api().get_handle_by_pci(pci_bus_id.c_str(), &dev) != 0) return c;
  unsigned mhz = 0;
  if (api().get_clock(dev, kClockSm, &mhz) == 0) c.sm_mhz = static_cast<int>(mhz);
  if (api().get_clock(dev, kClockMem, &mhz) == 0) c.memory_mhz = static_cast<int>(mhz);
  if (api().get_max_clock(dev, kClockSm, &mhz) == 0) c.max_sm_mhz = static_cast<int>(mhz);
  return c;
}

}  // namespace gpubench::nvml
