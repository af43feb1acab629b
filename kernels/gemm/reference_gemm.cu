// Device reference GEMM and compare kernels (math in reference_gemm.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>

#include "kernels/common/grid.hpp"
#include "kernels/gemm/gemm_tolerance.hpp"
#include "kernels/gemm/reference_gemm.cuh"

namespace gpubench::kernels {
namespace {

constexpr int kTile = 16;  // 16x16 threads, one output each; k in steps of 16 through shared memory

__device__ inline double load(const void* base, Storage s, std::int64_t idx) {
  switch (s) {
    case Storage::F64: return static_cast<const double*>(base)[idx];
    case Storage::F32: return static_cast<const float*>(base)[idx];
    case Storage::F16: return __half2float(static_cast<const __half*>(base)[idx]);
    case Storage::BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[idx]);
  }
  return 0.0;
}

__device__ inline std::int64_t offset(const DeviceMatrix& x, std::int64_t i, std::int64_t j, std::int64_t b) {
  return b * x.batch_stride + i * x.row_stride + j * x.col_stride;
}

// Tiles (m, n, batch) numbered linearly, m fastest; blocks stride over them by gridDim.x (a 2-D
// or 3-D grid would stop at 65535 tiles of n, past n = 1,048,560, or at 65535 batches).
__global__ void reference_gemm_kernel(ReferenceGemmArgs g, double* __restrict__ ref, float* __restrict__ tol) {
  __shared__ double as[kTile][kTile + 1];  // as[l][i] = A(row0 + i, k0 + l)
  __shared__ double bs[kTile][kTile + 1];  // bs[j][l] = B(k0 + l, col0 + j)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t tiles_m = blocks_for(g.m, kTile), tiles_n = blocks_for(g.n, kTile);
  for (std::int64_t t = blockIdx.x; t < tiles_m * tiles_n * g.batch; t += gridDim.x) {
    const std::int64_t b = t / (tiles_m * tiles_n), tile_col = (t / tiles_m) % tiles_n;
    const std::int64_t i = (t % tiles_m) * kTile + tx;
    const std::int64_t j = tile_col * kTile + ty;
    const std::int64_t col_base = tile_col * kTile;
    double sum = 0, sumsq = 0;
    for (std::int64_t k0 = 0; k0 < g.k; k0 += kTile) {
      // Thread (tx, ty) loads A(i, k0 + ty) and B(k0 + tx, col_base + ty): consecutive tx read
      // consecutive addresses for column-major operands.
      as[ty][tx] = (i < g.m && k0 + ty < g.k) ? load(g.a.data, g.a.storage, offset(g.a, i, k0 + ty, b)) : 0.0;
      bs[ty][tx] = (k0 + tx < g.k && col_base + ty < g.n) ? load(g.b.data, g.b.storage, offset(g.b, k0 + tx, col_base + ty, b))
                                                          : 0.0;
      __syncthreads();
#pragma unroll
      for (int l = 0; l < kTile; ++l) {
        const double p = as[l][tx] * bs[ty][l];
        sum += p;
        sumsq = fma(p, p, sumsq);
      }
      __syncthreads();
    }
    if (i >= g.m || j >= g.n) continue;
    const double c_term = g.beta != 0 ? g.beta * load(g.c.data, g.c.storage, offset(g.c, i, j, b)) : 0.0;
    const double r = g.alpha * sum + c_term;
    const std::int64_t out = b * g.m * g.n + i + j * g.m;
    ref[out] = r;
    tol[out] = static_cast<float>(
        gemm_tolerance(g.u.u_in, g.u.u_acc, g.u.u_out, static_cast<double>(g.k), r, fabs(g.alpha) * sqrt(sumsq), c_term));
  }
}

__global__ void gemm_compare_kernel(DeviceMatrix d, std::int64_t m, std::int64_t n, std::int64_t batch,
                                    const double* __restrict__ ref, const float* __restrict__ tol,
                                    DeviceCheckCounters* counters) {
  const std::int64_t total = m * n * batch;
  unsigned long long failed = 0, checked = 0;
  float worst = 0.0f;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t b = idx / (m * n), rest = idx % (m * n), i = rest % m, j = rest / m;
    const double got = load(d.data, d.storage, offset(d, i, j, b));
    const double err = fabs(got - ref[idx]) / tol[idx];
    ++checked;
    const float e = isfinite(err) ? static_cast<float>(fmin(err, static_cast<double>(FLT_MAX))) : INFINITY;
    worst = fmaxf(worst, e);
    if (!(err <= 1.0)) {
      ++failed;
      if (atomicCAS(&counters->first_recorded, 0, 1) == 0) {
        counters->first_index = idx;
        counters->first_got = got;
        counters->first_ref = ref[idx];
        counters->first_tol = tol[idx];
      }
    }
  }
  if (checked) atomicAdd(&counters->checked, checked);
  if (failed) atomicAdd(&counters->failed, failed);
  // Non-negative floats order like their bit patterns, so an integer max is a float max.
  atomicMax(&counters->max_error_bits, __float_as_uint(worst));
}

}  // namespace

cudaError_t launch_reference_gemm(const ReferenceGemmArgs& g, double* ref, float* tol, cudaStream_t stream) {
  if (g.m <= 0 || g.n <= 0 || g.batch <= 0) return cudaSuccess;
  const std::int64_t tiles = blocks_for(g.m, kTile) * blocks_for(g.n, kTile) * g.batch;
  reference_gemm_kernel<<<capped_grid(tiles, 1, kMaxGridX), dim3(kTile, kTile), 0, stream>>>(g, ref, tol);
  return cudaGetLastError();
}

cudaError_t launch_gemm_compare(const DeviceMatrix& d, std::int64_t m, std::int64_t n, std::int64_t batch,
                                const double* ref, const float* tol, DeviceCheckCounters* counters,
                                cudaStream_t stream) {
  const std::int64_t total = m * n * batch;
  if (total <= 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 4096));
  gemm_compare_kernel<<<blocks, 256, 0, stream>>>(d, m, n, batch, ref, tol, counters);
  return cudaGetLastError();
}

}  // namespace gpubench::kernels
