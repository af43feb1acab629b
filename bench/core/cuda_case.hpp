#pragma once
// Base for GPU cases: the case's own stream, CUDA-event timing on that stream, and an L2
// flush (a kernel reading twice the L2 size, which leaves only clean lines in L2) queued on
// the same stream before a cold sample. Constructing one clears the runtime's last error, so
// a previous case's non-sticky error cannot fail this one (cuda_case.cpp says what a sticky
// error does).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "case.hpp"
#include "cuda.hpp"
#include "device.hpp"

namespace gpubench {

class CudaCase : public Case {
 public:
  explicit CudaCase(const DeviceInfo& device);
  std::unique_ptr<Timer> make_timer() override;
  void flush_cache() override;
  void synchronize() override { stream_.synchronize(); }

 protected:
  cudaStream_t stream() const { return stream_.get(); }
  const DeviceInfo& device() const { return device_; }

 private:
  struct LastErrorCleared {
    LastErrorCleared();
  };
  LastErrorCleared cleared_;  // first member: runs before any CUDA call of the case
  DeviceInfo device_;
  cuda::ScopedDevice current_;  // the case's device stays current while the case lives
  cuda::Stream stream_;
  cuda::DeviceBuffer flush_buffer_;  // allocated on first cold flush
};

// clear_last_cuda_error(): cuda_portable.hpp (included through cuda.hpp).

// Whether `status` says that the binary has no code this GPU can run (a build for `80-real;90`
// on a Volta, say): such a case is skipped with missing_device_code_reason, not failed.
// Device code that exists but lacks an architecture's instructions (fp8 mma.sync in sm_80 code
// running on an sm_89 GPU) is not a launch error: the cases that depend on it check the loaded
// code's architecture themselves (kernels/common/device_code.hpp).
bool is_missing_device_code(cudaError_t status);
std::string missing_device_code_reason(int cc_major, int cc_minor, const std::string& built_archs);

// The cold flush's buffer size for an L2 of `l2_bytes` (twice it, at least 16 MiB, a multiple of
// 16 bytes) and its read kernel's grid.
std::size_t l2_flush_bytes(std::int64_t l2_bytes);
unsigned l2_flush_grid(int sm_count);

// Times a batch with events recorded on `stream` around it.
class CudaEventTimer final : public Timer {
 public:
  explicit CudaEventTimer(cudaStream_t stream) : stream_(stream) {}
  void start() override { start_.record(stream_); }
  double stop() override {
    stop_.record(stream_);
    return cuda::Event::elapsed_ms(start_, stop_) * 1e-3;
  }
  const char* kind() const override { return "cuda_event"; }

 private:
  cudaStream_t stream_;
  cuda::Event start_, stop_;
};

}  // namespace gpubench
