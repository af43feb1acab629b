#pragma once
// The CUDA runtime as code outside the GPU cases sees it, without CUDA headers: making a device
// current, counting devices, clearing the last error, the toolkit the binary was built with. The
// soak runner, the collectives' planning and `gpubench version` use it, so they build where
// there is no CUDA Toolkit. cuda.cpp implements it over cudart; cuda_none.cpp, in a build
// without CUDA (gpubench/version.hpp: kBuiltWithCuda), sees no device and says
// kNotBuiltWithCuda.
#include <new>
#include <stdexcept>

namespace gpubench {

// Clears the CUDA runtime's last error of this thread (see cuda_case.cpp for what it cannot
// clear). CudaCase does it on construction; GPU cases built on Case directly (collectives over
// NCCL, the dataload pipeline with a GPU) call it before their first CUDA call.
void clear_last_cuda_error();

// The CUDA devices this process can use; 0 when the runtime reports an error (no driver).
// Under `--assume MODEL:N` (planning only), N: the assumed node's GPUs.
int cuda_device_count();

// `--assume MODEL:N`: plan as if this process saw N GPUs of one model, every one a peer of every
// other (an NVLink/NVSwitch node, as the published multi-GPU figures were measured on), so that
// peer and multi-GPU cases are planned as on that node. 0 (the default): the runtime's answer.
void assume_cuda_devices(int count);
int assumed_cuda_devices();  // N, or 0 when nothing is assumed

// CUDART_VERSION of the toolkit this binary was built with (13000 for 13.0); 0 without CUDA.
int cuda_build_runtime_version();

namespace cuda {

// A CUDA error that ends the case (not the run). Out-of-memory errors are thrown as
// CaseSkipped instead, so the run records the case as skipped and continues.
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Makes `ordinal` current for the lifetime of the guard and restores the previous device.
class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal);  // throws CudaError when it cannot
  // For destructors and other code that must not throw: after a sticky error (or without a
  // driver) CUDA refuses every call, and an exception leaving a destructor ends the whole run
  // (std::terminate). Tries, and says through ok() whether `ordinal` is now current.
  ScopedDevice(int ordinal, std::nothrow_t) noexcept;
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  bool ok() const { return ok_; }

 private:
  int previous_ = -1;  // -1: unknown, nothing to restore
  bool ok_ = false;
};

}  // namespace cuda
}  // namespace gpubench
