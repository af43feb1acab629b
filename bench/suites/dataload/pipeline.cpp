#include "bench/suites/dataload/pipeline.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "bench/core/errors.hpp"
#include "bench/core/resources.hpp"
#include "kernels/dataload/augment.hpp"

namespace gpubench::suites::dataload {
namespace {

class PlainMemory final : public BatchMemory {
 public:
  void* allocate(std::size_t bytes) override {
    void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    return p;
  }
  void release(void* p) override { std::free(p); }
};

class HostConsumer final : public Consumer {
 public:
  explicit HostConsumer(double seconds) : seconds_(seconds) {}
  void consume(const HostBatch& batch) override {
    const auto start = std::chrono::steady_clock::now();
    checksum_ = kernels::dataload::batch_checksum(batch.data, static_cast<std::int64_t>(batch.bytes / 4));
    const auto end = start + std::chrono::duration<double>(seconds_);
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  unsigned long long last_checksum() override { return checksum_; }
  std::string describe() const override { return fmt::format("host computation of {:.6g} s per batch", seconds_); }

 private:
  double seconds_;
  unsigned long long checksum_ = 0;
};

}  // namespace

std::unique_ptr<BatchMemory> plain_memory() { return std::make_unique<PlainMemory>(); }
std::unique_ptr<Consumer> make_host_consumer(double seconds) { return std::make_unique<HostConsumer>(seconds); }

Pipeline::Pipeline(const PipelineConfig& config, BatchMemory& memory, Fill fill)
    : config_(config),
      memory_(memory),
      fill_(std::move(fill)),
      free_(static_cast<std::size_t>(config.prefetch + config.workers + 2)),
      ready_(static_cast<std::size_t>(config.prefetch)) {
  // Enough buffers that every worker can fill one while the queue is full and the consumer
  // holds one (or two, on a GPU with a copy in flight).
  const int count = config.prefetch + config.workers + 2;
  for (int i = 0; i < count; ++i) {
    auto b = std::make_unique<HostBatch>();
    b->capacity = b->bytes = config.batch_bytes;
    b->data = memory_.allocate(config.batch_bytes);
    free_.push(b.get());
    batches_.push_back(std::move(b));
  }
}

Pipeline::~Pipeline() {
  stop();
  for (auto& b : batches_) memory_.release(b->data);
}

std::vector<HostBatch*> Pipeline::buffers() {
  std::vector<HostBatch*> out;
  for (auto& b : batches_) out.push_back(b.get());
  return out;
}

void Pipeline::start() {
  for (int w = 0; w < config_.workers; ++w) threads_.emplace_back([this, w] { work(w); });
}

void Pipeline::work(int worker) {
  while (true) {
    std::optional<HostBatch*> b = free_.pop();
    if (!b) return;
    try {
      fill_(**b, worker);
    } catch (const std::exception& e) {
      {
        std::lock_guard lock(error_mutex_);
        if (error_.empty()) {
          error_ = e.what();
          exhausted_ = resource_exhaustion(e).has_value();  // memory or threads ran out: a skip
        }
      }
      ready_.close();
      free_.close();
      return;
    }
    if (!ready_.push(*b)) return;
  }
}

HostBatch* Pipeline::next(double& wait_s, int& depth) {
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t d = 0;
  std::optional<HostBatch*> b = ready_.pop(&d);
  wait_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  depth = static_cast<int>(d);
  if (!b) {
    const std::string e = error();
    bool exhausted = false;
    {
      std::lock_guard lock(error_mutex_);
      exhausted = exhausted_;
    }
    if (exhausted) throw CaseSkipped("pipeline worker: out of resources: " + e);
    throw std::runtime_error(e.empty() ? "the pipeline stopped" : "pipeline worker: " + e);
  }
  return *b;
}

void Pipeline::give_back(HostBatch* batch) { (void)free_.push(batch); }

void Pipeline::stop() {
  free_.close();
  ready_.close();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

std::string Pipeline::error() const {
  std::lock_guard lock(error_mutex_);
  return error_;
}

}  // namespace gpubench::suites::dataload
