// The memory suite's GPU cases in a build without CUDA: there is no CUDA device, so the suite
// never asks for one of these; what is asked anyway says kNotBuiltWithCuda. Stands in for
// bandwidth.cpp, chase.cpp, copies.cpp, latency.cpp, patterns.cpp, peak.cpp and peer.cpp.
#include "bench/core/cuda_portable.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/memory/memory.hpp"
#include "gpubench/version.hpp"

namespace gpubench::suites::memory {

std::unique_ptr<Case> make_bandwidth_case(const DeviceInfo&, kernels::StreamOp, std::int64_t) {
  throw CaseSkipped(kNotBuiltWithCuda);
}
std::unique_ptr<Case> make_copy_case(const DeviceInfo&, const std::string&, std::int64_t) { throw CaseSkipped(kNotBuiltWithCuda); }
std::unique_ptr<Case> make_peer_case(const DeviceInfo&, int, const std::string&, std::int64_t) {
  throw CaseSkipped(kNotBuiltWithCuda);
}
std::unique_ptr<Case> make_peak_case(const DeviceInfo&, const std::string&, std::shared_ptr<Observations>) {
  throw CaseSkipped(kNotBuiltWithCuda);
}
std::unique_ptr<Case> make_latency_case(const DeviceInfo&, const std::string&, std::int64_t) {
  throw CaseSkipped(kNotBuiltWithCuda);
}
std::unique_ptr<Case> make_chase_case(const DeviceInfo&, const std::string&, int) { throw CaseSkipped(kNotBuiltWithCuda); }
std::unique_ptr<Case> make_pattern_case(const DeviceInfo&, const std::string&, std::int64_t, int) {
  throw CaseSkipped(kNotBuiltWithCuda);
}

std::optional<std::string> peak_plan_note(const DeviceInfo&, const std::string&) { return std::nullopt; }

// `--assume MODEL:N` plans a node of N GPUs that are peers of each other, as a CUDA build does.
Topology cuda_topology() {
  return {[] { return cuda_device_count(); }, [](int src, int dst) { return assumed_cuda_devices() > 0 && src != dst; }};
}

}  // namespace gpubench::suites::memory
