#pragma once
// Timers measure one sample: a batch of runs of a case's work.
#include <chrono>

namespace gpubench {

class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  // Seconds since start(). A device timer waits for the work queued since start().
  virtual double stop() = 0;
  virtual const char* kind() const = 0;  // recorded in results: "host_steady", "cuda_event"
};

// std::chrono::steady_clock: for CPU cases, whose work is done when run() returns.
class HostTimer final : public Timer {
 public:
  void start() override { start_ = std::chrono::steady_clock::now(); }
  double stop() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  const char* kind() const override { return "host_steady"; }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gpubench
