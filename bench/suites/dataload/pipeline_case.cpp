// The end-to-end pipeline case: workers read, decode and augment into batch buffers; the
// measuring thread is the consumer, one training step per run(). Step time, data stall and
// queue depth come from the consumer's timeline; `io` picks DS-Analyzer's three runs
// (memory = synthetic data already prepared, cached, cold). With aug=gpu (CUDA) the workers only
// read and decode; batches carry the decoded images and the consumer augments them on the GPU.
#include <fmt/format.h>

#include <atomic>

#include "bench/core/case.hpp"
#include "bench/core/cuda_portable.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/dataload/dataload.hpp"
#include "bench/suites/dataload/pipeline.hpp"
#include "bench/suites/train/train.hpp"
#include "kernels/common/random.hpp"

namespace gpubench::suites::dataload {
namespace {

namespace kd = kernels::dataload;

class PipelineCase final : public Case {
 public:
  PipelineCase(const DeviceInfo& device, const Config& c)
      : device_(device), c_(c), gpu_augment_(device.is_cuda() && c.gpu_augment) {
    if (device.is_cuda()) clear_last_cuda_error();  // a previous case's non-sticky error is not this case's
  }
  ~PipelineCase() override {
    pipeline_.reset();  // stop the workers before the buffers' memory and consumer go
  }

  std::unique_ptr<Timer> make_timer() override { return std::make_unique<HostTimer>(); }
  void flush_cache() override {}
  void synchronize() override {
    if (consumer_) consumer_->finish();
  }

  void setup() override {
    src_ = &source();
    const Dataset& d = src_->dataset;
    if (c_.shard && !d.has_shard) {
      throw CaseSkipped(fmt::format("dataset {} has no shard (images.shard + images.idx; `gpubench datagen` writes one)",
                                    d.dir.string()));
    }
    n_ = c_.shard ? d.index.entries.size() : d.files.size();
    order_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) order_[i] = i;
    if (c_.random_order) {
      for (std::size_t i = n_; i > 1; --i) std::swap(order_[i - 1], order_[kernels::mix64(99 + i) % i]);
    }
    const double seconds = static_cast<double>(c_.step_us) * 1e-6;
    if (device_.is_cuda()) {
      memory_ = c_.pinned ? pinned_memory() : plain_memory();
      consumer_ = make_gpu_consumer(device_, {seconds, c_.train_grid, c_.pinned, gpu_augment_, c_.dtype, c_.batch});
    } else {
      memory_ = plain_memory();
      consumer_ = c_.train_grid > 0 ? make_host_train_consumer(c_.train_grid, c_.batch, c_.dtype)
                                    : make_host_consumer(seconds);
    }
    const std::vector<fs::path> paths = c_.shard ? std::vector<fs::path>{d.shard_data} : d.files;
    if (c_.io == Io::Cached) {
      for (const fs::path& p : paths) (void)read_file(p);
    } else if (c_.io == Io::Cold) {
      for (const fs::path& p : paths) {
        if (auto why = evict(p); why && cold_note_.empty()) cold_note_ = *why;
      }
    }
    workers_.resize(static_cast<std::size_t>(c_.workers));
    for (auto& w : workers_) w = std::make_unique<Worker>();
    if (c_.shard) {
      for (auto& w : workers_) w->shard = std::make_unique<RangeFile>(d.shard_data, to_io_mode(c_.io == Io::Memory ? Io::Cached : c_.io));
    }
    PipelineConfig pc{c_.workers, c_.prefetch,
                      gpu_augment_ ? decoded_batch_bytes() : static_cast<std::size_t>(c_.batch) * c_.sample_bytes()};
    Pipeline::Fill fill;
    if (c_.io == Io::Memory) {
      fill = [](HostBatch&, int) {};  // synthetic: the batches are already prepared
    } else {
      fill = [this](HostBatch& b, int worker) { fill_batch(b, *workers_[static_cast<std::size_t>(worker)]); };
    }
    pipeline_ = std::make_unique<Pipeline>(pc, *memory_, std::move(fill));
    if (c_.io == Io::Memory) {
      for (HostBatch* b : pipeline_->buffers()) fill_batch(*b, *workers_.front());
      cursor_ = 0;
      corrupt_ = 0;
    }
    pipeline_->start();
    clock_ = StepClock();
  }

  // Three batches through the pipeline and the consumer, each held until checked: the
  // consumer's checksum of the tensors it took against the producer's (aug=gpu: against the
  // host's of the GPU's augmented tensors, whose sampled values are checked against the
  // reference on the decoded images the batch carried), and a train consumer's step.
  Verification verify() override {
    Verification v;
    v.method = gpu_augment_ ? "3 batches: 64 sampled values of every GPU-augmented sample against the double-precision "
                              "reference on the decoded images, and the consumer's checksum of the augmented batch"
                            : "3 batches: the consumer's checksum against the producer's";
    if (c_.train_grid > 0) v.method += "; the train step's pooled inputs against the host's, and a finite loss";
    v.passed = true;
    kd::AugmentCheck values;
    for (int i = 0; i < 3 && v.passed; ++i) {
      double wait = 0;
      int depth = 0;
      HostBatch* b = pipeline_->next(wait, depth);
      consumer_->consume(*b);
      consumer_->finish();
      const void* tensors = b->data;
      unsigned long long want = b->checksum;
      std::vector<std::uint8_t> augmented;
      if (gpu_augment_) {
        if (!consumer_->last_augmented(augmented)) throw std::logic_error("pipeline: the consumer did not augment");
        const kd::DecodedBatch t = kd::decoded_batch(b->data, c_.batch);
        for (int s = 0; s < b->samples; ++s) {
          kd::check_augmented({t.pixels + t.offsets[s], t.widths[s], t.heights[s]}, t.crops[s], c_.dtype,
                              augmented.data() + static_cast<std::size_t>(s) * c_.sample_bytes(), 64,
                              static_cast<std::uint64_t>(s), values);
        }
        tensors = augmented.data();
        want = kd::batch_checksum(tensors, static_cast<std::int64_t>(augmented.size() / 4));
      }
      const unsigned long long got = consumer_->last_checksum();
      const std::string training = consumer_->check_training(tensors, b->samples);
      pipeline_->give_back(b);
      ++v.checked;
      if (!values.passed()) {
        v.passed = false;
        v.detail = values.first_mismatch;
      } else if (got != want) {
        v.passed = false;
        v.detail = fmt::format("batch {}: the consumer's checksum {:x}, expected {:x}", i, got, want);
      } else if (!training.empty()) {
        v.passed = false;
        v.detail = fmt::format("batch {}: {}", i, training);
      }
    }
    v.checked += values.checked;
    v.max_error = values.max_error;
    return v;
  }

  void run() override {
    const double t0 = clock_.now();
    double wait = 0;
    int depth = 0;
    HostBatch* b = pipeline_->next(wait, depth);
    consumer_->consume(*b);
    batch_bytes_.push_back(static_cast<double>(b->bytes));
    pipeline_->give_back(b);
    steps_.push_back({t0, wait, clock_.now() - t0, depth});
  }

  Metrics metrics() const override {
    // A train consumer's model FLOPs per step: TFLOP/s and % of peak show what the input
    // pipeline leaves of the model's speed.
    Metrics m = c_.train_grid > 0 ? train::step_metrics(train_consumer_model(c_.train_grid, c_.batch),
                                                        device_.is_cuda() ? train::Precision::BF16Amp : train::Precision::FP32)
                                  : Metrics{};
    m.items = static_cast<double>(c_.batch);
    m.items_unit = "samples";
    return m;
  }

  nlohmann::ordered_json details(std::int64_t measured_runs) override {
    consumer_->finish();
    const std::size_t keep = std::min(steps_.size(), static_cast<std::size_t>(std::max<std::int64_t>(measured_runs, 1)));
    const std::vector<StepRecord> measured(steps_.end() - static_cast<std::ptrdiff_t>(keep), steps_.end());
    const StallStats s = stall_stats(measured);
    nlohmann::ordered_json j;
    j["consumer"] = consumer_->describe();
    if (c_.train_grid == 0) j["consumer_step_s"] = static_cast<double>(c_.step_us) * 1e-6;
    j["augment"] = gpu_augment_ ? "gpu" : "cpu";
    // What each step copies to the device: the augmented tensors, or the decoded images (aug=gpu).
    double bytes = 0;
    for (std::size_t i = batch_bytes_.size() - keep; i < batch_bytes_.size(); ++i) bytes += batch_bytes_[i];
    j["mean_batch_bytes"] = keep > 0 ? bytes / static_cast<double>(keep) : 0.0;
    j["steps"] = s.steps;
    j["mean_step_s"] = s.mean_step_s;
    j["samples_per_s"] = s.total_s > 0 ? static_cast<double>(s.steps) * c_.batch / s.total_s : 0;
    j["data_stall_share"] = s.stall_share;
    j["mean_wait_s"] = s.mean_wait_s;
    j["stalled_steps"] = s.stalled_steps;
    j["queue_depth"] = queue_depth_summary(measured);
    j["queue_capacity"] = c_.prefetch;
    j["corrupt_skipped"] = corrupt_.load();
    if (c_.io == Io::Cold) {
      j["cold_cache"] = {{"method", "posix_fadvise(POSIX_FADV_DONTNEED) after every read"}, {"effective", cold_note_.empty()}};
      if (!cold_note_.empty()) j["cold_cache"]["note"] = cold_note_;
    }
    j["dataset"] = source_json(*src_);
    return j;
  }

 private:
  struct Worker {
    SampleWorker sample;
    ReadBuffer buffer;
    std::unique_ptr<RangeFile> shard;
  };

  // The first size of the decoded batch buffers: the table and `batch` images as large as the
  // largest of the in-memory subset's at this scale (from their headers); a batch of larger
  // images grows its buffer (SampleWorker::decode_into).
  std::size_t decoded_batch_bytes() const {
    JpegDecoder decoder;
    std::size_t largest = 0;
    for (const std::string& bytes : src_->encoded) {
      int w = 0, h = 0;
      if (!decoder.header(bytes.data(), bytes.size(), w, h)) continue;
      largest = std::max(largest, static_cast<std::size_t>(scaled_size(w, c_.scale)) * scaled_size(h, c_.scale) * 3);
    }
    return kd::decoded_batch_layout(c_.batch).pixels + static_cast<std::size_t>(c_.batch) * largest;
  }

  // One batch: samples in the pipeline's order; a sample whose read comes up short or whose
  // JPEG does not decode is counted and replaced by the next one.
  void fill_batch(HostBatch& b, Worker& w) {
    b.samples = 0;
    b.corrupt = 0;
    if (gpu_augment_) start_decoded_batch(b, c_.batch);
    const IoMode mode = to_io_mode(c_.io == Io::Memory ? Io::Cached : c_.io);
    std::size_t misses = 0;
    while (b.samples < c_.batch) {
      const std::uint64_t k = cursor_++;
      const std::size_t i = order_[static_cast<std::size_t>(k % n_)];
      ReadResult r;
      if (c_.shard) {
        const ShardEntry& e = src_->dataset.index.entries[i];
        r = w.shard->read(e.offset, e.length, w.buffer);
      } else {
        r = read_whole_file(src_->dataset.files[i], mode, w.buffer);
      }
      bool ok = r.ok;
      if (ok && gpu_augment_) {
        ok = w.sample.decode_into(r.data, r.size, c_.scale, k, c_.batch, b, *memory_);
      } else if (ok) {
        void* out = static_cast<std::uint8_t*>(b.data) + static_cast<std::size_t>(b.samples) * c_.sample_bytes();
        ok = w.sample.decode_augment(r.data, r.size, c_.scale, k, c_.dtype, out);
      }
      if (ok) {
        ++b.samples;
        misses = 0;
        continue;
      }
      ++b.corrupt;
      ++corrupt_;
      if (++misses > n_) {
        throw std::runtime_error(fmt::format("no sample of dataset {} reads and decodes", src_->dataset.dir.string()));
      }
    }
    // The decoded images' checksum would prove nothing of the augmented batch the consumer
    // reads; aug=gpu is checked on the augmented batch itself (verify).
    if (!gpu_augment_) b.checksum = kd::batch_checksum(b.data, static_cast<std::int64_t>(b.bytes / 4));
  }

  DeviceInfo device_;
  Config c_;
  bool gpu_augment_;
  const Source* src_ = nullptr;
  std::size_t n_ = 0;
  std::vector<std::size_t> order_;
  std::unique_ptr<BatchMemory> memory_;
  std::unique_ptr<Consumer> consumer_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<Pipeline> pipeline_;
  std::atomic<std::uint64_t> cursor_{0};
  std::atomic<std::int64_t> corrupt_{0};
  StepClock clock_;
  std::vector<StepRecord> steps_;
  std::vector<double> batch_bytes_;  // per step, beside steps_
  std::string cold_note_;
};

}  // namespace

std::unique_ptr<Case> make_pipeline_case(const DeviceInfo& device, const Config& c) {
  return std::make_unique<PipelineCase>(device, c);
}

}  // namespace gpubench::suites::dataload
