#include "kernels/gemm/block_quantize.cuh"

#include <algorithm>

#include "kernels/gemm/block_quantize_math.hpp"

namespace gpubench::kernels {
namespace {

constexpr int kThreads = 256;

__device__ inline float bf16_value(std::uint16_t b) { return __uint_as_float(static_cast<unsigned>(b) << 16); }

// Eight bf16 (16 bytes, aligned: k is a multiple of 16 and cudaMalloc aligns to 256).
__device__ inline void load8(const std::uint16_t* p, float out[8]) {
  const uint4 w = *reinterpret_cast<const uint4*>(p);
  const unsigned words[4] = {w.x, w.y, w.z, w.w};
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = bf16_value(static_cast<std::uint16_t>(words[i] & 0xFFFFu));
    out[2 * i + 1] = bf16_value(static_cast<std::uint16_t>(words[i] >> 16));
  }
}

// One thread per 32-value block: amax, the UE8M0 code, 32 E4M3 codes.
__global__ void mxfp8_kernel(const std::uint16_t* in, std::int64_t rows, std::int64_t k, std::uint8_t* values,
                             std::uint8_t* scales) {
  const std::int64_t blocks_per_row = k / 32;
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= rows * blocks_per_row) return;
  float v[32];
  for (int j = 0; j < 4; ++j) load8(in + b * 32 + j * 8, v + j * 8);
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = bq::amax_step(amax, v[i]);
  const std::uint8_t sc = bq::mx_scale_code(amax);
  unsigned words[8];
  for (int w = 0; w < 8; ++w) {
    unsigned word = 0;
    for (int i = 0; i < 4; ++i) word |= static_cast<unsigned>(bq::mx_value_code(v[w * 4 + i], sc)) << (8 * i);
    words[w] = word;
  }
  uint4* out = reinterpret_cast<uint4*>(values + b * 32);
  out[0] = make_uint4(words[0], words[1], words[2], words[3]);
  out[1] = make_uint4(words[4], words[5], words[6], words[7]);
  scales[bq::block_scale_offset(b / blocks_per_row, b % blocks_per_row, blocks_per_row)] = sc;
}

// The tensor's amax: each thread's share through amax_step (NaN passed over, as on the host),
// then the maximum over threads through the bits (non-negative floats order as their bits).
__global__ void amax_kernel(const std::uint16_t* in, std::int64_t n, unsigned* amax_bits) {
  float m = 0.0f;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x * 8;
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 8; i < n; i += stride) {
    float v[8];
    load8(in + i, v);
    for (int j = 0; j < 8; ++j) m = bq::amax_step(m, v[j]);
  }
  for (int off = 16; off > 0; off /= 2) m = bq::amax_step(m, __shfl_down_sync(0xFFFFFFFFu, m, off));
  if ((threadIdx.x & 31) == 0) atomicMax(amax_bits, __float_as_uint(m));
}

// One thread per 16-value block: the E4M3 scale from the block's amax and the tensor scale,
// 16 E2M1 codes packed in 8 bytes.
__global__ void nvfp4_kernel(const std::uint16_t* in, std::int64_t rows, std::int64_t k, const unsigned* amax_bits,
                             std::uint8_t* values, std::uint8_t* scales, float* tensor_scale) {
  const std::int64_t blocks_per_row = k / 16;
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const float t = bq::nvfp4_tensor_scale(__uint_as_float(*amax_bits));
  if (b == 0) *tensor_scale = t;
  if (b >= rows * blocks_per_row) return;
  float v[16];
  load8(in + b * 16, v);
  load8(in + b * 16 + 8, v + 8);
  float amax = 0.0f;
  for (int i = 0; i < 16; ++i) amax = bq::amax_step(amax, v[i]);
  const std::uint8_t sc = bq::nvfp4_scale_code(amax, t);
  unsigned words[2] = {0, 0};
  for (int i = 0; i < 16; ++i) words[i / 8] |= static_cast<unsigned>(bq::nvfp4_value_code(v[i], sc, t)) << (4 * (i % 8));
  *reinterpret_cast<uint2*>(values + b * 8) = make_uint2(words[0], words[1]);
  scales[bq::block_scale_offset(b / blocks_per_row, b % blocks_per_row, blocks_per_row)] = sc;
}

__global__ void nvfp4_alpha_kernel(const float* ta, const float* tb, float alpha, float* alpha_beta) {
  alpha_beta[0] = alpha * *ta * *tb;
  alpha_beta[1] = 0.0f;
}

unsigned grid_for(std::int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

}  // namespace

cudaError_t quantize_mxfp8(const std::uint16_t* in, std::int64_t rows, std::int64_t k, std::uint8_t* values,
                           std::uint8_t* scales, cudaStream_t stream) {
  if (rows < 1 || k < 32 || k % 32 != 0) return cudaErrorInvalidValue;
  mxfp8_kernel<<<grid_for(rows * (k / 32)), kThreads, 0, stream>>>(in, rows, k, values, scales);
  return cudaGetLastError();
}

cudaError_t quantize_nvfp4(const std::uint16_t* in, std::int64_t rows, std::int64_t k, std::uint8_t* values,
                           std::uint8_t* scales, unsigned* amax_bits, float* tensor_scale, cudaStream_t stream) {
  if (rows < 1 || k < 16 || k % 16 != 0) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaMemsetAsync(amax_bits, 0, sizeof(unsigned), stream); e != cudaSuccess) return e;
  const std::int64_t n = rows * k;
  const std::int64_t chunks = n / 8;
  const unsigned amax_grid = static_cast<unsigned>(std::min<std::int64_t>(grid_for(chunks), 4096));
  amax_kernel<<<amax_grid, kThreads, 0, stream>>>(in, n, amax_bits);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  nvfp4_kernel<<<grid_for(rows * (k / 16)), kThreads, 0, stream>>>(in, rows, k, amax_bits, values, scales, tensor_scale);
  return cudaGetLastError();
}

cudaError_t nvfp4_alpha(const float* a_tensor_scale, const float* b_tensor_scale, float alpha, float* alpha_beta,
                        cudaStream_t stream) {
  nvfp4_alpha_kernel<<<1, 1, 0, stream>>>(a_tensor_scale, b_tensor_scale, alpha, alpha_beta);
  return cudaGetLastError();
}

}  // namespace gpubench::kernels
