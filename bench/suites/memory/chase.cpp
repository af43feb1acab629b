// Access latency from an SM by pointer chase, as nvbandwidth 0.8 defines it
// (host_device_latency_sm, device_to_device_latency_sm): a ring of 8-byte pointers in a 2 MiB
// buffer, each 128 bytes further than the last, in mapped pinned host memory
// (host_device_latency) or in a peer GPU's memory with peer access enabled
// (device_device_latency), walked by one thread. The figure is ns per access: the run's time
// over its accesses. The walking block moves to the next SM every run, so the samples average
// over where an SM sits, as nvbandwidth's loop over target blocks does.
#include "bench/core/cuda_case.hpp"
#include "bench/suites/memory/cuda_util.hpp"
#include "kernels/memory/pointer_chase.cuh"
#include "kernels/memory/pointer_chase.hpp"

namespace gpubench::suites::memory {
namespace {

// Accesses per run: about 20 ms at the 1 us of a PCIe round trip, 0.5 ms at HBM's 600 ns.
constexpr std::int64_t kAccessesPerRun = 20000;

class ChaseCase final : public CudaCase {
 public:
  ChaseCase(const DeviceInfo& device, std::string test, int peer) : CudaCase(device), test_(std::move(test)), peer_(peer) {}

  ~ChaseCase() override {
    // Put peer access back as found; never throws (see PeerCase).
    if (enabled_here_) (void)cudaDeviceDisablePeerAccess(peer_);
    (void)cudaGetLastError();
  }

  void setup() override {
    const std::uint64_t words = kernels::kChaseBufferBytes / 8;
    std::vector<std::uint64_t> ring(words);
    if (peer_ < 0) {
      host_ = PinnedBuffer(kernels::kChaseBufferBytes, cudaHostAllocMapped);
      start_ = host_.device_pointer();
      kernels::fill_strided_ring(ring.data(), words, kernels::kChaseStrideNodes, reinterpret_cast<std::uint64_t>(start_));
      std::memcpy(host_.get(), ring.data(), kernels::kChaseBufferBytes);
    } else {
      const cudaError_t e = cudaDeviceEnablePeerAccess(peer_, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
      } else {
        GPUBENCH_CUDA_CHECK(e);
        enabled_here_ = true;
      }
      cuda::ScopedDevice there(peer_);
      peer_ring_ = cuda::DeviceBuffer(kernels::kChaseBufferBytes);
      start_ = peer_ring_.get();
      kernels::fill_strided_ring(ring.data(), words, kernels::kChaseStrideNodes, reinterpret_cast<std::uint64_t>(start_));
      GPUBENCH_CUDA_CHECK(cudaMemcpy(peer_ring_.get(), ring.data(), kernels::kChaseBufferBytes, cudaMemcpyHostToDevice));
    }
    end_ = cuda::DeviceBuffer(sizeof(std::uint64_t));
    sms_ = static_cast<unsigned>(std::max(device().sm_count, 1));
  }

  // A walk of an uneven number of steps (not a multiple of the ring) from SM 0 must stop on the
  // word the ring's arithmetic says.
  Verification verify() override {
    const std::uint64_t words = kernels::kChaseBufferBytes / 8, steps = 3 * words / kernels::kChaseStrideNodes + 5;
    GPUBENCH_CUDA_CHECK(cudaMemsetAsync(end_.get(), 0, sizeof(std::uint64_t), stream()));
    GPUBENCH_CUDA_CHECK(kernels::launch_pointer_chase(start_, steps, sms_, 0, end_.as<std::uint64_t>(), stream()));
    std::uint64_t got = 0;
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(&got, end_.get(), sizeof got, cudaMemcpyDeviceToHost, stream()));
    synchronize();
    const std::uint64_t expected =
        reinterpret_cast<std::uint64_t>(start_) + 8 * kernels::strided_ring_end(words, kernels::kChaseStrideNodes, steps);
    Verification v;
    v.checked = 1;
    v.passed = got == expected;
    v.method = fmt::format("walk of {} steps ends on the ring's word {} (host arithmetic)", steps,
                           (expected - reinterpret_cast<std::uint64_t>(start_)) / 8);
    if (!v.passed) v.detail = fmt::format("stopped at address {:#x}, expected {:#x}", got, expected);
    return v;
  }

  void run() override {
    GPUBENCH_CUDA_CHECK(kernels::launch_pointer_chase(start_, static_cast<std::uint64_t>(kAccessesPerRun), sms_, target_,
                                                      end_.as<std::uint64_t>(), stream()));
    target_ = (target_ + 1) % sms_;
  }

  Metrics metrics() const override { return access_metrics(kAccessesPerRun); }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    annotate_access(g, seconds_per_run, kAccessesPerRun, kernels::kChaseBufferBytes,
                    peer_ < 0 ? "mapped pinned host memory" : fmt::format("cuda:{} (peer access)", peer_));
    g["metrics"]["stride_bytes"] = kernels::kChaseStrideNodes * 8;
  }

 private:
  std::string test_;
  int peer_;  // -1: host memory
  PinnedBuffer host_;
  cuda::DeviceBuffer peer_ring_, end_;
  void* start_ = nullptr;
  unsigned sms_ = 1, target_ = 0;
  bool enabled_here_ = false;
};

}  // namespace

std::unique_ptr<Case> make_chase_case(const DeviceInfo& device, const std::string& test, int peer) {
  return std::make_unique<ChaseCase>(device, test, peer);
}

}  // namespace gpubench::suites::memory
