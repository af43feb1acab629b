#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "kernels/common/fp8_scaling.cuh"
#include "kernels/common/fp8_scaling.hpp"
#include "kernels/common/grid.hpp"

namespace gpubench::kernels {
namespace {

constexpr unsigned kBlock = 256;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride beyond (grid.hpp)
constexpr int kTile = 32;                  // transpose tile: 32 x 32 codes, 32 x 8 threads

__device__ float as_float(float v) { return v; }
__device__ float as_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// Every thread's max over its grid-stride share, then the warp's, then the block's; one atomic
// per block. |x| >= 0, so the float's bits order as unsigned integers and atomicMax on them is
// the float max. fmaxf drops a NaN (as the host emulation's std::max does).
template <typename T>
__global__ void amax_kernel(const T* x, std::int64_t n, float* amax) {
  float m = 0.0f;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    m = fmaxf(m, fabsf(as_float(x[i])));
  }
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  __shared__ float warp_max[kBlock / 32];
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned w = 1; w < kBlock / 32; ++w) m = fmaxf(m, warp_max[w]);
    atomicMax(reinterpret_cast<unsigned int*>(amax), __float_as_uint(m));
  }
}

__device__ std::uint8_t to_fp8(float v, Storage out) {
  return static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, out == Storage::E5M2 ? __NV_E5M2 : __NV_E4M3));
}

template <typename T>
__global__ void quantize_kernel(const T* x, std::int64_t n, Storage out, const float* amax, std::uint8_t* q,
                                float* scale_inv) {
  const float scale = fp8_scale(*amax, fp8_max(out));
  if (blockIdx.x == 0 && threadIdx.x == 0) *scale_inv = 1.0f / scale;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    q[i] = to_fp8(as_float(x[i]) * scale, out);
  }
}

// q[c][r] = fp8(x[r][c] * scale): each block stages 32 x 32 codes in shared memory so that both
// the reads (along a row of x) and the writes (along a row of q) are contiguous.
template <typename T>
__global__ void quantize_transpose_kernel(const T* x, std::int64_t rows, std::int64_t cols, Storage out,
                                          const float* amax, std::uint8_t* q, float* scale_inv) {
  __shared__ std::uint8_t tile[kTile][kTile + 1];
  const float scale = fp8_scale(*amax, fp8_max(out));
  if (blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0) *scale_inv = 1.0f / scale;
  const std::int64_t tiles_c = blocks_for(cols, kTile);
  const std::int64_t tiles = blocks_for(rows, kTile) * tiles_c;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t r0 = (t / tiles_c) * kTile, c0 = (t % tiles_c) * kTile;
    for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
      const std::int64_t r = r0 + j, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[j][threadIdx.x] = to_fp8(as_float(x[r * cols + c]) * scale, out);
    }
    __syncthreads();
    for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
      const std::int64_t c = c0 + j, r = r0 + threadIdx.x;  // q's row c, column r
      if (r < rows && c < cols) q[c * rows + r] = tile[threadIdx.x][j];
    }
    __syncthreads();  // the tile is rewritten by the next iteration
  }
}

template <typename T>
cudaError_t quantize(const void* x, std::int64_t rows, std::int64_t cols, bool transpose, Storage out,
                     const float* amax, std::uint8_t* q, float* scale_inv, cudaStream_t s) {
  const T* in = static_cast<const T*>(x);
  if (transpose) {
    const unsigned grid = capped_grid(blocks_for(rows, kTile) * blocks_for(cols, kTile), 1, kMaxBlocks);
    quantize_transpose_kernel<T><<<grid, dim3(kTile, 8), 0, s>>>(in, rows, cols, out, amax, q, scale_inv);
  } else {
    const std::int64_t n = rows * cols;
    quantize_kernel<T><<<capped_grid(n, kBlock, kMaxBlocks), kBlock, 0, s>>>(in, n, out, amax, q, scale_inv);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_amax(Storage in, const void* x, std::int64_t n, float* amax, cudaStream_t s) {
  if (in != Storage::F32 && in != Storage::BF16) return cudaErrorInvalidValue;
  if (const cudaError_t e = cudaMemsetAsync(amax, 0, sizeof(float), s); e != cudaSuccess) return e;
  if (n <= 0) return cudaSuccess;
  const unsigned grid = capped_grid(n, kBlock * 8, kMaxBlocks);
  if (in == Storage::F32) {
    amax_kernel<float><<<grid, kBlock, 0, s>>>(static_cast<const float*>(x), n, amax);
  } else {
    amax_kernel<__nv_bfloat16><<<grid, kBlock, 0, s>>>(static_cast<const __nv_bfloat16*>(x), n, amax);
  }
  return cudaGetLastError();
}

cudaError_t launch_fp8_quantize(Storage in, const void* x, std::int64_t rows, std::int64_t cols, bool transpose,
                                Storage out, const float* amax, std::uint8_t* q, float* scale_inv, cudaStream_t s) {
  if ((in != Storage::F32 && in != Storage::BF16) || (out != Storage::E4M3 && out != Storage::E5M2)) {
    return cudaErrorInvalidValue;
  }
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  return in == Storage::F32 ? quantize<float>(x, rows, cols, transpose, out, amax, q, scale_inv, s)
                            : quantize<__nv_bfloat16>(x, rows, cols, transpose, out, amax, q, scale_inv, s);
}

}  // namespace gpubench::kernels
