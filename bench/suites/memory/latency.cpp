// Latency and overheads: an empty kernel launched and waited for (host clock) or queued back to
// back (throughput, CUDA events), the same through a one-kernel CUDA Graph, an event round trip
// on an idle stream, and device allocation with cudaMalloc/cudaFree and the stream-ordered pool.
// Time per run is the figure; no bytes or FLOP.
#include "bench/core/cuda_case.hpp"
#include "bench/suites/memory/cuda_util.hpp"
#include "kernels/memory/peak.cuh"

namespace gpubench::suites::memory {
namespace {

class LatencyCase final : public CudaCase {
 public:
  LatencyCase(const DeviceInfo& device, std::string test, std::int64_t size)
      : CudaCase(device), test_(std::move(test)), size_(static_cast<std::size_t>(size)) {
    queued_ = test_ == "launch_queue" || test_ == "graph_queue";
  }
  ~LatencyCase() override {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    if (graph_) (void)cudaGraphDestroy(graph_);
  }

  // Queued tests are timed by events on the stream; the others on the host clock, with the
  // wait (or the allocation calls) inside run().
  std::unique_ptr<Timer> make_timer() override {
    if (queued_) return CudaCase::make_timer();
    return std::make_unique<HostTimer>();
  }
  void flush_cache() override {
    CudaCase::flush_cache();
    synchronize();
  }

  void setup() override {
    if (test_ == "malloc_async") {
      int pools = 0;
      GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device().ordinal));
      if (!pools) throw CaseSkipped("this device or driver has no stream-ordered allocator (memory pools)");
    }
    flag_ = cuda::DeviceBuffer(sizeof(int));
    if (test_.rfind("graph_", 0) == 0) {
      // Capture one empty-kernel launch into a graph and instantiate it once.
      GPUBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
      const cudaError_t launched = kernels::launch_empty(nullptr, stream());
      const cudaError_t ended = cudaStreamEndCapture(stream(), &graph_);
      GPUBENCH_CUDA_CHECK(launched);
      GPUBENCH_CUDA_CHECK(ended);
      GPUBENCH_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
    }
  }

  Verification verify() override {
    Verification v;
    v.checked = 1;
    if (test_ == "malloc" || test_ == "malloc_async") {
      // The allocation must be usable: write a byte pattern at both ends and read it back.
      void* p = nullptr;
      if (test_ == "malloc") GPUBENCH_CUDA_CHECK(cudaMalloc(&p, size_));
      else GPUBENCH_CUDA_CHECK(cudaMallocAsync(&p, size_, stream()));
      GPUBENCH_CUDA_CHECK(cudaMemsetAsync(p, 0x5a, size_, stream()));
      unsigned char ends[2] = {0, 0};
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(&ends[0], p, 1, cudaMemcpyDeviceToHost, stream()));
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(&ends[1], static_cast<unsigned char*>(p) + size_ - 1, 1, cudaMemcpyDeviceToHost, stream()));
      synchronize();
      if (test_ == "malloc") GPUBENCH_CUDA_CHECK(cudaFree(p));
      else GPUBENCH_CUDA_CHECK(cudaFreeAsync(p, stream()));
      synchronize();
      v.passed = ends[0] == 0x5a && ends[1] == 0x5a;
      v.method = "allocated buffer written and read back at both ends";
      if (!v.passed) v.detail = fmt::format("read back {:#x} {:#x}, expected 0x5a", ends[0], ends[1]);
      run();
      return v;
    }
    if (test_ == "sync") {
      run();
      v.passed = cudaEventQuery(event_.get()) == cudaSuccess;
      v.method = "event complete after cudaEventSynchronize";
      if (!v.passed) v.detail = "event not complete";
      return v;
    }
    // Launch tests: the same kernel (or graph) with a flag pointer must store 1.
    GPUBENCH_CUDA_CHECK(cudaMemsetAsync(flag_.get(), 0, sizeof(int), stream()));
    if (graph_) {
      cudaGraph_t g = nullptr;
      cudaGraphExec_t e = nullptr;
      GPUBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
      const cudaError_t launched = kernels::launch_empty(flag_.as<int>(), stream());
      const cudaError_t ended = cudaStreamEndCapture(stream(), &g);
      GPUBENCH_CUDA_CHECK(launched);
      GPUBENCH_CUDA_CHECK(ended);
      GPUBENCH_CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
      GPUBENCH_CUDA_CHECK(cudaGraphLaunch(e, stream()));
      synchronize();
      (void)cudaGraphExecDestroy(e);
      (void)cudaGraphDestroy(g);
    } else {
      GPUBENCH_CUDA_CHECK(kernels::launch_empty(flag_.as<int>(), stream()));
    }
    synchronize();
    int flag = 0;
    GPUBENCH_CUDA_CHECK(cudaMemcpy(&flag, flag_.get(), sizeof flag, cudaMemcpyDeviceToHost));
    v.passed = flag == 1;
    v.method = graph_ ? "captured kernel ran (flag stored)" : "kernel ran (flag stored)";
    if (!v.passed) v.detail = fmt::format("flag is {}, expected 1", flag);
    run();
    synchronize();
    return v;
  }

  void run() override {
    if (test_ == "launch" || test_ == "launch_queue") {
      GPUBENCH_CUDA_CHECK(kernels::launch_empty(nullptr, stream()));
    } else if (graph_) {
      GPUBENCH_CUDA_CHECK(cudaGraphLaunch(exec_, stream()));
    } else if (test_ == "sync") {
      GPUBENCH_CUDA_CHECK(cudaEventRecord(event_.get(), stream()));
      GPUBENCH_CUDA_CHECK(cudaEventSynchronize(event_.get()));
      return;
    } else if (test_ == "malloc") {
      void* p = nullptr;
      GPUBENCH_CUDA_CHECK(cudaMalloc(&p, size_));
      GPUBENCH_CUDA_CHECK(cudaFree(p));
      return;
    } else if (test_ == "malloc_async") {
      void* p = nullptr;
      GPUBENCH_CUDA_CHECK(cudaMallocAsync(&p, size_, stream()));
      GPUBENCH_CUDA_CHECK(cudaFreeAsync(p, stream()));
      return;
    }
    if (!queued_) synchronize();
  }

  Metrics metrics() const override { return {0, 0, ""}; }

 private:
  std::string test_;
  std::size_t size_;
  bool queued_ = false;
  cuda::DeviceBuffer flag_;
  SyncEvent event_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

std::unique_ptr<Case> make_latency_case(const DeviceInfo& device, const std::string& test, std::int64_t bytes) {
  return std::make_unique<LatencyCase>(device, test, bytes);
}

}  // namespace gpubench::suites::memory
