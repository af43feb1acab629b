#pragma once
// Host-side helpers the GPU cases of the memory suite share: pinned host buffers, timing-free
// events for fork/join between streams, a byte pattern for copy sources, sampled read-back.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "bench/core/case.hpp"
#include "bench/core/cuda.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/memory/memory.hpp"
#include "kernels/common/random.hpp"

namespace gpubench::suites::memory {

// cudaHostAlloc'd memory (page-locked; mapped into the device address space when asked).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(std::size_t bytes, unsigned flags) : bytes_(bytes) {
    GPUBENCH_CUDA_CHECK(cudaHostAlloc(&ptr_, bytes, flags));
  }
  ~PinnedBuffer() {
    if (ptr_) (void)cudaFreeHost(ptr_);
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  unsigned char* get() const { return static_cast<unsigned char*>(ptr_); }
  // The device's address of a mapped buffer.
  void* device_pointer() const {
    void* d = nullptr;
    GPUBENCH_CUDA_CHECK(cudaHostGetDevicePointer(&d, ptr_, 0));
    return d;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Ordinary (pageable) host memory, every page touched.
inline std::unique_ptr<unsigned char[]> pageable(std::size_t bytes) {
  try {
    auto p = std::make_unique<unsigned char[]>(bytes);  // value-initialized: pages touched
    return p;
  } catch (const std::bad_alloc&) {
    throw CaseSkipped(fmt::format("out of host memory for {} bytes", bytes));
  }
}

// An event without timing, for ordering work between streams.
class SyncEvent {
 public:
  SyncEvent() { GPUBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  ~SyncEvent() {
    if (e_) (void)cudaEventDestroy(e_);
  }
  SyncEvent(const SyncEvent&) = delete;
  SyncEvent& operator=(const SyncEvent&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// The byte at offset i of a copy source with this seed.
inline unsigned char pattern_byte(std::uint64_t seed, std::size_t i) {
  return static_cast<unsigned char>(kernels::mix64(seed * 0x9E37u + i / 8) >> (8 * (i % 8)));
}

inline void fill_pattern(unsigned char* dst, std::size_t bytes, std::uint64_t seed) {
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    const std::uint64_t w = kernels::mix64(seed * 0x9E37u + i / 8);
    std::memcpy(dst + i, &w, 8);  // little-endian: byte k of the word is pattern_byte(seed, i + k)
  }
  for (; i < bytes; ++i) dst[i] = pattern_byte(seed, i);
}

// Checks sampled bytes of a buffer (host or device: read through cudaMemcpy, which UVA routes)
// against the pattern.
inline Verification check_pattern(const void* buffer, std::size_t bytes, std::uint64_t seed, const char* what) {
  Verification v;
  v.passed = true;
  v.method = "sampled bytes vs the source pattern";
  for (std::size_t i : sample_indices(bytes, 4096)) {
    unsigned char got = 0;
    GPUBENCH_CUDA_CHECK(cudaMemcpy(&got, static_cast<const unsigned char*>(buffer) + i, 1, cudaMemcpyDefault));
    ++v.checked;
    if (got != pattern_byte(seed, i)) {
      v.passed = false;
      v.max_error = 2;
      v.detail = fmt::format("{} byte {} is {:#04x}, expected {:#04x}", what, i, got, pattern_byte(seed, i));
      return v;
    }
  }
  return v;
}

}  // namespace gpubench::suites::memory
