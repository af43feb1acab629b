#include "kernels/memory/host_pool.hpp"

#include <immintrin.h>
#include <sched.h>

namespace gpubench::kernels {

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned h = std::thread::hardware_concurrency();
  return h > 0 ? static_cast<int>(h) : 1;
}

HostPool& HostPool::shared() {
  static HostPool pool(usable_cpus());
  return pool;
}

HostPool::HostPool(int threads) {
  try {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
  } catch (...) {
    // A thread that cannot be created (a thread or memory limit): the ones that were must be
    // joined before the exception leaves, or their std::thread destructors would terminate.
    stop_workers();
    throw;
  }
}

HostPool::~HostPool() { stop_workers(); }

void HostPool::stop_workers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& w : workers_) w.join();
  workers_.clear();
}

namespace {

// Spins until done() or `limit` has passed; true when done() became true.
template <typename Done>
bool spin_until(Done done, std::chrono::microseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      _mm_pause();
    }
    if (std::chrono::steady_clock::now() >= end) return done();
  }
}

}  // namespace

void HostPool::run(const std::function<void(int)>& f) {
  {
    std::lock_guard lock(mutex_);
    job_ = &f;
    worker_error_ = nullptr;
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_.notify_all();
  // The workers read `f` until they are done: an exception here must not leave before they are.
  std::exception_ptr error;
  try {
    f(0);
  } catch (...) {
    error = std::current_exception();
  }
  auto finished = [this] { return pending_.load(std::memory_order_acquire) == 0; };
  if (!spin_until(finished, kSpin)) {
    std::unique_lock lock(mutex_);
    done_.wait(lock, finished);
  }
  if (!error) {
    std::lock_guard lock(mutex_);
    error = worker_error_;
  }
  if (error) std::rethrow_exception(error);
}

void HostPool::work(int t) {
  std::uint64_t seen = 0;
  while (true) {
    auto started = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    if (!spin_until(started, kSpin)) {
      std::unique_lock lock(mutex_);
      start_.wait(lock, [&] { return stop_ || started(); });
      if (stop_) return;
    }
    seen = generation_.load(std::memory_order_acquire);
    const std::function<void(int)>* job = job_;
    try {
      (*job)(t);
    } catch (...) {  // carried to run()'s caller: an exception leaving a thread ends the process
      std::lock_guard lock(mutex_);
      if (!worker_error_) worker_error_ = std::current_exception();
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard lock(mutex_);  // the caller checks `finished` under this lock: no lost wake-up
      done_.notify_one();
    }
  }
}

std::pair<std::size_t, std::size_t> HostPool::slice(std::size_t n, int t, int threads) {
  const auto T = static_cast<std::size_t>(threads), i = static_cast<std::size_t>(t);
  return {n * i / T, n * (i + 1) / T};
}

}  // namespace gpubench::kernels
