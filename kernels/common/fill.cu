#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/common/fill.cuh"
#include "kernels/common/random.hpp"

namespace gpubench::kernels {
namespace {

template <typename T>
__device__ T convert(float v);
template <>
__device__ double convert<double>(float v) { return v; }
template <>
__device__ float convert<float>(float v) { return v; }
template <>
__device__ __half convert<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __nv_bfloat16 convert<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
// fp8: round to nearest even, saturating (the constructors use __NV_SATFINITE).
template <>
__device__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }
template <>
__device__ __nv_fp8_e5m2 convert<__nv_fp8_e5m2>(float v) { return __nv_fp8_e5m2(v); }
// Integers: floor(16 u), as uniform_to_int (u * 16 is exact).
template <>
__device__ std::int8_t convert<std::int8_t>(float v) { return static_cast<std::int8_t>(floorf(v * 16.0f)); }
template <>
__device__ std::int32_t convert<std::int32_t>(float v) { return static_cast<std::int32_t>(floorf(v * 16.0f)); }

// One thread per element, grid-stride so any count fits the grid limit.
template <typename T>
__global__ void fill_kernel(T* dst, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    dst[i] = convert<T>(uniform_value(seed, i));
  }
}

template <typename T>
cudaError_t launch(void* dst, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  constexpr unsigned kBlock = 256;
  const std::size_t blocks = (count + kBlock - 1) / kBlock;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
  fill_kernel<T><<<grid, kBlock, 0, stream>>>(static_cast<T*>(dst), count, seed);
  return cudaGetLastError();
}

}  // namespace

cudaError_t fill_uniform(void* dst, Storage storage, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  switch (storage) {
    case Storage::F64: return launch<double>(dst, count, seed, stream);
    case Storage::F32: return launch<float>(dst, count, seed, stream);
    case Storage::F16: return launch<__half>(dst, count, seed, stream);
    case Storage::BF16: return launch<__nv_bfloat16>(dst, count, seed, stream);
    case Storage::E4M3: return launch<__nv_fp8_e4m3>(dst, count, seed, stream);
    case Storage::E5M2: return launch<__nv_fp8_e5m2>(dst, count, seed, stream);
    case Storage::I8: return launch<std::int8_t>(dst, count, seed, stream);
    case Storage::I32: return launch<std::int32_t>(dst, count, seed, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpubench::kernels
