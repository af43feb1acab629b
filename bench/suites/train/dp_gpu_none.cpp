// Builds without NCCL: the data-parallel step on CUDA devices is not available (the suite says
// so before it makes a case; this keeps the link whole).
#include "bench/core/errors.hpp"
#include "bench/suites/train/dp.hpp"
#include "bench/suites/train/train.hpp"

namespace gpubench::suites::train {

#ifndef GPUBENCH_HAVE_NCCL
std::unique_ptr<Case> make_cuda_dp_case(const DeviceInfo&, const ModelConfig&, Precision, DpMode, double) {
  throw CaseSkipped("data parallel on CUDA devices needs a build with NCCL (GPUBENCH_WITH_NCCL)");
}
#endif

}  // namespace gpubench::suites::train
