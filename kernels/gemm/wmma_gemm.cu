// Rung 4, WMMA Tensor Core GEMM. Math: D = alpha * A B + beta * C with A, B in fp16 or bf16,
// products and sums in fp32 on the Tensor Cores (wmma 16x16x16 MMAs), D rounded to the input
// type. What makes it faster than the register-blocked fp32 kernel: one mma instruction does
// 16x16x16 multiply-adds (4096 FMAs per warp) at the Tensor Core rate, 8-16x the FFMA rate
// (fp16/bf16 dense peak vs fp32 peak on A100/H100 datasheets). To keep those units fed:
//  - 128x256 block tile, 8 warps of 64x64 each (4x4 fragments): every fragment loaded from
//    shared memory serves 4 MMAs, so shared-memory bandwidth keeps up with the Tensor Cores;
//  - cp.async (sm_80) copies 16-byte chunks global -> shared without passing through registers,
//    into a 3-stage ring: tiles k+1 and k+2 are in flight while tile k is multiplied;
//  - shared-memory rows padded by 16 bytes so the fragment loads spread over the banks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include "kernels/gemm/custom_gemm_tiles.hpp"
#include "kernels/gemm/wmma_gemm.cuh"

namespace gpubench::kernels {
namespace {

using tiles::Wmma;

template <typename T>
struct Half;
template <>
struct Half<__half> {
  __device__ static float to_float(__half x) { return __half2float(x); }
  __device__ static __half from_float(float x) { return __float2half_rn(x); }
};
template <>
struct Half<__nv_bfloat16> {
  __device__ static float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
};

__device__ inline void cp_async16(void* smem, const void* gmem) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem));
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

template <typename T>
__global__ void __launch_bounds__(Wmma::kThreads)
    wmma_gemm_kernel(int m, int k, const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ d, float alpha,
                     float beta) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  extern __shared__ __align__(128) unsigned char smem[];
  T* as = reinterpret_cast<T*>(smem);           // [stage][kBK][kALd]: as(k, i) = A(row0 + i, k0 + k)
  T* bs = as + Wmma::kStages * Wmma::kAStageElems;  // [stage][kBN][kBLd]: bs(j, k) = B(k0 + k, col0 + j)
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  int br, bc;
  tiles::block_tile(blockIdx.x, m, Wmma::kBM, br, bc);
  const int row0 = br * Wmma::kBM, col0 = bc * Wmma::kBN;
  int wr, wc;
  tiles::wmma_warp_origin(warp, wr, wc);
  const int k_tiles = k / Wmma::kBK;

  auto load_tile = [&](int stage, int k0) {
#pragma unroll
    for (int e = 0; e < Wmma::kAChunksPerThread; ++e) {
      int r, c;
      tiles::wmma_a_chunk(tid, e, r, c);
      cp_async16(as + stage * Wmma::kAStageElems + c * Wmma::kALd + r, a + (row0 + r) + static_cast<std::int64_t>(k0 + c) * m);
    }
#pragma unroll
    for (int e = 0; e < Wmma::kBChunksPerThread; ++e) {
      int r, c;
      tiles::wmma_b_chunk(tid, e, r, c);
      cp_async16(bs + stage * Wmma::kBStageElems + c * Wmma::kBLd + r, b + (k0 + r) + static_cast<std::int64_t>(col0 + c) * k);
    }
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[Wmma::kFragsM][Wmma::kFragsN];
#pragma unroll
  for (int i = 0; i < Wmma::kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < Wmma::kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  // Prologue: tiles 0 .. kStages-2 in flight. One commit group per tile (empty past the end),
  // so "tile t has landed" is "at most kStages-2 groups pending" at iteration t.
#pragma unroll
  for (int s = 0; s < Wmma::kStages - 1; ++s) {
    if (s < k_tiles) load_tile(s, s * Wmma::kBK);
    cp_async_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<Wmma::kStages - 2>();
    __syncthreads();  // tile kt visible to all; every warp is done with tile kt-1's stage
    const int next = kt + Wmma::kStages - 1;
    if (next < k_tiles) load_tile(next % Wmma::kStages, next * Wmma::kBK);
    cp_async_commit();
    const T* at = as + (kt % Wmma::kStages) * Wmma::kAStageElems;
    const T* bt = bs + (kt % Wmma::kStages) * Wmma::kBStageElems;
#pragma unroll
    for (int kk = 0; kk < Wmma::kBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::col_major> af[Wmma::kFragsM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> bf[Wmma::kFragsN];
#pragma unroll
      for (int i = 0; i < Wmma::kFragsM; ++i) wmma::load_matrix_sync(af[i], at + kk * Wmma::kALd + wr + i * 16, Wmma::kALd);
#pragma unroll
      for (int j = 0; j < Wmma::kFragsN; ++j) wmma::load_matrix_sync(bf[j], bt + (wc + j * 16) * Wmma::kBLd + kk, Wmma::kBLd);
#pragma unroll
      for (int i = 0; i < Wmma::kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < Wmma::kFragsN; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // the ring is free: reuse it as one 16x16 fp32 scratch tile per warp

  // Epilogue: fragment -> scratch (column-major 16x16) -> alpha/beta, rounding, global.
  float* scratch = reinterpret_cast<float*>(smem) + warp * 256;
#pragma unroll
  for (int i = 0; i < Wmma::kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < Wmma::kFragsN; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_col_major);
      __syncwarp();
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int idx = lane + e * 32, r = idx % 16, c = idx / 16;
        T* out = d + (row0 + wr + i * 16 + r) + static_cast<std::int64_t>(col0 + wc + j * 16 + c) * m;
        const float cv = beta == 0.0f ? 0.0f : Half<T>::to_float(*out);
        *out = Half<T>::from_float(tiles::epilogue(scratch[idx], alpha, beta, cv));
      }
      __syncwarp();
    }
#endif
}

template <typename T>
cudaError_t launch(const CustomGemmArgs& g, cudaStream_t stream) {
  const CustomGemmGrid grid = custom_gemm_grid(*find_custom_gemm("wmma"), g.m, g.n);
  wmma_gemm_kernel<T><<<grid.x, Wmma::kThreads, Wmma::kSmemBytes, stream>>>(
      g.m, g.k, static_cast<const T*>(g.a), static_cast<const T*>(g.b), static_cast<T*>(g.d), g.alpha, g.beta);
  return cudaGetLastError();
}

}  // namespace

cudaError_t prepare_wmma_gemm(Storage storage) {
  if (storage == Storage::F16)
    return cudaFuncSetAttribute(wmma_gemm_kernel<__half>, cudaFuncAttributeMaxDynamicSharedMemorySize, Wmma::kSmemBytes);
  if (storage == Storage::BF16)
    return cudaFuncSetAttribute(wmma_gemm_kernel<__nv_bfloat16>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                Wmma::kSmemBytes);
  return cudaErrorInvalidValue;
}

cudaError_t launch_wmma_gemm(const CustomGemmArgs& g, cudaStream_t stream) {
  if (g.storage == Storage::F16) return launch<__half>(g, stream);
  if (g.storage == Storage::BF16) return launch<__nv_bfloat16>(g, stream);
  return cudaErrorInvalidValue;
}

}  // namespace gpubench::kernels
