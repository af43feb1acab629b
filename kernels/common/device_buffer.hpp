#pragma once
// One device allocation (RAII), counted into its owner's total, for the models that run on a
// CUDA device (kernels/train/gpu_model, kernels/infer/gpu_engine). Host code over the CUDA
// runtime API; no harness dependency.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpubench::kernels {

// cudaMalloc failed for lack of memory (the caller turns it into a skip). Everything allocated
// so far is released by the destructors.
struct DeviceOutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

class DeviceBuf {
 public:
  DeviceBuf() = default;
  DeviceBuf(std::size_t bytes, std::int64_t& total) {
    if (bytes == 0) return;
    const cudaError_t e = cudaMalloc(&p_, bytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear the (non-sticky) error
      throw DeviceOutOfMemory("out of device memory allocating " + std::to_string(bytes) + " bytes");
    }
    cuda_check(e, "cudaMalloc");
    bytes_ = bytes;
    total += static_cast<std::int64_t>(bytes);
  }
  ~DeviceBuf() {
    if (p_) cudaFree(p_);
  }
  DeviceBuf(DeviceBuf&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuf& operator=(DeviceBuf&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuf(const DeviceBuf&) = delete;
  DeviceBuf& operator=(const DeviceBuf&) = delete;
  void* get() const { return p_; }
  float* f() const { return static_cast<float*>(p_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locked host memory (cudaHostAlloc), counted into its owner's total: a step's inputs and
// outputs staged here copy asynchronously at full speed, as a serving engine's do.
class PinnedBuf {
 public:
  PinnedBuf() = default;
  PinnedBuf(std::size_t bytes, std::int64_t& total) {
    if (bytes == 0) return;
    const cudaError_t e = cudaHostAlloc(&p_, bytes, cudaHostAllocDefault);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw DeviceOutOfMemory("out of pinned host memory allocating " + std::to_string(bytes) + " bytes");
    }
    cuda_check(e, "cudaHostAlloc");
    bytes_ = bytes;
    total += static_cast<std::int64_t>(bytes);
  }
  ~PinnedBuf() {
    if (p_) cudaFreeHost(p_);
  }
  PinnedBuf(PinnedBuf&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuf& operator=(PinnedBuf&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  PinnedBuf(const PinnedBuf&) = delete;
  PinnedBuf& operator=(const PinnedBuf&) = delete;
  void* get() const { return p_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace gpubench::kernels
