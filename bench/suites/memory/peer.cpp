// Peer-to-peer copies from this GPU to another: cudaMemcpyPeerAsync with peer access enabled
// (direct NVLink/PCIe path), with it disabled (the driver stages through the host), and both
// directions at once. One case per ordered pair: together the planned cases form the matrix.
#include "bench/core/cuda_case.hpp"
#include "bench/suites/memory/cuda_util.hpp"

namespace gpubench::suites::memory {
namespace {

constexpr std::uint64_t kThereSeed = 21, kBackSeed = 22;

// Enables (or disables) access from the current device to `peer`; returns whether this call
// changed the setting, so the case can put it back.
bool set_peer_access(int peer, bool enable) {
  const cudaError_t e = enable ? cudaDeviceEnablePeerAccess(peer, 0) : cudaDeviceDisablePeerAccess(peer);
  if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled) {
    (void)cudaGetLastError();
    return false;
  }
  GPUBENCH_CUDA_CHECK(e);
  return true;
}

class PeerCase final : public CudaCase {
 public:
  PeerCase(const DeviceInfo& device, int peer, std::string test, std::int64_t size)
      : CudaCase(device), peer_(peer), test_(std::move(test)), size_(static_cast<std::size_t>(size)) {}

  ~PeerCase() override {
    // Leave peer access as it was found, as far as CUDA still lets us: nothing here may throw
    // (after a sticky error every call fails, and a throwing destructor ends the whole run).
    if (changed_here_) (void)(access_ ? cudaDeviceDisablePeerAccess(peer_) : cudaDeviceEnablePeerAccess(peer_, 0));
    if (changed_there_) {
      cuda::ScopedDevice there(peer_, std::nothrow);
      if (there.ok()) {
        (void)(access_ ? cudaDeviceDisablePeerAccess(device().ordinal)
                       : cudaDeviceEnablePeerAccess(device().ordinal, 0));
      }
    }
    (void)cudaGetLastError();
  }

  void setup() override {
    access_ = test_ != "p2p_noaccess";
    bidir_ = test_ == "p2p_bidir";
    changed_here_ = set_peer_access(peer_, access_);
    {
      cuda::ScopedDevice there(peer_);
      changed_there_ = set_peer_access(device().ordinal, access_);
      there_dst_ = cuda::DeviceBuffer(size_);
      if (bidir_) there_src_ = cuda::DeviceBuffer(size_);
    }
    here_src_ = cuda::DeviceBuffer(size_);
    upload(here_src_.get(), kThereSeed);
    if (bidir_) {
      here_dst_ = cuda::DeviceBuffer(size_);
      upload(there_src_.get(), kBackSeed);
      second_ = std::make_unique<cuda::Stream>();
    }
  }

  Verification verify() override {
    run();
    synchronize();
    Verification v = check_pattern(there_dst_.get(), size_, kThereSeed, "peer destination");
    if (!v.passed || !bidir_) return v;
    return check_pattern(here_dst_.get(), size_, kBackSeed, "returned destination");
  }

  void run() override {
    const int here = device().ordinal;
    if (!bidir_) {
      GPUBENCH_CUDA_CHECK(cudaMemcpyPeerAsync(there_dst_.get(), peer_, here_src_.get(), here, size_, stream()));
      return;
    }
    GPUBENCH_CUDA_CHECK(cudaEventRecord(fork_.get(), stream()));
    GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(second_->get(), fork_.get(), 0));
    GPUBENCH_CUDA_CHECK(cudaMemcpyPeerAsync(there_dst_.get(), peer_, here_src_.get(), here, size_, stream()));
    GPUBENCH_CUDA_CHECK(cudaMemcpyPeerAsync(here_dst_.get(), here, there_src_.get(), peer_, size_, second_->get()));
    GPUBENCH_CUDA_CHECK(cudaEventRecord(join_.get(), second_->get()));
    GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(stream(), join_.get(), 0));
  }

  Metrics metrics() const override { return {0, copy_bytes(test_, static_cast<std::int64_t>(size_)), ""}; }

 private:
  void upload(void* dst, std::uint64_t seed) {
    std::vector<unsigned char> staging(size_);
    fill_pattern(staging.data(), size_, seed);
    GPUBENCH_CUDA_CHECK(cudaMemcpy(dst, staging.data(), size_, cudaMemcpyHostToDevice));
    // A pageable cudaMemcpy may return once the data is staged, before its DMA lands, and the
    // legacy stream it used does not order with the case's non-blocking streams: wait for it.
    GPUBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }

  int peer_;
  std::string test_;
  std::size_t size_;
  bool access_ = true, bidir_ = false, changed_here_ = false, changed_there_ = false;
  cuda::DeviceBuffer here_src_, here_dst_, there_src_, there_dst_;
  std::unique_ptr<cuda::Stream> second_;
  SyncEvent fork_, join_;
};

}  // namespace

std::unique_ptr<Case> make_peer_case(const DeviceInfo& device, int peer, const std::string& test, std::int64_t bytes) {
  return std::make_unique<PeerCase>(device, peer, test, bytes);
}

Topology cuda_topology() {
  Topology t;
  t.device_count = [] { return cuda_device_count(); };
  t.can_access = [](int src, int dst) {
    if (assumed_cuda_devices() > 0) return src != dst;  // an assumed node: every pair are peers
    int ok = 0;
    if (cudaDeviceCanAccessPeer(&ok, src, dst) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return ok != 0;
  };
  return t;
}

}  // namespace gpubench::suites::memory
