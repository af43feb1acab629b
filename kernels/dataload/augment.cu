#include <cuda_fp16.h>

#include "kernels/common/grid.hpp"
#include "kernels/dataload/augment.cuh"

namespace gpubench::kernels::dataload {
namespace {

// ImageNet's mean and std per channel (the values of kMean and kStd in augment.hpp, which
// device code cannot index).
__device__ __forceinline__ float channel_mean(int c) { return c == 0 ? 0.485f : c == 1 ? 0.456f : 0.406f; }
__device__ __forceinline__ float channel_std(int c) { return c == 0 ? 0.229f : c == 1 ? 0.224f : 0.225f; }

// One output pixel (oy, ox) of image n: bilinear sample of the crop, normalized (augment.hpp).
template <typename Out>
__device__ void augment_pixel(const DeviceBatch& batch, Out* out, int size, int n, int oy, int ox) {
  const Crop c = batch.crops[n];
  const int width = batch.widths[n];
  const std::uint8_t* img = batch.pixels + batch.offsets[n];
  const int fx_out = c.flip ? size - 1 - ox : ox;
  float sx = (fx_out + 0.5f) * c.w / size - 0.5f;
  float sy = (oy + 0.5f) * c.h / size - 0.5f;
  sx = fminf(fmaxf(sx, 0.0f), c.w - 1.0f);
  sy = fminf(fmaxf(sy, 0.0f), c.h - 1.0f);
  const int x0 = static_cast<int>(sx), y0 = static_cast<int>(sy);
  const int x1 = min(x0 + 1, c.w - 1), y1 = min(y0 + 1, c.h - 1);
  const float fx = sx - x0, fy = sy - y0;
  const std::uint8_t* a = img + (static_cast<size_t>(c.y + y0) * width + c.x) * 3;
  const std::uint8_t* b = img + (static_cast<size_t>(c.y + y1) * width + c.x) * 3;
  const size_t plane = static_cast<size_t>(size) * size;
  Out* o = out + static_cast<size_t>(n) * 3 * plane + static_cast<size_t>(oy) * size + ox;
  for (int ch = 0; ch < 3; ++ch) {
    const float top = (1.0f - fx) * a[x0 * 3 + ch] + fx * a[x1 * 3 + ch];
    const float bottom = (1.0f - fx) * b[x0 * 3 + ch] + fx * b[x1 * 3 + ch];
    const float v = ((1.0f - fy) * top + fy * bottom) * (1.0f / (255.0f * channel_std(ch))) -
                    channel_mean(ch) / channel_std(ch);
    if constexpr (sizeof(Out) == 4) {
      o[ch * plane] = v;
    } else {
      o[ch * plane] = __float2half_rn(v);
    }
  }
}

// Rows (y) and images (z) stride by the grid, whose y and z stop at 65535.
template <typename Out>
__global__ void augment_kernel(DeviceBatch batch, Out* out, int size) {
  const int ox = blockIdx.x * blockDim.x + threadIdx.x;
  if (ox >= size) return;
  for (int n = blockIdx.z; n < batch.count; n += gridDim.z)
    for (int oy = blockIdx.y; oy < size; oy += gridDim.y) augment_pixel(batch, out, size, n, oy, ox);
}

// Feature i = ((n * 3 + c) * grid + gy) * grid + gx: the mean of its block (augment.hpp),
// accumulated in float (a block holds at most 224^2 values of magnitude < 3).
template <typename In>
__device__ void pool_feature(const In* tensors, int grid, int size, float* out, long long i) {
  const int gx = static_cast<int>(i % grid), gy = static_cast<int>((i / grid) % grid);
  const long long nc = i / (static_cast<long long>(grid) * grid);
  const int block = size / grid;
  const In* plane = tensors + nc * size * size;
  float sum = 0;
  for (int y = gy * block; y < (gy + 1) * block; ++y) {
    for (int x = gx * block; x < (gx + 1) * block; ++x) sum += static_cast<float>(plane[static_cast<long long>(y) * size + x]);
  }
  out[i] = sum / static_cast<float>(block * block);
}

template <typename In>
__global__ void pool_kernel(const In* tensors, int count, int grid, int size, float* out) {
  const long long total = static_cast<long long>(count) * 3 * grid * grid;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    pool_feature(tensors, grid, size, out, i);
}

__global__ void consumer_kernel(const std::uint32_t* data, std::int64_t words, std::int64_t cycles,
                                unsigned long long* checksum) {
  const long long start = clock64();
  __shared__ unsigned long long partial[256];
  unsigned long long sum = 0;
  for (std::int64_t i = threadIdx.x * kChecksumStride; i < words; i += blockDim.x * kChecksumStride) sum += data[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *checksum = partial[0];
  while (clock64() - start < cycles) {
  }
}

}  // namespace

cudaError_t launch_augment(const DeviceBatch& batch, OutType type, void* out, int size, cudaStream_t stream) {
  if (batch.count == 0) return cudaSuccess;
  const dim3 block(128);
  const dim3 grid(capped_grid(size, 128, kMaxGridX), capped_grid(size, 1, kMaxGridYZ),
                  capped_grid(batch.count, 1, kMaxGridYZ));
  if (type == OutType::F32) {
    augment_kernel<float><<<grid, block, 0, stream>>>(batch, static_cast<float*>(out), size);
  } else {
    augment_kernel<__half><<<grid, block, 0, stream>>>(batch, static_cast<__half*>(out), size);
  }
  return cudaGetLastError();
}

cudaError_t launch_pool_features(const void* tensors, OutType type, int count, int grid, float* out, int size,
                                 cudaStream_t stream) {
  const long long total = static_cast<long long>(count) * 3 * grid * grid;
  if (total == 0) return cudaSuccess;
  const unsigned blocks = capped_grid(total, 256, 65535 * 16);  // grid-stride beyond
  if (type == OutType::F32) {
    pool_kernel<float><<<blocks, 256, 0, stream>>>(static_cast<const float*>(tensors), count, grid, size, out);
  } else {
    pool_kernel<__half><<<blocks, 256, 0, stream>>>(static_cast<const __half*>(tensors), count, grid, size, out);
  }
  return cudaGetLastError();
}

cudaError_t launch_consumer(const void* data, std::int64_t words, std::int64_t cycles,
                            unsigned long long* checksum, cudaStream_t stream) {
  consumer_kernel<<<1, 256, 0, stream>>>(static_cast<const std::uint32_t*>(data), words, cycles, checksum);
  return cudaGetLastError();
}

}  // namespace gpubench::kernels::dataload
