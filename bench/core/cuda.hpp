#pragma once
// Host-side CUDA runtime helpers: error checks that throw, and RAII owners for streams,
// events and device buffers. Plain C++ (compiled by the host compiler against cudart). What
// builds without CUDA headers (ScopedDevice, CudaError) is in cuda_portable.hpp.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "bench/core/cuda_portable.hpp"

namespace gpubench::cuda {

void check(cudaError_t status, const char* what, const char* file, int line);

#define GPUBENCH_CUDA_CHECK(expr) ::gpubench::cuda::check((expr), #expr, __FILE__, __LINE__)

class Stream {
 public:
  Stream();  // a non-blocking stream on the current device
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream);
  // Milliseconds between two recorded events; waits for `end`.
  static float elapsed_ms(const Event& start, const Event& end);

 private:
  cudaEvent_t event_ = nullptr;
};

// Untyped device allocation, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace gpubench::cuda
