#pragma once
// Pointer chases: every load's address is the value the previous load returned, so no two
// loads overlap and the time per access is the latency of the memory read (lmbench's
// lat_mem_rd; nvbandwidth's host_device_latency_sm and device_to_device_latency_sm). Host
// helpers: the rings the GPU and CPU chases walk, the walk itself, and where a walk must end
// (the verification's answer). Plain C++; the GPU kernel is in pointer_chase.cuh.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "kernels/common/random.hpp"

namespace gpubench::kernels {

// nvbandwidth 0.8's ring (common.h, testcase.cpp): 8-byte nodes in a 2 MiB buffer, each
// pointing 16 nodes (128 bytes, one cache line) further, wrapping around; 1,000,000 accesses.
constexpr std::size_t kChaseBufferBytes = std::size_t{2} << 20;
constexpr std::uint64_t kChaseStrideNodes = 16;

// The CPU chase (memory suite's host_latency): 64-byte lines in random order, 100,000 accesses a
// run (about 10 ms at DRAM's ~100 ns).
constexpr std::size_t kHostChaseLineBytes = 64;
constexpr std::int64_t kHostChaseAccessesPerRun = 100000;

// The strided ring: word i holds the address base + 8 x ((i + stride) mod words).
inline void fill_strided_ring(std::uint64_t* words, std::uint64_t count, std::uint64_t stride, std::uint64_t base) {
  for (std::uint64_t i = 0; i < count; ++i) words[i] = base + 8 * ((i + stride) % count);
}

// The word a walk of the strided ring stands on after `steps` accesses from word 0.
inline std::uint64_t strided_ring_end(std::uint64_t count, std::uint64_t stride, std::uint64_t steps) {
  return (stride % count) * (steps % count) % count;  // both factors < count <= 2^32: no overflow
}

// `lines` cache lines linked into one cycle in a random order: the lines shuffled (Fisher-Yates
// with the counter generator of random.hpp), each pointing to the next in that order and the
// last to the first. next[i] is the line after line i; a walk from any line visits every line
// before it returns. A random order defeats the hardware prefetchers a fixed stride would train.
inline std::vector<std::uint32_t> random_cycle(std::uint32_t lines, std::uint64_t seed) {
  std::vector<std::uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  for (std::uint32_t i = lines; i > 1; --i) {
    const auto j = static_cast<std::uint32_t>(mix64(seed * 0x9E3779B97F4A7C15ull + i) % i);  // j <= i - 1
    std::swap(order[i - 1], order[j]);
  }
  std::vector<std::uint32_t> next(lines);
  for (std::uint32_t k = 0; k < lines; ++k) next[order[k]] = order[(k + 1) % lines];
  return next;
}

// `steps` dependent loads from `start`, where each node's first word is the next node's address
// (written as a pointer or as a 64-bit integer: memcpy reads either without breaking aliasing
// rules, and compiles to one load).
inline const void* chase(const void* start, std::int64_t steps) {
  const void* p = start;
  for (std::int64_t i = 0; i < steps; ++i) std::memcpy(&p, p, sizeof p);
  return p;
}

}  // namespace gpubench::kernels
