// op=grouped on GPUs through cuBLASLt. cuBLASLt in CUDA 13.0 (cublasLt.h, cuBLAS 13.1) has no
// grouped GEMM of its own (cuBLAS has cublasGemmGroupedBatchedEx, which gpubench does not use
// yet), so this is the batched fallback: one cublasLtMatmul per expert with tokens, one after
// another on the case's stream, each with the heuristic's first algorithm that runs for its
// shape (as provider=cublaslt), separate C and D, the recommended workspace shared by all.
// Named in the results: details.grouped_impl = "loop of cublasLtMatmul calls, ...".
// Verified per expert against the CPU reference before timing (grouped.hpp); the dense
// reference of the same FLOPs is the cublaslt provider's own case.
#include <fmt/format.h>

#include <vector>

#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/gemm_cublaslt.hpp"
#include "bench/suites/gemm/grouped.hpp"
#include "kernels/blas/cublaslt.hpp"
#include "kernels/common/fill.cuh"

namespace gpubench::suites::gemm {
namespace {

using kernels::Storage;

constexpr const char* kImpl =
    "loop of cublasLtMatmul calls, one per expert with tokens, on one stream (cuBLASLt in this toolkit has no grouped GEMM)";

class CublasLtGroupedCase final : public CudaCase {
 public:
  CublasLtGroupedCase(const DeviceInfo& device, const GemmCaseSpec& spec)
      : CudaCase(device), spec_(spec), st_(kernels::gemm_storages(spec.problem.precision)), layout_(grouped_layout(spec)) {}

  void setup() override {
    const std::size_t sa = kernels::storage_bytes(st_.a), sb = kernels::storage_bytes(st_.b);
    const std::size_t sc = kernels::storage_bytes(st_.c);
    a_ = cuda::DeviceBuffer(layout_.a_elements * sa);
    b_ = cuda::DeviceBuffer(layout_.b_elements * sb);
    c_ = cuda::DeviceBuffer(layout_.d_elements * sc);
    d_ = cuda::DeviceBuffer(layout_.d_elements * sc);
    fill_inputs();
    synchronize();
    try {
      handle_ = std::make_unique<blas::LtHandle>();
      const std::size_t ws = blas::recommended_workspace_bytes(device().cc_major);
      workspace_ = cuda::DeviceBuffer(ws);
      for (std::size_t e = 0; e < layout_.groups.size(); ++e) {
        const GemmProblem& g = layout_.groups[e];
        if (g.m == 0) continue;  // an expert without tokens: no call
        Group grp;
        grp.expert = e;
        grp.a = a_.as<unsigned char>() + layout_.a_offset[e] * sa;
        grp.b = b_.as<unsigned char>() + layout_.b_offset[e] * sb;
        grp.c = c_.as<unsigned char>() + layout_.d_offset[e] * sc;
        grp.d = d_.as<unsigned char>() + layout_.d_offset[e] * sc;
        grp.matmul = std::make_unique<blas::LtMatmul>(*handle_, lt_problem(g, /*fused_epilogue=*/false), ws);
        // An expert's operands are slices of packed buffers (a bf16 expert's A can sit 128 bytes
        // into a 256-byte line): the heuristic is told their real alignment.
        grp.matmul->prefer_alignment(grp.a, grp.b, grp.c, grp.d);
        grp.candidate = first_that_runs(grp);
        groups_.push_back(std::move(grp));
      }
    } catch (const blas::LtError& e) {
      rethrow_lt_error(e);
    }
    synchronize();
  }

  Verification verify() override {
    fill_inputs();
    run();
    synchronize();
    const std::size_t es = kernels::storage_bytes(st_.c);
    std::vector<unsigned char> host;
    if (d_.bytes() <= (std::size_t{256} << 20)) {
      host.resize(d_.bytes());
      GPUBENCH_CUDA_CHECK(cudaMemcpy(host.data(), d_.get(), d_.bytes(), cudaMemcpyDeviceToHost));
    }
    Verification v = check_groups(layout_, [&](std::size_t e, std::int64_t i, std::int64_t j) {
      const std::size_t idx = layout_.d_offset[e] + kernels::gemm_d_index(layout_.groups[e], i, j);
      if (!host.empty()) return kernels::load_element(st_.c, host.data(), idx);
      unsigned char one[8];
      GPUBENCH_CUDA_CHECK(cudaMemcpy(one, d_.as<unsigned char>() + idx * es, es, cudaMemcpyDeviceToHost));
      return kernels::load_element(st_.c, one, 0);
    });
    fill_inputs();
    synchronize();
    return v;
  }

  void run() override {
    for (const Group& g : groups_) {
      const cublasStatus_t s = g.matmul->enqueue(g.a, g.b, g.c, g.d, g.candidate.algo, workspace_.get(), stream());
      if (s != CUBLAS_STATUS_SUCCESS) {
        rethrow_lt_error(blas::LtError(s, fmt::format("cublasLtMatmul failed for expert {}: {}", g.expert, cublasLtGetStatusString(s))));
      }
    }
  }

  Metrics metrics() const override {
    Metrics m = grouped_metrics(spec_.problem, layout_, /*separate_c=*/true);
    m.extra["experts"] = layout_.groups.size();
    m.extra["routing"] = routing_name(spec_.grouped.routing);
    m.extra["grouped_impl"] = kImpl;
    m.extra["calls_per_run"] = groups_.size();
    if (!groups_.empty()) m.extra["algorithm_first_expert"] = blas::to_string(groups_.front().candidate.config);
    return m;
  }

  // After the grouped timing: the same FLOPs as one dense GEMM through the cublaslt provider.
  nlohmann::ordered_json details(std::int64_t) override {
    return grouped_details(spec_, layout_, kImpl, [&] {
      GemmCaseSpec dense = dense_spec(spec_);
      dense.provider = "cublaslt";
      std::unique_ptr<Case> c = make_cublaslt_case(device(), dense);
      return measure_dense(*c);
    });
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    annotate_grouped(g, seconds_per_run, grouped_metrics(spec_.problem, layout_, true).flops);
  }

 private:
  struct Group {
    std::size_t expert = 0;
    const void *a = nullptr, *b = nullptr, *c = nullptr;
    void* d = nullptr;
    std::unique_ptr<blas::LtMatmul> matmul;
    blas::LtCandidate candidate{};
  };

  void fill_inputs() {
    const std::size_t sa = kernels::storage_bytes(st_.a), sb = kernels::storage_bytes(st_.b);
    const std::size_t sc = kernels::storage_bytes(st_.c);
    for (std::size_t e = 0; e < layout_.groups.size(); ++e) {
      const GemmProblem& g = layout_.groups[e];
      GPUBENCH_CUDA_CHECK(kernels::fill_uniform(b_.as<unsigned char>() + layout_.b_offset[e] * sb, st_.b,
                                                kernels::gemm_b_elements(g), g.seed_b, stream()));
      if (g.m == 0) continue;
      GPUBENCH_CUDA_CHECK(kernels::fill_uniform(a_.as<unsigned char>() + layout_.a_offset[e] * sa, st_.a,
                                                kernels::gemm_a_elements(g), g.seed_a, stream()));
      GPUBENCH_CUDA_CHECK(kernels::fill_uniform(c_.as<unsigned char>() + layout_.d_offset[e] * sc, st_.c,
                                                kernels::gemm_c_elements(g), g.seed_c, stream()));
    }
  }

  // The heuristic's first algorithm that cublasLtMatmul accepts for this expert's shape (the
  // heuristic does not promise that its answers run; see gemm_cublaslt.cpp).
  blas::LtCandidate first_that_runs(const Group& g) {
    const std::vector<blas::LtCandidate> all = g.matmul->heuristics(kHeuristicTries);
    if (all.empty()) throw CaseSkipped(fmt::format("cuBLASLt has no algorithm for expert {}'s shape on this GPU", g.expert));
    cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
    for (const blas::LtCandidate& cand : all) {
      last = g.matmul->enqueue(g.a, g.b, g.c, g.d, cand.algo, workspace_.get(), stream());
      if (last == CUBLAS_STATUS_SUCCESS) {
        synchronize();
        return cand;
      }
    }
    const std::string why = fmt::format("cublasLtMatmul refused each of the {} algorithm(s) cuBLASLt's heuristic returned "
                                        "for expert {}: {}",
                                        all.size(), g.expert, cublasLtGetStatusString(last));
    if (last == CUBLAS_STATUS_NOT_SUPPORTED) throw CaseSkipped(why);
    rethrow_lt_error(blas::LtError(last, why));
  }
  static constexpr int kHeuristicTries = 8;

  GemmCaseSpec spec_;
  kernels::GemmStorages st_;
  GroupedLayout layout_;
  cuda::DeviceBuffer a_, b_, c_, d_, workspace_;
  std::unique_ptr<blas::LtHandle> handle_;
  std::vector<Group> groups_;  // experts with tokens, in expert order
};

}  // namespace

std::unique_ptr<Case> make_cublaslt_grouped_case(const DeviceInfo& device, const GemmCaseSpec& spec) {
  return std::make_unique<CublasLtGroupedCase>(device, spec);
}

}  // namespace gpubench::suites::gemm
