#pragma once
// Plain C++ reference for D = alpha * op(A) * op(B) + beta * C (column-major; op is the
// identity or the transpose), used to verify every GEMM provider on sampled output entries.
//
// Inputs come from kernels/common/random.hpp: the stored arrays hold uniform(seed, index) at
// each index, rounded to the storage type, so the reference recomputes any entry without the
// buffers. A is stored m x k (lda = m), or k x m (lda = k) when transposed, so
// op(A)(i, l) = uniform(seed_a, i + l*m), or uniform(seed_a, l + i*k) when transa; likewise
// op(B)(l, j) = uniform(seed_b, l + j*k), or uniform(seed_b, j + l*n) when transb (B stored
// n x k); C(i, j) = uniform(seed_c, i + j*m).
//
// Tolerance. For one output entry with products p_l = A(i,l) B(l,j), let S = sqrt(sum p_l^2)
// (the size of a sum of k random-signed terms). Rounding in the computation contributes
//   output rounding      u_out * |ref|
//   input rounding       2 * u_in * S     (inputs rounded inside the library, e.g. to TF32)
//   accumulation         u_acc * sqrt(k) * S   (k roundings of partial sums of size ~S)
// and an entry passes when |D - ref| <= 8 * (those terms) + 8 * u_out * |beta * C|.
// The factor 8 leaves room for the statistical spread; a wrong answer (a wrong leading dimension,
// transpose or type) is off by about S, far above it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/common/float_formats.hpp"

namespace gpubench::kernels {

enum class GemmPrecision { FP64, FP32, TF32, FP16, BF16 };

struct GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  GemmPrecision precision = GemmPrecision::FP32;
  double alpha = 1.0, beta = 0.0;
  std::uint64_t seed_a = 1, seed_b = 2, seed_c = 3;
  bool transa = false, transb = false;  // op(A) = A^T, op(B) = B^T (cuBLAS's OP_T)
};

// Leading dimensions of the stored A and B (column-major, no padding).
inline std::int64_t gemm_lda(const GemmProblem& p) { return p.transa ? p.k : p.m; }
inline std::int64_t gemm_ldb(const GemmProblem& p) { return p.transb ? p.n : p.k; }

// Storage type of A, B, C and D for each precision (TF32 stores fp32 and rounds inside).
Storage gemm_storage(GemmPrecision p);

struct GemmUnitRoundoff {
  double u_in, u_acc, u_out;
};
GemmUnitRoundoff gemm_unit_roundoff(GemmPrecision p);

// Output entries to check: all of them when m*n <= max_samples, otherwise the four corners and
// a fixed-seed random sample, max_samples in all.
std::vector<std::pair<std::int64_t, std::int64_t>> gemm_sample_entries(std::int64_t m, std::int64_t n,
                                                                       std::size_t max_samples = 1024);

struct GemmCheckResult {
  bool passed = true;
  std::int64_t checked = 0;
  double max_error = 0;  // max |D - ref| / tolerance
  std::string detail;    // the worst entry when failed
};

// `d_value(i, j)` returns the provider's D(i, j) as a double.
GemmCheckResult check_gemm(const GemmProblem& problem, const std::vector<std::pair<std::int64_t, std::int64_t>>& entries,
                           const std::function<double(std::int64_t, std::int64_t)>& d_value);

// op(A)(i, l), op(B)(l, j) and C(i, j) as stored (after rounding).
double gemm_a(const GemmProblem& p, std::int64_t i, std::int64_t l);
double gemm_b(const GemmProblem& p, std::int64_t l, std::int64_t j);
double gemm_c(const GemmProblem& p, std::int64_t i, std::int64_t j);

}  // namespace gpubench::kernels
