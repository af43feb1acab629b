#include "kernels/memory/stream.cuh"

namespace gpubench::kernels {
namespace {

// Grid-stride loops over double2 (16-byte loads and stores). Bytes per element pair: see
// stream_reference.hpp (copy/scale 2 arrays, add/triad 3, dot 2, fill 1; 16 bytes each).
__device__ inline std::size_t first_index() { return blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; }
__device__ inline std::size_t stride() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

__global__ void copy_kernel(const double2* __restrict__ a, double2* __restrict__ c, std::size_t n2) {
  for (std::size_t i = first_index(); i < n2; i += stride()) c[i] = a[i];
}

__global__ void scale_kernel(double2* __restrict__ b, const double2* __restrict__ c, double s, std::size_t n2) {
  for (std::size_t i = first_index(); i < n2; i += stride()) {
    const double2 v = c[i];
    b[i] = make_double2(s * v.x, s * v.y);
  }
}

__global__ void add_kernel(const double2* __restrict__ a, const double2* __restrict__ b, double2* __restrict__ c,
                           std::size_t n2) {
  for (std::size_t i = first_index(); i < n2; i += stride()) {
    const double2 x = a[i], y = b[i];
    c[i] = make_double2(x.x + y.x, x.y + y.y);
  }
}

__global__ void triad_kernel(double2* __restrict__ a, const double2* __restrict__ b, const double2* __restrict__ c,
                             double s, std::size_t n2) {
  for (std::size_t i = first_index(); i < n2; i += stride()) {
    const double2 y = b[i], z = c[i];
    a[i] = make_double2(y.x + s * z.x, y.y + s * z.y);
  }
}

__global__ void fill_kernel(double2* __restrict__ a, double v, std::size_t n2) {
  for (std::size_t i = first_index(); i < n2; i += stride()) a[i] = make_double2(v, v);
}

// One partial sum per block (shared-memory tree); the host adds the partials.
__global__ void dot_kernel(const double2* __restrict__ a, const double2* __restrict__ b, std::size_t n2,
                           double* __restrict__ partials) {
  __shared__ double tile[kStreamBlock];
  double sum = 0;
  for (std::size_t i = first_index(); i < n2; i += stride()) {
    const double2 x = a[i], y = b[i];
    sum += x.x * y.x + x.y * y.y;
  }
  tile[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) tile[threadIdx.x] += tile[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = tile[0];
}

__global__ void copy16_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n16) {
  for (std::size_t i = first_index(); i < n16; i += stride()) dst[i] = src[i];
}

}  // namespace

cudaError_t launch_stream(StreamOp op, double* a, double* b, double* c, std::size_t n, double* partials, unsigned grid,
                          cudaStream_t stream) {
  if (n % 2 != 0 || grid == 0) return cudaErrorInvalidValue;
  const std::size_t n2 = n / 2;
  auto* a2 = reinterpret_cast<double2*>(a);
  auto* b2 = reinterpret_cast<double2*>(b);
  auto* c2 = reinterpret_cast<double2*>(c);
  switch (op) {
    case StreamOp::Copy: copy_kernel<<<grid, kStreamBlock, 0, stream>>>(a2, c2, n2); break;
    case StreamOp::Scale: scale_kernel<<<grid, kStreamBlock, 0, stream>>>(b2, c2, kStreamScalar, n2); break;
    case StreamOp::Add: add_kernel<<<grid, kStreamBlock, 0, stream>>>(a2, b2, c2, n2); break;
    case StreamOp::Triad: triad_kernel<<<grid, kStreamBlock, 0, stream>>>(a2, b2, c2, kStreamScalar, n2); break;
    case StreamOp::Dot: dot_kernel<<<grid, kStreamBlock, 0, stream>>>(a2, b2, n2, partials); break;
    case StreamOp::Fill: fill_kernel<<<grid, kStreamBlock, 0, stream>>>(a2, kFillValue, n2); break;
  }
  return cudaGetLastError();
}

namespace {
int occupancy(const void* kernel) {
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kStreamBlock, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return blocks;
}
}  // namespace

int stream_blocks_per_sm(StreamOp op) {
  switch (op) {
    case StreamOp::Copy: return occupancy(reinterpret_cast<const void*>(&copy_kernel));
    case StreamOp::Scale: return occupancy(reinterpret_cast<const void*>(&scale_kernel));
    case StreamOp::Add: return occupancy(reinterpret_cast<const void*>(&add_kernel));
    case StreamOp::Triad: return occupancy(reinterpret_cast<const void*>(&triad_kernel));
    case StreamOp::Dot: return occupancy(reinterpret_cast<const void*>(&dot_kernel));
    case StreamOp::Fill: return occupancy(reinterpret_cast<const void*>(&fill_kernel));
  }
  return 0;
}

int copy16_blocks_per_sm() { return occupancy(reinterpret_cast<const void*>(&copy16_kernel)); }

cudaError_t launch_copy16(void* dst, const void* src, std::size_t bytes, unsigned grid, cudaStream_t stream) {
  if (bytes % 16 != 0 || grid == 0) return cudaErrorInvalidValue;
  copy16_kernel<<<grid, kStreamBlock, 0, stream>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), bytes / 16);
  return cudaGetLastError();
}

}  // namespace gpubench::kernels
