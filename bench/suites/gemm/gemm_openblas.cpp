// OpenBLAS provider: sgemm/dgemm on host buffers filled with the reference's input values.
#include <cblas.h>
#include <fmt/format.h>

#include <vector>

#include "bench/core/errors.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "kernels/common/fill.cuh"

namespace gpubench::suites::gemm {
namespace {

using kernels::Storage;

class OpenblasGemmCase final : public HostCase {
 public:
  explicit OpenblasGemmCase(const GemmProblem& p) : p_(p), storage_(kernels::gemm_storage(p.precision)) {}

  void setup() override {
    const auto sz = [](std::int64_t a, std::int64_t b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); };
    try {
      a_.resize(sz(p_.m, p_.k) * kernels::storage_bytes(storage_));
      b_.resize(sz(p_.k, p_.n) * kernels::storage_bytes(storage_));
      d_.resize(sz(p_.m, p_.n) * kernels::storage_bytes(storage_));
    } catch (const std::bad_alloc&) {
      throw CaseSkipped(fmt::format("out of host memory for a {}x{}x{} GEMM", p_.m, p_.n, p_.k));
    }
    kernels::fill_uniform_host(a_.data(), storage_, sz(p_.m, p_.k), p_.seed_a);
    kernels::fill_uniform_host(b_.data(), storage_, sz(p_.k, p_.n), p_.seed_b);
    kernels::fill_uniform_host(d_.data(), storage_, sz(p_.m, p_.n), p_.seed_c);
  }

  Verification verify() override {
    run();
    const auto entries = kernels::gemm_sample_entries(p_.m, p_.n);
    auto r = kernels::check_gemm(p_, entries, [&](std::int64_t i, std::int64_t j) {
      return kernels::load_element(storage_, d_.data(), static_cast<std::size_t>(i + j * p_.m));
    });
    return to_verification(r, "CPU reference (double) on sampled entries");
  }

  void run() override {
    const auto m = static_cast<blasint>(p_.m), n = static_cast<blasint>(p_.n), k = static_cast<blasint>(p_.k);
    const auto lda = static_cast<blasint>(kernels::gemm_lda(p_)), ldb = static_cast<blasint>(kernels::gemm_ldb(p_));
    const CBLAS_TRANSPOSE ta = p_.transa ? CblasTrans : CblasNoTrans, tb = p_.transb ? CblasTrans : CblasNoTrans;
    if (storage_ == Storage::F64) {
      cblas_dgemm(CblasColMajor, ta, tb, m, n, k, p_.alpha, reinterpret_cast<const double*>(a_.data()), lda,
                  reinterpret_cast<const double*>(b_.data()), ldb, p_.beta, reinterpret_cast<double*>(d_.data()), m);
    } else {
      cblas_sgemm(CblasColMajor, ta, tb, m, n, k, static_cast<float>(p_.alpha), reinterpret_cast<const float*>(a_.data()),
                  lda, reinterpret_cast<const float*>(b_.data()), ldb, static_cast<float>(p_.beta),
                  reinterpret_cast<float*>(d_.data()), m);
    }
  }

  Metrics metrics() const override {
    const double elems = static_cast<double>(p_.m * p_.k + p_.k * p_.n + p_.m * p_.n);
    return {gemm_flops(p_), elems * static_cast<double>(kernels::storage_bytes(storage_)),
            p_.precision == GemmPrecision::FP64 ? "fp64" : "fp32"};
  }

 private:
  GemmProblem p_;
  Storage storage_;
  std::vector<unsigned char> a_, b_, d_;
};

}  // namespace

std::unique_ptr<Case> make_openblas_case(const GemmProblem& problem) {
  return std::make_unique<OpenblasGemmCase>(problem);
}

std::string openblas_version() { return openblas_get_config(); }

}  // namespace gpubench::suites::gemm
