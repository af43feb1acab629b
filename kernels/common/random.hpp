#pragma once
// Counter-based random input data. The value at position i of a buffer depends only on
// (seed, i), so a GPU kernel fills a buffer in parallel and a CPU reference recomputes any
// single entry without copying the buffer back. Included by host and device code.
#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace gpubench::kernels {

// SplitMix64 finalizer (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014): a bijective mix with good avalanche, enough for benchmark inputs.
GPUBENCH_HD inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1) with 24 random bits: k * 2^-23 - 1 for k in [0, 2^24), exact in float.
// Random data (not zeros or constants) because Tensor Cores draw less power and run faster on
// zeros, which would overstate what a GPU sustains.
GPUBENCH_HD inline float uniform_value(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t bits = mix64(seed * 0xD1B54A32D192ED03ull + index) >> 40;
  return static_cast<float>(bits) * (1.0f / 8388608.0f) - 1.0f;
}

}  // namespace gpubench::kernels
