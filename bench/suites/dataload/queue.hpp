#pragma once
// A bounded blocking queue: producers block while it is full (back-pressure: workers never run
// more than `capacity` batches ahead of the consumer), the consumer blocks while it is empty.
// close() wakes everyone; push then fails and pop drains what is left, then returns nullopt.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace gpubench::suites::dataload {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity > 0 ? capacity : 1) {}

  bool push(T value) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(value));
    not_empty_.notify_one();
    return true;
  }

  // `depth`, when given, receives the number of items queued when this pop began (before
  // waiting): the queue depth the consumer found.
  std::optional<T> pop(std::size_t* depth = nullptr) {
    std::unique_lock lock(mutex_);
    if (depth) *depth = items_.size();
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T v = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return v;
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  std::size_t capacity() const { return capacity_; }

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace gpubench::suites::dataload
