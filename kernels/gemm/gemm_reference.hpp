#pragma once
// Plain C++ reference for D = epilogue(alpha * s_a s_b * op(A) op(B) + beta * C) (column-major,
// cuBLAS's convention; op(X) = X or X^T; optionally a strided batch), used to verify every GEMM
// provider on sampled output entries.
//
// Inputs come from kernels/common/random.hpp: each stored buffer holds uniform(seed, index)
// rounded to its storage type at every element index (padding and batch gaps included), so the
// reference recomputes any entry without the buffers. A's stored element (r, c) of batch b
// sits at index b * lda * cols + r + c * lda; with op(A) = A^T, op(A)(i, l) is stored at
// (l, i). B and C likewise; D has C's layout. s_a, s_b are fp8 per-tensor scales (1 elsewhere).
// Integer storage holds floor(16 u): integers in [-16, 15] (float_formats.hpp).
//
// Epilogues: bias adds bias[i] (uniform(seed_bias, i) rounded to D's type) before the
// activation; gelu is the tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// (kernels/gemm/epilogue_reference.hpp).
//
// Tolerance. For one output entry with products p_l = A(i,l) B(l,j), let S = sqrt(sum p_l^2)
// (the size of a sum of k random-signed terms). Rounding in the computation contributes
//   output rounding      u_out * |ref|
//   input rounding       2 * u_in * S     (inputs rounded inside the library, e.g. to TF32)
//   accumulation         u_acc * sqrt(k) * S   (k roundings of partial sums of size ~S)
// and an entry passes when |D - ref| <= 8 * (those terms) + 8 * u_out * |beta * C|.
// The factor 8 leaves room for the statistical spread; a wrong answer (a wrong leading dimension,
// transpose or type) is off by about S, far above it. Integer GEMMs are exact (tolerance 0).
// With an epilogue, x = alpha ... + beta C + bias has the tolerance above; GELU's slope is at
// most 1.13, so that carries through scaled by 1.13, plus 8 u_out |x| for rounding x before a
// separate elementwise kernel, plus (GELU only) 8 * 2^-10 |x| for a device tanh approximation
// (which also admits the erf form of GELU, within 5e-4 of the tanh form).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/common/float_formats.hpp"

namespace gpubench::kernels {

// FP16_ACC16: fp16 in and out with fp16 accumulation. FP8_E5M2: A in e5m2, B in e4m3 (no
// library multiplies e5m2 by e5m2); both fp8 types write bf16. INT8: int8 in, int32 out.
// MXFP8 and NVFP4 are block-scaled (issue 30; block_quantize.hpp): the case's inputs are bf16
// tensors it quantises along K (E4M3 values with a UE8M0 scale per 32; E2M1 values with an E4M3
// scale per 16 and an fp32 tensor scale) and the product is written in bf16.
enum class GemmPrecision { FP64, FP32, TF32, FP16, BF16, FP16_ACC16, FP8_E4M3, FP8_E5M2, INT8, MXFP8, NVFP4 };

enum class GemmEpilogue { None, Bias, Gelu, BiasGelu };

struct GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  GemmPrecision precision = GemmPrecision::FP32;
  double alpha = 1.0, beta = 0.0;
  std::uint64_t seed_a = 1, seed_b = 2, seed_c = 3;
  bool trans_a = false, trans_b = false;   // op(A) = A^T: A stored k x m; op(B) = B^T: B stored n x k
  std::int64_t batch = 1;                  // strided batch of independent products, packed by ld * cols
  std::int64_t lda = 0, ldb = 0, ldc = 0;  // leading dimensions of stored A, B, C (= D); 0: packed
  GemmEpilogue epilogue = GemmEpilogue::None;
  std::uint64_t seed_bias = 4;
  double scale_a = 1.0, scale_b = 1.0;  // fp8 per-tensor scales (device floats the library reads)
};

struct GemmStorages {
  Storage a, b, c;  // c: C, D and the bias vector
};
GemmStorages gemm_storages(GemmPrecision p);
// Storage type of A (and of B, C, D where they match: every precision but fp8 and int8). TF32
// stores fp32 and rounds inside.
Storage gemm_storage(GemmPrecision p);
bool gemm_is_integer(GemmPrecision p);
bool gemm_is_block_scaled(GemmPrecision p);  // MXFP8, NVFP4

// Leading dimensions (the default: the stored row count) and buffer sizes in elements, all
// batches included.
std::int64_t gemm_lda(const GemmProblem& p);
std::int64_t gemm_ldb(const GemmProblem& p);
std::int64_t gemm_ldc(const GemmProblem& p);
std::size_t gemm_a_elements(const GemmProblem& p);
std::size_t gemm_b_elements(const GemmProblem& p);
std::size_t gemm_c_elements(const GemmProblem& p);  // also D's
// Buffer index of D(i, j) in batch b.
std::size_t gemm_d_index(const GemmProblem& p, std::int64_t i, std::int64_t j, std::int64_t b = 0);

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

// `d_value(i, j)` returns the provider's D(i, j) (batch 0) as a double.
GemmCheckResult check_gemm(const GemmProblem& problem, const std::vector<std::pair<std::int64_t, std::int64_t>>& entries,
                           const std::function<double(std::int64_t, std::int64_t)>& d_value);
// Batched: entry number e is checked in batch e % batch (so every batch, the last included, is
// sampled when there are enough entries); `d_value(i, j, b)`.
GemmCheckResult check_gemm_batched(const GemmProblem& problem,
                                   const std::vector<std::pair<std::int64_t, std::int64_t>>& entries,
                                   const std::function<double(std::int64_t, std::int64_t, std::int64_t)>& d_value);

// The stored input values (after rounding) of op(A)(i, l), op(B)(l, j), C(i, j) in batch b,
// and bias[i]; without scales.
double gemm_a(const GemmProblem& p, std::int64_t i, std::int64_t l, std::int64_t b = 0);
double gemm_b(const GemmProblem& p, std::int64_t l, std::int64_t j, std::int64_t b = 0);
double gemm_c(const GemmProblem& p, std::int64_t i, std::int64_t j, std::int64_t b = 0);
double gemm_bias(const GemmProblem& p, std::int64_t i);

}  // namespace gpubench::kernels
