// The gemm suite's providers, for the fuzz build only: planning (what the fuzzers drive) never
// makes a case, and the GPU providers need nvcc-built kernels this CUDA-free build lacks.
#include <stdexcept>

#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/gemm_tune.hpp"

namespace gpubench::suites::gemm {

namespace {
[[noreturn]] void no_cases() { throw std::logic_error("fuzz build: no gemm cases"); }
}  // namespace

std::unique_ptr<Case> make_cublas_case(const DeviceInfo&, const GemmCaseSpec&) { no_cases(); }
std::unique_ptr<Case> make_cublaslt_case(const DeviceInfo&, const GemmCaseSpec&) { no_cases(); }
std::unique_ptr<Case> make_openblas_case(const GemmCaseSpec&) { no_cases(); }
std::string cublas_version() { return "fuzz"; }
std::string cublaslt_version() { return "fuzz"; }
std::string openblas_version() { return "fuzz"; }
TuningKey tuning_key(const DeviceInfo&, const GemmCaseSpec&) { no_cases(); }
TuningEntry tune_cublaslt(const DeviceInfo&, const GemmCaseSpec&, int) { no_cases(); }

}  // namespace gpubench::suites::gemm
