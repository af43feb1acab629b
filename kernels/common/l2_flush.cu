#include "kernels/common/l2_flush.cuh"

namespace gpubench::kernels {
namespace {

constexpr unsigned kBlock = 256;

__device__ inline void fold(uint4& acc, const uint4& v) {
  acc.x ^= v.x;
  acc.y ^= v.y;
  acc.z ^= v.z;
  acc.w ^= v.w;
}

__global__ void l2_flush_read_kernel(uint4* buffer, std::size_t n) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  // Four independent loads in flight per thread (cached in L2 only: L2 is what is flushed),
  // so the flush runs near the memory bandwidth; then the remainder one by one.
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 v0 = __ldcg(buffer + i), v1 = __ldcg(buffer + i + stride);
    const uint4 v2 = __ldcg(buffer + i + 2 * stride), v3 = __ldcg(buffer + i + 3 * stride);
    fold(acc, v0);
    fold(acc, v1);
    fold(acc, v2);
    fold(acc, v3);
  }
  for (; i < n; i += stride) fold(acc, __ldcg(buffer + i));
  // A buffer of one repeated byte XORs to 0 or to that byte pattern in every word, never to
  // this: the store never happens, but the compiler must keep every load.
  if (acc.x == 0x9E3779B9u && acc.y == 0x7F4A7C15u && acc.z != acc.w) buffer[0] = acc;
}

}  // namespace

cudaError_t launch_l2_flush_read(void* buffer, std::size_t bytes, unsigned grid, cudaStream_t stream) {
  if (bytes % 16 != 0 || grid == 0) return cudaErrorInvalidValue;
  l2_flush_read_kernel<<<grid, kBlock, 0, stream>>>(static_cast<uint4*>(buffer), bytes / 16);
  return cudaGetLastError();
}

}  // namespace gpubench::kernels
