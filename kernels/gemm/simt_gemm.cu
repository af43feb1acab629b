// fp32 SIMT GEMM rungs. Math for all three: D(i, j) = alpha * sum_l A(i, l) B(l, j) + beta * C(i, j),
// accumulated in fp32 with one FFMA per product (2 m n k FLOP).
#include "kernels/gemm/custom_gemm_tiles.hpp"
#include "kernels/gemm/simt_gemm.cuh"

namespace gpubench::kernels {
namespace {

using tiles::RegBlock;

// Rung 1, naive: thread (i, j) reads row i of A and column j of B straight from global memory.
// Each operand element is fetched n (or m) times; the caches absorb some of it, but the kernel
// is bound by load bandwidth: 2 loads per FMA.
__global__ void naive_gemm_kernel(int m, int n, int k, const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ d, float alpha, float beta) {
  int tr, tc;
  tiles::block_tile(blockIdx.x, m, tiles::kNaiveBlock, tr, tc);
  const int i = tr * tiles::kNaiveBlock + threadIdx.x;
  const int j = tc * tiles::kNaiveBlock + threadIdx.y;
  if (i >= m || j >= n) return;
  const std::int64_t idx = i + static_cast<std::int64_t>(j) * m;
  const float c = beta == 0.0f ? 0.0f : d[idx];
  d[idx] = tiles::epilogue(tiles::naive_dot(a, b, m, k, i, j), alpha, beta, c);
}

// Rung 2, shared-memory tiled: the block's 1024 threads copy a 32x32 tile of A and of B into
// shared memory once, then each thread reads 32 pairs from there. Global loads drop from 2 per
// FMA to 2 per 32 FMAs; shared memory (2 loads per FMA) becomes the limit.
__global__ void __launch_bounds__(tiles::kTiledTile* tiles::kTiledTile)
    tiled_gemm_kernel(int m, int n, int k, const float* __restrict__ a, const float* __restrict__ b,
                      float* __restrict__ d, float alpha, float beta) {
  constexpr int T = tiles::kTiledTile;
  __shared__ float as[T][tiles::kTiledLd];
  __shared__ float bs[T][tiles::kTiledLd];
  const int tx = threadIdx.x, ty = threadIdx.y;
  int tr, tc;
  tiles::block_tile(blockIdx.x, m, T, tr, tc);
  const int row0 = tr * T, col0 = tc * T;
  const int i = row0 + tx, j = col0 + ty;
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += T) {
    tiles::tiled_load(a, b, m, n, k, row0, col0, k0, tx, ty, as[ty][tx], bs[ty][tx]);
    __syncthreads();
    acc = tiles::tiled_step(as, bs, tx, ty, acc);
    __syncthreads();
  }
  if (i < m && j < n) {
    const std::int64_t idx = i + static_cast<std::int64_t>(j) * m;
    d[idx] = tiles::epilogue(acc, alpha, beta, beta == 0.0f ? 0.0f : d[idx]);
  }
}

// Rung 3, register-blocked: a 128x128 block tile and 8 k per step; each of 256 threads keeps an
// 8x8 block of accumulators in registers and, per k, loads 8 values of A and 8 of B from shared
// memory (as float4) for 64 FMAs. Shared-memory traffic per FMA drops 8x, so the FMA pipes are
// the limit; the cost is 64+ registers of accumulators per thread.
__global__ void __launch_bounds__(RegBlock::kThreads)
    regblock_gemm_kernel(int m, int k, const float* __restrict__ a, const float* __restrict__ b,
                         float* __restrict__ d, float alpha, float beta) {
  __shared__ __align__(16) float as[RegBlock::kBK][RegBlock::kBM];
  __shared__ __align__(16) float bs[RegBlock::kBK][RegBlock::kBN + RegBlock::kBPad];
  const int tid = threadIdx.x;
  int br, bc;
  tiles::block_tile(blockIdx.x, m, RegBlock::kBM, br, bc);
  const int row0 = br * RegBlock::kBM, col0 = bc * RegBlock::kBN;
  int tr, tc;
  tiles::regblock_thread_origin(tid, tr, tc);
  float acc[RegBlock::kTM][RegBlock::kTN] = {};
  for (int k0 = 0; k0 < k; k0 += RegBlock::kBK) {
#pragma unroll
    for (int e = 0; e < RegBlock::kLoadsPerThread; ++e) {
      int r, c;
      tiles::regblock_a_load(tid, e, r, c);
      as[c][r] = a[(row0 + r) + static_cast<std::int64_t>(k0 + c) * m];
      tiles::regblock_b_load(tid, e, r, c);
      bs[r][c] = b[(k0 + r) + static_cast<std::int64_t>(col0 + c) * k];
    }
    __syncthreads();
#pragma unroll
    for (int l = 0; l < RegBlock::kBK; ++l) {
      float af[RegBlock::kTM], bf[RegBlock::kTN];
      const float4 a0 = *reinterpret_cast<const float4*>(&as[l][tr]);
      const float4 a1 = *reinterpret_cast<const float4*>(&as[l][tr + 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&bs[l][tc]);
      const float4 b1 = *reinterpret_cast<const float4*>(&bs[l][tc + 4]);
      af[0] = a0.x, af[1] = a0.y, af[2] = a0.z, af[3] = a0.w, af[4] = a1.x, af[5] = a1.y, af[6] = a1.z, af[7] = a1.w;
      bf[0] = b0.x, bf[1] = b0.y, bf[2] = b0.z, bf[3] = b0.w, bf[4] = b1.x, bf[5] = b1.y, bf[6] = b1.z, bf[7] = b1.w;
      tiles::regblock_outer_product(af, bf, acc);
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < RegBlock::kTN; ++j) {
    float* col = d + (row0 + tr) + static_cast<std::int64_t>(col0 + tc + j) * m;
#pragma unroll
    for (int i = 0; i < RegBlock::kTM; ++i) col[i] = tiles::epilogue(acc[i][j], alpha, beta, beta == 0.0f ? 0.0f : col[i]);
  }
}

}  // namespace

cudaError_t launch_naive_gemm(const CustomGemmArgs& g, cudaStream_t stream) {
  const CustomGemmGrid grid = custom_gemm_grid(*find_custom_gemm("naive"), g.m, g.n);
  naive_gemm_kernel<<<grid.x, dim3(tiles::kNaiveBlock, tiles::kNaiveBlock), 0, stream>>>(
      g.m, g.n, g.k, static_cast<const float*>(g.a), static_cast<const float*>(g.b), static_cast<float*>(g.d), g.alpha,
      g.beta);
  return cudaGetLastError();
}

cudaError_t launch_tiled_gemm(const CustomGemmArgs& g, cudaStream_t stream) {
  const CustomGemmGrid grid = custom_gemm_grid(*find_custom_gemm("tiled"), g.m, g.n);
  tiled_gemm_kernel<<<grid.x, dim3(tiles::kTiledTile, tiles::kTiledTile), 0, stream>>>(
      g.m, g.n, g.k, static_cast<const float*>(g.a), static_cast<const float*>(g.b), static_cast<float*>(g.d), g.alpha,
      g.beta);
  return cudaGetLastError();
}

cudaError_t launch_regblock_gemm(const CustomGemmArgs& g, cudaStream_t stream) {
  const CustomGemmGrid grid = custom_gemm_grid(*find_custom_gemm("regblock"), g.m, g.n);
  regblock_gemm_kernel<<<grid.x, RegBlock::kThreads, 0, stream>>>(
      g.m, g.k, static_cast<const float*>(g.a), static_cast<const float*>(g.b), static_cast<float*>(g.d), g.alpha,
      g.beta);
  return cudaGetLastError();
}

}  // namespace gpubench::kernels
