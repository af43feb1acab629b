#pragma once
// op=grouped in the gemm suite: the GEMMs of one mixture-of-experts layer (think of each
// expert's first projection: tokens x hidden by hidden x ffn). The case's m is the layer's
// tokens M, routed over G = experts experts (routing.hpp); expert e computes
//   D_e [M_e x n] = alpha op(A_e) [M_e x k] op(B_e) [k x n] + beta C_e
// with its own weights B_e. The experts' operands sit one after another in one buffer each
// (A_0 A_1 ... packed, likewise B and D), every group a packed GemmProblem of its own with its
// own input seeds, so the gemm reference checks each group as it checks any GEMM. Experts
// without tokens are skipped (no call). Useful FLOPs: 2 n k sum(M_e) (+ 2 n sum(M_e) with beta).
//
// Each grouped case also times one dense GEMM of the same FLOPs (M x n x k, same dtype, layout
// and provider; verified first) after its own timing, with the harness's measurement policy
// (bench/core/measure.hpp, default options: 0.05 s warm-up, 2 ms batches, at least 0.5 s and 10
// samples; the mean time per run, as the grouped headline), and reports
//   metrics.pct_of_dense = 100 * dense time / grouped time   (grouped TFLOP/s as % of dense)
//   metrics.dense_tflops
// with the expert counts and the dense measurement in details.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/suites/gemm/gemm.hpp"

namespace gpubench::suites::gemm {

struct GroupedLayout {
  std::vector<std::int64_t> counts;                // tokens per expert (sum = M)
  std::vector<kernels::GemmProblem> groups;        // expert e: m = counts[e]
  std::vector<std::size_t> a_offset, b_offset, d_offset;  // elements into the shared buffers
  std::size_t a_elements = 0, b_elements = 0, d_elements = 0;  // D's also C's
  std::int64_t tokens() const;
  std::int64_t active() const;  // experts with at least one token
};

// Expert e's problem: `base` with m = rows, packed leading dimensions, seeds of its own.
kernels::GemmProblem group_problem(const GemmProblem& base, std::int64_t expert, std::int64_t rows);
// The counts routed for spec (spec.problem.m tokens over spec.grouped.experts) and the buffers.
GroupedLayout grouped_layout(const GemmCaseSpec& spec);
GroupedLayout grouped_layout(const GemmProblem& base, const std::vector<std::int64_t>& counts);

// flops: the useful FLOPs (sum over groups of gemm_flops); bytes: A, the weights of the experts
// with tokens, C (beta != 0) and D once each; footprint: every buffer, all G weights included.
Metrics grouped_metrics(const GemmProblem& base, const GroupedLayout& layout, bool separate_c);

// The dense GEMM of the same FLOPs: op=gemm, m = sum(M_e), everything else as `spec`.
GemmCaseSpec dense_spec(const GemmCaseSpec& spec);

// Checks every group with tokens on sampled entries (about 1024 in all, at least 32 per group)
// against the reference; `d_value(e, i, j)` is expert e's D(i, j). Failures name the expert.
Verification check_groups(const GroupedLayout& layout,
                          const std::function<double(std::size_t, std::int64_t, std::int64_t)>& d_value);

// The dense reference: `dense` set up, verified (a wrong answer throws: the grouped case then
// fails, with no time), then measured. seconds_per_run is the mean.
struct DenseMeasurement {
  double seconds_per_run = 0;
  std::int64_t runs = 0, samples = 0;
  double noise = 0;  // relative standard deviation of the samples
  Verification verification;
};
DenseMeasurement measure_dense(Case& dense);

// gpubench.details of a grouped case: routing, seed, counts (list, min, max, active experts),
// the implementation, and the dense measurement (dense_time_s, ...) or why it is missing.
nlohmann::ordered_json grouped_details(const GemmCaseSpec& spec, const GroupedLayout& layout, const std::string& impl,
                                       const std::function<DenseMeasurement()>& dense);
// Adds metrics.pct_of_dense and metrics.dense_tflops from details.dense_time_s (Case::annotate).
void annotate_grouped(nlohmann::ordered_json& gpubench, double seconds_per_run, double useful_flops);

}  // namespace gpubench::suites::gemm
