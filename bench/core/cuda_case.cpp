#include "cuda_case.hpp"

#include <algorithm>

#include "kernels/common/l2_flush.cuh"

namespace gpubench {

// cudaGetLastError() returns and resets the runtime's last error for this thread. A previous
// case's non-sticky error (a failed launch configuration, an invalid argument) would otherwise
// be reported by the first cudaGetLastError() of this case (the train model checks it after
// its launches) and fail a case that did nothing wrong. A sticky error (an illegal address, a
// kernel that trapped) is not cleared by this: the context is unusable, every later CUDA call
// in the process returns it, and this case fails at its first call with that error's name
// (typically creating the stream just below), as does every later GPU case of the run.
void clear_last_cuda_error() { (void)cudaGetLastError(); }

CudaCase::LastErrorCleared::LastErrorCleared() { clear_last_cuda_error(); }

CudaCase::CudaCase(const DeviceInfo& device) : device_(device), current_(device.ordinal) {}

std::unique_ptr<Timer> CudaCase::make_timer() { return std::make_unique<CudaEventTimer>(stream()); }

bool is_missing_device_code(cudaError_t status) {
  return status == cudaErrorNoKernelImageForDevice || status == cudaErrorInvalidDeviceFunction;
}

std::string missing_device_code_reason(int cc_major, int cc_minor, const std::string& built_archs) {
  return "this binary has no code for this GPU (compute capability " + std::to_string(cc_major) + "." +
         std::to_string(cc_minor) + "; built for CUDA architectures " + built_archs + "): rebuild with " +
         std::to_string(cc_major * 10 + cc_minor) + " in CMAKE_CUDA_ARCHITECTURES";
}

std::size_t l2_flush_bytes(std::int64_t l2_bytes) {
  // Twice the L2 size (at least 16 MiB), a multiple of 16 bytes for the read kernel.
  const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(l2_bytes, 8 << 20)) * 2;
  return (bytes + 15) / 16 * 16;
}

unsigned l2_flush_grid(int sm_count) { return static_cast<unsigned>(std::max(1, sm_count) * 4); }

void CudaCase::flush_cache() {
  const unsigned grid = l2_flush_grid(device_.sm_count);
  if (flush_buffer_.bytes() == 0) {
    flush_buffer_ = cuda::DeviceBuffer(l2_flush_bytes(device_.l2_bytes));
    // Filled once (reads of uninitialized memory would upset compute-sanitizer's initcheck),
    // then read twice: the memset's dirty lines are written back now, not in a timed run.
    GPUBENCH_CUDA_CHECK(cudaMemsetAsync(flush_buffer_.get(), 0x5A, flush_buffer_.bytes(), stream()));
    for (int pass = 0; pass < 2; ++pass) {
      GPUBENCH_CUDA_CHECK(kernels::launch_l2_flush_read(flush_buffer_.get(), flush_buffer_.bytes(), grid, stream()));
    }
  }
  // Reading twice the L2 evicts the case's lines (dirty ones are written back here, untimed)
  // and leaves only clean lines of the flush buffer behind.
  GPUBENCH_CUDA_CHECK(kernels::launch_l2_flush_read(flush_buffer_.get(), flush_buffer_.bytes(), grid, stream()));
}

}  // namespace gpubench
