// The infer suite's CUDA path in a build without CUDA: there is no CUDA device, so the suite
// never asks for it; what is asked anyway (a dry run for an assumed GPU) says kNotBuiltWithCuda.
// Stands in for cuda_cases.cpp.
#include "bench/core/errors.hpp"
#include "bench/suites/infer/infer.hpp"
#include "gpubench/version.hpp"

namespace gpubench::suites::infer {

std::optional<std::string> cuda_unsupported(const DeviceInfo&, const InferSpec&) { return std::string(kNotBuiltWithCuda); }
std::unique_ptr<Case> make_cuda_case(const DeviceInfo&, const InferSpec&) { throw CaseSkipped(kNotBuiltWithCuda); }

}  // namespace gpubench::suites::infer
