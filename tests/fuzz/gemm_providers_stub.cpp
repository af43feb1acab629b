// The gemm suite's OpenBLAS provider, for the fuzz build only: planning (what the fuzzers drive)
// never makes a case. The GPU providers need nvcc-built kernels this CUDA-free build lacks:
// bench/suites/gemm/gemm_gpu_none.cpp, the main build's stand-in without CUDA, is linked instead.
#include <stdexcept>

#include "bench/suites/gemm/gemm.hpp"

namespace gpubench::suites::gemm {

std::unique_ptr<Case> make_openblas_case(const GemmCaseSpec&) { throw std::logic_error("fuzz build: no gemm cases"); }
std::unique_ptr<Case> make_openblas_grouped_case(const GemmCaseSpec&) {
  throw std::logic_error("fuzz build: no gemm cases");
}
std::string openblas_version() { return "fuzz"; }

}  // namespace gpubench::suites::gemm
