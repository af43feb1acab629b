#pragma once
// Inputs of the peak kernels, computed the same way on the device and in the host reference.
#include <cstdint>

#include "kernels/common/random.hpp"
#include "kernels/memory/peak_reference.hpp"  // MmaType

namespace gpubench::kernels {

inline constexpr std::uint64_t kFmaSeed = 0xF3A;
inline constexpr std::uint64_t kMmaSeed = 0x3A3A;
inline constexpr std::uint32_t kIntA = 1664525u, kIntB = 1013904223u;  // an LCG's multiplier and increment
inline constexpr int kFmaChainsPerThread = 8;

// The FMA chains' coefficients (x = x*a + b), handed to the kernels as arguments so that the
// compiler never sees them as constants (peak.cu); the reference uses the same values.
struct FmaCoefficients {
  double a64 = 0.999, b64 = 0.001;
  float a32 = 0.999f, b32 = 0.001f;
  float a16 = 0.99f, b16 = 0.01f;  // rounded to fp16 / bf16 on the device, as in the reference
  std::uint32_t ia = kIntA, ib = kIntB;
};

// In [0.5, 1): chain `chain`, lane `lane` (0 or 1) of thread `thread`.
GPUBENCH_HD inline double fma_start_value(std::int64_t thread, int chain, int lane) {
  const std::uint64_t idx =
      (static_cast<std::uint64_t>(thread) * kFmaChainsPerThread + static_cast<std::uint64_t>(chain)) * 2 +
      static_cast<std::uint64_t>(lane);
  return 0.75 + 0.25 * static_cast<double>(uniform_value(kFmaSeed, idx));
}

GPUBENCH_HD inline std::uint32_t fma_int_start(std::int64_t thread, int chain) {
  return static_cast<std::uint32_t>(
      mix64(kFmaSeed ^ (static_cast<std::uint64_t>(thread) * kFmaChainsPerThread + static_cast<std::uint64_t>(chain))));
}

// k in -8..8 for A element e of lane `lane` in warp `warp`.
GPUBENCH_HD inline int mma_a_integer(std::int64_t warp, int lane, int e, int elements_per_lane) {
  const std::uint64_t idx = (static_cast<std::uint64_t>(warp) * 32 + static_cast<std::uint64_t>(lane)) *
                                static_cast<std::uint64_t>(elements_per_lane) +
                            static_cast<std::uint64_t>(e);
  return static_cast<int>(mix64(kMmaSeed ^ idx) % 17) - 8;
}

// The Hopper fp8 peak's A (peak_reference.hpp): value e (0..15) of thread `lane` (0..127) of
// warpgroup `group` is k/8; the 4 values of each 32-bit register (e / 4) have k summing to the
// warpgroup's T. The first three are random in -4..4, so |k| <= 16 for the fourth.
GPUBENCH_HD inline int wgmma_fp8_register_sum(std::int64_t group) {
  const int t = static_cast<int>(mix64(kMmaSeed ^ 0x5A5A5A5Au ^ static_cast<std::uint64_t>(group)) % 6);
  return (t % 2 ? -1 : 1) << (t / 2);  // +-1, +-2, +-4
}
GPUBENCH_HD inline int wgmma_fp8_small(std::uint64_t base, int j) {
  return static_cast<int>(mix64(kMmaSeed ^ (base + static_cast<std::uint64_t>(j))) % 9) - 4;
}
GPUBENCH_HD inline int wgmma_fp8_a_integer(std::int64_t group, int lane, int e) {
  const std::uint64_t base =
      ((static_cast<std::uint64_t>(group) * 128 + static_cast<std::uint64_t>(lane)) * 4 + static_cast<std::uint64_t>(e / 4)) * 4;
  if (e % 4 < 3) return wgmma_fp8_small(base, e % 4);
  return wgmma_fp8_register_sum(group) - wgmma_fp8_small(base, 0) - wgmma_fp8_small(base, 1) - wgmma_fp8_small(base, 2);
}

// A of the mma.sync peak (peak_reference.hpp): fp8 takes the wgmma loop's scheme (each register's
// 4 values sum to the warp's T, so every row of the m16n8k32 fragment, 8 registers, sums to T; with
// B alternating +r, -r, D stays within a few steps of its products, exact in the few bits fp8
// accumulation keeps); the other types random k in -8..8.
GPUBENCH_HD inline int mma_peak_a_integer(MmaType t, std::int64_t warp, int lane, int e, int elements_per_lane) {
  if (t == MmaType::FP8) return wgmma_fp8_a_integer(warp, lane, e);
  return mma_a_integer(warp, lane, e, elements_per_lane);
}

}  // namespace gpubench::kernels
