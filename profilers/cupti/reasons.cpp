#include "profilers/cupti/reasons.hpp"

#include <fmt/format.h>

namespace gpubench::profilers::cupti {

std::string off_reason(int code, const std::string& name) {
  switch (code) {
    case 35:  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
      return fmt::format(
          "off: insufficient privileges for GPU performance counters ({}); run as root (or with CAP_SYS_ADMIN), or "
          "load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0",
          name);
    case 39:  // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
      return fmt::format(
          "off: another profiler holds CUPTI (Nsight Systems, Nsight Compute or another CUPTI client is attached; {}); "
          "run without it, or use that tool's own data",
          name);
    case 43:  // CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED
      return fmt::format("off: not supported on a MIG instance ({})", name);
    case 33:  // CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED
    case 40:  // CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES
      return fmt::format("off: virtual GPU (vGPU) without profiling enabled by the hypervisor ({})", name);
    case 41:  // CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED
      return fmt::format("off: not supported with confidential computing on ({})", name);
    case 42:  // CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED
      return fmt::format("off: not supported on a crypto-mining processor ({})", name);
    case 44:  // CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED
      return fmt::format("off: not supported with SLI ({})", name);
    case 45:  // CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED
      return fmt::format("off: not supported under WSL ({})", name);
    case 27:  // CUPTI_ERROR_NOT_SUPPORTED
      return fmt::format("off: not supported on this device or driver ({})", name);
    default:
      return fmt::format("off: CUPTI failed: {}", name);
  }
}

}  // namespace gpubench::profilers::cupti
