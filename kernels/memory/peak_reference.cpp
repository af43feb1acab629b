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
  if (t == FmaType::I32) {
    std::uint32_t acc = 0;
    for (int k = 0; k < kFmaChains; ++k) {
      std::uint32_t x = fma_int_start(thread, k);
      for (std::int64_t i = 0; i < iterations; ++i) x = x * kIntA + kIntB;
      acc ^= x;
    }
    return static_cast<double>(acc);
  }
  double sum = 0;
  for (int k = 0; k < kFmaChains; ++k) {
    if (t == FmaType::F64) {
      double x = fma_start(thread, k, 0);
      for (std::int64_t i = 0; i < iterations; ++i) x = std::fma(x, 0.999, 0.001);
      sum += x;
    } else if (t == FmaType::F32) {
      float x = static_cast<float>(fma_start(thread, k, 0));
      for (std::int64_t i = 0; i < iterations; ++i) x = std::fma(x, 0.999f, 0.001f);
      sum += x;
    } else {
      const Storage s = t == FmaType::F16x2 ? Storage::F16 : Storage::BF16;
      const float a = static_cast<float>(round_to_storage(s, 0.99f)), b = static_cast<float>(round_to_storage(s, 0.01f));
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
  const int k = mma_a_integer(warp, lane, e, mma_shape(t).a_elements_per_lane);
  return t == MmaType::I8 ? k : k / 8.0;
}

double mma_b_constant(MmaType t) { return t == MmaType::I8 ? 2.0 : 0.5; }

double mma_warp_sum(MmaType t, std::int64_t warp, std::int64_t iterations) {
  const MmaShape s = mma_shape(t);
  double a_sum = 0;
  for (int lane = 0; lane < 32; ++lane)
    for (int e = 0; e < s.a_elements_per_lane; ++e) a_sum += mma_a_value(t, warp, lane, e);
  return static_cast<double>(iterations) * kMmaAccumulators * s.n * mma_b_constant(t) * a_sum;
}

int mma_min_arch(MmaType t) { return t == MmaType::FP8 ? 89 : 80; }

}  // namespace gpubench::kernels
