// The gemm suite's providers, for the fuzz build only: planning (what the fuzzers drive) never
// makes a case, and the GPU providers need nvcc-built kernels this CUDA-free build lacks.
#include <stdexcept>

#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/gemm_tune.hpp"
#include "kernels/gemm/custom_gemm.hpp"

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

// The custom kernels' names are real (the provider axis lists them); their cases need nvcc.
std::vector<std::string> custom_variants() {
  std::vector<std::string> out;
  for (const kernels::CustomGemmSpec& s : kernels::custom_gemm_specs()) out.emplace_back(s.name);
  return out;
}
std::optional<std::string> custom_unsupported(const DeviceInfo&, const GemmProblem&, const std::string&) {
  return std::string("fuzz build: no custom GEMM kernels");
}
std::unique_ptr<Case> make_custom_case(const DeviceInfo&, const GemmProblem&, const std::string&) { no_cases(); }

}  // namespace gpubench::suites::gemm
