#pragma once
// Base for GPU cases: the case's own stream, CUDA-event timing on that stream, and an L2
// flush (a memset over twice the L2 size) queued on the same stream before a cold sample.
#include <memory>

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
  DeviceInfo device_;
  cuda::ScopedDevice current_;  // the case's device stays current while the case lives
  cuda::Stream stream_;
  cuda::DeviceBuffer flush_buffer_;  // allocated on first cold flush
};

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
