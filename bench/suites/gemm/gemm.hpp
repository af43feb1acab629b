#pragma once
// The `gemm` suite: D = epilogue(alpha * op(A) op(B) + beta * C), column-major (cuBLAS's
// convention), optionally a strided batch, through several providers:
//   cublas          cublasGemmEx / cublasGemmStridedBatchedEx
//   cublaslt        cublasLtMatmul with the heuristic's first algorithm
//   cublaslt-tuned  the fastest of up to --lt-candidates heuristic algorithms (first included),
//                   or the tuning cache's algorithm (--tuning-cache)
//   custom:<v>      gpubench's own kernels (gemm_custom.cpp)
//   openblas        sgemm/dgemm on the CPU
// Axes: provider, dtype, layout (nn nt tn tt), m, n, k, batch, pad (leading-dimension padding),
// alpha, beta, epilogue (none bias gelu bias-gelu), fusion (fused: in the GEMM; separate: the
// GEMM then an elementwise kernel), threads (OpenBLAS threads, 0 = its default); op (gemm, or
// grouped: the GEMMs of a mixture-of-experts layer's experts, grouped.hpp), experts and routing
// (grouped only).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/suite.hpp"
#include "bench/suites/gemm/routing.hpp"
#include "kernels/gemm/gemm_reference.hpp"

namespace gpubench::suites::gemm {

using kernels::GemmEpilogue;
using kernels::GemmPrecision;
using kernels::GemmProblem;

// ---- Names ----
GemmPrecision parse_precision(const std::string& dtype);  // fp64 ... int8; throws std::logic_error
std::string precision_name(GemmPrecision p);
GemmEpilogue parse_epilogue(const std::string& name);      // none bias gelu bias-gelu
std::string epilogue_name(GemmEpilogue e);
std::string layout_name(const GemmProblem& p);             // "nn", "tn", ...
const std::vector<std::string>& dtype_names();
const std::vector<std::string>& builtin_providers();       // cublas cublaslt cublaslt-tuned openblas

enum class Fusion { Fused, Separate };

// op=gemm: one product (or a strided batch). op=grouped: the GEMMs of one mixture-of-experts
// layer: the problem's m tokens are routed over `experts` experts, and expert e computes
// [M_e x k] x [k x n] with its own k x n weight matrix (grouped.hpp).
enum class GemmOp { Gemm, Grouped };
struct GroupedGemm {
  std::int64_t experts = 8;
  Routing routing = Routing::Uniform;
};

// Everything one case needs beyond the arithmetic problem.
struct GemmCaseSpec {
  std::string provider;
  GemmProblem problem;
  Fusion fusion = Fusion::Fused;
  int threads = 0;  // OpenBLAS only; 0: its default
  GemmOp op = GemmOp::Gemm;
  GroupedGemm grouped;  // op=grouped only
};
GemmCaseSpec spec_from(const Point& point);
GemmProblem problem_from(const Point& point);

// ---- Support matrix (pure; unit-tested) ----
// Why `spec` cannot run on `device`, or nullopt. Covers device kind vs provider, compute
// capability, precision vs provider, the TN rule for fp8 and int8 in cuBLASLt, integer
// alpha/beta for int8, epilogues (fused only through cuBLASLt; floating outputs only), and
// 32-bit dimension limits. Custom providers are asked through custom_unsupported.
std::optional<std::string> gemm_unsupported(const DeviceInfo& device, const GemmCaseSpec& spec);
// op=grouped (checked first by gemm_unsupported): OpenBLAS on the CPU, cuBLASLt on GPUs
// (provider=cublaslt; not the tuned one), no batch, padding or epilogue, and on GPUs the
// precisions without per-tensor scales or the TN rule (fp64 fp32 tf32 fp16 bf16 fp16-acc16).
std::optional<std::string> grouped_unsupported(const DeviceInfo& device, const GemmCaseSpec& spec);

// ---- Metrics ----
// The datasheet figure a precision is compared with (data/gpus.json peak keys).
std::string peak_key(GemmPrecision p);
double gemm_flops(const GemmProblem& p);  // batch * (2 m n k (+ 2 m n when beta != 0))
// flops, minimal traffic (A, B read once; C read when beta != 0; D written; bias read),
// footprint (the buffers with padding; `separate_c`: C and D are different buffers), peak key,
// integer ops for int8.
Metrics gemm_metrics(const GemmProblem& p, bool separate_c);

std::unique_ptr<Suite> make_suite();

// gpubench.summaries.gemm (gemm_summary.cpp): `fusion` rows (the same case fused and separate:
// fused_s, separate_s, fusion_speedup) and `tuning` rows (cublaslt-tuned: gain_pct and the
// algorithms; with the cublaslt case beside it, cublaslt_s and measured_gain_pct).
nlohmann::ordered_json summarize_gemm(const std::vector<nlohmann::ordered_json>& entries);

// ---- Run settings (gpubench run / tune options the suite reads) ----
class TuningCache;
struct GemmRunSettings {
  int lt_candidates = 32;                    // --lt-candidates
  std::shared_ptr<const TuningCache> cache;  // --tuning-cache; null: none
};
void configure(GemmRunSettings settings);
const GemmRunSettings& settings();

// ---- Providers, one file each ----
std::unique_ptr<Case> make_cublas_case(const DeviceInfo& device, const GemmCaseSpec& spec);
std::unique_ptr<Case> make_cublaslt_case(const DeviceInfo& device, const GemmCaseSpec& spec);
std::unique_ptr<Case> make_openblas_case(const GemmCaseSpec& spec);
// op=grouped: one sgemm/dgemm per expert with tokens (gemm_openblas.cpp); one cublasLtMatmul
// per expert with tokens on one stream (gemm_grouped_cublaslt.cpp; cuBLASLt in CUDA 13.0 has no
// grouped GEMM of its own).
std::unique_ptr<Case> make_openblas_grouped_case(const GemmCaseSpec& spec);
std::unique_ptr<Case> make_cublaslt_grouped_case(const DeviceInfo& device, const GemmCaseSpec& spec);
std::string cublas_version();
std::string cublaslt_version();
std::string openblas_version();

// Our own kernels: the variants after "custom:" and why one cannot run a problem here (nullopt:
// it can; both gemm_suite.cpp), and the case (gemm_custom.cpp).
std::vector<std::string> custom_variants();
std::optional<std::string> custom_unsupported(const DeviceInfo& device, const GemmProblem& problem,
                                              const std::string& variant);
std::unique_ptr<Case> make_custom_case(const DeviceInfo& device, const GemmProblem& problem, const std::string& variant);
// Whether this binary has the sm_90a WGMMA GEMM code (gemm_custom.cpp; false without CUDA).
bool wgmma_gemm_built();
// mxfp8 / nvfp4 through cuBLASLt's block scaling (gemm_blockscaled_cublaslt.cpp): whether this
// binary has it (built with CUDA 12.8 or newer; false without CUDA), and the case.
bool block_scaled_gemm_built();
std::string block_scaled_toolkit();  // "built with CUDA 12.4": why a build lacks it
std::unique_ptr<Case> make_blockscaled_case(const DeviceInfo& device, const GemmCaseSpec& spec);
// summaries.gemm.custom_vs_cublas (gemm_custom_summary.cpp): each custom case as a % of cuBLAS
// on the same case.
nlohmann::ordered_json summarize_custom_vs_cublas(const std::vector<nlohmann::ordered_json>& entries);

// Turns a reference check into the harness's verification record.
Verification to_verification(const kernels::GemmCheckResult& r, const std::string& method);

}  // namespace gpubench::suites::gemm
