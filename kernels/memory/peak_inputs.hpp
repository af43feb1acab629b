#pragma once
// Inputs of the peak kernels, computed the same way on the device and in the host reference.
#include <cstdint>

#include "kernels/common/random.hpp"

namespace gpubench::kernels {

inline constexpr std::uint64_t kFmaSeed = 0xF3A;
inline constexpr std::uint64_t kMmaSeed = 0x3A3A;
inline constexpr std::uint32_t kIntA = 1664525u, kIntB = 1013904223u;  // an LCG's multiplier and increment
inline constexpr int kFmaChainsPerThread = 8;

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

}  // namespace gpubench::kernels
