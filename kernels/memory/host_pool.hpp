#pragma once
// A fixed pool of host threads, one per CPU the process may run on (its affinity mask), for the
// CPU ceilings. A waiting thread (a worker between jobs, the caller at the join) spins for at
// most kSpin, so back-to-back runs pay no wake-up, then blocks on a condition variable, so an
// idle pool leaves the CPUs to the harness and to whatever else shares the host. (OpenMP's
// default, long spin-waits made the all-core figures on a busy 2-vCPU machine several times too
// low; blocking at once made every run pay a wake-up of the virtual CPUs.)
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpubench::kernels {

class HostPool {
 public:
  // The process-wide pool (created on first use).
  static HostPool& shared();
  explicit HostPool(int threads);
  ~HostPool();
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs f(t) for t = 0 .. threads()-1, t = 0 on the calling thread, and returns when all
  // calls have returned. Not reentrant. When calls throw, run() still waits for every call, then
  // rethrows one exception (the calling thread's, else the first worker's); the pool stays usable.
  void run(const std::function<void(int)>& f);

  // The part [begin, end) of n items that thread t of `threads` handles (contiguous, static).
  static std::pair<std::size_t, std::size_t> slice(std::size_t n, int t, int threads);

 private:
  void stop_workers();  // ends and joins the workers (destructor, failed constructor)
  void work(int t);

  static constexpr std::chrono::microseconds kSpin{100};

  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(int)>* job_ = nullptr;  // written before generation_ is bumped
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::exception_ptr worker_error_;  // the first exception a worker's call threw in this run (mutex_)
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// CPUs in this process's affinity mask (at least 1).
int usable_cpus();

}  // namespace gpubench::kernels
