#pragma once
// A background thread calling a function at a fixed interval: once at start(), then every
// interval, and once more at stop(), so even a case shorter than the interval has a first and a
// last reading. Used by the NVML telemetry and the host sampler.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>

namespace gpubench::profilers {

class PeriodicSampler {
 public:
  PeriodicSampler() = default;
  // Never throws (an exception leaving a destructor ends the run): a last reading that fails is
  // left out.
  ~PeriodicSampler() {
    try {
      stop();
    } catch (...) {
    }
  }
  PeriodicSampler(const PeriodicSampler&) = delete;
  PeriodicSampler& operator=(const PeriodicSampler&) = delete;

  void start(std::chrono::microseconds interval, std::function<void()> sample) {
    stop();
    sample_ = std::move(sample);
    stopping_ = false;
    sample_();
    thread_ = std::thread([this, interval] {
      std::unique_lock<std::mutex> lock(mutex_);
      // wait_for returns true when stop() asked: a stop ends the wait at once.
      while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
        lock.unlock();
        sample_();
        lock.lock();
      }
    });
  }

  // Takes the last reading on the calling thread after the sampling thread has ended.
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    sample_();
  }

  bool running() const { return thread_.joinable(); }

 private:
  std::function<void()> sample_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

// Counts the harness's phase nesting so an instrument can act on the top-level "measure"
// phase only (a suite's own phases nest inside it).
class MeasureTracker {
 public:
  void reset() { depth_ = 0, in_measure_ = false; }
  // True when this begins the harness's measure phase.
  bool begin(const char* phase) {
    ++depth_;
    if (depth_ == 1 && std::string_view(phase) == "measure") return in_measure_ = true;
    return false;
  }
  // True when this ends the harness's measure phase.
  bool end() {
    const bool ends = depth_ == 1 && in_measure_;
    if (ends) in_measure_ = false;
    if (depth_ > 0) --depth_;
    return ends;
  }

 private:
  int depth_ = 0;
  bool in_measure_ = false;
};

}  // namespace gpubench::profilers
