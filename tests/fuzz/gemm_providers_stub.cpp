// The gemm suite's providers, for the fuzz build only: planning (what the fuzzers drive) never
// makes a case, and the cuBLAS provider needs nvcc-built kernels this CUDA-free build lacks.
#include <stdexcept>

#include "bench/suites/gemm/gemm.hpp"

namespace gpubench::suites::gemm {

std::unique_ptr<Case> make_cublas_case(const DeviceInfo&, const GemmProblem&) {
  throw std::logic_error("fuzz build: no gemm cases");
}
std::unique_ptr<Case> make_openblas_case(const GemmProblem&) { throw std::logic_error("fuzz build: no gemm cases"); }
std::string cublas_version() { return "fuzz"; }
std::string openblas_version() { return "fuzz"; }

}  // namespace gpubench::suites::gemm
