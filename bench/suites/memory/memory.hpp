#pragma once
// The `memory` suite: the ceilings of each device, measured, so every other result can be
// placed on a roofline. Axes: `test` (which benchmark), `size` (bytes per buffer, for the tests
// that have one; 0 for those that do not) and `peer` (the other GPU of a peer-to-peer test).
// One short file per group: bandwidth (device arrays), copies (host<->device, device<->device),
// peer, patterns (concurrent copies), peak (FMA chains, mma.sync), latency (launch, graph, allocation, sync), chase (access
// latency by pointer chase), cpu (host bandwidth, FMA peak, load latency); summary.cpp writes
// the ceilings summary.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/core/suite.hpp"
#include "kernels/memory/host_fma.hpp"
#include "kernels/memory/stream_reference.hpp"

namespace gpubench::suites::memory {

enum class Group { Bandwidth, Copy, Peer, Pattern, Peak, Latency };

struct TestInfo {
  std::string name;
  Group group;
  bool sized;    // reads the size axis (else it runs at size=0 only)
  bool on_cuda;  // has a GPU implementation
  bool on_cpu;   // has a CPU implementation
  std::string help;
};
const std::vector<TestInfo>& tests();
const TestInfo* find_test(const std::string& name);  // nullptr if unknown

// Which GPUs exist and which pairs can reach each other directly: the CUDA runtime's answer by
// default, a fake one in tests.
struct Topology {
  std::function<int()> device_count;
  std::function<bool(int, int)> can_access;  // cudaDeviceCanAccessPeer(src, dst)
};
Topology cuda_topology();

// Whether a peer test applies to (device, peer): another GPU that exists. Non-peer tests apply at
// peer=0 only.
bool peer_applies(const DeviceInfo& device, std::int64_t peer, int device_count);
// Why (device -> peer) cannot run `test`, or nullopt.
std::optional<std::string> peer_unsupported(const std::string& test, const DeviceInfo& device, std::int64_t peer,
                                            const Topology& topology);

// What cases observe beyond their time, for the summary: the devices seen and the SM clock the
// peak kernels measured while they ran (MHz, keyed "<device id>/<test>").
struct Observations {
  mutable std::mutex mutex;
  std::map<std::string, DeviceInfo> devices;
  std::map<std::string, double> sm_clock_mhz;
  void record_device(const DeviceInfo& d);
  void record_clock(const std::string& device_id, const std::string& test, double mhz);
};

std::unique_ptr<Suite> make_suite();
std::unique_ptr<Suite> make_suite(Topology topology);

// Group factories (one file each).
std::unique_ptr<Case> make_bandwidth_case(const DeviceInfo& device, kernels::StreamOp op, std::int64_t bytes);
std::unique_ptr<Case> make_copy_case(const DeviceInfo& device, const std::string& test, std::int64_t bytes);
std::unique_ptr<Case> make_peer_case(const DeviceInfo& device, int peer, const std::string& test, std::int64_t bytes);
std::unique_ptr<Case> make_peak_case(const DeviceInfo& device, const std::string& test,
                                     std::shared_ptr<Observations> observations);
// The plan's note of a Tensor Core peak on a CUDA device: wgmma on sm_90 with this build's sm_90a
// code, else mma.sync (recorded but no ceiling where it cannot reach the rate); nullopt for
// other tests (peak.cpp).
std::optional<std::string> peak_plan_note(const DeviceInfo& device, const std::string& test);
std::unique_ptr<Case> make_latency_case(const DeviceInfo& device, const std::string& test, std::int64_t bytes);
// Pointer-chase latency from an SM: `peer` < 0 reads mapped host memory (host_device_latency),
// else that GPU's memory (device_device_latency) (chase.cpp).
std::unique_ptr<Case> make_chase_case(const DeviceInfo& device, const std::string& test, int peer);
std::unique_ptr<Case> make_host_latency_case(std::int64_t bytes);
// The pointer chases' figures: `accesses` per run as the rate's items, and ns per access
// (with the buffer and what it lies in) added to the entry's metrics.
Metrics access_metrics(std::int64_t accesses);
void annotate_access(nlohmann::ordered_json& gpubench, double seconds_per_run, std::int64_t accesses,
                     std::size_t buffer_bytes, const std::string& memory);
// A concurrent copy pattern over `gpus` GPUs (patterns.cpp): all_to_host, host_to_all (every GPU,
// planned on cuda:0), all_to_one, one_to_all (this GPU the target or the source); _ce or _sm.
std::unique_ptr<Case> make_pattern_case(const DeviceInfo& device, const std::string& test, std::int64_t bytes, int gpus);
// Why `device` cannot run the concurrent pattern `test` (peer access missing), or nullopt.
std::optional<std::string> pattern_unsupported(const std::string& test, const DeviceInfo& device, const Topology& topology);
std::unique_ptr<Case> make_host_bandwidth_case(kernels::StreamOp op, std::int64_t bytes);
std::unique_ptr<Case> make_host_fma_case(kernels::HostFmaType type, bool all_cores);

// Byte accounting of the copy and peer tests: bytes one run moves over the link (both
// directions for the bidirectional ones; read + written for device-to-device).
double copy_bytes(const std::string& test, std::int64_t size);

// Indices a verification compares: the first and last entries and `count` spread between.
std::vector<std::size_t> sample_indices(std::size_t n, std::size_t count = 4096);

// The ceilings summary over the suite's entries (see docs/results-format.md).
nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries, const Observations& observations);

}  // namespace gpubench::suites::memory
