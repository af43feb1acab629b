#include "cuda.hpp"

#include <fmt/format.h>

#include "cuda_case.hpp"
#include "errors.hpp"
#include "gpubench/version.hpp"

namespace gpubench {

int cuda_device_count() {
  if (assumed_cuda_devices() > 0) return assumed_cuda_devices();
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

int cuda_build_runtime_version() { return CUDART_VERSION; }

namespace cuda {

void check(cudaError_t status, const char* what, const char* file, int line) {
  if (status == cudaSuccess) return;
  // Clear a non-sticky error so the next case starts clean; sticky errors stay sticky.
  (void)cudaGetLastError();
  std::string msg = fmt::format("{} failed: {} ({}) at {}:{}", what, cudaGetErrorString(status),
                                cudaGetErrorName(status), file, line);
  if (status == cudaErrorMemoryAllocation) throw CaseSkipped("out of device memory: " + msg);
  if (is_missing_device_code(status)) {
    int device = 0, major = 0, minor = 0;
    (void)cudaGetDevice(&device);
    (void)cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    (void)cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    (void)cudaGetLastError();
    throw CaseSkipped(missing_device_code_reason(major, minor, kCudaArchitectures) + " (" + msg + ")");
  }
  throw CudaError(msg);
}

ScopedDevice::ScopedDevice(int ordinal) {
  int previous = 0;
  GPUBENCH_CUDA_CHECK(cudaGetDevice(&previous));
  GPUBENCH_CUDA_CHECK(cudaSetDevice(ordinal));
  previous_ = previous;
  ok_ = true;
}
ScopedDevice::ScopedDevice(int ordinal, std::nothrow_t) noexcept {
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) {
    (void)cudaGetLastError();  // clears a non-sticky error; a sticky one stays
    return;
  }
  previous_ = previous;
  ok_ = cudaSetDevice(ordinal) == cudaSuccess;
  if (!ok_) (void)cudaGetLastError();
}
ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

Stream::Stream() { GPUBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
Stream::~Stream() {
  if (stream_) (void)cudaStreamDestroy(stream_);
}
void Stream::synchronize() const { GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

Event::Event() { GPUBENCH_CUDA_CHECK(cudaEventCreate(&event_)); }
Event::~Event() {
  if (event_) (void)cudaEventDestroy(event_);
}
void Event::record(cudaStream_t stream) { GPUBENCH_CUDA_CHECK(cudaEventRecord(event_, stream)); }
float Event::elapsed_ms(const Event& start, const Event& end) {
  GPUBENCH_CUDA_CHECK(cudaEventSynchronize(end.event_));
  float ms = 0.0f;
  GPUBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, end.event_));
  return ms;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) GPUBENCH_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) (void)cudaFree(ptr_);
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) (void)cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

}  // namespace cuda
}  // namespace gpubench
