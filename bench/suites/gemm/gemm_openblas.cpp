// OpenBLAS provider: sgemm/dgemm on host buffers filled with the reference's input values,
// with every layout, leading-dimension padding, batches (one call per batch, as OpenBLAS has
// no strided-batched GEMM in its CBLAS interface) and a thread count (openblas_set_num_threads;
// threads=0 keeps OpenBLAS's default, normally one thread per core).
#include <cblas.h>
#include <fmt/format.h>

#include <vector>

#include "bench/core/errors.hpp"
#include "bench/core/resources.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "kernels/common/fill_host.hpp"

namespace gpubench::suites::gemm {
namespace {

using kernels::Storage;

// OpenBLAS's thread count when gpubench started: what threads=0 restores.
int default_threads() {
  static const int n = openblas_get_num_threads();
  return n;
}

class OpenblasGemmCase final : public HostCase {
 public:
  explicit OpenblasGemmCase(const GemmCaseSpec& spec)
      : spec_(spec), p_(spec.problem), storage_(kernels::gemm_storage(spec.problem.precision)) {}

  ~OpenblasGemmCase() override { openblas_set_num_threads(default_threads()); }

  void setup() override {
    const int threads = spec_.threads > 0 ? spec_.threads : default_threads();
    openblas_set_num_threads(threads);
    const std::size_t es = kernels::storage_bytes(storage_);
    // OpenBLAS retries a failed buffer allocation forever (a spinning process under ulimit -v):
    // its per-thread buffers (32 to 64 MiB each, two per thread at most) and the operands must
    // fit in the address space left, or the case is skipped before OpenBLAS is called.
    const std::size_t operands =
        (kernels::gemm_a_elements(p_) + kernels::gemm_b_elements(p_) + kernels::gemm_c_elements(p_)) * es;
    require_address_space(operands + static_cast<std::size_t>(threads) * (128u << 20) + (64u << 20),
                          fmt::format("OpenBLAS {}x{}x{} GEMM on {} thread(s)", p_.m, p_.n, p_.k, threads));
    try {
      a_.resize(kernels::gemm_a_elements(p_) * es);
      b_.resize(kernels::gemm_b_elements(p_) * es);
      d_.resize(kernels::gemm_c_elements(p_) * es);
    } catch (const std::bad_alloc&) {
      throw CaseSkipped(fmt::format("out of host memory for a {}x{}x{} GEMM", p_.m, p_.n, p_.k));
    }
    kernels::fill_uniform_host(a_.data(), storage_, kernels::gemm_a_elements(p_), p_.seed_a);
    kernels::fill_uniform_host(b_.data(), storage_, kernels::gemm_b_elements(p_), p_.seed_b);
    fill_c();
  }

  Verification verify() override {
    fill_c();  // D doubles as C: start from C's values
    run();
    const auto entries = kernels::gemm_sample_entries(p_.m, p_.n);
    auto r = kernels::check_gemm_batched(p_, entries, [&](std::int64_t i, std::int64_t j, std::int64_t b) {
      return kernels::load_element(storage_, d_.data(), kernels::gemm_d_index(p_, i, j, b));
    });
    fill_c();
    return to_verification(r, "CPU reference (double) on sampled entries");
  }

  void run() override {
    const auto m = static_cast<blasint>(p_.m), n = static_cast<blasint>(p_.n), k = static_cast<blasint>(p_.k);
    const auto lda = static_cast<blasint>(kernels::gemm_lda(p_)), ldb = static_cast<blasint>(kernels::gemm_ldb(p_));
    const auto ldc = static_cast<blasint>(kernels::gemm_ldc(p_));
    const CBLAS_TRANSPOSE ta = p_.trans_a ? CblasTrans : CblasNoTrans, tb = p_.trans_b ? CblasTrans : CblasNoTrans;
    const std::size_t es = kernels::storage_bytes(storage_);
    const auto batch = static_cast<std::size_t>(p_.batch);
    const std::size_t sa = kernels::gemm_a_elements(p_) / batch * es, sb = kernels::gemm_b_elements(p_) / batch * es;
    const std::size_t sc = kernels::gemm_c_elements(p_) / batch * es;
    for (std::size_t i = 0; i < batch; ++i) {
      const unsigned char *a = a_.data() + i * sa, *b = b_.data() + i * sb;
      unsigned char* d = d_.data() + i * sc;
      if (storage_ == Storage::F64) {
        cblas_dgemm(CblasColMajor, ta, tb, m, n, k, p_.alpha, reinterpret_cast<const double*>(a), lda,
                    reinterpret_cast<const double*>(b), ldb, p_.beta, reinterpret_cast<double*>(d), ldc);
      } else {
        cblas_sgemm(CblasColMajor, ta, tb, m, n, k, static_cast<float>(p_.alpha), reinterpret_cast<const float*>(a), lda,
                    reinterpret_cast<const float*>(b), ldb, static_cast<float>(p_.beta), reinterpret_cast<float*>(d), ldc);
      }
    }
  }

  Metrics metrics() const override {
    Metrics m = gemm_metrics(p_, /*separate_c=*/false);
    m.extra["threads"] = spec_.threads > 0 ? spec_.threads : default_threads();
    return m;
  }

 private:
  void fill_c() { kernels::fill_uniform_host(d_.data(), storage_, kernels::gemm_c_elements(p_), p_.seed_c); }

  GemmCaseSpec spec_;
  GemmProblem p_;
  Storage storage_;
  std::vector<unsigned char> a_, b_, d_;
};

}  // namespace

std::unique_ptr<Case> make_openblas_case(const GemmCaseSpec& spec) { return std::make_unique<OpenblasGemmCase>(spec); }

std::string openblas_version() { return openblas_get_config(); }

}  // namespace gpubench::suites::gemm
