// The gemm suite's GPU providers in a build without CUDA: no CUDA device exists there, so the
// suite never asks for a case; what is asked anyway says kNotBuiltWithCuda. Stands in for
// gemm_cublas.cpp, gemm_cublaslt.cpp, gemm_custom.cpp, gemm_gpu.cpp, gemm_grouped_cublaslt.cpp and
// gemm_blockscaled_cublaslt.cpp.
#include "bench/core/errors.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/gemm_tune.hpp"
#include "gpubench/version.hpp"

namespace gpubench::suites::gemm {

std::unique_ptr<Case> make_cublas_case(const DeviceInfo&, const GemmCaseSpec&) { throw CaseSkipped(kNotBuiltWithCuda); }
std::unique_ptr<Case> make_cublaslt_case(const DeviceInfo&, const GemmCaseSpec&) { throw CaseSkipped(kNotBuiltWithCuda); }
std::unique_ptr<Case> make_cublaslt_grouped_case(const DeviceInfo&, const GemmCaseSpec&) {
  throw CaseSkipped(kNotBuiltWithCuda);
}
std::string cublas_version() { return kNotBuiltWithCuda; }
std::string cublaslt_version() { return kNotBuiltWithCuda; }

TuningEntry tune_cublaslt(const DeviceInfo&, const GemmCaseSpec&, int) { throw CaseSkipped(kNotBuiltWithCuda); }

bool wgmma_gemm_built() { return false; }
bool block_scaled_gemm_built() { return false; }
std::string block_scaled_toolkit() { return kNotBuiltWithCuda; }
std::unique_ptr<Case> make_blockscaled_case(const DeviceInfo&, const GemmCaseSpec&) { throw CaseSkipped(kNotBuiltWithCuda); }
std::unique_ptr<Case> make_custom_case(const DeviceInfo&, const GemmProblem&, const std::string&) {
  throw CaseSkipped(kNotBuiltWithCuda);
}

}  // namespace gpubench::suites::gemm
