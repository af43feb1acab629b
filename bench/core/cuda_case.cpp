#include "cuda_case.hpp"

#include <algorithm>

namespace gpubench {

CudaCase::CudaCase(const DeviceInfo& device) : device_(device), current_(device.ordinal) {}

std::unique_ptr<Timer> CudaCase::make_timer() { return std::make_unique<CudaEventTimer>(stream()); }

void CudaCase::flush_cache() {
  if (flush_buffer_.bytes() == 0) {
    // Twice the L2 size: writing it leaves none of the case's data resident in L2.
    const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(device_.l2_bytes, 8 << 20)) * 2;
    flush_buffer_ = cuda::DeviceBuffer(bytes);
  }
  static int pattern = 0;
  GPUBENCH_CUDA_CHECK(cudaMemsetAsync(flush_buffer_.get(), ++pattern & 0xff, flush_buffer_.bytes(), stream()));
}

}  // namespace gpubench
