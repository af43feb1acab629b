#include "kernels/memory/pointer_chase.cuh"

namespace gpubench::kernels {
namespace {

__global__ void pointer_chase_kernel(const std::uint64_t* start, std::uint64_t steps, unsigned target,
                                     std::uint64_t* end) {
  if (blockIdx.x != target) return;
  const std::uint64_t* p = start;
  for (std::uint64_t i = 0; i < steps; ++i) p = reinterpret_cast<const std::uint64_t*>(*p);
  *end = reinterpret_cast<std::uint64_t>(p);
}

}  // namespace

cudaError_t launch_pointer_chase(const void* start, std::uint64_t steps, unsigned grid, unsigned target,
                                 std::uint64_t* end, cudaStream_t stream) {
  if (grid == 0 || target >= grid) return cudaErrorInvalidValue;
  pointer_chase_kernel<<<grid, 1, 0, stream>>>(static_cast<const std::uint64_t*>(start), steps, target, end);
  return cudaGetLastError();
}

}  // namespace gpubench::kernels
