#include "kernels/common/device_code.hpp"

namespace gpubench::kernels {

cudaError_t function_code_arch(const void* kernel, int* arch) {
  *arch = 0;
  cudaFuncAttributes attr{};
  const cudaError_t err = cudaFuncGetAttributes(&attr, kernel);
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction) {
    (void)cudaGetLastError();  // not sticky: nothing ran
    return cudaSuccess;
  }
  if (err != cudaSuccess) return err;
  *arch = attr.ptxVersion;
  return cudaSuccess;
}

}  // namespace gpubench::kernels
