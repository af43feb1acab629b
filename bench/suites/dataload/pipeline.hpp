#pragma once
// The end-to-end input pipeline: a pool of worker threads fills batch buffers and hands them to
// the consumer through a bounded queue (`prefetch` batches deep); the consumer runs one
// training step per batch and gives the buffer back. The consumer is an interface, so the
// train suite's step can replace the calibrated stand-ins (a host computation of a chosen
// duration on the CPU, a kernel of a chosen duration on the GPU).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/suites/dataload/queue.hpp"
#include "bench/suites/dataload/stall.hpp"
#include "kernels/dataload/augment.hpp"
#include "kernels/train/model_config.hpp"

namespace gpubench::suites::dataload {

// One batch buffer: the collated samples (NCHW, `bytes` long), or with augmentation on the GPU
// the decoded images (kernels::dataload::DecodedBatch, `bytes` long: it varies by batch), and
// what the producer knows of it.
struct HostBatch {
  void* data = nullptr;
  std::size_t capacity = 0;  // allocated bytes at `data`
  std::size_t bytes = 0;     // the batch's bytes (what a GPU consumer copies)
  int samples = 0;                  // samples filled
  unsigned long long checksum = 0;  // batch_checksum() of the data, by the producer
  std::int64_t corrupt = 0;         // samples skipped while filling it (corrupt or short)
};

// Owns the memory of the batch buffers (pinned on a GPU host, plain on the CPU).
class BatchMemory {
 public:
  virtual ~BatchMemory() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* p) = 0;
};
std::unique_ptr<BatchMemory> plain_memory();

// One training step over a batch. consume() returns when the batch buffer may be reused (a GPU
// consumer has copied it; its compute may still run). finish() waits for all queued work.
class Consumer {
 public:
  virtual ~Consumer() = default;
  virtual void consume(const HostBatch& batch) = 0;
  virtual void finish() {}
  // The checksum the consumer computed of the last batch it finished (for verification).
  virtual unsigned long long last_checksum() = 0;
  // A consumer that augments (decoded batches, aug=gpu): the last batch's augmented tensors,
  // copied to `out`. False for one that takes batches as they come.
  virtual bool last_augmented(std::vector<std::uint8_t>& /*out*/) { return false; }
  // A consumer that trains (consumer=train-*): checks its last step against `tensors`, a host
  // copy of the augmented batch it took (`samples` tensors): its input features against a
  // host pooling of them, and a finite loss. What is wrong, or empty; empty for the others.
  virtual std::string check_training(const void* /*tensors*/, int /*samples*/) { return {}; }
  virtual std::string describe() const = 0;
};

// Spins on the host for `seconds` per step after summing the batch's checksum words.
std::unique_ptr<Consumer> make_host_consumer(double seconds);

// consumer=train-*: one training step of the train suite's mlp classifier per batch, its
// inputs the batch's images mean-pooled to 3 x grid x grid features (kernels/dataload
// pool_features_host): 4 layers of that width, 1000 classes, synthetic labels.
kernels::train::ModelConfig train_consumer_model(int grid, int batch);
inline constexpr std::uint64_t kTrainConsumerSeed = 5;  // its initial parameters and labels
// The host one (the CPU reference model, fp32, OpenBLAS matmuls), after the checksum.
std::unique_ptr<Consumer> make_host_train_consumer(int grid, int batch, kernels::dataload::OutType type);
// What a train consumer checks of its last step (Consumer::check_training): `features` it
// trained on against a host pooling of `tensors`, and `loss`.
std::string check_training_step(const std::vector<float>& features, double loss, const void* tensors,
                                kernels::dataload::OutType type, int samples, int grid);
std::string describe_train_consumer(int grid, int batch, const std::string& where);

struct PipelineConfig {
  int workers = 1;
  int prefetch = 2;  // ready batches the queue holds
  std::size_t batch_bytes = 0;
};

class Pipeline {
 public:
  // fill(batch, worker): the producer's work for one batch on worker thread `worker`.
  using Fill = std::function<void(HostBatch&, int)>;
  Pipeline(const PipelineConfig& config, BatchMemory& memory, Fill fill);
  ~Pipeline();  // stops the workers
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  void start();
  // The next ready batch (blocks); the time spent blocked and the queue depth found.
  HostBatch* next(double& wait_s, int& depth);
  void give_back(HostBatch* batch);
  void stop();
  // Every buffer (to prefill them in synthetic mode before start()).
  std::vector<HostBatch*> buffers();
  // The first exception a worker threw (empty if none); the workers stop after one.
  std::string error() const;

 private:
  void work(int worker);

  PipelineConfig config_;
  BatchMemory& memory_;
  Fill fill_;
  std::vector<std::unique_ptr<HostBatch>> batches_;
  BoundedQueue<HostBatch*> free_, ready_;
  std::vector<std::thread> threads_;
  mutable std::mutex error_mutex_;
  std::string error_;
  bool exhausted_ = false;  // the first error was resource exhaustion (bench/core/resources.hpp)
};

// The consumer loop's bookkeeping: one StepRecord per step.
class StepClock {
 public:
  StepClock() : origin_(std::chrono::steady_clock::now()) {}
  double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count(); }

 private:
  std::chrono::steady_clock::time_point origin_;
};

}  // namespace gpubench::suites::dataload
