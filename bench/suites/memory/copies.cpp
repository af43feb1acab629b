// Copies between host and device and within a device: cudaMemcpyAsync (copy engines) from
// pinned or pageable host memory, one direction or both at once (two streams), and a copy
// kernel (SMs) reading or writing mapped pinned memory. Bytes: see copy_bytes().
//
// bidir_pageable: a copy from device to pageable memory returns only once the data is in the
// host buffer (the driver stages it through pinned memory on the calling thread), so issuing
// both copies from one thread runs them one after the other. Both directions at once needs
// two host threads, as a program that overlaps them has: the case's thread copies up while a
// helper thread copies down, and a run ends when both are done.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "bench/core/cuda_case.hpp"
#include "bench/suites/memory/cuda_util.hpp"
#include "kernels/memory/stream.cuh"

namespace gpubench::suites::memory {
namespace {

constexpr std::uint64_t kUpSeed = 11, kDownSeed = 12;

// A host thread that runs one job per request (bidir_pageable's download) and reports its CUDA
// status; the thread makes the case's device current once.
class CopyThread {
 public:
  explicit CopyThread(int device) : thread_([this, device] { loop(device); }) {}
  ~CopyThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  CopyThread(const CopyThread&) = delete;
  CopyThread& operator=(const CopyThread&) = delete;

  void start(std::function<cudaError_t()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = std::move(job);
      done_ = false;
    }
    cv_.notify_all();
  }
  cudaError_t wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    return status_;
  }

 private:
  void loop(int device) {
    const cudaError_t set = cudaSetDevice(device);
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || job_ != nullptr; });
      if (stop_) return;
      auto job = std::move(job_);
      job_ = nullptr;
      lock.unlock();
      const cudaError_t status = set != cudaSuccess ? set : job();
      lock.lock();
      status_ = status;
      done_ = true;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<cudaError_t()> job_;
  bool stop_ = false, done_ = true;
  cudaError_t status_ = cudaSuccess;
  std::thread thread_;  // last: starts once the members above exist
};

class CopyCase final : public CudaCase {
 public:
  CopyCase(const DeviceInfo& device, std::string test, std::int64_t size)
      : CudaCase(device), test_(std::move(test)), size_(static_cast<std::size_t>(size)) {
    pageable_ = test_.find("pageable") != std::string::npos;
    up_ = test_.rfind("h2d", 0) == 0 || test_.rfind("bidir", 0) == 0;
    down_ = test_.rfind("d2h", 0) == 0 || test_.rfind("bidir", 0) == 0;
    sm_ = test_.size() > 3 && test_.compare(test_.size() - 3, 3, "_sm") == 0;
  }

  // Pageable copies are staged by the driver through pinned buffers on the host's time: they
  // are timed on the host clock around the copy and its completion, as a program sees them.
  std::unique_ptr<Timer> make_timer() override {
    if (pageable_) return std::make_unique<HostTimer>();
    return CudaCase::make_timer();
  }
  void flush_cache() override {
    CudaCase::flush_cache();
    if (pageable_) synchronize();
  }

  void setup() override {
    const unsigned flags = sm_ ? cudaHostAllocMapped : cudaHostAllocDefault;
    if (test_ == "d2d") {
      dev_src_ = cuda::DeviceBuffer(size_);
      dev_dst_ = cuda::DeviceBuffer(size_);
      upload_pattern(dev_src_.get(), kDownSeed);
      return;
    }
    if (up_) {
      host_up_ = host_buffer(flags);
      fill_pattern(host_up_, size_, kUpSeed);
      dev_dst_ = cuda::DeviceBuffer(size_);
    }
    if (down_) {
      host_down_ = host_buffer(flags);
      dev_src_ = cuda::DeviceBuffer(size_);
      upload_pattern(dev_src_.get(), kDownSeed);
    }
    if (up_ && down_) second_ = std::make_unique<cuda::Stream>();
    if (up_ && down_ && pageable_) download_thread_ = std::make_unique<CopyThread>(device().ordinal);
    if (sm_) mapped_ = device_view(up_ ? host_up_ : host_down_);  // looked up once, outside the timed runs
    grid_ = static_cast<unsigned>(std::max(1, device().sm_count) * std::max(1, kernels::copy16_blocks_per_sm()));
  }

  Verification verify() override {
    run();
    synchronize();
    if (test_ == "d2d") return check_pattern(dev_dst_.get(), size_, kDownSeed, "destination");
    if (up_) {
      Verification v = check_pattern(dev_dst_.get(), size_, kUpSeed, "device destination");
      if (!v.passed || !down_) return v;
    }
    return check_pattern(host_down_, size_, kDownSeed, "host destination");
  }

  void run() override {
    if (test_ == "d2d") {
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(dev_dst_.get(), dev_src_.get(), size_, cudaMemcpyDeviceToDevice, stream()));
    } else if (sm_) {
      if (up_) {
        GPUBENCH_CUDA_CHECK(kernels::launch_copy16(dev_dst_.get(), mapped_, size_, grid_, stream()));
      } else {
        GPUBENCH_CUDA_CHECK(kernels::launch_copy16(mapped_, dev_src_.get(), size_, grid_, stream()));
      }
    } else if (up_ && down_ && pageable_) {
      // Both at once from two host threads (see the top of the file); the host timer covers both.
      cudaStream_t down_stream = second_->get();
      download_thread_->start([this, down_stream] {
        const cudaError_t e = cudaMemcpyAsync(host_down_, dev_src_.get(), size_, cudaMemcpyDeviceToHost, down_stream);
        return e != cudaSuccess ? e : cudaStreamSynchronize(down_stream);
      });
      const cudaError_t up = cudaMemcpyAsync(dev_dst_.get(), host_up_, size_, cudaMemcpyHostToDevice, stream());
      const cudaError_t down = download_thread_->wait();  // always joined before anything throws
      GPUBENCH_CUDA_CHECK(up);
      GPUBENCH_CUDA_CHECK(down);
    } else if (up_ && down_) {
      // Both directions at once: the download on a second stream, forked from and joined back
      // into the case's stream so the case's timer covers both.
      GPUBENCH_CUDA_CHECK(cudaEventRecord(fork_.get(), stream()));
      GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(second_->get(), fork_.get(), 0));
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(dev_dst_.get(), host_up_, size_, cudaMemcpyHostToDevice, stream()));
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(host_down_, dev_src_.get(), size_, cudaMemcpyDeviceToHost, second_->get()));
      GPUBENCH_CUDA_CHECK(cudaEventRecord(join_.get(), second_->get()));
      GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(stream(), join_.get(), 0));
    } else if (up_) {
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(dev_dst_.get(), host_up_, size_, cudaMemcpyHostToDevice, stream()));
    } else {
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(host_down_, dev_src_.get(), size_, cudaMemcpyDeviceToHost, stream()));
    }
    if (pageable_) synchronize();
  }

  Metrics metrics() const override {
    return {0, copy_bytes(test_, static_cast<std::int64_t>(size_)), test_ == "d2d" ? "memory_bandwidth" : ""};
  }

 private:
  unsigned char* host_buffer(unsigned flags) {
    if (pageable_) {
      pageable_buffers_.push_back(pageable(size_));
      return pageable_buffers_.back().get();
    }
    pinned_buffers_.emplace_back(size_, flags);
    return pinned_buffers_.back().get();
  }
  void* device_view(unsigned char* host) const {
    void* d = nullptr;
    GPUBENCH_CUDA_CHECK(cudaHostGetDevicePointer(&d, host, 0));
    return d;
  }
  void upload_pattern(void* dst, std::uint64_t seed) {
    std::vector<unsigned char> staging(size_);
    fill_pattern(staging.data(), size_, seed);
    GPUBENCH_CUDA_CHECK(cudaMemcpy(dst, staging.data(), size_, cudaMemcpyHostToDevice));
    // A pageable cudaMemcpy may return once the data is staged, before its DMA lands, and the
    // legacy stream it used does not order with the case's non-blocking streams: wait for it.
    GPUBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::string test_;
  std::size_t size_;
  bool pageable_ = false, up_ = false, down_ = false, sm_ = false;
  unsigned grid_ = 1;
  std::vector<PinnedBuffer> pinned_buffers_;
  std::vector<std::unique_ptr<unsigned char[]>> pageable_buffers_;
  unsigned char* host_up_ = nullptr;
  unsigned char* host_down_ = nullptr;
  void* mapped_ = nullptr;  // the device's address of the mapped host buffer (the _sm tests)
  cuda::DeviceBuffer dev_src_, dev_dst_;
  std::unique_ptr<cuda::Stream> second_;
  SyncEvent fork_, join_;
  std::unique_ptr<CopyThread> download_thread_;  // bidir_pageable; destroyed first (declared last)
};

}  // namespace

std::unique_ptr<Case> make_copy_case(const DeviceInfo& device, const std::string& test, std::int64_t bytes) {
  return std::make_unique<CopyCase>(device, test, bytes);
}

}  // namespace gpubench::suites::memory
