#include "kernels/memory/peak_reference.hpp"

#include <cmath>

#include "kernels/common/float_formats.hpp"
#include "kernels/common/random.hpp"
#include "kernels/memory/peak_inputs.hpp"

namespace gpubench::kernels {
namespace {

static_assert(kFmaChains == kFmaChainsPerThread);

}  // namespace

std::optional<FmaType> parse_fma_type(const std::string& d) {
  if (d == "fp64") return FmaType::F64;
  if (d == "fp32") return FmaType::F32;
  if (d == "fp16x2") return FmaType::F16x2;
  if (d == "bf16x2") return FmaType::BF16x2;
  if (d == "int32") return FmaType::I32;
  return std::nullopt;
}

std::optional<MmaType> parse_mma_type(const std::string& d) {
  if (d == "fp16") return MmaType::F16;
  if (d == "bf16") return MmaType::BF16;
  if (d == "tf32") return MmaType::TF32;
  if (d == "int8") return MmaType::I8;
  if (d == "fp8") return MmaType::FP8;
  return std::nullopt;
}

int fma_flop_per_step(FmaType t) { return (t == FmaType::F16x2 || t == FmaType::BF16x2) ? 4 : 2; }

double fma_flops(FmaType t, std::int64_t threads, std::int64_t iterations) {
  return static_cast<double>(threads) * kFmaChains * static_cast<double>(iterations) * fma_flop_per_step(t);
}

double fma_start(std::int64_t thread, int chain, int lane) { return fma_start_value(thread, chain, lane); }

double fma_reference(FmaType t, std::int64_t thread, std::int64_t iterations) {
  const FmaCoefficients c;
  if (t == FmaType::I32) {
    std::uint32_t acc = 0;
    for (int k = 0; k < kFmaChains; ++k) {
      std::uint32_t x = fma_int_start(thread, k);
      for (std::int64_t i = 0; i < iterations; ++i) x = x * c.ia + c.ib;
      acc ^= x;
    }
    return static_cast<double>(acc);
  }
  double sum = 0;
  for (int k = 0; k < kFmaChains; ++k) {
    if (t == FmaType::F64) {
      double x = fma_start(thread, k, 0);
      for (std::int64_t i = 0; i < iterations; ++i) x = std::fma(x, c.a64, c.b64);
      sum += x;
    } else if (t == FmaType::F32) {
      float x = static_cast<float>(fma_start(thread, k, 0));
      for (std::int64_t i = 0; i < iterations; ++i) x = std::fma(x, c.a32, c.b32);
      sum += x;
    } else {
      const Storage s = t == FmaType::F16x2 ? Storage::F16 : Storage::BF16;
      const float a = static_cast<float>(round_to_storage(s, c.a16)), b = static_cast<float>(round_to_storage(s, c.b16));
      for (int lane = 0; lane < 2; ++lane) {
        float x = static_cast<float>(round_to_storage(s, static_cast<float>(fma_start(thread, k, lane))));
        // x*a+b is exact in float here (see the header), so this is one rounding to 16 bits.
        for (std::int64_t i = 0; i < iterations; ++i) x = static_cast<float>(round_to_storage(s, std::fma(x, a, b)));
        sum += x;
      }
    }
  }
  return sum;
}

double fma_tolerance(FmaType t) {
  switch (t) {
    case FmaType::F64: return 1e-12;
    case FmaType::F32: return 1e-5;
    case FmaType::F16x2: return 8 * 0x1p-10;
    case FmaType::BF16x2: return 8 * 0x1p-7;
    case FmaType::I32: return 0;
  }
  return 0;
}

MmaShape mma_shape(MmaType t) {
  switch (t) {
    case MmaType::F16: return {16, 8, 16, 8};
    case MmaType::BF16: return {16, 8, 16, 8};
    case MmaType::TF32: return {16, 8, 8, 4};
    case MmaType::I8: return {16, 8, 32, 16};
    case MmaType::FP8: return {16, 8, 32, 16};
  }
  return {0, 0, 0, 0};
}

double mma_flops(MmaType t, std::int64_t warps, std::int64_t iterations) {
  const MmaShape s = mma_shape(t);
  return 2.0 * s.m * s.n * s.k * static_cast<double>(warps) * kMmaAccumulators * static_cast<double>(iterations);
}

double mma_a_value(MmaType t, std::int64_t warp, int lane, int e) {
  const int k = mma_peak_a_integer(t, warp, lane, e, mma_shape(t).a_elements_per_lane);
  return t == MmaType::I8 ? k : k / 8.0;
}

double mma_b_constant(MmaType t) { return t == MmaType::I8 ? 2.0 : 0.5; }

std::int64_t net_iterations(MmaType t, std::int64_t iterations) {
  return t == MmaType::FP8 ? iterations % 2 : iterations;
}

double mma_warp_sum(MmaType t, std::int64_t warp, std::int64_t iterations) {
  const MmaShape s = mma_shape(t);
  double a_sum = 0;
  for (int lane = 0; lane < 32; ++lane)
    for (int e = 0; e < s.a_elements_per_lane; ++e) a_sum += mma_a_value(t, warp, lane, e);
  return static_cast<double>(net_iterations(t, iterations)) * kMmaAccumulators * s.n * mma_b_constant(t) * a_sum;
}

int mma_min_arch(MmaType t) { return t == MmaType::FP8 ? 89 : 80; }

double wgmma_fp8_flops(std::int64_t warpgroups, std::int64_t iterations) {
  return 2.0 * kWgmmaM * kWgmmaN * kWgmmaK * kWgmmaPerIteration * static_cast<double>(warpgroups) *
         static_cast<double>(iterations);
}

double wgmma_fp8_a_value(std::int64_t group, int lane, int e) { return wgmma_fp8_a_integer(group, lane, e) / 8.0; }

double wgmma_fp8_group_sum(std::int64_t group, std::int64_t iterations) {
  static_assert(kWgmmaALanes * kWgmmaAPerLane == kWgmmaM * kWgmmaK, "A is 64 x 32, spread over 128 threads");
  double a_sum = 0;
  for (int lane = 0; lane < kWgmmaALanes; ++lane)
    for (int e = 0; e < kWgmmaAPerLane; ++e) a_sum += wgmma_fp8_a_value(group, lane, e);
  return static_cast<double>(net_iterations(MmaType::FP8, iterations)) * kWgmmaPerIteration * kWgmmaN *
         mma_b_constant(MmaType::FP8) * a_sum;
}

std::optional<std::string> mma_sync_not_a_ceiling(int cc) {
  if (cc == 90) {
    return std::string("mma.sync does not reach sm_90's dense Tensor Core rate (wgmma does): recorded, not a ceiling");
  }
  if (cc >= 100 && cc < 110) {
    return "mma.sync does not reach sm_" + std::to_string(cc) +
           "'s dense Tensor Core rate (tcgen05 does): recorded, not a ceiling";
  }
  return std::nullopt;
}

WgmmaShape wgmma_shape(MmaType t) {
  switch (t) {
    case MmaType::FP8:
    case MmaType::I8: return {32, 16};
    case MmaType::F16:
    case MmaType::BF16: return {16, 8};
    case MmaType::TF32: return {8, 4};
  }
  return {0, 0};
}

double wgmma_flops(MmaType t, std::int64_t warpgroups, std::int64_t iterations) {
  return 2.0 * kWgmmaM * kWgmmaN * wgmma_shape(t).k * kWgmmaPerIteration * static_cast<double>(warpgroups) *
         static_cast<double>(iterations);
}

double wgmma_a_value(MmaType t, std::int64_t group, int lane, int e) {
  const int k = wgmma_fp8_a_integer(group, lane, e);
  return t == MmaType::I8 ? k : k / 8.0;
}

double wgmma_group_sum(MmaType t, std::int64_t group, std::int64_t iterations) {
  const WgmmaShape s = wgmma_shape(t);
  double a_sum = 0;
  for (int lane = 0; lane < kWgmmaALanes; ++lane)
    for (int e = 0; e < s.a_per_lane; ++e) a_sum += wgmma_a_value(t, group, lane, e);
  return static_cast<double>(net_iterations(t, iterations)) * kWgmmaPerIteration * kWgmmaN * mma_b_constant(t) * a_sum;
}

std::string tensor_peak_instruction(MmaType t, bool wgmma) {
  if (wgmma) return "wgmma.mma_async m64n256k" + std::to_string(wgmma_shape(t).k);
  const MmaShape s = mma_shape(t);
  return "mma.sync m" + std::to_string(s.m) + "n" + std::to_string(s.n) + "k" + std::to_string(s.k);
}

bool tensor_peak_uses_wgmma(int cc, bool wgmma_built) { return cc == 90 && wgmma_built; }

bool native_fp8_mma_arch(int arch) { return arch == 89 || (arch >= 120 && arch < 130); }

Fp8PeakChoice choose_fp8_peak(int cc, int mma_code_arch, int wgmma_code_arch, const std::string& built_archs) {
  const std::string sm = "sm_" + std::to_string(cc);
  const std::string built = " (this binary is built for CUDA architectures " + built_archs + ")";
  if (cc == 90) {
    if (wgmma_code_arch == 90) return {Fp8PeakPath::Wgmma, ""};
    return {Fp8PeakPath::None,
            "the fp8 Tensor Core peak on sm_90 needs wgmma from sm_90a code, which this binary lacks" + built +
                "; mma.sync fp8 on sm_90 is emulated through fp16 and would not measure it"};
  }
  if (native_fp8_mma_arch(cc)) {
    if (native_fp8_mma_arch(mma_code_arch)) return {Fp8PeakPath::MmaSync, ""};
    const std::string runs = mma_code_arch > 0 ? "it runs sm_" + std::to_string(mma_code_arch) + " code, which has no fp8 mma"
                                               : "it has no code for this GPU";
    return {Fp8PeakPath::None, "no " + sm + " code for the fp8 mma.sync kernel: " + runs + built +
                                   "; rebuild with " + std::to_string(cc) + " in CMAKE_CUDA_ARCHITECTURES"};
  }
  if (cc < 89) return {Fp8PeakPath::None, "fp8 Tensor Cores need compute capability 8.9 or newer; this GPU is " + sm};
  return {Fp8PeakPath::None, "no native fp8 mma.sync on " + sm +
                                 " (it exists on sm_89 and sm_12x; sm_90 uses wgmma, and a tcgen05 fp8 peak for sm_10x is "
                                 "not implemented)"};
}

}  // namespace gpubench::kernels
