// The dataload suite's GPU side in a build without CUDA: no CUDA device exists, so the suite
// never asks for it (pinned batches and GPU consumers are planned on CUDA devices only); what
// is asked anyway says kNotBuiltWithCuda. Stands in for gpu.cpp.
#include "bench/core/errors.hpp"
#include "bench/suites/dataload/dataload.hpp"
#include "gpubench/version.hpp"

namespace gpubench::suites::dataload {

std::unique_ptr<BatchMemory> pinned_memory() { throw CaseSkipped(std::string("pinned=1: ") + kNotBuiltWithCuda); }
std::unique_ptr<Consumer> make_gpu_consumer(const DeviceInfo&, const GpuConsumerSpec&) { throw CaseSkipped(kNotBuiltWithCuda); }
std::unique_ptr<Case> make_gpu_case(const DeviceInfo&, const Config&) { throw CaseSkipped(kNotBuiltWithCuda); }

}  // namespace gpubench::suites::dataload
