#pragma once
// GPU arithmetic peak kernels (peak.cu) and their plain C++ references and accounting.
//
// FMA chains: every thread runs kFmaChains independent chains x = x * a + b for `iterations`
// steps (independent so the FMA latency is covered; no memory traffic inside the loop) and
// writes one double combining its chains' final values. FLOP per step and chain: 2 for fp64,
// fp32 and int32 (an integer multiply-add counts as 2 operations), 4 for the packed fp16x2 and
// bf16x2 (two lanes).
//   FLOP per launch = threads * kFmaChains * iterations * flop_per_step
// Start values lie in [0.5, 1) and a, b keep x there, so x*a+b is exact in float before the one
// rounding to the 16-bit type: the reference reproduces the GPU's fused result bit for bit.
//
// mma.sync: every warp holds one A fragment of random values k/8 (k in -8..8: exact in fp16,
// bf16, tf32; int8 uses k itself; fp8 the wgmma scheme below, peak_inputs.hpp
// mma_peak_a_integer), a B fragment whose every element is the constant r (fp8: +r and -r in
// turn, below), and kMmaAccumulators independent accumulators, each updated by `iterations`
// mma.sync with D = A*B + D. Then every element D[i][j] = n * r * sum_k A[i][k] with
// n = net_iterations(t, iterations), so the sum of D over
// a warp is n * kMmaAccumulators * N * r * sum(A over the warp), whatever the
// fragment layouts are: the check needs only which values a warp's lanes hold, and the values
// stay exact in fp32 for the iteration counts used.
//   FLOP per mma = 2 * M * N * K;  FLOP per launch = warps * kMmaAccumulators * iterations * that
//
// Hopper (sm_90a, peak_wgmma.cu): mma.sync does not reach sm_90's dense rate, so every Tensor Core
// peak there is a wgmma loop (wgmma_shape and the functions below); fp8 first, the others alike:
// fp8 on Hopper: mma.sync has no native fp8 there, so the fp8 peak is
// wgmma.mma_async m64n256k32 (e4m3 x e4m3 -> f32), A from registers, B from shared memory (every
// element r = 0.5), kWgmmaPerIteration wgmmas per loop iteration into one accumulator.
// Hopper's fp8 Tensor Cores accumulate with fewer bits than fp32 (DeepSeek-V3 technical report,
// arXiv:2412.19437, sec. 3.3.2: "around 14 bits"): each product is aligned to the accumulator
// before it is added, and bits below the kept ones are lost. Keeping the sum at an instruction's
// end exact is not enough: on an H200 (2026-12-04, driver 580.159), D grown to n * T/2 = 2048
// by 4096 wgmmas lost the 1/16 steps of the products added to it (warpgroup sum -32175552
// where -33554432 was exact). So D must stay small: B is +r in even iterations and -r in odd
// ones (two B tiles), which brings D back to 0 after every pair, and an odd iteration count
// leaves one iteration's product: D = kWgmmaPerIteration * T/2 at the end, |D| <= 8 at any
// time, a 2^7 range over the 1/16 steps, exact in any accumulator of 8 or more bits. Each 32-bit
// A register holds 4 values k/8 (|k| <= 16, exact in e4m3) whose k sum to T, the same for the
// whole warpgroup (T in +-1, 2, 4). Every row of A spans 8 registers (a register holds 4
// consecutive k of one row in every fp8 fragment layout), so every row sums to T and each wgmma
// adds +-r * T to every D element, whatever the exact layout. The sum of D over a warpgroup is
// net_iterations * kWgmmaPerIteration * N * r * sum(A over its 128 threads). mma.sync fp8
// (sm_89, sm_12x) alternates B the same way. The loop's instructions are checked in the SASS.
//   FLOP per launch = warpgroups * iterations * kWgmmaPerIteration * 2 * 64 * 256 * 32
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gpubench::kernels {

enum class FmaType { F64, F32, F16x2, BF16x2, I32 };
enum class MmaType { F16, BF16, TF32, I8, FP8 };

inline constexpr int kFmaChains = 8;
inline constexpr int kMmaAccumulators = 4;

std::optional<FmaType> parse_fma_type(const std::string& dtype);  // fp64 fp32 fp16x2 bf16x2 int32
std::optional<MmaType> parse_mma_type(const std::string& dtype);  // fp16 bf16 tf32 int8 fp8

// FLOP (or integer operations) per chain step.
int fma_flop_per_step(FmaType t);
double fma_flops(FmaType t, std::int64_t threads, std::int64_t iterations);
// Chain start value for thread t, chain k (one lane; packed types use lane 0 and 1 of the pair).
double fma_start(std::int64_t thread, int chain, int lane);
// The double a thread writes: the sum of its chains' (and lanes') final values (int32: the
// XOR of the chains' final values, as an unsigned integer).
double fma_reference(FmaType t, std::int64_t thread, std::int64_t iterations);
// Largest acceptable |got - expected| for a value near 1 (0 where the result is exact).
double fma_tolerance(FmaType t);

struct MmaShape {
  int m, n, k;
  int a_elements_per_lane;  // A values each lane holds
};
MmaShape mma_shape(MmaType t);
double mma_flops(MmaType t, std::int64_t warps, std::int64_t iterations);
// Value of A element e of lane `lane` in warp `warp` (k/8, or k for int8).
double mma_a_value(MmaType t, std::int64_t warp, int lane, int e);
double mma_b_constant(MmaType t);  // r
// The iterations whose products remain in D after `iterations`: all of them, except for fp8,
// whose B alternates +r, -r (above): iterations % 2. The suite runs fp8 an odd count.
std::int64_t net_iterations(MmaType t, std::int64_t iterations);
// Expected sum of D over warp `warp`.
double mma_warp_sum(MmaType t, std::int64_t warp, std::int64_t iterations);
// Device compute capability needed (major*10+minor).
int mma_min_arch(MmaType t);

inline constexpr int kWgmmaPerIteration = 4;
inline constexpr int kWgmmaM = 64, kWgmmaN = 256, kWgmmaK = 32;  // fp8 m64n256k32
inline constexpr int kWgmmaALanes = 128, kWgmmaAPerLane = 16;   // A values each of 128 threads holds
double wgmma_fp8_flops(std::int64_t warpgroups, std::int64_t iterations);
// The same loop for every Tensor Core type on sm_90a (peak_wgmma.cu): m64n256k32 for fp8 and s8
// (16 A values per thread), m64n256k16 for fp16 and bf16 (8), m64n256k8 for tf32 (4); A value e of
// a thread is wgmma_fp8_a_integer(group, lane, e) / 8 (s8: the integer), B every element
// mma_b_constant(t) (fp8: +r and -r in turn). The sum of D over a warpgroup is layout-free as for
// mma.sync: net_iterations * kWgmmaPerIteration * N * r * sum(A). Values stay small enough for
// fp32 (s32) to hold every partial sum exactly at kWgmmaMaxExactIterations.
struct WgmmaShape {
  int k;
  int a_per_lane;
};
WgmmaShape wgmma_shape(MmaType t);
double wgmma_flops(MmaType t, std::int64_t warpgroups, std::int64_t iterations);
double wgmma_a_value(MmaType t, std::int64_t group, int lane, int e);
double wgmma_group_sum(MmaType t, std::int64_t group, std::int64_t iterations);
// "wgmma.mma_async m64n256k16" or "mma.sync m16n8k16": the instruction a Tensor Core peak loop runs.
std::string tensor_peak_instruction(MmaType t, bool wgmma);
// Whether the memory suite measures type t's Tensor Core peak with wgmma on a device of compute
// capability `cc` (major*10+minor): sm_90 with this build's sm_90a code.
bool tensor_peak_uses_wgmma(int cc, bool wgmma_built);
inline constexpr std::int64_t kWgmmaMaxExactIterations = 4096 / kWgmmaPerIteration;
// A value e (0..15) of thread `lane` (0..127) of warpgroup `group` (k/8, peak_inputs.hpp).
double wgmma_fp8_a_value(std::int64_t group, int lane, int e);
// Expected sum of D over warpgroup `group` after `iterations`.
double wgmma_fp8_group_sum(std::int64_t group, std::int64_t iterations);

// Whether a mma.sync loop can reach the dense Tensor Core rate of compute capability `cc`
// (major*10+minor): nullopt where it can (sm_80, sm_86, sm_89, sm_12x: mma.sync is those
// architectures' Tensor Core instruction), else why not. sm_90 reaches its rate only through
// wgmma (kernels/gemm/wgmma_gemm.cu; cuBLAS at 8192^3 bf16 measures ~700-780 TFLOP/s on an H200
// where a mma.sync loop measures ~535-713), sm_100/sm_103 only through tcgen05. There the loop's
// figure is recorded but is not a ceiling: a correct GEMM would beat it and be called suspect.
std::optional<std::string> mma_sync_not_a_ceiling(int cc);

// Which kernel measures the fp8 Tensor Core peak on a device of compute capability `cc`
// (major*10+minor), given the architecture the loaded code of each candidate was compiled for
// (function_code_arch: 0 = no code for this device): mma.sync where the code and the device
// have native fp8 mma (sm_89, sm_12x), wgmma on sm_90 from sm_90a code; otherwise nothing, with
// the reason. `built_archs`: the build's CUDA architecture list, for the reason.
enum class Fp8PeakPath { None, MmaSync, Wgmma };
struct Fp8PeakChoice {
  Fp8PeakPath path = Fp8PeakPath::None;
  std::string skip_reason;  // when None
};
bool native_fp8_mma_arch(int arch);
Fp8PeakChoice choose_fp8_peak(int cc, int mma_code_arch, int wgmma_code_arch, const std::string& built_archs);

}  // namespace gpubench::kernels
