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
#include "kernels/common/float_formats.hpp"
#include "kernels/common/random.hpp"
#include "kernels/dataload/augment.cuh"

namespace gpubench::suites::dataload {
namespace {

namespace kd = kernels::dataload;

class PinnedMemory final : public BatchMemory {
 public:
  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    GPUBENCH_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
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
class GpuConsumer final : public Consumer {
 public:
  GpuConsumer(const DeviceInfo& device, double seconds, bool pinned)
      : current_(device.ordinal), device_(device.ordinal), seconds_(seconds), pinned_(pinned) {
    GPUBENCH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&checksum_), sizeof(unsigned long long) * 2));
    cycles_ = static_cast<std::int64_t>(seconds * cycles_per_second(compute_.get(), checksum_));
  }
  ~GpuConsumer() override {
    (void)cudaStreamSynchronize(compute_.get());
    (void)cudaFree(checksum_);
  }

  void consume(const HostBatch& batch) override {
    const int k = step_++ % 2;
    if (buffers_[k].bytes() < batch.bytes) buffers_[k] = cuda::DeviceBuffer(batch.bytes);
    GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(copy_.get(), done_[k].get(), 0));  // the kernel still reading it
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(buffers_[k].get(), batch.data, batch.bytes, cudaMemcpyHostToDevice, copy_.get()));
    copied_[k].record(copy_.get());
    GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(compute_.get(), copied_[k].get(), 0));
    GPUBENCH_CUDA_CHECK(kd::launch_consumer(buffers_[k].get(), static_cast<std::int64_t>(batch.bytes / 4), cycles_,
                                            checksum_ + k, compute_.get()));
    done_[k].record(compute_.get());
    last_ = k;
    GPUBENCH_CUDA_CHECK(cudaEventSynchronize(copied_[k].get()));
    GPUBENCH_CUDA_CHECK(cudaEventSynchronize(done_[1 - k].get()));
  }
  void finish() override { compute_.synchronize(); }
  unsigned long long last_checksum() override {
    unsigned long long v = 0;
    GPUBENCH_CUDA_CHECK(cudaMemcpy(&v, checksum_ + last_, sizeof v, cudaMemcpyDeviceToHost));
    return v;
  }
  std::string describe() const override {
    return fmt::format("GPU kernel of {:.6g} s per batch ({} cycles) on cuda:{}, H2D from {} memory on a copy stream",
                       seconds_, cycles_, device_, pinned_ ? "pinned" : "pageable");
  }

 private:
  cuda::ScopedDevice current_;  // first: the streams and buffers below belong to this device
  int device_;
  double seconds_;
  bool pinned_;
  std::int64_t cycles_ = 0;
  cuda::Stream copy_, compute_;
  cuda::Event copied_[2], done_[2];
  cuda::DeviceBuffer buffers_[2];
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
    Verification v;
    v.method = "sampled output values of every sample against the double-precision reference";
    v.passed = true;
    for (int s = 0; s < c_.batch; ++s) {
      const DecodedImage& img = images_[static_cast<std::size_t>(s)];
      const kd::ImageView view{img.pixels.data(), img.width, img.height};
      for (int k = 0; k < 64; ++k) {
        const std::uint64_t h = kernels::mix64(static_cast<std::uint64_t>(k + 64 * s));
        const int ch = static_cast<int>(h % 3), oy = static_cast<int>((h >> 8) % kd::kAugmentSize),
                  ox = static_cast<int>((h >> 20) % kd::kAugmentSize);
        const double want = kd::augment_reference(view, crops_[static_cast<std::size_t>(s)], ch, oy, ox);
        const std::size_t idx = ((static_cast<std::size_t>(s) * 3 + ch) * kd::kAugmentSize + oy) * kd::kAugmentSize + ox;
        double got;
        if (c_.dtype == kd::OutType::F32) {
          float f;
          std::memcpy(&f, host.data() + idx * 4, 4);
          got = f;
        } else {
          std::uint16_t b;
          std::memcpy(&b, host.data() + idx * 2, 2);
          got = kernels::half_bits_to_float(b);
        }
        const double err = std::fabs(got - want) / kd::augment_tolerance(c_.dtype);
        v.max_error = std::max(v.max_error, err);
        ++v.checked;
        if (!(err <= 1.0) && v.passed) {
          v.passed = false;
          v.detail = fmt::format("sample {} channel {} ({}, {}): {}, expected {}", s, ch, oy, ox, got, want);
        }
      }
    }
    return v;
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
    GPUBENCH_CUDA_CHECK(cudaMemcpy(b.get(), data, bytes, cudaMemcpyHostToDevice));
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
    synchronize();
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

std::unique_ptr<Consumer> make_gpu_consumer(const DeviceInfo& device, double seconds, bool pinned) {
  return std::make_unique<GpuConsumer>(device, seconds, pinned);
}

std::unique_ptr<Case> make_gpu_case(const DeviceInfo& device, const Config& c) {
  if (c.stage == Stage::Augment) return std::make_unique<GpuAugmentCase>(device, c);
  if (c.stage == Stage::H2D) return std::make_unique<H2DCase>(device, c);
  throw std::logic_error("dataload: no GPU case for this stage");
}

}  // namespace gpubench::suites::dataload
