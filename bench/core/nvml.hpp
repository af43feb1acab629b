#pragma once
// A minimal run-time binding to NVML (libnvidia-ml.so.1), loaded with dlopen so the binary
// starts where there is no driver. The toolkit on build machines ships no nvml.h, so the few
// types and entry points used are declared in nvml.cpp from NVML's documented C API.
//
// Every query degrades field by field: a function the installed driver does not export, or
// one that returns an error (NOT_SUPPORTED on a consumer GPU, NO_PERMISSION, ...), leaves its
// field empty. Nothing is ever filled with a guess.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// A process holding a compute context on a GPU.
struct GpuProcess {
  unsigned pid = 0;
  // Device memory the process uses; empty where NVML cannot tell (it reports
  // NVML_VALUE_NOT_AVAILABLE, e.g. without permission or under some hypervisors).
  std::optional<std::uint64_t> used_memory_bytes;
  // /proc/<pid>/comm; empty when the process is not visible here (another PID namespace,
  // a container) or has exited.
  std::string name;
};

// The processes with a compute context on the GPU with this PCI bus id (either the CUDA form
// "0000:17:00.0" or NVML's "00000000:17:00.0"), this process included when it holds one.
// Empty optional when NVML cannot answer (no driver, unknown bus id, query refused); an empty
// list means NVML answered that no process uses the GPU. Callers wanting "other processes"
// filter out their own pid. Used by `doctor` and for busy-GPU warnings before a run.
std::optional<std::vector<GpuProcess>> compute_processes(const std::string& pci_bus_id);

// Everything `gpubench doctor` asks NVML about one GPU. Units as NVML reports them: clocks in
// MHz, power in mW, temperature in degrees C.
struct DeviceStatus {
  unsigned index = 0;       // NVML's index (may differ from the CUDA ordinal)
  std::string pci_bus_id;   // normalised: "0000:17:00.0"
  std::string name;
  // PCIe link: current and the maximum the GPU and its slot together allow.
  std::optional<unsigned> pcie_generation, pcie_max_generation, pcie_width, pcie_max_width;
  std::optional<bool> persistence_mode;
  std::optional<bool> ecc_enabled, ecc_enabled_pending;
  // ECC error counts: volatile = since the driver loaded, aggregate = over the GPU's life.
  std::optional<std::uint64_t> ecc_corrected_volatile, ecc_uncorrected_volatile;
  std::optional<std::uint64_t> ecc_corrected_aggregate, ecc_uncorrected_aggregate;
  std::optional<bool> mig_enabled, mig_enabled_pending;
  std::optional<unsigned> sm_clock_mhz, memory_clock_mhz, max_sm_clock_mhz, max_memory_clock_mhz;
  std::optional<unsigned> app_sm_clock_mhz, app_memory_clock_mhz;
  std::optional<unsigned> default_app_sm_clock_mhz, default_app_memory_clock_mhz;
  // Bit mask of the reasons the clocks are held below their maximum (kClocksEvent* below).
  std::optional<std::uint64_t> clocks_event_reasons;
  std::optional<unsigned> power_limit_mw, default_power_limit_mw;
  std::optional<unsigned> temperature_c, slowdown_temperature_c;
  std::optional<std::vector<GpuProcess>> compute_processes;
  // Logical CPUs NVML reports as close to the GPU (its CPU affinity).
  std::optional<std::vector<unsigned>> cpu_affinity;
};

// Clock event ("throttle") reason bits, as NVML documents them.
constexpr std::uint64_t kClocksEventGpuIdle = 0x1;
constexpr std::uint64_t kClocksEventApplicationsClocksSetting = 0x2;
constexpr std::uint64_t kClocksEventSwPowerCap = 0x4;
constexpr std::uint64_t kClocksEventHwSlowdown = 0x8;
constexpr std::uint64_t kClocksEventSyncBoost = 0x10;
constexpr std::uint64_t kClocksEventSwThermalSlowdown = 0x20;
constexpr std::uint64_t kClocksEventHwThermalSlowdown = 0x40;
constexpr std::uint64_t kClocksEventHwPowerBrakeSlowdown = 0x80;

// Number of GPUs NVML sees; empty when NVML is unavailable.
std::optional<unsigned> device_count();
// The state of the GPU with this NVML index; empty when NVML is unavailable or has no such
// device. Fields NVML does not answer stay empty.
std::optional<DeviceStatus> device_status(unsigned index);

// Telemetry of one GPU, read repeatedly by the sampler in profilers/nvml. Units as NVML reports
// them; a field the GPU or driver does not report stays empty.
struct Reading {
  std::optional<unsigned> power_mw;                 // nvmlDeviceGetPowerUsage (a ~1 s average on Ampere+)
  std::optional<std::uint64_t> energy_mj;           // nvmlDeviceGetTotalEnergyConsumption: since the driver loaded
  std::optional<unsigned> sm_clock_mhz, memory_clock_mhz;
  std::optional<unsigned> temperature_c;
  std::optional<std::uint64_t> clocks_event_reasons;  // kClocksEvent* bits
  std::optional<unsigned> gpu_utilization_pct, memory_utilization_pct;  // nvmlDeviceGetUtilizationRates
};

// An NVML device handle, found once and read many times.
struct Handle {
  void* device = nullptr;
};
// The GPU with this PCI bus id, in the CUDA form "0000:17:00.0" or NVML's "00000000:17:00.0"
// (NVML and CUDA may number devices differently: the bus id is what they share). Empty when
// NVML is unavailable or has no such GPU.
std::optional<Handle> find_by_pci(const std::string& pci_bus_id);
Reading read(Handle gpu);

// Identity of a GPU for fleet results: NVML's UUID ("GPU-..."), and the board serial where the
// board has one (NVML answers NOT_SUPPORTED on many boards). Empty when not reported.
std::optional<std::string> uuid(Handle gpu);
std::optional<std::string> serial(Handle gpu);

// Power limit and locked clocks. Reading needs no privilege; changing needs root or an
// administrator's grant (NVML_ERROR_NO_PERMISSION otherwise). Limits in mW, clocks in MHz.
struct PowerLimits {
  std::optional<unsigned> current_mw, default_mw, min_mw, max_mw;
};
PowerLimits power_limits(Handle gpu);
// NVML return codes (0: success). An entry point the driver lacks gives kErrorFunctionNotFound.
// These only call the resolved entry points (no allocation, no locking once NVML is loaded), so
// they may be called from a signal handler to put settings back (see power_control.hpp).
int set_power_limit(Handle gpu, unsigned mw);                          // nvmlDeviceSetPowerManagementLimit
int lock_gpu_clocks(Handle gpu, unsigned min_mhz, unsigned max_mhz);  // nvmlDeviceSetGpuLockedClocks
int reset_gpu_clocks(Handle gpu);                                       // nvmlDeviceResetGpuLockedClocks
constexpr int kErrorNoPermission = 4;        // NVML_ERROR_NO_PERMISSION
constexpr int kErrorFunctionNotFound = 13;   // NVML_ERROR_FUNCTION_NOT_FOUND
// The nvmlReturn_t enumerator's name ("NVML_ERROR_NO_PERMISSION"), or "NVML error <code>".
std::string error_name(int code);

// What a soak watches besides Reading (bench/soak): health counters and the figures that tell
// a cooling or power problem from the power cap. Units as NVML reports them; a field the GPU,
// driver or permissions do not give stays empty.
struct Health {
  std::optional<unsigned> memory_temperature_c;  // nvmlDeviceGetFieldValues(NVML_FI_DEV_MEMORY_TEMP); HBM parts
  std::optional<unsigned> fan_pct;               // nvmlDeviceGetFanSpeed (fan 0); none on passively cooled GPUs
  std::optional<unsigned> enforced_power_limit_mw;  // nvmlDeviceGetEnforcedPowerLimit
  // Volatile ECC counts (since the driver loaded): a rise during a soak is a new error.
  std::optional<std::uint64_t> ecc_corrected, ecc_uncorrected;
  // Retired pages (pre-Ampere; causes: multiple single-bit, double-bit) and remapped rows (Ampere+).
  std::optional<unsigned> retired_pages_single_bit, retired_pages_double_bit;
  std::optional<unsigned> remapped_rows_corrected, remapped_rows_uncorrected;
  std::optional<bool> row_remap_pending, row_remap_failure;
  std::optional<unsigned> pcie_replay_count;  // nvmlDeviceGetPcieReplayCounter
};
Health read_health(Handle gpu);

// XID errors (nvmlEventTypeXidCriticalError) on a set of GPUs, polled without waiting.
struct XidEvent {
  void* device = nullptr;  // the Handle::device the event names
  std::uint64_t xid = 0;   // 999: an XID NVML does not know
};
class XidWatch {
 public:
  explicit XidWatch(const std::vector<Handle>& gpus);
  ~XidWatch();
  XidWatch(const XidWatch&) = delete;
  XidWatch& operator=(const XidWatch&) = delete;
  // "on" when every GPU is registered, else "off: <why>" (the GPUs that could register still are).
  const std::string& status() const { return status_; }
  std::vector<XidEvent> poll();  // the events since the last poll

 private:
  void* set_ = nullptr;
  std::string status_;
};

// "00000000:17:00.0" or "0000:17:00.0" (any case) -> "0000:17:00.0", the form sysfs uses under
// /sys/bus/pci/devices; the input unchanged when it does not parse.
std::string normalize_pci_bus_id(const std::string& id);

}  // namespace gpubench::nvml
