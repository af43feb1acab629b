// Rung 5, Hopper GEMM: wgmma fed by TMA. Math: D = alpha * A B + beta * C with A, B in fp16 or
// bf16, fp32 accumulation on the Tensor Cores, D rounded to the input type.
//
// What makes it faster than the WMMA kernel:
//  - wgmma.mma_async: one warpgroup (4 warps) issues a 64x256x16 MMA that reads both operands
//    straight from shared memory (no fragment loads into registers) and runs asynchronously,
//    so the next k-step's MMAs are queued while the previous ones finish. mma.sync (what WMMA
//    compiles to) cannot reach Hopper's Tensor Core peak; wgmma can.
//  - TMA (cp.async.bulk.tensor): one thread asks the copy engine for a whole 2-D tile; it
//    lands 128-byte swizzled (the layout wgmma reads without bank conflicts) and signals an
//    mbarrier with the byte count, so no thread spends instructions on address arithmetic.
//  - a 4-stage ring of 48 KiB stages (A 128x64, B 64x256): loads run 3 tiles ahead of the math.
//
// Block: 128x256 output tile, 2 warpgroups of 64x256 (128 fp32 accumulators per thread).
// Operands, in wgmma's terms: A is "M-major" (column-major A has m contiguous; imm-trans-a = 1),
// B is "K-major" (column-major B has k contiguous; imm-trans-b = 0). Shared-memory layouts per
// PTX ISA "Shared Memory Matrix Layout", 128-byte swizzle:
//  A: per 64-row half, a TMA box of 64 m x 64 k: k-row r at r * 128 bytes, 8-row atoms of
//     1024 bytes. Descriptor: SBO (next 8 k) = 1024; LBO (next 64 m) = 8192, unused with M = 64.
//     Each k-step of 16 moves the start by 16 rows = 2048 bytes.
//  B: a TMA box of 64 k x 256 n: n-row j at j * 128 bytes. Descriptor: SBO (next 8 n) = 1024;
//     LBO unused for swizzled K-major. Each k-step of 16 moves the start by 32 bytes in the row.
// Epilogue: accumulators -> shared memory (column-major, fp32) -> alpha/beta, rounding ->
// coalesced 8-byte stores of 4 rows per thread.
//
// The device code exists only in sm_90a builds (CMake compiles this file for 90a when the
// toolkit and the architecture list allow); elsewhere the kernels are empty and
// wgmma_gemm_built() is false, so the suite skips before launching.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/gemm/custom_gemm_tiles.hpp"
#include "kernels/gemm/wgmma_gemm.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GPUBENCH_WGMMA_DEVICE 1
#endif

namespace gpubench::kernels {
namespace {

using tiles::Wgmma;

#ifdef GPUBENCH_WGMMA_DEVICE
__device__ inline std::uint32_t smem_addr(const void* p) { return static_cast<std::uint32_t>(__cvta_generic_to_shared(p)); }

__device__ inline void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ inline void mbar_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ inline void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
// 2-D TMA tile load into shared memory; completion counted in bytes on `bar`.
__device__ inline void tma_load(void* smem, const CUtensorMap* map, int c0, int c1, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_addr(smem)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads or writes across the asynchronous MMAs.
__device__ inline void fence_accumulators(float (&d)[Wgmma::kAccPerThread]) {
#pragma unroll
  for (int i = 0; i < Wgmma::kAccPerThread; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d += A(64x16, M-major, desc_a) * B(16x256, K-major, desc_b), fp32 accumulate.
template <typename T>
__device__ inline void wgmma_64x256x16(float (&d)[Wgmma::kAccPerThread], std::uint64_t desc_a, std::uint64_t desc_b);
template <>
__device__ inline void wgmma_64x256x16<__half>(float (&d)[Wgmma::kAccPerThread], std::uint64_t desc_a, std::uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "n"(1));
}
template <>
__device__ inline void wgmma_64x256x16<__nv_bfloat16>(float (&d)[Wgmma::kAccPerThread], std::uint64_t desc_a,
                                                      std::uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "n"(1));
}

template <typename T>
__device__ inline float to_float(T x);
template <>
__device__ inline float to_float(__half x) { return __half2float(x); }
template <>
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ inline T from_float(float x);
template <>
__device__ inline __half from_float(float x) { return __float2half_rn(x); }
template <>
__device__ inline __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
#endif  // GPUBENCH_WGMMA_DEVICE

template <typename T>
__global__ void __launch_bounds__(Wgmma::kThreads, 1)
    wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int m,
                      int k, T* __restrict__ d, float alpha, float beta) {
#ifdef GPUBENCH_WGMMA_DEVICE
  extern __shared__ unsigned char smem_raw[];
  // 128-byte swizzled tiles must start on 1024-byte boundaries (their swizzle atom). The ring is
  // smem_raw plus an offset, not a pointer rebuilt from an integer: the compiler then still knows
  // it points into shared memory, and the epilogue's accesses compile to STS/LDS instead of
  // generic ST.E/LD.E (128 + 10 of them per thread before this).
  unsigned char* ring = smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u);
  auto* full = reinterpret_cast<std::uint64_t*>(ring + Wgmma::kStages * Wgmma::kStageBytes);
  const int tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  int br, bc;
  tiles::block_tile(blockIdx.x, m, Wgmma::kBM, br, bc);
  const int row0 = br * Wgmma::kBM, col0 = bc * Wgmma::kBN;
  const int k_tiles = k / Wgmma::kBK;

  if (tid == 0) {
    for (int s = 0; s < Wgmma::kStages; ++s) mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();

  // Tile kt goes to stage kt % kStages; its barrier completes once per use, so a consumer of
  // tile kt waits for phase parity (kt / kStages) & 1.
  auto issue = [&](int kt) {
    unsigned char* a_s = ring + (kt % Wgmma::kStages) * Wgmma::kStageBytes;
    std::uint64_t* bar = &full[kt % Wgmma::kStages];
    mbar_expect_tx(bar, Wgmma::kStageBytes);
    tma_load(a_s, &map_a, row0, kt * Wgmma::kBK, bar);
    tma_load(a_s + Wgmma::kAStageBytes / 2, &map_a, row0 + Wgmma::kBoxA, kt * Wgmma::kBK, bar);
    tma_load(a_s + Wgmma::kAStageBytes, &map_b, kt * Wgmma::kBK, col0, bar);
  };
  if (tid == 0)
    for (int kt = 0; kt < Wgmma::kStages && kt < k_tiles; ++kt) issue(kt);

  float acc[Wgmma::kAccPerThread];
#pragma unroll
  for (int i = 0; i < Wgmma::kAccPerThread; ++i) acc[i] = 0.0f;

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt % Wgmma::kStages;
    mbar_wait(&full[stage], (kt / Wgmma::kStages) & 1);
    const std::uint32_t a_base = smem_addr(ring + stage * Wgmma::kStageBytes) + wg * (Wgmma::kAStageBytes / 2);
    const std::uint32_t b_base = smem_addr(ring + stage * Wgmma::kStageBytes + Wgmma::kAStageBytes);
    fence_accumulators(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Wgmma::kBK / Wgmma::kInstK; ++kk) {
      const std::uint64_t da = tiles::wgmma_descriptor(a_base + kk * Wgmma::kAKStep, Wgmma::kALbo, Wgmma::kASbo, Wgmma::kSwizzle128);
      const std::uint64_t db = tiles::wgmma_descriptor(b_base + kk * Wgmma::kBKStep, Wgmma::kBLbo, Wgmma::kBSbo, Wgmma::kSwizzle128);
      wgmma_64x256x16<T>(acc, da, db);
    }
    wgmma_commit();
    fence_accumulators(acc);
    // Tile kt-1's MMAs are done (only kt's may still run): both warpgroups have left its stage
    // after the barrier, and thread 0 refills it with tile kt-1+kStages.
    wgmma_wait<1>();
    fence_accumulators(acc);
    __syncthreads();
    if (tid == 0 && kt >= 1 && kt - 1 + Wgmma::kStages < k_tiles) issue(kt - 1 + Wgmma::kStages);
  }
  wgmma_wait<0>();
  fence_accumulators(acc);
  __syncthreads();  // every MMA has read its stage and no copy is in flight: reuse the ring

  float* out = reinterpret_cast<float*>(ring);  // out[col * kOutLd + row], 128 x 256 fp32
#pragma unroll
  for (int r = 0; r < Wgmma::kAccPerThread; ++r) {
    int row, col;
    tiles::wgmma_acc_coord(t, r, row, col);
    out[col * Wgmma::kOutLd + wg * Wgmma::kWgM + row] = acc[r];
  }
  __syncthreads();
  // Each warp writes whole columns: lane l takes rows 4l .. 4l+3 (8 contiguous bytes).
  const int warp = tid / 32, lane = tid % 32;
  for (int col = warp; col < Wgmma::kBN; col += Wgmma::kThreads / 32) {
    const float4 v = *reinterpret_cast<const float4*>(&out[col * Wgmma::kOutLd + 4 * lane]);
    T* dst = d + (row0 + 4 * lane) + static_cast<std::int64_t>(col0 + col) * m;
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (beta != 0.0f)
      for (int i = 0; i < 4; ++i) c[i] = to_float(dst[i]);
    const float x[4] = {v.x, v.y, v.z, v.w};
    alignas(8) T o[4];
    for (int i = 0; i < 4; ++i) o[i] = from_float<T>(tiles::epilogue(x[i], alpha, beta, c[i]));
    *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(o);
  }
#endif
}

__global__ void wgmma_probe_kernel(int* flag) {
#ifdef GPUBENCH_WGMMA_DEVICE
  *flag = 1;
#else
  *flag = 0;
#endif
}

template <typename T>
cudaError_t launch(const CustomGemmArgs& g, const WgmmaTensorMaps& maps, cudaStream_t stream) {
  const CustomGemmGrid grid = custom_gemm_grid(*find_custom_gemm("wgmma"), g.m, g.n);
  wgmma_gemm_kernel<T><<<grid.x, Wgmma::kThreads, Wgmma::kSmemBytes, stream>>>(
      maps.a, maps.b, g.m, g.k, static_cast<T*>(g.d), g.alpha, g.beta);
  return cudaGetLastError();
}

}  // namespace

bool wgmma_gemm_built() {
#ifdef GPUBENCH_WGMMA_SM90A
  return true;
#else
  return false;
#endif
}

cudaError_t wgmma_gemm_probe(bool* usable, cudaStream_t stream) {
  *usable = false;
  int* flag = nullptr;
  cudaError_t err = cudaMallocAsync(&flag, sizeof(int), stream);
  if (err != cudaSuccess) return err;
  wgmma_probe_kernel<<<1, 1, 0, stream>>>(flag);
  err = cudaGetLastError();
  int host = 0;
  if (err == cudaSuccess) err = cudaMemcpyAsync(&host, flag, sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  cudaFreeAsync(flag, stream);
  // No image for this device: the build has no sm_90a (or sm_90) code; not an error.
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction) {
    cudaGetLastError();
    return cudaSuccess;
  }
  *usable = err == cudaSuccess && host == 1;
  return err;
}

cudaError_t prepare_wgmma_gemm(Storage storage) {
  if (storage == Storage::F16)
    return cudaFuncSetAttribute(wgmma_gemm_kernel<__half>, cudaFuncAttributeMaxDynamicSharedMemorySize, Wgmma::kSmemBytes);
  if (storage == Storage::BF16)
    return cudaFuncSetAttribute(wgmma_gemm_kernel<__nv_bfloat16>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                Wgmma::kSmemBytes);
  return cudaErrorInvalidValue;
}

cudaError_t launch_wgmma_gemm(const CustomGemmArgs& g, const WgmmaTensorMaps& maps, cudaStream_t stream) {
  if (g.storage == Storage::F16) return launch<__half>(g, maps, stream);
  if (g.storage == Storage::BF16) return launch<__nv_bfloat16>(g, maps, stream);
  return cudaErrorInvalidValue;
}

}  // namespace gpubench::kernels
