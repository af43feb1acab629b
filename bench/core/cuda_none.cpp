// The CUDA runtime of a build without CUDA (GPUBENCH_WITH_CUDA=OFF): no device, and every
// question about one is answered with kNotBuiltWithCuda, which the commands print where a GPU
// was expected (`list`, `run --device cuda`, `doctor`). Stands in for cuda.cpp,
// cuda_devices.cpp and cuda_case.cpp.
#include <string>

#include "bench/core/cuda_portable.hpp"
#include "bench/core/device.hpp"
#include "gpubench/version.hpp"

static_assert(!gpubench::kBuiltWithCuda, "cuda_none.cpp belongs to a build without CUDA");

namespace gpubench {

void clear_last_cuda_error() {}
int cuda_device_count() { return assumed_cuda_devices(); }
int cuda_build_runtime_version() { return 0; }

DeviceInventory discover_devices() {
  DeviceInventory inv;
  inv.cpu = describe_cpu();
  inv.cuda_unavailable_reason = kNotBuiltWithCuda;
  return inv;
}

namespace cuda {

ScopedDevice::ScopedDevice(int ordinal) {
  throw CudaError("cuda:" + std::to_string(ordinal) + ": " + kNotBuiltWithCuda);
}
ScopedDevice::ScopedDevice(int, std::nothrow_t) noexcept {}
ScopedDevice::~ScopedDevice() = default;

}  // namespace cuda
}  // namespace gpubench
