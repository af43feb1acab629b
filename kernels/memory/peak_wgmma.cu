// Tensor Core peaks on Hopper: wgmma.mma_async m64n256k{8,16,32} for tf32, fp16, bf16, e4m3 (-> f32)
// and s8 (-> s32) (the math and the check in peak_reference.hpp). mma.sync has no native fp8 on
// sm_90 (ptxas emulates it through fp16), and for the other types it does not reach sm_90's dense
// rate (peak_reference.hpp: mma_sync_not_a_ceiling), so wgmma is the only way to the peaks there. Like wgmma_gemm.cu, the device code
// exists only in sm_90a builds (CMake compiles this file for 90a-real when the architecture list
// has a 90); elsewhere the kernels are empty and wgmma_peak_built() is false.
//
// One block = one warpgroup (128 threads). A: 4 registers per thread (the fragment wgmma reads
// from registers: 4 e4m3 or s8, 2 fp16 or bf16, or 1 tf32 value each). B: k x 256 (n) values in
// shared memory, 8 KiB for every type (k 32 x 1 byte, 16 x 2, 8 x 4), every element the constant
// r, no swizzle, K-major core matrices of 8 rows x 16 bytes (LBO 128, SBO 256 bytes). Since every B element is the same, the result does not depend on which byte of
// the tile wgmma reads for which element, only that every read stays inside the 8 KiB tile,
// which holds for either reading of LBO and SBO.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/device_code.hpp"
#include "kernels/common/random.hpp"
#include "kernels/gemm/custom_gemm_tiles.hpp"
#include "kernels/memory/peak_clock.cuh"
#include "kernels/memory/peak_inputs.hpp"
#include "kernels/memory/peak_wgmma.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GPUBENCH_WGMMA_DEVICE 1
#endif

namespace gpubench::kernels {
namespace {

constexpr int kBBytes = kWgmmaN * kWgmmaK;  // 8 KiB: 256 x 32 e4m3 or s8, x 16 fp16/bf16, x 8 tf32
static_assert(kBBytes == 8192);

// fp8 keeps a second tile of -r (0xB0: the sign bit of e4m3) for its odd iterations
// (peak_reference.hpp: Hopper's fp8 accumulation keeps too few bits for a growing D).
constexpr unsigned kFp8NegativeBWord = 0xB0B0B0B0u;
__host__ __device__ constexpr int b_tiles(MmaType t) { return t == MmaType::FP8 ? 2 : 1; }

// Every 32-bit word of the B tile: the constant r of mma_b_constant (0.5; s8: 2) in each value.
__host__ __device__ constexpr unsigned b_word(MmaType t) {
  switch (t) {
    case MmaType::FP8: return 0x30303030u;   // e4m3 0.5: exponent 6 - bias 7, mantissa 0
    case MmaType::F16: return 0x38003800u;   // fp16 0.5
    case MmaType::BF16: return 0x3F003F00u;  // bf16 0.5
    case MmaType::TF32: return 0x3F000000u;  // 0.5 (tf32 reads the top 19 bits of an fp32)
    case MmaType::I8: return 0x02020202u;    // s8 2
  }
  return 0;
}

#ifdef GPUBENCH_WGMMA_DEVICE
__device__ inline std::uint32_t smem_addr(const void* p) { return static_cast<std::uint32_t>(__cvta_generic_to_shared(p)); }

__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// One wgmma of the loop, d(64x256) += A(64xK, 4 registers) * B(Kx256, shared memory descriptor),
// as a function per type: its name, accumulator type and asm constraint, the instruction, and the
// operands after the predicate (scale-a and scale-b 1; fp16/bf16 also trans-b 0; s8 takes none).
// Every wgmma of the loop accumulates (scale-d 1): a loop whose first wgmma restarted d let
// ptxas drop the earlier iterations' wgmmas as dead, leaving placeholders in the SASS.
#define GPUBENCH_WGMMA_D128 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}"
#define GPUBENCH_WGMMA_OUT(C) C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), C(d[7]), C(d[8]), C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]), C(d[14]), C(d[15]), C(d[16]), C(d[17]), C(d[18]), C(d[19]), C(d[20]), C(d[21]), C(d[22]), C(d[23]), C(d[24]), C(d[25]), C(d[26]), C(d[27]), C(d[28]), C(d[29]), C(d[30]), C(d[31]), C(d[32]), C(d[33]), C(d[34]), C(d[35]), C(d[36]), C(d[37]), C(d[38]), C(d[39]), C(d[40]), C(d[41]), C(d[42]), C(d[43]), C(d[44]), C(d[45]), C(d[46]), C(d[47]), C(d[48]), C(d[49]), C(d[50]), C(d[51]), C(d[52]), C(d[53]), C(d[54]), C(d[55]), C(d[56]), C(d[57]), C(d[58]), C(d[59]), C(d[60]), C(d[61]), C(d[62]), C(d[63]), C(d[64]), C(d[65]), C(d[66]), C(d[67]), C(d[68]), C(d[69]), C(d[70]), C(d[71]), C(d[72]), C(d[73]), C(d[74]), C(d[75]), C(d[76]), C(d[77]), C(d[78]), C(d[79]), C(d[80]), C(d[81]), C(d[82]), C(d[83]), C(d[84]), C(d[85]), C(d[86]), C(d[87]), C(d[88]), C(d[89]), C(d[90]), C(d[91]), C(d[92]), C(d[93]), C(d[94]), C(d[95]), C(d[96]), C(d[97]), C(d[98]), C(d[99]), C(d[100]), C(d[101]), C(d[102]), C(d[103]), C(d[104]), C(d[105]), C(d[106]), C(d[107]), C(d[108]), C(d[109]), C(d[110]), C(d[111]), C(d[112]), C(d[113]), C(d[114]), C(d[115]), C(d[116]), C(d[117]), C(d[118]), C(d[119]), C(d[120]), C(d[121]), C(d[122]), C(d[123]), C(d[124]), C(d[125]), C(d[126]), C(d[127])
#define GPUBENCH_WGMMA_FN(NAME, ACC, C, PTX, TAIL) \
  __device__ inline void NAME(ACC(&d)[128], const unsigned(&a)[4], std::uint64_t desc_b) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n" PTX " " GPUBENCH_WGMMA_D128 \
                 ", {%128,%129,%130,%131}, %132, p" TAIL ";\n}\n" \
                 : GPUBENCH_WGMMA_OUT(C) \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "n"(1)); \
  }
GPUBENCH_WGMMA_FN(wgmma_fp8, float, "+f", "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", ", 1, 1")
GPUBENCH_WGMMA_FN(wgmma_f16, float, "+f", "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", ", 1, 1, 0")
GPUBENCH_WGMMA_FN(wgmma_bf16, float, "+f", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", ", 1, 1, 0")
GPUBENCH_WGMMA_FN(wgmma_tf32, float, "+f", "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", ", 1, 1")
GPUBENCH_WGMMA_FN(wgmma_s8, int, "+r", "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8", "")
#undef GPUBENCH_WGMMA_FN
#undef GPUBENCH_WGMMA_OUT
#undef GPUBENCH_WGMMA_D128

// A value (k/8, s8: k; peak_inputs.hpp) packed into register r the way wgmma reads it: 4 values of
// 8 bits, 2 of 16 or 1 of 32 per register, value e = r * per_register + i at bit 8/16/32 * i.
template <MmaType T>
__device__ inline unsigned pack_a(long long group, int lane, int r) {
  constexpr int per = T == MmaType::TF32 ? 1 : (T == MmaType::F16 || T == MmaType::BF16) ? 2 : 4;
  unsigned v = 0;
#pragma unroll
  for (int i = 0; i < per; ++i) {
    const int k = wgmma_fp8_a_integer(group, lane, per * r + i);
    const float x = k / 8.0f;
    unsigned bits;
    if constexpr (T == MmaType::FP8) bits = static_cast<unsigned>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)) & 0xffu;
    else if constexpr (T == MmaType::I8) bits = static_cast<unsigned>(static_cast<unsigned char>(static_cast<signed char>(k)));
    else if constexpr (T == MmaType::F16) bits = __half_as_ushort(__float2half_rn(x));
    else if constexpr (T == MmaType::BF16) bits = __bfloat16_as_ushort(__float2bfloat16_rn(x));
    else bits = __float_as_uint(x);
    v |= bits << ((32 / per) * i);
  }
  return v;
}

template <MmaType T, class Acc>
__device__ inline void wgmma_step(Acc (&d)[128], const unsigned (&a)[4], std::uint64_t desc_b) {
  if constexpr (T == MmaType::FP8) wgmma_fp8(d, a, desc_b);
  else if constexpr (T == MmaType::F16) wgmma_f16(d, a, desc_b);
  else if constexpr (T == MmaType::BF16) wgmma_bf16(d, a, desc_b);
  else if constexpr (T == MmaType::TF32) wgmma_tf32(d, a, desc_b);
  else wgmma_s8(d, a, desc_b);
}
#endif  // GPUBENCH_WGMMA_DEVICE

// `salt` is 0 at run time (see peak.cu's mma_kernel): the B descriptor of every iteration is
// desc ^ (i & salt), which the compiler cannot prove loop-invariant.
template <MmaType T>
__global__ void __launch_bounds__(kWgmmaPeakThreads)
    wgmma_peak_kernel(double* group_sums, long long iterations, unsigned salt, unsigned long long* clock) {
#ifdef GPUBENCH_WGMMA_DEVICE
  __shared__ __align__(1024) unsigned char b_tile[kBBytes * b_tiles(T)];
  __shared__ double warp_sums[kWgmmaPeakThreads / 32];
  ClockProbe probe(clock);
  const int tid = threadIdx.x;
  for (int i = tid; i < kBBytes * b_tiles(T) / 4; i += kWgmmaPeakThreads)
    reinterpret_cast<unsigned*>(b_tile)[i] = i < kBBytes / 4 ? b_word(T) : kFp8NegativeBWord;
  // The generic-proxy stores above must be visible to wgmma, which reads through the async proxy.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const long long group = blockIdx.x;
  const int lane = tid;  // 0..127 in the warpgroup
  unsigned a[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) a[r] = pack_a<T>(group, lane, r);
  using Acc = std::conditional_t<T == MmaType::I8, int, float>;  // s8 accumulates in s32
  Acc d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0;
  const std::uint64_t desc = tiles::wgmma_descriptor(smem_addr(b_tile), 128, 256, 0);
  // fp8's odd iterations read the -r tile (the same tile elsewhere).
  const std::uint64_t desc_odd = tiles::wgmma_descriptor(smem_addr(b_tile + kBBytes * (b_tiles(T) - 1)), 128, 256, 0);

  wgmma_fence();  // a and d were written by ordinary instructions
  for (long long i = 0; i < iterations; ++i) {
    const std::uint64_t db = ((i & 1) ? desc_odd : desc) ^ (static_cast<unsigned long long>(i) & salt);
    wgmma_step<T>(d, a, db);
    wgmma_step<T>(d, a, db);
    wgmma_step<T>(d, a, db);
    wgmma_step<T>(d, a, db);
    wgmma_commit();
    wgmma_wait<1>();  // at most two groups in flight
  }
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < 128; ++i) {
    if constexpr (T == MmaType::I8) asm volatile("" : "+r"(d[i])::"memory");
    else asm volatile("" : "+f"(d[i])::"memory");
  }

  double sum = 0;
#pragma unroll
  for (int i = 0; i < 128; ++i) sum += static_cast<double>(d[i]);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (tid % 32 == 0) warp_sums[tid / 32] = sum;
  __syncthreads();
  if (tid == 0) {
    double total = 0;
    for (int w = 0; w < kWgmmaPeakThreads / 32; ++w) total += warp_sums[w];
    group_sums[group] = total;
  }
  probe.finish(clock);
#else
  (void)group_sums;
  (void)iterations;
  (void)salt;
  (void)clock;
#endif
}

static_assert(kWgmmaPerIteration == 4, "the loop above issues four wgmmas");

// The kernel of each type (a switch over the template's instances).
const void* kernel_of(MmaType t) {
  switch (t) {
    case MmaType::FP8: return reinterpret_cast<const void*>(&wgmma_peak_kernel<MmaType::FP8>);
    case MmaType::F16: return reinterpret_cast<const void*>(&wgmma_peak_kernel<MmaType::F16>);
    case MmaType::BF16: return reinterpret_cast<const void*>(&wgmma_peak_kernel<MmaType::BF16>);
    case MmaType::TF32: return reinterpret_cast<const void*>(&wgmma_peak_kernel<MmaType::TF32>);
    case MmaType::I8: return reinterpret_cast<const void*>(&wgmma_peak_kernel<MmaType::I8>);
  }
  return nullptr;
}

}  // namespace

bool wgmma_peak_built() {
#ifdef GPUBENCH_WGMMA_SM90A
  return true;
#else
  return false;
#endif
}

cudaError_t wgmma_peak_code_arch(MmaType t, int* arch) {
  *arch = 0;
  if (!wgmma_peak_built()) return cudaSuccess;
  return function_code_arch(kernel_of(t), arch);
}

int wgmma_peak_blocks_per_sm(MmaType t) {
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel_of(t), kWgmmaPeakThreads, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return blocks;
}

cudaError_t launch_wgmma_peak(MmaType t, double* group_sums, std::int64_t iterations, unsigned grid,
                              unsigned long long* clock, cudaStream_t stream) {
  const unsigned salt = 0;  // see the kernel
  long long n = iterations;
  void* args[] = {&group_sums, &n, const_cast<unsigned*>(&salt), &clock};
  return cudaLaunchKernel(kernel_of(t), dim3(grid), dim3(kWgmmaPeakThreads), args, 0, stream);
}

}  // namespace gpubench::kernels
