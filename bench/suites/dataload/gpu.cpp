// The CUDA side of the suite (host code against cudart; kernels in kernels/dataload/):
// augmentation on the GPU, host-to-device copies of batches, pinned batch memory and the
// calibrated consumer kernel of the pipeline. None of it runs without a GPU.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/dataload/dataload.hpp"
#include "bench/suites/dataload/pipeline.hpp"
#include "kernels/common/random.hpp"
#include "kernels/dataload/augment.cuh"
#include "kernels/blas/cublaslt.hpp"
#include "kernels/train/gpu_model.hpp"

namespace gpubench::suites::dataload {
namespace {

namespace kd = kernels::dataload;


class PinnedMemory final : public BatchMemory {
 public:
  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    // Portable: pinned for every device, since a worker thread (no device made current) grows
    // batches for the pipeline's device, whichever it is.
    GPUBENCH_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
    std::memset(p, 0, bytes);
    return p;
  }
  void release(void* p) override { (void)cudaFreeHost(p); }
};

// SM clock cycles per second, from a consumer kernel of a known cycle count timed with events.
double cycles_per_second(cudaStream_t stream, unsigned long long* scratch) {
  const std::int64_t cycles = 20'000'000;
  cuda::Event a, b;
  GPUBENCH_CUDA_CHECK(kd::launch_consumer(nullptr, 0, 1000, scratch, stream));  // warm
  a.record(stream);
  GPUBENCH_CUDA_CHECK(kd::launch_consumer(nullptr, 0, cycles, scratch, stream));
  b.record(stream);
  const double s = cuda::Event::elapsed_ms(a, b) * 1e-3;
  return s > 0 ? static_cast<double>(cycles) / s : 1e9;
}

// The GPU consumer: copy the batch on a copy stream (pinned: asynchronous; pageable: the
// driver stages it), then the consumer kernel on the compute stream after the copy's event.
// consume() returns once the copy is done (the host buffer may be refilled) and the previous
// step's kernel has finished (at most one step in flight beyond the copy: double-buffered).
// With `augment` the batch holds decoded images: the augmentation kernel turns them into the
// batch tensor on the compute stream first, and the step reads that. The step is the calibrated
// kernel (consumer=spin), or with `train_grid` one bf16 training step of the train suite's mlp
// (GpuModel) on the batch's pooled images, after the checksum kernel (zero cycles).
class GpuConsumer final : public Consumer {
 public:
  GpuConsumer(const DeviceInfo& device, const GpuConsumerSpec& spec)
      : current_(device.ordinal), device_(device.ordinal), spec_(spec) {
    GPUBENCH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&checksum_), sizeof(unsigned long long) * 2));
    if (spec.seconds > 0) cycles_ = static_cast<std::int64_t>(spec.seconds * cycles_per_second(compute_.get(), checksum_));
    if (spec.train_grid > 0) {
      const kernels::train::ModelConfig c = train_consumer_model(spec.train_grid, spec.batch);
      model_ = std::make_unique<kernels::train::GpuModel>(c, kernels::train::GpuPrecision::BF16, kTrainConsumerSeed,
                                                          compute_.get());
      model_->upload({kernels::train::make_batch(c, kTrainConsumerSeed)});
      features_ = cuda::DeviceBuffer(static_cast<std::size_t>(c.batch * c.hidden) * sizeof(float));
      // One step now: the model picks its cuBLASLt algorithms on first use, so a GPU without
      // them (bf16 below sm_80) fails here, in setup (a skip), not in the timed steps.
      model_->step(kernels::train::AdamW{});
      compute_.synchronize();
    }
  }
  ~GpuConsumer() override {
    (void)cudaStreamSynchronize(compute_.get());
    (void)cudaFree(checksum_);
  }

  void consume(const HostBatch& batch) override {
    const int k = step_++ % 2;
    // Decoded batches vary in size: a quarter of headroom, so the buffer grows a few times at most.
    if (buffers_[k].bytes() < batch.bytes) buffers_[k] = cuda::DeviceBuffer(batch.bytes + batch.bytes / 4);
    GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(copy_.get(), done_[k].get(), 0));  // the kernel still reading it
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(buffers_[k].get(), batch.data, batch.bytes, cudaMemcpyHostToDevice, copy_.get()));
    copied_[k].record(copy_.get());
    GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(compute_.get(), copied_[k].get(), 0));
    const void* tensor = buffers_[k].get();
    std::size_t tensor_bytes = batch.bytes;
    if (spec_.augment) {
      // Buffers are reallocated only when this slot's previous step (two back) has finished:
      // the previous consume() waited for it.
      tensor_bytes = static_cast<std::size_t>(batch.samples) * kd::out_bytes(spec_.type);
      if (augmented_[k].bytes() < tensor_bytes) augmented_[k] = cuda::DeviceBuffer(tensor_bytes);
      GPUBENCH_CUDA_CHECK(kd::launch_augment(kd::device_batch(buffers_[k].get(), batch.samples), spec_.type,
                                             augmented_[k].get(), kd::kAugmentSize, compute_.get()));
      tensor = augmented_[k].get();
    }
    GPUBENCH_CUDA_CHECK(kd::launch_consumer(tensor, static_cast<std::int64_t>(tensor_bytes / 4), cycles_, checksum_ + k,
                                            compute_.get()));
    tensor_bytes_[k] = tensor_bytes;
    if (model_) {
      GPUBENCH_CUDA_CHECK(kd::launch_pool_features(tensor, spec_.type, batch.samples, spec_.train_grid, features_.as<float>(),
                                                   kd::kAugmentSize, compute_.get()));
      model_->set_inputs(0, features_.as<float>());
      model_->step(kernels::train::AdamW{});
    }
    done_[k].record(compute_.get());
    last_ = k;
    GPUBENCH_CUDA_CHECK(cudaEventSynchronize(copied_[k].get()));
    GPUBENCH_CUDA_CHECK(cudaEventSynchronize(done_[1 - k].get()));
  }
  void finish() override { compute_.synchronize(); }
  unsigned long long last_checksum() override {
    unsigned long long v = 0;
    read_back(&v, checksum_ + last_, sizeof v);
    return v;
  }
  bool last_augmented(std::vector<std::uint8_t>& out) override {
    if (!spec_.augment) return false;
    out.resize(tensor_bytes_[last_]);
    read_back(out.data(), augmented_[last_].get(), out.size());
    return true;
  }
  std::string check_training(const void* tensors, int samples) override {
    if (!model_) return {};
    std::vector<float> features(features_.bytes() / sizeof(float));
    read_back(features.data(), features_.get(), features_.bytes());
    return check_training_step(features, model_->loss(), tensors, spec_.type, samples, spec_.train_grid);
  }
  std::string describe() const override {
    const std::string augment =
        spec_.augment ? fmt::format("GPU augmentation of the decoded images to {} NCHW, then ",
                                    spec_.type == kd::OutType::F32 ? "fp32" : "fp16")
                      : std::string();
    const std::string step =
        model_ ? describe_train_consumer(spec_.train_grid, spec_.batch, fmt::format("on cuda:{} (bf16, fp32 master weights)", device_))
               : fmt::format("GPU kernel of {:.6g} s per batch ({} cycles) on cuda:{}", spec_.seconds, cycles_, device_);
    return fmt::format("{}{}; H2D from {} memory on a copy stream", augment, step, spec_.pinned ? "pinned" : "pageable");
  }

 private:
  // Results of the compute stream, read on it: the legacy default stream a plain cudaMemcpy
  // uses does not wait for non-blocking streams.
  void read_back(void* host, const void* device, std::size_t bytes) {
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, compute_.get()));
    compute_.synchronize();
  }

  cuda::ScopedDevice current_;  // first: the streams and buffers below belong to this device
  int device_;
  GpuConsumerSpec spec_;
  std::int64_t cycles_ = 0;
  cuda::Stream copy_, compute_;
  cuda::Event copied_[2], done_[2];
  cuda::DeviceBuffer buffers_[2], augmented_[2], features_;
  std::unique_ptr<kernels::train::GpuModel> model_;  // consumer=train-*
  std::size_t tensor_bytes_[2] = {0, 0};
  unsigned long long* checksum_ = nullptr;
  std::int64_t step_ = 0;
  int last_ = 0;
};

// ---- augment on the GPU ---------------------------------------------------------------------

class GpuAugmentCase final : public CudaCase {
 public:
  GpuAugmentCase(const DeviceInfo& device, const Config& c) : CudaCase(device), c_(c) {}

  void setup() override {
    const Source& src = source();
    JpegDecoder decoder;
    std::vector<std::uint64_t> offsets;
    std::vector<int> widths, heights;
    std::vector<std::uint8_t> pixels;
    for (int s = 0; s < c_.batch; ++s) {
      DecodedImage img;
      const std::string& bytes = src.encoded[static_cast<std::size_t>(s) % src.encoded.size()];
      if (!decoder.decode(bytes.data(), bytes.size(), c_.scale, img)) throw std::runtime_error("decode failed");
      offsets.push_back(pixels.size());
      widths.push_back(img.width);
      heights.push_back(img.height);
      crops_.push_back(kd::random_crop(kAugmentSeed, static_cast<std::uint64_t>(s), img.width, img.height));
      const std::size_t n = static_cast<std::size_t>(img.width) * img.height * 3;
      pixels.insert(pixels.end(), img.pixels.begin(), img.pixels.begin() + static_cast<std::ptrdiff_t>(n));
      images_.push_back(std::move(img));
    }
    pixels_ = upload(pixels.data(), pixels.size());
    offsets_ = upload(offsets.data(), offsets.size() * sizeof(std::uint64_t));
    widths_ = upload(widths.data(), widths.size() * sizeof(int));
    heights_ = upload(heights.data(), heights.size() * sizeof(int));
    crops_d_ = upload(crops_.data(), crops_.size() * sizeof(kd::Crop));
    out_ = cuda::DeviceBuffer(static_cast<std::size_t>(c_.batch) * c_.sample_bytes());
  }

  Verification verify() override {
    run();
    synchronize();
    std::vector<std::uint8_t> host(out_.bytes());
    GPUBENCH_CUDA_CHECK(cudaMemcpy(host.data(), out_.get(), host.size(), cudaMemcpyDeviceToHost));
    kd::AugmentCheck check;
    for (int s = 0; s < c_.batch; ++s) {
      const DecodedImage& img = images_[static_cast<std::size_t>(s)];
      kd::check_augmented({img.pixels.data(), img.width, img.height}, crops_[static_cast<std::size_t>(s)], c_.dtype,
                          host.data() + static_cast<std::size_t>(s) * c_.sample_bytes(), 64, static_cast<std::uint64_t>(s),
                          check);
    }
    return augment_verification("sampled output values of every sample against the double-precision reference", check);
  }

  void run() override {
    const kd::DeviceBatch b{pixels_.as<std::uint8_t>(), offsets_.as<std::uint64_t>(), widths_.as<int>(),
                            heights_.as<int>(),         crops_d_.as<kd::Crop>(),      c_.batch};
    GPUBENCH_CUDA_CHECK(kd::launch_augment(b, c_.dtype, out_.get(), kd::kAugmentSize, stream()));
  }

  Metrics metrics() const override {
    Metrics m;
    m.bytes = static_cast<double>(out_.bytes());
    m.items = static_cast<double>(c_.batch);
    m.items_unit = "samples";
    return m;
  }

 private:
  cuda::DeviceBuffer upload(const void* data, std::size_t bytes) {
    cuda::DeviceBuffer b(std::max<std::size_t>(bytes, 1));
    // On the case's stream: a cudaMemcpy from pageable memory may return before its DMA has
    // landed, and the legacy stream it runs on does not order with the case's non-blocking one.
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(b.get(), data, bytes, cudaMemcpyHostToDevice, stream()));
    synchronize();
    return b;
  }

  Config c_;
  std::vector<DecodedImage> images_;
  std::vector<kd::Crop> crops_;
  cuda::DeviceBuffer pixels_, offsets_, widths_, heights_, crops_d_, out_;
};

// ---- host-to-device copy of batches ---------------------------------------------------------

// prefetch = 0: synchronous copies (cudaMemcpy, the host waits for each); prefetch = k >= 1:
// cudaMemcpyAsync from k rotating host buffers (double-buffered at k = 2) on the case's stream.
// Pageable memory is timed on the host clock (the driver stages it on the host's time).
class H2DCase final : public CudaCase {
 public:
  H2DCase(const DeviceInfo& device, const Config& c) : CudaCase(device), c_(c) {}

  std::unique_ptr<Timer> make_timer() override {
    if (!c_.pinned || c_.prefetch == 0) return std::make_unique<HostTimer>();
    return CudaCase::make_timer();
  }

  void setup() override {
    bytes_ = static_cast<std::size_t>(c_.batch) * c_.sample_bytes();
    const int buffers = std::max(1, c_.prefetch);
    for (int i = 0; i < buffers; ++i) {
      host_.push_back(c_.pinned ? pinned_.allocate(bytes_) : plain_->allocate(bytes_));
      auto* p = static_cast<std::uint8_t*>(host_.back());
      for (std::size_t j = 0; j < bytes_; j += 4096) p[j] = static_cast<std::uint8_t>(kernels::mix64(j + i));
    }
    for (int i = 0; i < buffers; ++i) device_.emplace_back(bytes_);
  }
  ~H2DCase() override {
    // Not synchronize(): it throws on a CUDA error, and after a sticky one a throwing destructor
    // would end the whole run (std::terminate).
    (void)cudaStreamSynchronize(stream());
    for (void* p : host_) c_.pinned ? pinned_.release(p) : plain_->release(p);
  }

  Verification verify() override {
    Verification v;
    v.method = "one byte per 4 KiB page of every buffer read back";
    v.passed = true;
    for (std::size_t i = 0; i < host_.size(); ++i) run();
    synchronize();
    for (std::size_t i = 0; i < host_.size(); ++i) {
      std::vector<std::uint8_t> back(bytes_);
      GPUBENCH_CUDA_CHECK(cudaMemcpy(back.data(), device_[i].get(), bytes_, cudaMemcpyDeviceToHost));
      const auto* p = static_cast<const std::uint8_t*>(host_[i]);
      for (std::size_t j = 0; j < bytes_; j += 4096) {
        ++v.checked;
        if (back[j] != p[j]) {
          v.passed = false;
          v.detail = fmt::format("buffer {} byte {}: {} , expected {}", i, j, back[j], p[j]);
          return v;
        }
      }
    }
    return v;
  }

  void run() override {
    const std::size_t k = next_++ % host_.size();
    if (c_.prefetch == 0) {
      GPUBENCH_CUDA_CHECK(cudaMemcpy(device_[k].get(), host_[k], bytes_, cudaMemcpyHostToDevice));
    } else {
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(device_[k].get(), host_[k], bytes_, cudaMemcpyHostToDevice, stream()));
      if (!c_.pinned) synchronize();  // a pageable async copy returns before it is done only in part
    }
  }

  Metrics metrics() const override {
    Metrics m;
    m.bytes = static_cast<double>(bytes_);
    m.items = static_cast<double>(c_.batch);
    m.items_unit = "samples";
    return m;
  }

 private:
  Config c_;
  std::size_t bytes_ = 0;
  PinnedMemory pinned_;
  std::unique_ptr<BatchMemory> plain_ = plain_memory();
  std::vector<void*> host_;
  std::vector<cuda::DeviceBuffer> device_;
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<BatchMemory> pinned_memory() { return std::make_unique<PinnedMemory>(); }

std::unique_ptr<Consumer> make_gpu_consumer(const DeviceInfo& device, const GpuConsumerSpec& spec) {
  try {
    return std::make_unique<GpuConsumer>(device, spec);
  } catch (const kernels::train::DeviceOutOfMemory& e) {
    throw CaseSkipped(fmt::format("the train consumer's model: {}", e.what()));
  } catch (const blas::LtError& e) {
    if (!e.unsupported()) throw;
    throw CaseSkipped(fmt::format("the train consumer's model: cuBLASLt: {}", e.what()));
  }
}

std::unique_ptr<Case> make_gpu_case(const DeviceInfo& device, const Config& c) {
  if (c.stage == Stage::Augment) return std::make_unique<GpuAugmentCase>(device, c);
  if (c.stage == Stage::H2D) return std::make_unique<H2DCase>(device, c);
  throw std::logic_error("dataload: no GPU case for this stage");
}

}  // namespace gpubench::suites::dataload
