#pragma once
// The gemm suite's problems in kernels/blas/cublaslt.hpp's terms, shared by the cuBLASLt
// providers (gemm_cublaslt.cpp) and the grouped loop (gemm_grouped_cublaslt.cpp).
#include "bench/suites/gemm/gemm.hpp"
#include "kernels/blas/cublaslt.hpp"

namespace gpubench::suites::gemm {

// The precision (CaseSkipped where gpubench has no cuBLASLt path for it).
blas::LtPrecision lt_precision(GemmPrecision p);
blas::LtEpilogue lt_epilogue(GemmEpilogue e);
// One product of `p` (its packed batches, its leading dimensions), with its epilogue fused or not.
blas::LtProblem lt_problem(const GemmProblem& p, bool fused_epilogue);
// The wrapper's errors: "not supported here" (or out of memory) becomes a skip with cuBLASLt's
// reason, anything else a CUDA error.
[[noreturn]] void rethrow_lt_error(const blas::LtError& e);

}  // namespace gpubench::suites::gemm
