// CUDA device discovery through the runtime API. Without a driver cudaGetDeviceCount returns
// cudaErrorInsufficientDriver (35) or cudaErrorNoDevice (100) and leaves the count unwritten,
// so the count starts at 0 (see ../shared/reference/profiling-apis.md).
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "device.hpp"
#include "nvml.hpp"

namespace gpubench {
namespace {

int attribute(cudaDeviceAttr attr, int ordinal) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, ordinal) != cudaSuccess) return 0;
  return v;
}

// The 16 bytes of cudaDeviceProp::uuid in nvidia-smi's form, which monitoring (DCGM, NVML's
// nvmlDeviceGetUUID) uses to name a GPU: "GPU-" then 8-4-4-4-12 hex digits.
std::string format_gpu_uuid(const unsigned char* b) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", b[i]);
  }
  return out;
}

DeviceInfo describe_cuda(int ordinal) {
  DeviceInfo d;
  d.kind = DeviceKind::Cuda;
  d.ordinal = ordinal;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, ordinal) == cudaSuccess) {
    d.name = prop.name;
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    d.sm_count = prop.multiProcessorCount;
    d.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
    d.memory_bus_width_bits = prop.memoryBusWidth;
    d.l2_bytes = prop.l2CacheSize;
    d.uuid = format_gpu_uuid(reinterpret_cast<const unsigned char*>(prop.uuid.bytes));
  }
  // The clock fields left cudaDeviceProp in CUDA 13; the attributes remain (kHz).
  d.max_sm_clock_mhz = attribute(cudaDevAttrClockRate, ordinal) / 1000;
  d.memory_clock_mhz = attribute(cudaDevAttrMemoryClockRate, ordinal) / 1000;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal) == cudaSuccess) d.pci_bus_id = bus;
  nvml::Clocks c = nvml::clocks(d.pci_bus_id);
  d.current_sm_clock_mhz = c.sm_mhz;
  d.current_memory_clock_mhz = c.memory_mhz;
  d.max_sm_clock_mhz_nvml = c.max_sm_mhz;
  return d;
}

}  // namespace

DeviceInventory discover_devices() {
  DeviceInventory inv;
  inv.cpu = describe_cpu();
  (void)cudaRuntimeGetVersion(&inv.runtime_version);
  if (cudaDriverGetVersion(&inv.driver_version) != cudaSuccess) inv.driver_version = 0;
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (status != cudaSuccess) {
    inv.cuda_unavailable_reason =
        inv.driver_version == 0
            ? fmt::format("no NVIDIA driver is loaded ({})", cudaGetErrorName(status))
            : fmt::format("{} ({})", cudaGetErrorString(status), cudaGetErrorName(status));
    count = 0;
  } else if (count == 0) {
    inv.cuda_unavailable_reason = "the CUDA runtime reports no devices";
  }
  for (int i = 0; i < count; ++i) inv.cuda.push_back(describe_cuda(i));
  if (count > 0) {
    if (auto v = nvml::driver_version()) inv.nvml_driver_version = *v;
  }
  return inv;
}

}  // namespace gpubench
