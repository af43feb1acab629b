#include "bench/suites/gemm/grouped.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "bench/core/errors.hpp"
#include "bench/core/measure.hpp"

namespace gpubench::suites::gemm {

std::int64_t GroupedLayout::tokens() const { return std::accumulate(counts.begin(), counts.end(), std::int64_t{0}); }

std::int64_t GroupedLayout::active() const {
  return std::count_if(counts.begin(), counts.end(), [](std::int64_t c) { return c > 0; });
}

kernels::GemmProblem group_problem(const GemmProblem& base, std::int64_t expert, std::int64_t rows) {
  kernels::GemmProblem g = base;
  g.m = rows;
  g.batch = 1;
  g.lda = g.ldb = g.ldc = 0;  // packed
  // Seeds of its own per expert (the reference recomputes any entry from them), far from the
  // base seeds (1 to 4) that the dense reference GEMM uses.
  const std::uint64_t shift = 0x100 * static_cast<std::uint64_t>(expert + 1);
  g.seed_a = base.seed_a + shift;
  g.seed_b = base.seed_b + shift;
  g.seed_c = base.seed_c + shift;
  g.seed_bias = base.seed_bias + shift;
  return g;
}

GroupedLayout grouped_layout(const GemmProblem& base, const std::vector<std::int64_t>& counts) {
  GroupedLayout l;
  l.counts = counts;
  for (std::size_t e = 0; e < counts.size(); ++e) {
    kernels::GemmProblem g = group_problem(base, static_cast<std::int64_t>(e), counts[e]);
    l.a_offset.push_back(l.a_elements);
    l.b_offset.push_back(l.b_elements);
    l.d_offset.push_back(l.d_elements);
    if (g.m > 0) {
      l.a_elements += kernels::gemm_a_elements(g);
      l.d_elements += kernels::gemm_c_elements(g);
    }
    l.b_elements += static_cast<std::size_t>(g.k) * static_cast<std::size_t>(g.n);  // every expert has weights
    l.groups.push_back(g);
  }
  return l;
}

GroupedLayout grouped_layout(const GemmCaseSpec& spec) {
  return grouped_layout(spec.problem, route_tokens(spec.grouped.routing, spec.problem.m, spec.grouped.experts));
}

Metrics grouped_metrics(const GemmProblem& base, const GroupedLayout& layout, bool separate_c) {
  const kernels::GemmStorages st = kernels::gemm_storages(base.precision);
  const double sa = static_cast<double>(kernels::storage_bytes(st.a)), sb = static_cast<double>(kernels::storage_bytes(st.b));
  const double sc = static_cast<double>(kernels::storage_bytes(st.c));
  const double m = static_cast<double>(layout.tokens()), n = static_cast<double>(base.n), k = static_cast<double>(base.k);
  Metrics out;
  for (const kernels::GemmProblem& g : layout.groups) {
    if (g.m > 0) out.flops += gemm_flops(g);
  }
  const double weights = static_cast<double>(layout.active()) * k * n * sb;
  out.bytes = m * k * sa + weights + (base.beta != 0 ? m * n * sc : 0.0) + m * n * sc;
  out.footprint_bytes = static_cast<double>(layout.a_elements) * sa + static_cast<double>(layout.b_elements) * sb +
                        static_cast<double>(layout.d_elements) * sc * (separate_c ? 2.0 : 1.0);
  out.peak_key = peak_key(base.precision);
  out.integer_ops = kernels::gemm_is_integer(base.precision);
  return out;
}

GemmCaseSpec dense_spec(const GemmCaseSpec& spec) {
  GemmCaseSpec d = spec;  // m: the tokens, which the routing splits without losing one
  d.op = GemmOp::Gemm;
  d.problem.batch = 1;
  return d;
}

Verification check_groups(const GroupedLayout& layout,
                          const std::function<double(std::size_t, std::int64_t, std::int64_t)>& d_value) {
  Verification v;
  v.passed = true;
  v.method = "CPU reference (double) on sampled entries of every expert with tokens";
  const std::int64_t active = std::max<std::int64_t>(layout.active(), 1);
  const auto per_group = static_cast<std::size_t>(std::max<std::int64_t>(32, 1024 / active));
  for (std::size_t e = 0; e < layout.groups.size(); ++e) {
    const kernels::GemmProblem& g = layout.groups[e];
    if (g.m == 0) continue;
    const kernels::GemmCheckResult r = kernels::check_gemm(
        g, kernels::gemm_sample_entries(g.m, g.n, per_group), [&](std::int64_t i, std::int64_t j) { return d_value(e, i, j); });
    v.checked += r.checked;
    v.max_error = std::max(v.max_error, r.max_error);
    if (!r.passed && v.passed) {
      v.passed = false;
      v.detail = fmt::format("expert {} ({} tokens): {}", e, g.m, r.detail);
    }
  }
  return v;
}

DenseMeasurement measure_dense(Case& dense) {
  DenseMeasurement out;
  dense.setup();
  out.verification = dense.verify();
  if (!out.verification.passed || out.verification.checked <= 0) {
    throw std::runtime_error("the dense reference GEMM failed verification: " + out.verification.detail);
  }
  std::unique_ptr<Timer> timer = dense.make_timer();
  const MeasureOptions options;  // the defaults: see grouped.hpp
  const MeasurePlan plan = calibrate(dense, *timer, options);
  const Measurement m = collect(dense, *timer, plan, options, nullptr, "timing of the dense reference GEMM");
  if (m.runs <= 0 || !(m.total_s > 0)) throw std::runtime_error("the dense reference GEMM timed no work");
  out.seconds_per_run = m.total_s / static_cast<double>(m.runs);
  out.runs = m.runs;
  out.samples = m.samples();
  out.noise = m.stats.rel_noise;
  return out;
}

nlohmann::ordered_json grouped_details(const GemmCaseSpec& spec, const GroupedLayout& layout, const std::string& impl,
                                       const std::function<DenseMeasurement()>& dense) {
  nlohmann::ordered_json j;
  j["grouped_impl"] = impl;
  j["routing"] = routing_name(spec.grouped.routing);
  if (spec.grouped.routing == Routing::Zipf) j["zipf_exponent"] = kZipfExponent;
  j["routing_seed"] = kRoutingSeed;
  j["tokens"] = layout.tokens();
  j["experts"] = layout.counts.size();
  j["active_experts"] = layout.active();
  j["tokens_min"] = layout.counts.empty() ? 0 : *std::min_element(layout.counts.begin(), layout.counts.end());
  j["tokens_max"] = layout.counts.empty() ? 0 : *std::max_element(layout.counts.begin(), layout.counts.end());
  j["tokens_per_expert"] = layout.counts;
  try {
    const DenseMeasurement d = dense();
    j["dense_time_s"] = d.seconds_per_run;
    j["dense_runs"] = d.runs;
    j["dense_samples"] = d.samples;
    j["dense_noise_pct"] = d.noise * 100;
    j["dense_verification"] = {{"checked", d.verification.checked}, {"max_error", d.verification.max_error}};
    j["dense_shape"] = fmt::format("{}x{}x{}", layout.tokens(), spec.problem.n, spec.problem.k);
  } catch (const CaseSkipped& e) {
    j["dense_skipped"] = e.what();  // no pct_of_dense; the grouped figures stand
  }
  return j;
}

void annotate_grouped(nlohmann::ordered_json& g, double seconds_per_run, double useful_flops) {
  if (!(seconds_per_run > 0) || !g.contains("details") || !g["details"].contains("dense_time_s")) return;
  const double dense_s = g["details"]["dense_time_s"].get<double>();
  if (!(dense_s > 0)) return;
  g["metrics"]["pct_of_dense"] = 100.0 * dense_s / seconds_per_run;
  g["metrics"]["dense_tflops"] = useful_flops / dense_s / 1e12;
}

}  // namespace gpubench::suites::gemm
