#pragma once
// A small RAII layer over cuBLASLt for the GEMM and training suites: one precision enum that
// picks every cuBLASLt type (A/B/C/D data types, compute type, scale type), transposes,
// leading dimensions, strided batches, alpha/beta, epilogues (bias, GELU, their training
// backward forms) and per-tensor fp8 scales; heuristic candidates; and an algorithm's full
// configuration as a plain struct that serialises and rebuilds the algorithm (tuning caches).
//
// Column-major throughout, as cuBLASLt: D = epilogue(alpha * op(A) op(B) + beta * C), op(A) is
// m x k, op(B) is k x n, C and D are m x n. Nothing here depends on the benchmark harness.
//
// Reference: cuBLAS documentation, "Using the cuBLASLt API" (cublasLtMatmul's supported type
// combinations table, fp8 and int8 layout requirements, epilogue descriptions),
// https://docs.nvidia.com/cuda/cublas/#using-the-cublaslt-api
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/blas/algo_config.hpp"

namespace gpubench::blas {

// ---- Precisions and the cuBLASLt types they map to (pure, unit-tested) ----

enum class LtPrecision {
  FP64,        // double in, double accumulate
  FP32,        // float in, float accumulate, no TF32 (CUBLAS_COMPUTE_32F)
  TF32,        // float in and out, TF32 Tensor Core math (CUBLAS_COMPUTE_32F_FAST_TF32)
  FP16,        // half in and out, fp32 accumulate
  BF16,        // bfloat16 in and out, fp32 accumulate
  FP16_ACC16,  // half in and out, half accumulate (CUBLAS_COMPUTE_16F, half alpha/beta)
  FP8_E4M3,    // A, B e4m3; C, D bf16; fp32 accumulate; sm_89+; TN only
  FP8_E5M2,    // A e5m2, B e4m3 (cuBLASLt has no e5m2 x e5m2); C, D bf16; sm_89+; TN only
  INT8,        // int8 in, int32 accumulate and out, int32 alpha/beta; TN only
};

// Canonical names: fp64 fp32 tf32 fp16 bf16 fp16-acc16 fp8-e4m3 fp8-e5m2 int8.
std::string precision_name(LtPrecision p);
std::optional<LtPrecision> parse_precision(const std::string& name);

struct LtTypes {
  cudaDataType_t a, b, c, d;
  cublasComputeType_t compute;
  cudaDataType_t scale;  // type of alpha and beta (host pointers)
};
LtTypes lt_types(LtPrecision p);
// lt_types of the problem's precision with its cd_type, a_type and b_type overrides applied.
struct LtProblem;
LtTypes problem_types(const LtProblem& p);

std::size_t data_type_bytes(cudaDataType_t t);  // 1, 2, 4 or 8; throws on a type not used here
bool is_fp8(LtPrecision p);
bool requires_tn(LtPrecision p);  // fp8 and int8: A transposed, B not (cuBLASLt's IMMA/fp8 rule)
int min_compute_capability(LtPrecision p);  // 89 for fp8, 80 otherwise (project minimum), as major*10+minor

// ---- Block scaling (MXFP8, NVFP4) ----
//
// cuBLASLt's 1D block scaling (cuBLAS 12.8+, Blackwell): A and B hold E4M3 values with a UE8M0
// scale per 32 along K (MXFP8, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0) or packed E2M1 values
// with an E4M3 scale per 16 (NVFP4, VEC16_UE4M3); the scales in the tiled layout of the cuBLAS
// docs ("1D Block Scaling Factors Layout"; kernels/gemm/block_quantize_math.hpp). TN only.
// NVFP4's fp32 tensor scales are folded into alpha (device pointer mode, LtExtraPointers).
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120800
#define GPUBENCH_LT_BLOCK_SCALING 1
#endif
enum class LtBlockScale { None, Mxfp8, Nvfp4 };
bool lt_block_scaling_built();  // this build's cuBLASLt headers have the modes above

// ---- Epilogues ----

enum class LtEpilogue {
  Default,      // D = alpha op(A) op(B) + beta C
  Bias,         // + bias[row] (bias has m entries, D's type)
  Gelu,         // GELU (tanh approximation) of the above
  BiasGelu,     // GELU(... + bias)
  GeluAux,      // GELU, and the pre-activation written to aux (training forward)
  GeluAuxBias,  // bias then GELU, pre-activation to aux
  DGelu,        // backward: D = (alpha op(A) op(B) + beta C) * GELU'(aux)
  DGeluBGrad,   // DGelu plus the bias gradient (D reduced over n, m entries) into bias
  BGradA,       // bias gradient from A: op(A) reduced over k (m entries), into bias
  BGradB,       // bias gradient from B: op(B) reduced over k (n entries), into bias
};
std::string epilogue_name(LtEpilogue e);  // none bias gelu bias-gelu gelu-aux gelu-aux-bias dgelu dgelu-bgrad bgrada bgradb
std::optional<LtEpilogue> parse_epilogue(const std::string& name);
cublasLtEpilogue_t to_cublaslt(LtEpilogue e);
bool epilogue_uses_bias(LtEpilogue e);  // reads or writes the bias pointer
bool epilogue_uses_aux(LtEpilogue e);   // reads or writes the aux pointer

// ---- Problem description ----

struct LtProblem {
  LtPrecision precision = LtPrecision::FP32;
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  // Leading dimensions; 0 means packed (the stored matrix's row count).
  std::int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  // Strided batch: batch matrices per operand, `stride_*` elements apart (0 means ld * cols).
  std::int32_t batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;
  double alpha = 1.0, beta = 0.0;  // converted to the scale type (int8: rounded to int32)
  LtEpilogue epilogue = LtEpilogue::Default;
  std::int64_t aux_ld = 0;  // 0 means m (GELU aux has D's shape)
  // Overrides the C/D type (e.g. fp8 output with a D scale, or fp32 out of fp16 inputs).
  std::optional<cudaDataType_t> cd_type;
  // Overrides A's or B's type within the precision's family (fp8: E4M3 x E5M2, the data
  // gradient of an fp8 training step, is FP8_E4M3 with b_type E5M2).
  std::optional<cudaDataType_t> a_type, b_type;
  bool fp8_fast_accum = false;  // CUBLASLT_MATMUL_DESC_FAST_ACCUM (fp8 only)
  // Block-scaled A and B (their type becomes E4M3 or E2M1; C/D and compute from `precision`,
  // BF16 or FP32 with fp32 compute). std::invalid_argument in a build without block scaling.
  LtBlockScale block_scale = LtBlockScale::None;
};

// Shape of one stored operand, as cuBLASLt's matrix layout sees it.
struct LtMatrixShape {
  cudaDataType_t type;
  std::uint64_t rows, cols;
  std::int64_t ld;
  std::int64_t batch_stride;  // elements
  std::size_t bytes() const;  // footprint of all batches: (batch-1)*stride + ld*cols elements
  std::int32_t batch;
};
struct LtShapes {
  LtMatrixShape a, b, c, d;
};
// Applies the defaults above and checks the problem (dims positive, ld >= rows); throws
// std::invalid_argument naming the first bad field.
LtShapes lt_shapes(const LtProblem& p);

// ---- Algorithm configuration (kernels/blas/algo_config.hpp) ----

AlgoConfig read_config(const cublasLtMatmulAlgo_t& algo);  // cublasLtMatmulAlgoConfigGetAttribute

// ---- Errors ----

class LtError : public std::runtime_error {
 public:
  LtError(cublasStatus_t status, const std::string& what);
  cublasStatus_t status() const { return status_; }
  // NOT_SUPPORTED / ARCH_MISMATCH / INVALID_VALUE from a heuristic or check: the combination is
  // not available here (a skip, not a failure).
  bool unsupported() const;

 private:
  cublasStatus_t status_;
};
void check(cublasStatus_t s, const char* what);  // throws LtError

// cuBLASLt's version as "major.minor.patch" (cublasLtGetVersion), for caches and results.
std::string lt_version();
// Workspace the cuBLAS docs recommend: 32 MiB on Hopper and newer, 4 MiB before
// (cuBLAS docs, cublasSetWorkspace: "recommended ... 32 MiB for Hopper, 4 MiB for others").
std::size_t recommended_workspace_bytes(int cc_major);

// ---- RAII handle and a prepared matmul ----

class LtHandle {
 public:
  LtHandle();  // cublasLtCreate; throws LtError
  ~LtHandle();
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  cublasLtHandle_t get() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

struct LtCandidate {
  cublasLtMatmulAlgo_t algo;
  std::size_t workspace_bytes = 0;
  float waves = 0;
  AlgoConfig config;
};

// Device pointers an epilogue or fp8 GEMM reads/writes; set once, used by every run.
struct LtExtraPointers {
  void* bias = nullptr;  // Bias/BiasGelu/GeluAuxBias read it; DGeluBGrad/BGradA/BGradB write it
  void* aux = nullptr;   // GeluAux* write it, DGelu* read it
  const float* a_scale = nullptr;  // fp8 per-tensor scales (device floats): D = a_scale*b_scale*(...)
  const float* b_scale = nullptr;
  const float* c_scale = nullptr;
  const float* d_scale = nullptr;  // only with an fp8 D
  float* amax_d = nullptr;         // only with an fp8 D
  // Block scaling: A's and B's block scales (cuBLASLt's tiled layout, 16-byte aligned).
  const void* a_block_scales = nullptr;
  const void* b_block_scales = nullptr;
  // alpha then beta as two device floats (fp32 scale type only): alpha computed on the device,
  // e.g. NVFP4's tensor scales folded in; switches the matmul to device pointer mode.
  const float* device_alpha_beta = nullptr;
};
// Whether a scale or amax pointer is aligned as cuBLASLt needs: on an H200 (cuBLASLt 13.1) every
// fp8 algorithm was refused ("not supported") with B's scale 4 bytes after A's, and ran with
// each scale in its own allocation. 16 bytes is asked here, the alignment cuBLASLt asks of its
// other pointers; set_pointers throws std::invalid_argument for one that is not.
bool lt_scale_pointer_aligned(const void* p);
// The alignment of an operand's address as cuBLASLt's MIN_ALIGNMENT preferences take it: the
// largest power of two dividing it, at most 256 (what the heuristic assumes when told nothing;
// null: 256). Pure, unit-tested.
std::uint32_t lt_pointer_alignment(const void* p);

class LtMatmul {
 public:
  // Builds the operation and layout descriptors and a preference allowing `workspace_limit`.
  LtMatmul(const LtHandle& handle, const LtProblem& problem, std::size_t workspace_limit);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  const LtProblem& problem() const { return p_; }
  const LtShapes& shapes() const { return shapes_; }
  const LtTypes& types() const { return types_; }
  std::size_t workspace_limit() const { return workspace_limit_; }

  void set_pointers(const LtExtraPointers& ptrs);
  // Tells the heuristic the alignment of the operands the products will run on (A, B, C, D in
  // run()'s order; lt_pointer_alignment of each): without it cuBLASLt assumes 256 bytes and may
  // choose an algorithm that the real pointers (an expert's slice of a packed buffer, a weight at
  // its layout offset) cannot run. Call before heuristics(); the choice then holds for any
  // pointers at least as aligned.
  void prefer_alignment(const void* a, const void* b, const void* c, const void* d);

  // Up to `max_count` heuristic candidates, best-estimated first. Empty when cuBLASLt has
  // none for this problem on this device; throws LtError on other failures.
  std::vector<LtCandidate> heuristics(int max_count) const;
  // The heuristic's first choice (what `cublaslt` runs); nullopt when there is none.
  std::optional<LtCandidate> first_heuristic() const;

  // Rebuilds an algorithm from its configuration and checks it against this problem
  // (cublasLtMatmulAlgoCheck). nullopt when the check fails (other device, other library).
  std::optional<LtCandidate> rebuild(const AlgoConfig& config) const;

  // Enqueues D = ... on `stream`. `workspace` must hold workspace_limit() bytes (or be null
  // when the limit is 0). Throws LtError when cuBLASLt refuses.
  void run(const void* a, const void* b, const void* c, void* d, const cublasLtMatmulAlgo_t& algo, void* workspace,
           cudaStream_t stream) const;
  // Same as run, returning the status instead of throwing (timed loops).
  cublasStatus_t enqueue(const void* a, const void* b, const void* c, void* d, const cublasLtMatmulAlgo_t& algo,
                         void* workspace, cudaStream_t stream) const;

 private:
  void release();

  cublasLtHandle_t handle_;
  LtProblem p_;
  LtShapes shapes_;
  LtTypes types_;
  std::size_t workspace_limit_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  alignas(8) unsigned char alpha_[8] = {}, beta_[8] = {};  // in the scale type
  const float* device_alpha_beta_ = nullptr;                // LtExtraPointers::device_alpha_beta
};

// alpha/beta as the bytes of `scale` (fp64, fp32, fp16 or int32); pure, unit-tested.
void encode_scalar(cudaDataType_t scale, double value, unsigned char out[8]);

}  // namespace gpubench::blas
