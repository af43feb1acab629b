// cuBLAS provider: cublasGemmEx on the case's stream, inputs filled on the device with the
// reference's counter-based random values.
#include <cublas_v2.h>
#include <fmt/format.h>

#include <vector>

#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "kernels/common/fill.cuh"

namespace gpubench::suites::gemm {
namespace {

using kernels::Storage;

void check_cublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const std::string msg = fmt::format("{} failed: {}", what, cublasGetStatusString(s));
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw CaseSkipped("out of device memory: " + msg);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH) throw CaseSkipped(msg);
  throw cuda::CudaError(msg);
}

struct CublasTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

CublasTypes cublas_types(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::FP64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case GemmPrecision::FP32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F};  // no TF32: the default math mode
    case GemmPrecision::TF32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case GemmPrecision::FP16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case GemmPrecision::BF16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  }
  return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
}

class CublasGemmCase final : public CudaCase {
 public:
  CublasGemmCase(const DeviceInfo& device, const GemmProblem& p)
      : CudaCase(device), p_(p), storage_(kernels::gemm_storage(p.precision)), types_(cublas_types(p.precision)) {}

  ~CublasGemmCase() override {
    if (handle_) cublasDestroy(handle_);
  }

  void setup() override {
    check_cublas(cublasCreate(&handle_), "cublasCreate");
    check_cublas(cublasSetStream(handle_, stream()), "cublasSetStream");
    check_cublas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    const std::size_t es = kernels::storage_bytes(storage_);
    a_ = cuda::DeviceBuffer(count(p_.m, p_.k) * es);
    b_ = cuda::DeviceBuffer(count(p_.k, p_.n) * es);
    d_ = cuda::DeviceBuffer(count(p_.m, p_.n) * es);
    GPUBENCH_CUDA_CHECK(kernels::fill_uniform(a_.get(), storage_, count(p_.m, p_.k), p_.seed_a, stream()));
    GPUBENCH_CUDA_CHECK(kernels::fill_uniform(b_.get(), storage_, count(p_.k, p_.n), p_.seed_b, stream()));
    GPUBENCH_CUDA_CHECK(kernels::fill_uniform(d_.get(), storage_, count(p_.m, p_.n), p_.seed_c, stream()));
    synchronize();
  }

  Verification verify() override {
    run();
    synchronize();
    const auto entries = kernels::gemm_sample_entries(p_.m, p_.n);
    const std::size_t es = kernels::storage_bytes(storage_);
    std::vector<unsigned char> host;
    if (d_.bytes() <= (std::size_t{64} << 20)) {
      host.resize(d_.bytes());
      GPUBENCH_CUDA_CHECK(cudaMemcpy(host.data(), d_.get(), d_.bytes(), cudaMemcpyDeviceToHost));
    }
    auto value = [&](std::int64_t i, std::int64_t j) {
      const std::size_t idx = static_cast<std::size_t>(i + j * p_.m);
      if (!host.empty()) return kernels::load_element(storage_, host.data(), idx);
      unsigned char one[8];
      GPUBENCH_CUDA_CHECK(cudaMemcpy(one, d_.as<unsigned char>() + idx * es, es, cudaMemcpyDeviceToHost));
      return kernels::load_element(storage_, one, 0);
    };
    return to_verification(kernels::check_gemm(p_, entries, value), "CPU reference (double) on sampled entries");
  }

  void run() override {
    const double alpha64 = p_.alpha, beta64 = p_.beta;
    const float alpha32 = static_cast<float>(p_.alpha), beta32 = static_cast<float>(p_.beta);
    const bool f64 = types_.compute == CUBLAS_COMPUTE_64F;
    check_cublas(cublasGemmEx(handle_, p_.transa ? CUBLAS_OP_T : CUBLAS_OP_N, p_.transb ? CUBLAS_OP_T : CUBLAS_OP_N,
                              static_cast<int>(p_.m), static_cast<int>(p_.n), static_cast<int>(p_.k),
                              f64 ? static_cast<const void*>(&alpha64) : &alpha32, a_.get(), types_.data,
                              static_cast<int>(kernels::gemm_lda(p_)), b_.get(), types_.data,
                              static_cast<int>(kernels::gemm_ldb(p_)),
                              f64 ? static_cast<const void*>(&beta64) : &beta32, d_.get(), types_.data,
                              static_cast<int>(p_.m), types_.compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
  }

  Metrics metrics() const override {
    const double elems = static_cast<double>(count(p_.m, p_.k) + count(p_.k, p_.n) + count(p_.m, p_.n));
    return {gemm_flops(p_), elems * static_cast<double>(kernels::storage_bytes(storage_)), peak_key(p_.precision)};
  }

 private:
  static std::size_t count(std::int64_t a, std::int64_t b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }

  GemmProblem p_;
  Storage storage_;
  CublasTypes types_;
  cublasHandle_t handle_ = nullptr;
  cuda::DeviceBuffer a_, b_, d_;
};

}  // namespace

std::unique_ptr<Case> make_cublas_case(const DeviceInfo& device, const GemmProblem& problem) {
  return std::make_unique<CublasGemmCase>(device, problem);
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
