// OpenBLAS provider: sgemm/dgemm on host buffers filled with the reference's input values,
// with every layout, leading-dimension padding, batches (one call per batch, as OpenBLAS has
// no strided-batched GEMM in its CBLAS interface) and a thread count (openblas_set_num_threads;
// threads=0 keeps OpenBLAS's default, normally one thread per core). op=grouped: the experts'
// GEMMs on their packed slices of A, B and D (grouped.hpp), split into blocks of rows that the
// host pool's threads take in turn, each a single-threaded OpenBLAS call (threads=0), or one
// call per expert with OpenBLAS's own threads (threads=N).
#include <cblas.h>
#include <fmt/format.h>

#include <atomic>
#include <vector>

#include "bench/core/errors.hpp"
#include "bench/core/resources.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/grouped.hpp"
#include "kernels/common/fill_host.hpp"
#include "kernels/memory/host_pool.hpp"

namespace gpubench::suites::gemm {
namespace {

using kernels::Storage;

// OpenBLAS's thread count when gpubench started: what threads=0 restores.
int default_threads() {
  static const int n = openblas_get_num_threads();
  return n;
}

// One sgemm/dgemm of `p` (batch 0's operands at a, b, d; D doubles as C).
void openblas_gemm(Storage storage, const GemmProblem& p, const unsigned char* a, const unsigned char* b, unsigned char* d) {
  const auto m = static_cast<blasint>(p.m), n = static_cast<blasint>(p.n), k = static_cast<blasint>(p.k);
  const auto lda = static_cast<blasint>(kernels::gemm_lda(p)), ldb = static_cast<blasint>(kernels::gemm_ldb(p));
  const auto ldc = static_cast<blasint>(kernels::gemm_ldc(p));
  const CBLAS_TRANSPOSE ta = p.trans_a ? CblasTrans : CblasNoTrans, tb = p.trans_b ? CblasTrans : CblasNoTrans;
  if (storage == Storage::F64) {
    cblas_dgemm(CblasColMajor, ta, tb, m, n, k, p.alpha, reinterpret_cast<const double*>(a), lda,
                reinterpret_cast<const double*>(b), ldb, p.beta, reinterpret_cast<double*>(d), ldc);
  } else {
    cblas_sgemm(CblasColMajor, ta, tb, m, n, k, static_cast<float>(p.alpha), reinterpret_cast<const float*>(a), lda,
                reinterpret_cast<const float*>(b), ldb, static_cast<float>(p.beta), reinterpret_cast<float*>(d), ldc);
  }
}

// OpenBLAS's thread count for a case asking for `threads` (0: the default), applied.
int apply_threads(int threads) {
  const int fallback = default_threads();  // read before any change: the first call records it
  const int n = threads > 0 ? threads : fallback;
  openblas_set_num_threads(n);
  return n;
}

// Skips the case (CaseSkipped) when `bytes` of operands and OpenBLAS's per-thread buffers do not
// fit in the address space left: OpenBLAS retries a failed buffer allocation forever (a spinning
// process under ulimit -v). Its buffers are 32 to 64 MiB each, two per thread at most.
void require_openblas_space(std::size_t bytes, int threads, const std::string& what) {
  require_address_space(bytes + static_cast<std::size_t>(threads) * (128u << 20) + (64u << 20), what);
}

class OpenblasGemmCase final : public HostCase {
 public:
  explicit OpenblasGemmCase(const GemmCaseSpec& spec)
      : spec_(spec), p_(spec.problem), storage_(kernels::gemm_storage(spec.problem.precision)) {}

  ~OpenblasGemmCase() override { openblas_set_num_threads(default_threads()); }

  void setup() override {
    const int threads = apply_threads(spec_.threads);
    const std::size_t es = kernels::storage_bytes(storage_);
    const std::size_t operands =
        (kernels::gemm_a_elements(p_) + kernels::gemm_b_elements(p_) + kernels::gemm_c_elements(p_)) * es;
    require_openblas_space(operands, threads, fmt::format("OpenBLAS {}x{}x{} GEMM on {} thread(s)", p_.m, p_.n, p_.k, threads));
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
    const std::size_t es = kernels::storage_bytes(storage_);
    const auto batch = static_cast<std::size_t>(p_.batch);
    const std::size_t sa = kernels::gemm_a_elements(p_) / batch * es, sb = kernels::gemm_b_elements(p_) / batch * es;
    const std::size_t sc = kernels::gemm_c_elements(p_) / batch * es;
    for (std::size_t i = 0; i < batch; ++i) openblas_gemm(storage_, p_, a_.data() + i * sa, b_.data() + i * sb, d_.data() + i * sc);
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

// op=grouped: the experts' GEMMs one after another, each on its own packed slices (grouped.hpp),
// then (details) one dense GEMM of the same FLOPs through OpenblasGemmCase.
class OpenblasGroupedCase final : public HostCase {
 public:
  explicit OpenblasGroupedCase(const GemmCaseSpec& spec)
      : spec_(spec), storage_(kernels::gemm_storage(spec.problem.precision)), layout_(grouped_layout(spec)) {}

  ~OpenblasGroupedCase() override { openblas_set_num_threads(default_threads()); }

  void setup() override {
    // threads=0: one OpenBLAS thread per call, the pool's threads over blocks of rows.
    const bool blocked = spec_.threads == 0 && kernels::HostPool::shared().threads() > 1;
    const int threads = blocked ? apply_threads(1) * kernels::HostPool::shared().threads() : apply_threads(spec_.threads);
    if (blocked) plan_blocks(kernels::HostPool::shared().threads());
    const std::size_t es = kernels::storage_bytes(storage_);
    require_openblas_space((layout_.a_elements + layout_.b_elements + layout_.d_elements) * es, threads,
                           fmt::format("OpenBLAS grouped GEMM ({} experts, {}x{}x{}) on {} thread(s)",
                                       layout_.groups.size(), layout_.tokens(), spec_.problem.n, spec_.problem.k, threads));
    try {
      a_.resize(layout_.a_elements * es);
      b_.resize(layout_.b_elements * es);
      d_.resize(layout_.d_elements * es);
    } catch (const std::bad_alloc&) {
      throw CaseSkipped(fmt::format("out of host memory for a grouped GEMM of {} experts", layout_.groups.size()));
    }
    for (std::size_t e = 0; e < layout_.groups.size(); ++e) {
      const GemmProblem& g = layout_.groups[e];
      kernels::fill_uniform_host(b_.data() + layout_.b_offset[e] * es, storage_, kernels::gemm_b_elements(g), g.seed_b);
      if (g.m == 0) continue;
      kernels::fill_uniform_host(a_.data() + layout_.a_offset[e] * es, storage_, kernels::gemm_a_elements(g), g.seed_a);
    }
    fill_c();
  }

  Verification verify() override {
    fill_c();
    run();
    const std::size_t es = kernels::storage_bytes(storage_);
    Verification v = check_groups(layout_, [&](std::size_t e, std::int64_t i, std::int64_t j) {
      return kernels::load_element(storage_, d_.data() + layout_.d_offset[e] * es,
                                   kernels::gemm_d_index(layout_.groups[e], i, j));
    });
    fill_c();
    return v;
  }

  void run() override {
    const std::size_t es = kernels::storage_bytes(storage_);
    if (blocks_.empty()) {
      for (std::size_t e = 0; e < layout_.groups.size(); ++e) {
        const GemmProblem& g = layout_.groups[e];
        if (g.m == 0) continue;  // an expert without tokens: no call
        openblas_gemm(storage_, g, a_.data() + layout_.a_offset[e] * es, b_.data() + layout_.b_offset[e] * es,
                      d_.data() + layout_.d_offset[e] * es);
      }
      return;
    }
    // Rows of D are independent: every block is a GEMM of its own, and the pool's threads take
    // the next block until none is left (a Zipf router's big expert is several blocks).
    std::atomic<std::size_t> next{0};
    kernels::HostPool::shared().run([&](int) {
      for (std::size_t i = next.fetch_add(1); i < blocks_.size(); i = next.fetch_add(1)) {
        const RowBlock& r = blocks_[i];
        openblas_gemm(storage_, r.problem, a_.data() + r.a_at * es, b_.data() + layout_.b_offset[r.expert] * es,
                      d_.data() + r.d_at * es);
      }
    });
  }

  Metrics metrics() const override {
    Metrics m = grouped_metrics(spec_.problem, layout_, /*separate_c=*/false);
    m.extra["threads"] = spec_.threads > 0 ? spec_.threads : blocks_.empty() ? default_threads() : kernels::HostPool::shared().threads();
    m.extra["experts"] = layout_.groups.size();
    m.extra["routing"] = routing_name(spec_.grouped.routing);
    m.extra["grouped_impl"] = blocks_.empty() ? kImpl : kBlockedImpl;
    if (!blocks_.empty()) m.extra["row_blocks"] = blocks_.size();
    return m;
  }

  // After the grouped timing: the dense reference, measured in its own case (its own buffers,
  // released before the next repetition), then OpenBLAS's threads as this case asked.
  nlohmann::ordered_json details(std::int64_t) override {
    nlohmann::ordered_json j = grouped_details(spec_, layout_, blocks_.empty() ? kImpl : kBlockedImpl, [&] {
      OpenblasGemmCase dense(dense_spec(spec_));
      return measure_dense(dense);
    });
    apply_threads(blocks_.empty() ? spec_.threads : 1);
    return j;
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    annotate_grouped(g, seconds_per_run, grouped_metrics(spec_.problem, layout_, false).flops);
  }

 private:
  static constexpr const char* kImpl = "loop of OpenBLAS sgemm/dgemm calls, one per expert with tokens";
  static constexpr const char* kBlockedImpl =
      "blocks of an expert's rows, single-threaded OpenBLAS sgemm/dgemm calls shared out over the host's threads";

  // One block of rows [r0, r0 + problem.m) of an expert: its own GEMM, on the expert's A and D
  // at those rows with the expert's leading dimensions, and the expert's whole B.
  struct RowBlock {
    std::size_t expert;
    GemmProblem problem;
    std::size_t a_at, d_at;  // elements from the start of a_ and d_
  };

  // Blocks of about tokens / (4 x threads) rows (at least 32, so each call stays a GEMM worth
  // OpenBLAS's packing), so the threads share even a skewed routing evenly.
  void plan_blocks(int threads) {
    const std::int64_t rows = std::max<std::int64_t>(32, (layout_.tokens() + 4 * threads - 1) / (4 * threads));
    for (std::size_t e = 0; e < layout_.groups.size(); ++e) {
      const GemmProblem& g = layout_.groups[e];
      for (std::int64_t r0 = 0; r0 < g.m; r0 += rows) {
        RowBlock b{e, g, 0, 0};
        b.problem.m = std::min(rows, g.m - r0);
        b.problem.lda = kernels::gemm_lda(g);
        b.problem.ldc = kernels::gemm_ldc(g);
        b.problem.ldb = kernels::gemm_ldb(g);
        // op(A)'s row r is A's row r (stored m x k) or its column r (stored k x m, transposed).
        b.a_at = layout_.a_offset[e] + static_cast<std::size_t>(g.trans_a ? r0 * kernels::gemm_lda(g) : r0);
        b.d_at = layout_.d_offset[e] + static_cast<std::size_t>(r0);
        blocks_.push_back(b);
      }
    }
  }

  void fill_c() {
    const std::size_t es = kernels::storage_bytes(storage_);
    for (std::size_t e = 0; e < layout_.groups.size(); ++e) {
      const GemmProblem& g = layout_.groups[e];
      if (g.m == 0) continue;
      kernels::fill_uniform_host(d_.data() + layout_.d_offset[e] * es, storage_, kernels::gemm_c_elements(g), g.seed_c);
    }
  }

  GemmCaseSpec spec_;
  Storage storage_;
  GroupedLayout layout_;
  std::vector<unsigned char> a_, b_, d_;
  std::vector<RowBlock> blocks_;  // empty: one call per expert with OpenBLAS's threads
};

}  // namespace

std::unique_ptr<Case> make_openblas_grouped_case(const GemmCaseSpec& spec) {
  return std::make_unique<OpenblasGroupedCase>(spec);
}

std::unique_ptr<Case> make_openblas_case(const GemmCaseSpec& spec) { return std::make_unique<OpenblasGemmCase>(spec); }

std::string openblas_version() { return openblas_get_config(); }

}  // namespace gpubench::suites::gemm
