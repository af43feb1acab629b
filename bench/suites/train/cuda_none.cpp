// The train suite's GPU step in a build without CUDA: there is no CUDA device, so the suite never
// asks for it; what is asked anyway says kNotBuiltWithCuda. Stands in for cuda_step.cpp and
// cuda_step_common.cpp (dp_gpu_none.cpp already stands in for the NCCL step).
#include "bench/core/errors.hpp"
#include "bench/suites/train/train.hpp"
#include "gpubench/version.hpp"

namespace gpubench::suites::train {

std::unique_ptr<Case> make_cuda_case(const DeviceInfo&, const ModelConfig&, Precision, bool, double, bool) {
  throw CaseSkipped(kNotBuiltWithCuda);
}
std::string cublaslt_version() { return kNotBuiltWithCuda; }

}  // namespace gpubench::suites::train
