#pragma once
// Host-side CUDA runtime helpers: error checks that throw, and RAII owners for streams,
// events and device buffers. Plain C++ (compiled by the host compiler against cudart).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpubench::cuda {

// A CUDA error that ends the case (not the run). Out-of-memory errors are thrown as
// CaseSkipped instead, so the run records the case as skipped and continues.
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t status, const char* what, const char* file, int line);

#define GPUBENCH_CUDA_CHECK(expr) ::gpubench::cuda::check((expr), #expr, __FILE__, __LINE__)

// Makes `ordinal` current for the lifetime of the guard and restores the previous device.
class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal);  // throws CudaError when it cannot
  // For destructors and other code that must not throw: after a sticky error (or without a
  // driver) CUDA refuses every call, and an exception leaving a destructor ends the whole run
  // (std::terminate). Tries, and says through ok() whether `ordinal` is now current.
  ScopedDevice(int ordinal, std::nothrow_t) noexcept;
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  bool ok() const { return ok_; }

 private:
  int previous_ = -1;  // -1: unknown, nothing to restore
  bool ok_ = false;
};

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
