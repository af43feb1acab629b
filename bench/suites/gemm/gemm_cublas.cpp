// cuBLAS provider: cublasGemmEx (cublasGemmStridedBatchedEx for batch > 1) on the case's
// stream, D written over C in place. No fp8 (cublasGemmEx has none) and no fused epilogues.
#include <cublas_v2.h>
#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "bench/suites/gemm/gemm_gpu.hpp"
#include "kernels/blas/cublaslt.hpp"

namespace gpubench::suites::gemm {
namespace {

void check_cublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const std::string msg = fmt::format("{} failed: {}", what, cublasGetStatusString(s));
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw CaseSkipped("out of device memory: " + msg);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH) throw CaseSkipped(msg);
  throw cuda::CudaError(msg);
}

struct CublasTypes {
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  cudaDataType_t scale;  // type of alpha and beta
};

// cublasGemmEx's supported combinations (cuBLAS docs, cublasGemmEx, "supported combinations").
CublasTypes cublas_types(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::FP64: return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    case GemmPrecision::FP32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F};  // default math: no TF32
    case GemmPrecision::TF32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F};
    case GemmPrecision::FP16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case GemmPrecision::BF16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case GemmPrecision::FP16_ACC16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F, CUDA_R_16F};
    case GemmPrecision::INT8: return {CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I};
    case GemmPrecision::FP8_E4M3:
    case GemmPrecision::FP8_E5M2:
    case GemmPrecision::MXFP8:
    case GemmPrecision::NVFP4: break;  // refused by the support matrix
  }
  throw CaseSkipped("cublasGemmEx has no " + precision_name(p) + " GEMM");
}

class CublasGemmCase final : public GpuGemmCase {
 public:
  CublasGemmCase(const DeviceInfo& device, const GemmCaseSpec& spec)
      : GpuGemmCase(device, spec, /*separate_c=*/false), types_(cublas_types(spec.problem.precision)) {}

  ~CublasGemmCase() override {
    if (handle_) cublasDestroy(handle_);
  }

 protected:
  void prepare() override {
    check_cublas(cublasCreate(&handle_), "cublasCreate");
    check_cublas(cublasSetStream(handle_, stream()), "cublasSetStream");
    check_cublas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    blas_encode(problem().alpha, alpha_);
    blas_encode(problem().beta, beta_);
  }

  void enqueue_gemm() override {
    const GemmProblem& p = problem();
    const cublasOperation_t ta = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    const int lda = static_cast<int>(kernels::gemm_lda(p)), ldb = static_cast<int>(kernels::gemm_ldb(p));
    const int ldc = static_cast<int>(kernels::gemm_ldc(p));
    if (p.batch == 1) {
      check_cublas(cublasGemmEx(handle_, ta, tb, m, n, k, alpha_, a(), types_.ab, lda, b(), types_.ab, ldb, beta_, d(),
                                types_.cd, ldc, types_.compute, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
      return;
    }
    const long long sa = static_cast<long long>(kernels::gemm_a_elements(p) / static_cast<std::size_t>(p.batch));
    const long long sb = static_cast<long long>(kernels::gemm_b_elements(p) / static_cast<std::size_t>(p.batch));
    const long long sc = static_cast<long long>(kernels::gemm_c_elements(p) / static_cast<std::size_t>(p.batch));
    check_cublas(cublasGemmStridedBatchedEx(handle_, ta, tb, m, n, k, alpha_, a(), types_.ab, lda, sa, b(), types_.ab, ldb,
                                            sb, beta_, d(), types_.cd, ldc, sc, static_cast<int>(p.batch), types_.compute,
                                            CUBLAS_GEMM_DEFAULT),
                 "cublasGemmStridedBatchedEx");
  }

 private:
  void blas_encode(double v, unsigned char out[8]) const { blas::encode_scalar(types_.scale, v, out); }

  CublasTypes types_;
  cublasHandle_t handle_ = nullptr;
  alignas(8) unsigned char alpha_[8] = {}, beta_[8] = {};
};

}  // namespace

std::unique_ptr<Case> make_cublas_case(const DeviceInfo& device, const GemmCaseSpec& spec) {
  return std::make_unique<CublasGemmCase>(device, spec);
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS) {
    return "unknown";
  }
  return fmt::format("{}.{}.{}", major, minor, patch);
}

}  // namespace gpubench::suites::gemm
