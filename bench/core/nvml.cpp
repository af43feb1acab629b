#include "nvml.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <regex>

namespace gpubench::nvml {
namespace {

// From NVML's public API (nvml.h, "NVML API Reference"): return codes are ints, 0 is
// NVML_SUCCESS and 7 NVML_ERROR_INSUFFICIENT_SIZE; devices are opaque handles; C enums are
// passed as int. Only what this file uses is declared.
using Return = int;
using Device = struct nvmlDevice_st*;
constexpr Return kSuccess = 0;
constexpr Return kInsufficientSize = 7;
// nvmlClockType_t
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
// nvmlMemoryErrorType_t and nvmlEccCounterType_t
constexpr int kEccCorrected = 0, kEccUncorrected = 1;
constexpr int kEccVolatile = 0, kEccAggregate = 1;
// nvmlTemperatureSensors_t and nvmlTemperatureThresholds_t
constexpr int kTemperatureGpu = 0;
constexpr int kTemperatureThresholdSlowdown = 1;
// NVML_ERROR_TIMEOUT: nvmlEventSetWait_v2 saw no event
constexpr Return kTimeout = 10;
// nvmlPageRetirementCause_t
constexpr int kRetiredMultipleSingleBit = 0, kRetiredDoubleBit = 1;
// NVML_FI_DEV_MEMORY_TEMP (a field of nvmlDeviceGetFieldValues) and nvmlValueType_t
constexpr unsigned kFieldMemoryTemp = 82;
constexpr int kValueDouble = 0, kValueUnsignedInt = 1, kValueUnsignedLong = 2, kValueUnsignedLongLong = 3,
              kValueSignedLongLong = 4, kValueSignedInt = 5;
// nvmlEventTypeXidCriticalError
constexpr unsigned long long kEventXid = 0x8;
// NVML_VALUE_NOT_AVAILABLE for unsigned long long fields
constexpr unsigned long long kValueNotAvailable = ~0ULL;

// nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3.
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_sub_system_id;
  char bus_id[32];
};

// nvmlProcessInfo_v2_t: the element type of nvmlDeviceGetComputeRunningProcesses_v2, and of
// _v3 on drivers whose NVML also has nvmlDeviceGetRunningProcessDetailList. A few drivers
// between those (r530 era) briefly gave _v3 a fifth field (usedGpuCcProtectedMemory), which
// then moved to nvmlProcessDetail_v1_t; so _v3 is used only where that later entry point
// exists, and _v2 otherwise. The legacy unversioned entry point takes {pid, usedGpuMemory}.
struct ProcessInfoV2 {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
struct ProcessInfoV1 {
  unsigned pid;
  unsigned long long used_gpu_memory;
};

// nvmlUtilization_t: percent of the last sample period in which a kernel ran / memory was read
// or written.
struct Utilization {
  unsigned gpu;
  unsigned memory;
};

// nvmlFieldValue_t and its nvmlValue_t union.
union FieldValueUnion {
  double d;
  int si;
  unsigned ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  unsigned short us;
};
struct FieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;
  long long latency_us;
  int value_type;
  Return nvml_return;
  FieldValueUnion value;
};

// nvmlEventData_t
using EventSet = struct nvmlEventSet_st*;
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

using GetUint = Return (*)(Device, unsigned*);
using GetClock = Return (*)(Device, int, unsigned*);
using GetProcesses = Return (*)(Device, unsigned*, void*);

struct Api {
  void* lib = nullptr;
  std::string reason;
  Return (*init)() = nullptr;
  Return (*get_handle_by_pci)(const char*, Device*) = nullptr;
  GetClock get_clock = nullptr;
  GetClock get_max_clock = nullptr;
  Return (*driver_version)(char*, unsigned) = nullptr;
  // Optional: a missing one leaves its fields empty.
  Return (*get_count)(unsigned*) = nullptr;
  Return (*get_handle_by_index)(unsigned, Device*) = nullptr;
  Return (*get_name)(Device, char*, unsigned) = nullptr;
  Return (*get_pci_info)(Device, PciInfo*) = nullptr;
  GetUint pcie_gen = nullptr, pcie_max_gen = nullptr, pcie_width = nullptr, pcie_max_width = nullptr;
  Return (*persistence)(Device, int*) = nullptr;
  Return (*ecc_mode)(Device, int*, int*) = nullptr;
  Return (*ecc_errors)(Device, int, int, unsigned long long*) = nullptr;
  Return (*mig_mode)(Device, unsigned*, unsigned*) = nullptr;
  GetClock app_clock = nullptr, default_app_clock = nullptr;
  Return (*clocks_event_reasons)(Device, unsigned long long*) = nullptr;
  GetUint power_limit = nullptr, default_power_limit = nullptr;
  Return (*temperature)(Device, int, unsigned*) = nullptr;
  Return (*temperature_threshold)(Device, int, unsigned*) = nullptr;
  GetProcesses compute_processes = nullptr;
  bool processes_v1_layout = false;
  Return (*cpu_affinity)(Device, unsigned, unsigned long*) = nullptr;
  GetUint power_usage = nullptr;
  Return (*total_energy)(Device, unsigned long long*) = nullptr;
  Return (*utilization)(Device, Utilization*) = nullptr;
  Return (*get_uuid)(Device, char*, unsigned) = nullptr;
  Return (*get_serial)(Device, char*, unsigned) = nullptr;
  Return (*power_limit_constraints)(Device, unsigned*, unsigned*) = nullptr;
  Return (*set_power_limit)(Device, unsigned) = nullptr;
  Return (*lock_clocks)(Device, unsigned, unsigned) = nullptr;
  Return (*reset_clocks)(Device) = nullptr;
  // Soak health (read_health) and XID events (XidWatch).
  Return (*field_values)(Device, int, FieldValue*) = nullptr;
  GetUint fan_speed = nullptr, enforced_power_limit = nullptr, pcie_replays = nullptr;
  Return (*retired_pages)(Device, int, unsigned*, unsigned long long*) = nullptr;
  Return (*remapped_rows)(Device, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  Return (*event_set_create)(EventSet*) = nullptr;
  Return (*register_events)(Device, unsigned long long, EventSet) = nullptr;
  Return (*event_set_wait)(EventSet, EventData*, unsigned) = nullptr;
  Return (*event_set_free)(EventSet) = nullptr;
};

template <typename F>
bool resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

void resolve_optional(Api& a) {
  resolve(a.lib, "nvmlDeviceGetCount_v2", a.get_count);
  resolve(a.lib, "nvmlDeviceGetHandleByIndex_v2", a.get_handle_by_index);
  resolve(a.lib, "nvmlDeviceGetName", a.get_name);
  resolve(a.lib, "nvmlDeviceGetPciInfo_v3", a.get_pci_info);
  resolve(a.lib, "nvmlDeviceGetCurrPcieLinkGeneration", a.pcie_gen);
  resolve(a.lib, "nvmlDeviceGetMaxPcieLinkGeneration", a.pcie_max_gen);
  resolve(a.lib, "nvmlDeviceGetCurrPcieLinkWidth", a.pcie_width);
  resolve(a.lib, "nvmlDeviceGetMaxPcieLinkWidth", a.pcie_max_width);
  resolve(a.lib, "nvmlDeviceGetPersistenceMode", a.persistence);
  resolve(a.lib, "nvmlDeviceGetEccMode", a.ecc_mode);
  resolve(a.lib, "nvmlDeviceGetTotalEccErrors", a.ecc_errors);
  resolve(a.lib, "nvmlDeviceGetMigMode", a.mig_mode);
  resolve(a.lib, "nvmlDeviceGetApplicationsClock", a.app_clock);
  resolve(a.lib, "nvmlDeviceGetDefaultApplicationsClock", a.default_app_clock);
  // The new name first; drivers before r535 only have the ...ThrottleReasons one.
  if (!resolve(a.lib, "nvmlDeviceGetCurrentClocksEventReasons", a.clocks_event_reasons)) {
    resolve(a.lib, "nvmlDeviceGetCurrentClocksThrottleReasons", a.clocks_event_reasons);
  }
  resolve(a.lib, "nvmlDeviceGetPowerManagementLimit", a.power_limit);
  resolve(a.lib, "nvmlDeviceGetPowerManagementDefaultLimit", a.default_power_limit);
  resolve(a.lib, "nvmlDeviceGetTemperature", a.temperature);
  resolve(a.lib, "nvmlDeviceGetTemperatureThreshold", a.temperature_threshold);
  void* detail_list = dlsym(a.lib, "nvmlDeviceGetRunningProcessDetailList");
  if (!(detail_list && resolve(a.lib, "nvmlDeviceGetComputeRunningProcesses_v3", a.compute_processes)) &&
      !resolve(a.lib, "nvmlDeviceGetComputeRunningProcesses_v2", a.compute_processes)) {
    a.processes_v1_layout = resolve(a.lib, "nvmlDeviceGetComputeRunningProcesses", a.compute_processes);
  }
  resolve(a.lib, "nvmlDeviceGetCpuAffinity", a.cpu_affinity);
  resolve(a.lib, "nvmlDeviceGetPowerUsage", a.power_usage);
  resolve(a.lib, "nvmlDeviceGetTotalEnergyConsumption", a.total_energy);
  resolve(a.lib, "nvmlDeviceGetUtilizationRates", a.utilization);
  resolve(a.lib, "nvmlDeviceGetUUID", a.get_uuid);
  resolve(a.lib, "nvmlDeviceGetSerial", a.get_serial);
  resolve(a.lib, "nvmlDeviceGetPowerManagementLimitConstraints", a.power_limit_constraints);
  resolve(a.lib, "nvmlDeviceSetPowerManagementLimit", a.set_power_limit);
  resolve(a.lib, "nvmlDeviceSetGpuLockedClocks", a.lock_clocks);
  resolve(a.lib, "nvmlDeviceResetGpuLockedClocks", a.reset_clocks);
  resolve(a.lib, "nvmlDeviceGetFieldValues", a.field_values);
  resolve(a.lib, "nvmlDeviceGetFanSpeed", a.fan_speed);
  resolve(a.lib, "nvmlDeviceGetEnforcedPowerLimit", a.enforced_power_limit);
  resolve(a.lib, "nvmlDeviceGetPcieReplayCounter", a.pcie_replays);
  resolve(a.lib, "nvmlDeviceGetRetiredPages", a.retired_pages);
  resolve(a.lib, "nvmlDeviceGetRemappedRows", a.remapped_rows);
  resolve(a.lib, "nvmlEventSetCreate", a.event_set_create);
  resolve(a.lib, "nvmlDeviceRegisterEvents", a.register_events);
  resolve(a.lib, "nvmlEventSetWait_v2", a.event_set_wait);
  resolve(a.lib, "nvmlEventSetFree", a.event_set_free);
}

Api& api_storage() {
  static Api a;
  return a;
}

Api& api() {
  Api& a = api_storage();
  static std::once_flag once;
  std::call_once(once, [&a] {
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
    if (Return r = a.init(); r != kSuccess) {
      a.reason = "nvmlInit_v2 failed with code " + std::to_string(r);
      a.init = nullptr;
      return;
    }
    resolve_optional(a);
  });
  return a;
}

// The Api once api() has run (handles exist only then); never enters call_once.
Api& api_loaded() { return api_storage(); }

std::optional<Device> handle_by_pci(const std::string& pci_bus_id) {
  if (!available() || pci_bus_id.empty()) return std::nullopt;
  Device dev = nullptr;
  if (api().get_handle_by_pci(pci_bus_id.c_str(), &dev) == kSuccess) return dev;
  // NVML's own form pads the domain to 8 digits: "00000000:17:00.0".
  const std::string sysfs = normalize_pci_bus_id(pci_bus_id);
  if (sysfs == pci_bus_id && sysfs.size() != 12) return std::nullopt;  // did not parse
  const std::string nvml_form = "0000" + sysfs;
  if (api().get_handle_by_pci(nvml_form.c_str(), &dev) == kSuccess) return dev;
  if (api().get_handle_by_pci(sysfs.c_str(), &dev) == kSuccess) return dev;
  return std::nullopt;
}

std::optional<unsigned> get(GetUint fn, Device dev) {
  unsigned v = 0;
  if (!fn || fn(dev, &v) != kSuccess) return std::nullopt;
  return v;
}

std::optional<unsigned> get_clock(GetClock fn, Device dev, int type) {
  unsigned v = 0;
  if (!fn || fn(dev, type, &v) != kSuccess) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> ecc_count(Device dev, int type, int counter) {
  unsigned long long v = 0;
  if (!api().ecc_errors || api().ecc_errors(dev, type, counter, &v) != kSuccess) return std::nullopt;
  return v;
}

std::string process_name(unsigned pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

std::optional<std::vector<GpuProcess>> processes_of(Device dev) {
  const Api& a = api();
  if (!a.compute_processes) return std::nullopt;
  const std::size_t stride = a.processes_v1_layout ? sizeof(ProcessInfoV1) : sizeof(ProcessInfoV2);
  // Ask for the count, then fetch with room to spare: processes may start in between.
  unsigned count = 0;
  Return r = a.compute_processes(dev, &count, nullptr);
  if (r == kSuccess) return std::vector<GpuProcess>{};
  for (int attempt = 0; attempt < 3 && r == kInsufficientSize; ++attempt) {
    unsigned capacity = count * 2 + 8;
    std::vector<unsigned char> buffer(static_cast<std::size_t>(capacity) * stride, 0);
    count = capacity;
    r = a.compute_processes(dev, &count, buffer.data());
    if (r != kSuccess) continue;
    std::vector<GpuProcess> out;
    for (unsigned i = 0; i < count && i < capacity; ++i) {
      const unsigned char* p = buffer.data() + static_cast<std::size_t>(i) * stride;
      unsigned pid = 0;
      unsigned long long used = 0;
      if (a.processes_v1_layout) {
        const auto* info = reinterpret_cast<const ProcessInfoV1*>(p);
        pid = info->pid, used = info->used_gpu_memory;
      } else {
        const auto* info = reinterpret_cast<const ProcessInfoV2*>(p);
        pid = info->pid, used = info->used_gpu_memory;
      }
      GpuProcess proc;
      proc.pid = pid;
      if (used != kValueNotAvailable) proc.used_memory_bytes = used;
      proc.name = process_name(pid);
      out.push_back(std::move(proc));
    }
    return out;
  }
  return std::nullopt;
}

std::optional<std::vector<unsigned>> affinity_of(Device dev) {
  if (!api().cpu_affinity) return std::nullopt;
  constexpr unsigned kWords = 64;  // 4096 CPUs with 64-bit longs
  unsigned long set[kWords] = {};
  if (api().cpu_affinity(dev, kWords, set) != kSuccess) return std::nullopt;
  std::vector<unsigned> cpus;
  constexpr unsigned kBits = sizeof(unsigned long) * 8;
  for (unsigned w = 0; w < kWords; ++w) {
    for (unsigned b = 0; b < kBits; ++b) {
      if (set[w] & (1UL << b)) cpus.push_back(w * kBits + b);
    }
  }
  return cpus;
}

}  // namespace

bool available() { return api().init != nullptr; }
std::string unavailable_reason() { return api().reason; }

std::optional<std::string> driver_version() {
  if (!available()) return std::nullopt;
  char buf[96] = {};
  if (api().driver_version(buf, sizeof buf) != kSuccess) return std::nullopt;
  return std::string(buf);
}

Clocks clocks(const std::string& pci_bus_id) {
  Clocks c;
  const auto dev = handle_by_pci(pci_bus_id);
  if (!dev) return c;
  unsigned mhz = 0;
  if (api().get_clock(*dev, kClockSm, &mhz) == kSuccess) c.sm_mhz = static_cast<int>(mhz);
  if (api().get_clock(*dev, kClockMem, &mhz) == kSuccess) c.memory_mhz = static_cast<int>(mhz);
  if (api().get_max_clock(*dev, kClockSm, &mhz) == kSuccess) c.max_sm_mhz = static_cast<int>(mhz);
  return c;
}

std::optional<std::vector<GpuProcess>> compute_processes(const std::string& pci_bus_id) {
  const auto dev = handle_by_pci(pci_bus_id);
  if (!dev) return std::nullopt;
  return processes_of(*dev);
}

std::optional<Handle> find_by_pci(const std::string& pci_bus_id) {
  const auto dev = handle_by_pci(pci_bus_id);
  if (!dev) return std::nullopt;
  return Handle{*dev};
}

Reading read(Handle gpu) {
  Reading r;
  if (!available() || !gpu.device) return r;
  const Api& a = api();
  const auto dev = static_cast<Device>(gpu.device);
  r.power_mw = get(a.power_usage, dev);
  if (unsigned long long mj = 0; a.total_energy && a.total_energy(dev, &mj) == kSuccess) r.energy_mj = mj;
  r.sm_clock_mhz = get_clock(a.get_clock, dev, kClockSm);
  r.memory_clock_mhz = get_clock(a.get_clock, dev, kClockMem);
  r.temperature_c = get_clock(a.temperature, dev, kTemperatureGpu);
  if (unsigned long long mask = 0; a.clocks_event_reasons && a.clocks_event_reasons(dev, &mask) == kSuccess) {
    r.clocks_event_reasons = mask;
  }
  if (Utilization u{}; a.utilization && a.utilization(dev, &u) == kSuccess) {
    r.gpu_utilization_pct = u.gpu;
    r.memory_utilization_pct = u.memory;
  }
  return r;
}

std::optional<std::string> text_of(Return (*fn)(Device, char*, unsigned), Handle gpu) {
  // NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96 and NVML_DEVICE_SERIAL_BUFFER_SIZE 30 (nvml.h).
  char buf[128] = {};
  if (!available() || !gpu.device || !fn || fn(static_cast<Device>(gpu.device), buf, sizeof buf) != kSuccess) {
    return std::nullopt;
  }
  buf[sizeof buf - 1] = '\0';
  if (buf[0] == '\0') return std::nullopt;
  return std::string(buf);
}

std::optional<std::string> uuid(Handle gpu) { return text_of(api().get_uuid, gpu); }
std::optional<std::string> serial(Handle gpu) { return text_of(api().get_serial, gpu); }

PowerLimits power_limits(Handle gpu) {
  PowerLimits p;
  if (!available() || !gpu.device) return p;
  const Api& a = api();
  const auto dev = static_cast<Device>(gpu.device);
  p.current_mw = get(a.power_limit, dev);
  p.default_mw = get(a.default_power_limit, dev);
  if (unsigned lo = 0, hi = 0; a.power_limit_constraints && a.power_limit_constraints(dev, &lo, &hi) == kSuccess) {
    p.min_mw = lo;
    p.max_mw = hi;
  }
  return p;
}

// No api() call here: these may run in a signal handler, where std::call_once must not be
// entered. A handle exists only after api() succeeded, so the entry points are resolved.
int set_power_limit(Handle gpu, unsigned mw) {
  const Api& a = api_loaded();
  if (!gpu.device || !a.set_power_limit) return kErrorFunctionNotFound;
  return a.set_power_limit(static_cast<Device>(gpu.device), mw);
}

int lock_gpu_clocks(Handle gpu, unsigned min_mhz, unsigned max_mhz) {
  const Api& a = api_loaded();
  if (!gpu.device || !a.lock_clocks) return kErrorFunctionNotFound;
  return a.lock_clocks(static_cast<Device>(gpu.device), min_mhz, max_mhz);
}

int reset_gpu_clocks(Handle gpu) {
  const Api& a = api_loaded();
  if (!gpu.device || !a.reset_clocks) return kErrorFunctionNotFound;
  return a.reset_clocks(static_cast<Device>(gpu.device));
}

std::string error_name(int code) {
  // nvmlReturn_t (nvml.h); the names are what people search for.
  static const char* const names[] = {"NVML_SUCCESS",
                                      "NVML_ERROR_UNINITIALIZED",
                                      "NVML_ERROR_INVALID_ARGUMENT",
                                      "NVML_ERROR_NOT_SUPPORTED",
                                      "NVML_ERROR_NO_PERMISSION",
                                      "NVML_ERROR_ALREADY_INITIALIZED",
                                      "NVML_ERROR_NOT_FOUND",
                                      "NVML_ERROR_INSUFFICIENT_SIZE",
                                      "NVML_ERROR_INSUFFICIENT_POWER",
                                      "NVML_ERROR_DRIVER_NOT_LOADED",
                                      "NVML_ERROR_TIMEOUT",
                                      "NVML_ERROR_IRQ_ISSUE",
                                      "NVML_ERROR_LIBRARY_NOT_FOUND",
                                      "NVML_ERROR_FUNCTION_NOT_FOUND",
                                      "NVML_ERROR_CORRUPTED_INFOROM",
                                      "NVML_ERROR_GPU_IS_LOST",
                                      "NVML_ERROR_RESET_REQUIRED",
                                      "NVML_ERROR_OPERATING_SYSTEM",
                                      "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
                                      "NVML_ERROR_IN_USE",
                                      "NVML_ERROR_MEMORY",
                                      "NVML_ERROR_NO_DATA",
                                      "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
                                      "NVML_ERROR_INSUFFICIENT_RESOURCES",
                                      "NVML_ERROR_FREQ_NOT_SUPPORTED",
                                      "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
                                      "NVML_ERROR_DEPRECATED",
                                      "NVML_ERROR_NOT_READY",
                                      "NVML_ERROR_GPU_NOT_FOUND",
                                      "NVML_ERROR_INVALID_STATE"};
  if (code >= 0 && static_cast<std::size_t>(code) < sizeof names / sizeof names[0]) return names[code];
  if (code == 999) return "NVML_ERROR_UNKNOWN";
  return "NVML error " + std::to_string(code);
}

namespace {

std::optional<unsigned> memory_temperature(Device dev) {
  if (!api().field_values) return std::nullopt;
  FieldValue v{};
  v.field_id = kFieldMemoryTemp;
  if (api().field_values(dev, 1, &v) != kSuccess || v.nvml_return != kSuccess) return std::nullopt;
  switch (v.value_type) {  // the header does not promise one type for this field
    case kValueUnsignedInt: return v.value.ui;
    case kValueSignedInt: return v.value.si >= 0 ? std::optional<unsigned>(static_cast<unsigned>(v.value.si)) : std::nullopt;
    case kValueUnsignedLong: return static_cast<unsigned>(v.value.ul);
    case kValueUnsignedLongLong: return static_cast<unsigned>(v.value.ull);
    case kValueSignedLongLong: return v.value.sll >= 0 ? std::optional<unsigned>(static_cast<unsigned>(v.value.sll)) : std::nullopt;
    case kValueDouble: return v.value.d >= 0 ? std::optional<unsigned>(static_cast<unsigned>(v.value.d + 0.5)) : std::nullopt;
    default: return std::nullopt;
  }
}

std::optional<unsigned> retired_count(Device dev, int cause) {
  if (!api().retired_pages) return std::nullopt;
  unsigned count = 0;  // 0 with no buffer: NVML answers the count only
  const Return r = api().retired_pages(dev, cause, &count, nullptr);
  if (r != kSuccess && r != kInsufficientSize) return std::nullopt;
  return count;
}

}  // namespace

Health read_health(Handle gpu) {
  Health h;
  if (!available() || !gpu.device) return h;
  const Api& a = api();
  const auto dev = static_cast<Device>(gpu.device);
  h.memory_temperature_c = memory_temperature(dev);
  h.fan_pct = get(a.fan_speed, dev);
  h.enforced_power_limit_mw = get(a.enforced_power_limit, dev);
  h.ecc_corrected = ecc_count(dev, kEccCorrected, kEccVolatile);
  h.ecc_uncorrected = ecc_count(dev, kEccUncorrected, kEccVolatile);
  h.retired_pages_single_bit = retired_count(dev, kRetiredMultipleSingleBit);
  h.retired_pages_double_bit = retired_count(dev, kRetiredDoubleBit);
  if (unsigned corr = 0, unc = 0, pending = 0, failed = 0;
      a.remapped_rows && a.remapped_rows(dev, &corr, &unc, &pending, &failed) == kSuccess) {
    h.remapped_rows_corrected = corr;
    h.remapped_rows_uncorrected = unc;
    h.row_remap_pending = pending != 0;
    h.row_remap_failure = failed != 0;
  }
  h.pcie_replay_count = get(a.pcie_replays, dev);
  return h;
}

XidWatch::XidWatch(const std::vector<Handle>& gpus) {
  const Api& a = api();
  if (!available()) {
    status_ = "off: " + unavailable_reason();
    return;
  }
  if (!a.event_set_create || !a.register_events || !a.event_set_wait || !a.event_set_free) {
    status_ = "off: this driver's NVML has no event API";
    return;
  }
  EventSet set = nullptr;
  if (const Return r = a.event_set_create(&set); r != kSuccess) {
    status_ = "off: nvmlEventSetCreate failed with code " + std::to_string(r);
    return;
  }
  set_ = set;
  status_ = "on";
  for (const Handle& g : gpus) {
    const Return r = a.register_events(static_cast<Device>(g.device), kEventXid, set);
    // NOT_SUPPORTED on some GPUs and in some containers: the others are still watched.
    if (r != kSuccess && status_ == "on") status_ = "off: nvmlDeviceRegisterEvents failed with code " + std::to_string(r);
  }
}

XidWatch::~XidWatch() {
  if (set_) (void)api().event_set_free(static_cast<EventSet>(set_));
}

std::vector<XidEvent> XidWatch::poll() {
  std::vector<XidEvent> out;
  if (!set_) return out;
  for (int i = 0; i < 1024; ++i) {  // bounded: a storm of events must not hold the sampler
    EventData d{};
    const Return r = api().event_set_wait(static_cast<EventSet>(set_), &d, 0);
    if (r == kTimeout || r != kSuccess) break;  // kTimeout: nothing more queued; others: give up this poll
    if (d.event_type & kEventXid) out.push_back({d.device, d.event_data});
  }
  return out;
}

std::optional<unsigned> device_count() {
  if (!available() || !api().get_count) return std::nullopt;
  unsigned n = 0;
  if (api().get_count(&n) != kSuccess) return std::nullopt;
  return n;
}

std::optional<DeviceStatus> device_status(unsigned index) {
  if (!available() || !api().get_handle_by_index) return std::nullopt;
  const Api& a = api();
  Device dev = nullptr;
  if (a.get_handle_by_index(index, &dev) != kSuccess) return std::nullopt;
  DeviceStatus s;
  s.index = index;
  if (a.get_name) {
    char name[96] = {};
    if (a.get_name(dev, name, sizeof name) == kSuccess) s.name = name;
  }
  if (a.get_pci_info) {
    PciInfo pci{};
    if (a.get_pci_info(dev, &pci) == kSuccess) {
      pci.bus_id[sizeof pci.bus_id - 1] = '\0';
      s.pci_bus_id = normalize_pci_bus_id(pci.bus_id);
    }
  }
  s.pcie_generation = get(a.pcie_gen, dev);
  s.pcie_max_generation = get(a.pcie_max_gen, dev);
  s.pcie_width = get(a.pcie_width, dev);
  s.pcie_max_width = get(a.pcie_max_width, dev);
  if (int mode = 0; a.persistence && a.persistence(dev, &mode) == kSuccess) s.persistence_mode = mode != 0;
  if (int cur = 0, pending = 0; a.ecc_mode && a.ecc_mode(dev, &cur, &pending) == kSuccess) {
    s.ecc_enabled = cur != 0;
    s.ecc_enabled_pending = pending != 0;
  }
  s.ecc_corrected_volatile = ecc_count(dev, kEccCorrected, kEccVolatile);
  s.ecc_uncorrected_volatile = ecc_count(dev, kEccUncorrected, kEccVolatile);
  s.ecc_corrected_aggregate = ecc_count(dev, kEccCorrected, kEccAggregate);
  s.ecc_uncorrected_aggregate = ecc_count(dev, kEccUncorrected, kEccAggregate);
  if (unsigned cur = 0, pending = 0; a.mig_mode && a.mig_mode(dev, &cur, &pending) == kSuccess) {
    s.mig_enabled = cur != 0;
    s.mig_enabled_pending = pending != 0;
  }
  s.sm_clock_mhz = get_clock(a.get_clock, dev, kClockSm);
  s.memory_clock_mhz = get_clock(a.get_clock, dev, kClockMem);
  s.max_sm_clock_mhz = get_clock(a.get_max_clock, dev, kClockSm);
  s.max_memory_clock_mhz = get_clock(a.get_max_clock, dev, kClockMem);
  s.app_sm_clock_mhz = get_clock(a.app_clock, dev, kClockSm);
  s.app_memory_clock_mhz = get_clock(a.app_clock, dev, kClockMem);
  s.default_app_sm_clock_mhz = get_clock(a.default_app_clock, dev, kClockSm);
  s.default_app_memory_clock_mhz = get_clock(a.default_app_clock, dev, kClockMem);
  if (unsigned long long r = 0; a.clocks_event_reasons && a.clocks_event_reasons(dev, &r) == kSuccess) {
    s.clocks_event_reasons = r;
  }
  s.power_limit_mw = get(a.power_limit, dev);
  s.default_power_limit_mw = get(a.default_power_limit, dev);
  s.temperature_c = get_clock(a.temperature, dev, kTemperatureGpu);
  s.slowdown_temperature_c = get_clock(a.temperature_threshold, dev, kTemperatureThresholdSlowdown);
  s.compute_processes = processes_of(dev);
  s.cpu_affinity = affinity_of(dev);
  return s;
}

std::string normalize_pci_bus_id(const std::string& id) {
  // domain:bus:device.function, all hexadecimal; NVML pads the domain to 8 digits, sysfs to 4.
  static const std::regex re(R"(([0-9a-fA-F]{1,8}):([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7]))");
  std::smatch m;
  if (!std::regex_match(id, m, re)) return id;
  const unsigned long domain = std::stoul(m[1].str(), nullptr, 16);
  const unsigned long device = std::stoul(m[3].str(), nullptr, 16);
  if (domain > 0xffff || device > 0x1f) return id;
  char out[16];
  std::snprintf(out, sizeof out, "%04lx:%02lx:%02lx.%s", domain, std::stoul(m[2].str(), nullptr, 16), device,
                m[4].str().c_str());
  return out;
}

}  // namespace gpubench::nvml

// Where the official header is found at build time (the CUDA Toolkit's, or the PyPI package
// nvidia-nvml-dev that scripts/lib.sh installs into build/deps), every constant and record
// layout declared above is checked against it, so a mistake in the hand-written declarations
// fails the build instead of misreading a driver's answer. The binary never needs the header.
#ifdef GPUBENCH_HAVE_NVML_H
#include <nvml.h>

#include <cstddef>

namespace gpubench::nvml {
namespace {
static_assert(kSuccess == NVML_SUCCESS && kInsufficientSize == NVML_ERROR_INSUFFICIENT_SIZE);
static_assert(kErrorNoPermission == NVML_ERROR_NO_PERMISSION && kErrorFunctionNotFound == NVML_ERROR_FUNCTION_NOT_FOUND);
static_assert(NVML_ERROR_INVALID_STATE == 29 && NVML_ERROR_UNKNOWN == 999);  // error_name's table
static_assert(kClockSm == NVML_CLOCK_SM && kClockMem == NVML_CLOCK_MEM);
static_assert(kEccCorrected == NVML_MEMORY_ERROR_TYPE_CORRECTED && kEccUncorrected == NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
static_assert(kEccVolatile == NVML_VOLATILE_ECC && kEccAggregate == NVML_AGGREGATE_ECC);
static_assert(kTemperatureGpu == NVML_TEMPERATURE_GPU && kTemperatureThresholdSlowdown == NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
static_assert(kValueNotAvailable == static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE));
static_assert(sizeof(PciInfo) == sizeof(nvmlPciInfo_t) && offsetof(PciInfo, bus_id) == offsetof(nvmlPciInfo_t, busId));
static_assert(sizeof(ProcessInfoV2) == sizeof(nvmlProcessInfo_v2_t) && sizeof(ProcessInfoV1) == sizeof(nvmlProcessInfo_v1_t));
static_assert(offsetof(ProcessInfoV2, used_gpu_memory) == offsetof(nvmlProcessInfo_v2_t, usedGpuMemory));
static_assert(sizeof(Utilization) == sizeof(nvmlUtilization_t) && offsetof(Utilization, memory) == offsetof(nvmlUtilization_t, memory));
static_assert(kTimeout == NVML_ERROR_TIMEOUT && kFieldMemoryTemp == NVML_FI_DEV_MEMORY_TEMP &&
              kEventXid == static_cast<unsigned long long>(nvmlEventTypeXidCriticalError));
static_assert(kRetiredMultipleSingleBit == NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS &&
              kRetiredDoubleBit == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
static_assert(kValueDouble == NVML_VALUE_TYPE_DOUBLE && kValueUnsignedInt == NVML_VALUE_TYPE_UNSIGNED_INT &&
              kValueUnsignedLong == NVML_VALUE_TYPE_UNSIGNED_LONG && kValueUnsignedLongLong == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG &&
              kValueSignedLongLong == NVML_VALUE_TYPE_SIGNED_LONG_LONG && kValueSignedInt == NVML_VALUE_TYPE_SIGNED_INT);
static_assert(sizeof(FieldValue) == sizeof(nvmlFieldValue_t) && offsetof(FieldValue, value) == offsetof(nvmlFieldValue_t, value) &&
              offsetof(FieldValue, value_type) == offsetof(nvmlFieldValue_t, valueType) &&
              offsetof(FieldValue, nvml_return) == offsetof(nvmlFieldValue_t, nvmlReturn));
static_assert(sizeof(EventData) == sizeof(nvmlEventData_t) && offsetof(EventData, event_data) == offsetof(nvmlEventData_t, eventData) &&
              offsetof(EventData, event_type) == offsetof(nvmlEventData_t, eventType));
static_assert(kClocksEventGpuIdle == nvmlClocksEventReasonGpuIdle &&
              kClocksEventApplicationsClocksSetting == nvmlClocksEventReasonApplicationsClocksSetting &&
              kClocksEventSwPowerCap == nvmlClocksEventReasonSwPowerCap &&
              kClocksEventHwSlowdown == nvmlClocksThrottleReasonHwSlowdown &&
              kClocksEventSyncBoost == nvmlClocksEventReasonSyncBoost &&
              kClocksEventSwThermalSlowdown == nvmlClocksEventReasonSwThermalSlowdown &&
              kClocksEventHwThermalSlowdown == nvmlClocksThrottleReasonHwThermalSlowdown &&
              kClocksEventHwPowerBrakeSlowdown == nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
}  // namespace
}  // namespace gpubench::nvml
#endif
