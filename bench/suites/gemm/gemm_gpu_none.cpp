// The gemm suite's GPU providers in a build without CUDA: no CUDA device exists there, so the
// suite never asks for a case; what is asked anyway says kNotBuiltWithCuda. Stands in for
// gemm_cublas.cpp, gemm_cublaslt.cpp, gemm_custom.cpp and gemm_gpu.cpp.
#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/gemm_tune.hpp"
#include "gpubench/version.hpp"
#include "kernels/gemm/custom_gemm.hpp"

namespace gpubench::suites::gemm {

std::unique_ptr<Case> make_cublas_case(const DeviceInfo&, const GemmCaseSpec&) { throw CaseSkipped(kNotBuiltWithCuda); }
std::unique_ptr<Case> make_cublaslt_case(const DeviceInfo&, const GemmCaseSpec&) { throw CaseSkipped(kNotBuiltWithCuda); }
std::string cublas_version() { return kNotBuiltWithCuda; }
std::string cublaslt_version() { return kNotBuiltWithCuda; }

TuningEntry tune_cublaslt(const DeviceInfo&, const GemmCaseSpec&, int) { throw CaseSkipped(kNotBuiltWithCuda); }

std::optional<std::string> custom_unsupported(const DeviceInfo&, const GemmProblem&, const std::string& variant) {
  if (kernels::find_custom_gemm(variant) == nullptr) {
    return fmt::format("no custom GEMM kernel named '{}' (known: {})", variant, fmt::join(custom_variants(), ", "));
  }
  return std::string(kNotBuiltWithCuda);
}
std::unique_ptr<Case> make_custom_case(const DeviceInfo&, const GemmProblem&, const std::string&) {
  throw CaseSkipped(kNotBuiltWithCuda);
}

}  // namespace gpubench::suites::gemm
