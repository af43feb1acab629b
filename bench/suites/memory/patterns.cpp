// Concurrent copy patterns, as nvbandwidth 0.8 names and defines them (testcase.h): every copy
// of the pattern at once, each `size` bytes.
//   all_to_host   every GPU copies device memory to its own pinned host buffer;
//   host_to_all   every GPU copies from its own pinned host buffer;
//   all_to_one    every other GPU writes into this one (peer access, this GPU the target);
//   one_to_all    this GPU writes into every other one.
// `_ce` copies with cudaMemcpyAsync / cudaMemcpyPeerAsync (copy engines), `_sm` with a copy
// kernel on the issuing GPU reading or writing mapped host memory or the peer's memory (SMs).
// The host patterns span every GPU in one case (planned on cuda:0); the peer patterns are one
// case per target GPU. The figure is the aggregate: every copy's bytes over the time from the
// first copy's start to the last one's end (events forked from and joined into the case's
// stream). Each GPU's own rate while the others copy is in the details, from extra concurrent
// runs after the timing, each copy between its own events.
#include <algorithm>

#include "bench/core/cuda_case.hpp"
#include "bench/suites/memory/cuda_util.hpp"
#include "kernels/memory/stream.cuh"

namespace gpubench::suites::memory {
namespace {

constexpr std::uint64_t kPatternSeed = 30;  // + the copy's index: every source differs
constexpr int kDetailRuns = 10;

// One copy of the pattern, issued on `device`'s own stream.
struct Lane {
  int device = 0;           // the GPU that issues the copy (kernel or copy engine)
  int src_device = -1;      // -1: host memory
  int dst_device = -1;
  void* src = nullptr;      // as the issuing GPU addresses it (mapped host memory: its device view)
  void* dst = nullptr;
  std::uint64_t seed = 0;
  unsigned grid = 1;
  std::unique_ptr<cuda::Stream> stream;
  std::unique_ptr<SyncEvent> joined;
  std::unique_ptr<cuda::Event> started, stopped;  // details only
  cuda::DeviceBuffer device_src, device_dst;
  PinnedBuffer host;
};

class PatternCase final : public CudaCase {
 public:
  PatternCase(const DeviceInfo& device, std::string test, std::int64_t size, int gpus)
      : CudaCase(device), test_(std::move(test)), size_(static_cast<std::size_t>(size)), gpus_(gpus) {
    sm_ = test_.size() > 3 && test_.compare(test_.size() - 3, 3, "_sm") == 0;
  }

  ~PatternCase() override {
    // Peer access back as found; never throws (see PeerCase).
    for (const auto& [from, to] : enabled_) {
      cuda::ScopedDevice on(from, std::nothrow);
      if (on.ok()) (void)cudaDeviceDisablePeerAccess(to);
    }
    (void)cudaGetLastError();
  }

  void setup() override {
    const int self = device().ordinal;
    const bool to_host = test_.rfind("all_to_host", 0) == 0, from_host = test_.rfind("host_to_all", 0) == 0;
    std::vector<Lane> lanes;
    for (int g = 0; g < gpus_; ++g) {
      Lane l;
      if (to_host || from_host) {
        l.device = g;
        l.src_device = from_host ? -1 : g;
        l.dst_device = to_host ? -1 : g;
      } else if (g == self) {
        continue;
      } else if (test_.rfind("all_to_one", 0) == 0) {
        l.device = g;  // the source writes into the target
        l.src_device = g;
        l.dst_device = self;
      } else {
        l.device = self;
        l.src_device = self;
        l.dst_device = g;
      }
      lanes.push_back(std::move(l));
    }
    for (std::size_t k = 0; k < lanes.size(); ++k) {
      Lane& l = lanes[k];
      l.seed = kPatternSeed + k;
      // Peer patterns: the issuing GPU reaches the other one directly.
      const int other = l.device == l.src_device ? l.dst_device : l.src_device;
      if (other >= 0 && other != l.device) enable_access(l.device, other);
      if (l.src_device < 0 || l.dst_device < 0) {
        l.host = PinnedBuffer(size_, sm_ ? cudaHostAllocMapped | cudaHostAllocPortable : cudaHostAllocPortable);
      }
      {
        cuda::ScopedDevice on(l.device);
        l.stream = std::make_unique<cuda::Stream>();
        l.joined = std::make_unique<SyncEvent>();
        l.started = std::make_unique<cuda::Event>();
        l.stopped = std::make_unique<cuda::Event>();
        int sms = 1;
        GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, l.device));
        l.grid = static_cast<unsigned>(std::max(1, sms) * std::max(1, kernels::copy16_blocks_per_sm()));
      }
      std::vector<unsigned char> pattern(size_);
      fill_pattern(pattern.data(), size_, l.seed);
      if (l.src_device < 0) {
        std::memcpy(l.host.get(), pattern.data(), size_);
        l.src = sm_ ? host_view(l) : l.host.get();
      } else {
        cuda::ScopedDevice on(l.src_device);
        l.device_src = cuda::DeviceBuffer(size_);
        GPUBENCH_CUDA_CHECK(cudaMemcpy(l.device_src.get(), pattern.data(), size_, cudaMemcpyHostToDevice));
        GPUBENCH_CUDA_CHECK(cudaDeviceSynchronize());  // the legacy stream does not order with the lanes'
        l.src = l.device_src.get();
      }
      if (l.dst_device < 0) {
        // Cleared like a device destination: pinned memory comes back from the allocator as
        // the last case left it (host_to_all's sources hold these very patterns), and the
        // check must see what this copy wrote.
        std::memset(l.host.get(), 0, size_);
        l.dst = sm_ ? host_view(l) : l.host.get();
      } else {
        cuda::ScopedDevice on(l.dst_device);
        l.device_dst = cuda::DeviceBuffer(size_);
        GPUBENCH_CUDA_CHECK(cudaMemset(l.device_dst.get(), 0, size_));
        GPUBENCH_CUDA_CHECK(cudaDeviceSynchronize());
        l.dst = l.device_dst.get();
      }
    }
    lanes_ = std::move(lanes);
  }

  Verification verify() override {
    run();
    synchronize();
    Verification all;
    all.passed = true;
    for (const Lane& l : lanes_) {
      const void* written = l.dst_device < 0 ? static_cast<const void*>(l.host.get()) : l.dst;
      Verification v = check_pattern(written, size_, l.seed, l.dst_device < 0 ? "host destination" : "device destination");
      all.checked += v.checked;
      all.method = v.method + ", every copy's destination";
      if (!v.passed) {
        v.detail = fmt::format("copy from {} to {}: {}", where(l.src_device), where(l.dst_device), v.detail);
        return v;
      }
    }
    return all;
  }

  // Every lane's stream waits for the case stream's fork, copies, and the case stream waits
  // for every lane: the case's timer covers the whole pattern.
  void run() override { issue(false); }

  Metrics metrics() const override {
    return {0, static_cast<double>(size_) * static_cast<double>(std::max<std::size_t>(lanes_.size(), 1)), ""};
  }

  // Each copy's own rate while the others copy: kDetailRuns extra runs, each copy between its
  // own events, the median per copy.
  nlohmann::ordered_json details(std::int64_t) override {
    std::vector<std::vector<double>> seconds(lanes_.size());
    for (int r = 0; r < kDetailRuns; ++r) {
      issue(true);
      synchronize();
      for (std::size_t k = 0; k < lanes_.size(); ++k) {
        cuda::ScopedDevice on(lanes_[k].device);
        seconds[k].push_back(cuda::Event::elapsed_ms(*lanes_[k].started, *lanes_[k].stopped) * 1e-3);
      }
    }
    nlohmann::ordered_json copies = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < lanes_.size(); ++k) {
      std::sort(seconds[k].begin(), seconds[k].end());
      const double median = seconds[k][seconds[k].size() / 2];
      copies.push_back({{"from", where(lanes_[k].src_device)},
                        {"to", where(lanes_[k].dst_device)},
                        {"issued_by", where(lanes_[k].device)},
                        {"gbps", median > 0 ? static_cast<double>(size_) / median / 1e9 : 0.0}});
    }
    return {{"engine", sm_ ? "sm" : "ce"},
            {"copies", std::move(copies)},
            {"per_copy_method", fmt::format("median of {} concurrent runs after timing, each copy between its own events",
                                            kDetailRuns)}};
  }

 private:
  static std::string where(int device) { return device < 0 ? std::string("host") : fmt::format("cuda:{}", device); }

  // The issuing GPU's address of a mapped (portable) host buffer.
  static void* host_view(const Lane& l) {
    cuda::ScopedDevice on(l.device);
    void* d = nullptr;
    GPUBENCH_CUDA_CHECK(cudaHostGetDevicePointer(&d, l.host.get(), 0));
    return d;
  }

  void enable_access(int from, int to) {
    cuda::ScopedDevice on(from);
    const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();
      return;
    }
    GPUBENCH_CUDA_CHECK(e);
    enabled_.emplace_back(from, to);
  }

  void issue(bool timed_lanes) {
    GPUBENCH_CUDA_CHECK(cudaEventRecord(fork_.get(), stream()));
    for (Lane& l : lanes_) {
      cuda::ScopedDevice on(l.device);
      cudaStream_t s = l.stream->get();
      GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(s, fork_.get(), 0));
      if (timed_lanes) GPUBENCH_CUDA_CHECK(cudaEventRecord(l.started->get(), s));
      if (sm_) {
        GPUBENCH_CUDA_CHECK(kernels::launch_copy16(l.dst, l.src, size_, l.grid, s));
      } else if (l.src_device >= 0 && l.dst_device >= 0) {
        GPUBENCH_CUDA_CHECK(cudaMemcpyPeerAsync(l.dst, l.dst_device, l.src, l.src_device, size_, s));
      } else {
        GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(l.dst, l.src, size_, cudaMemcpyDefault, s));
      }
      if (timed_lanes) GPUBENCH_CUDA_CHECK(cudaEventRecord(l.stopped->get(), s));
      GPUBENCH_CUDA_CHECK(cudaEventRecord(l.joined->get(), s));
    }
    for (Lane& l : lanes_) GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(stream(), l.joined->get(), 0));
  }

  std::string test_;
  std::size_t size_;
  int gpus_;
  bool sm_ = false;
  std::vector<Lane> lanes_;
  SyncEvent fork_;
  std::vector<std::pair<int, int>> enabled_;  // peer access this case turned on (from, to)
};

}  // namespace

std::unique_ptr<Case> make_pattern_case(const DeviceInfo& device, const std::string& test, std::int64_t bytes, int gpus) {
  return std::make_unique<PatternCase>(device, test, bytes, gpus);
}

}  // namespace gpubench::suites::memory
