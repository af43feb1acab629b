#pragma once
// Devices a run can use: the host CPU and every CUDA device the runtime reports.
// Discovery never throws and never needs a driver: without one it records why.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

enum class DeviceKind { Cpu, Cuda };

struct DeviceInfo {
  DeviceKind kind = DeviceKind::Cpu;
  int ordinal = -1;          // CUDA device ordinal; -1 for the CPU
  std::string name;          // "NVIDIA H200", or the CPU model
  // CPU
  int logical_cpus = 0;
  std::int64_t llc_bytes = 0;  // its last-level cache, all instances together (0: unknown)
  // The theoretical peak by peak key (fp32, fp64: TFLOP/s; empty when not derived) and how it was
  // derived (cpu_peak.hpp), for the plausibility rules.
  std::map<std::string, double> peak_tflops;
  std::string peak_derivation;
  // CUDA (from the runtime)
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::int64_t memory_bytes = 0;
  int memory_bus_width_bits = 0;
  int memory_clock_mhz = 0;
  std::int64_t l2_bytes = 0;
  int max_sm_clock_mhz = 0;
  std::string pci_bus_id;
  std::string uuid;          // "GPU-8-4-4-4-12 hex", as nvidia-smi -L prints it
  // CUDA (from NVML, when the library and the driver are there)
  std::optional<int> current_sm_clock_mhz, current_memory_clock_mhz, max_sm_clock_mhz_nvml;
  // CUDA: the video engines of this GPU model, from the spec sheet (data/gpus.json) where it
  // states them; empty when unknown.
  std::optional<int> nvenc_engines, nvdec_engines;

  std::string id() const;  // "cpu" or "cuda:N"
  bool is_cuda() const { return kind == DeviceKind::Cuda; }
  // The cache in front of the device's memory (a GPU's L2, a CPU's last level); 0 when unknown.
  // A bandwidth measured over less than twice this may come from the cache, not the memory.
  std::int64_t outer_cache_bytes() const { return is_cuda() ? l2_bytes : llc_bytes; }
};

// Whether a bandwidth measured over `working_set_bytes` may come from a cache of `cache_bytes`
// in front of the memory: under twice its size (false when either is unknown, <= 0). The one
// rule of the memory suite's DRAM ceiling and of the plausibility judge.
inline bool cache_may_serve(double working_set_bytes, double cache_bytes) {
  return cache_bytes > 0 && working_set_bytes > 0 && working_set_bytes < 2 * cache_bytes;
}

struct DeviceInventory {
  DeviceInfo cpu;
  std::vector<DeviceInfo> cuda;
  std::string cuda_unavailable_reason;  // empty when at least one CUDA device was found
  int runtime_version = 0;              // CUDART_VERSION style: 13000
  int driver_version = 0;               // 0 without a driver
  std::string nvml_driver_version;      // "580.65.06", when NVML answered
};

// Asks the CUDA runtime (and NVML, if present) what is there. Safe without a driver.
DeviceInventory discover_devices();

// The host CPU's description (model name from /proc/cpuinfo, logical CPU count).
DeviceInfo describe_cpu();

// Parses --device: a comma list of `all`, `cuda`, `cuda:N`, `cpu`. Throws UsageError for a
// malformed item or a cuda:N that does not exist while other CUDA devices do. `notice` gets
// the one-line "no CUDA device: <reason>; GPU cases skipped" when CUDA was asked for (also
// implicitly, by `all`) but none is available.
struct DeviceSelection {
  std::vector<DeviceInfo> devices;
  std::string notice;
  bool cuda_requested_explicitly = false;
};
DeviceSelection select_devices(std::string_view spec, const DeviceInventory& inventory);

std::string format_cuda_version(int version);  // 13000 -> "13.0"

}  // namespace gpubench
