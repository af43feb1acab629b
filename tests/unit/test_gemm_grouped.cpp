// The gemm suite's op=grouped: the routing generator (seeded, deterministic, exact totals, its
// skew), the grouped OpenBLAS case against per-expert references, the dense comparison, and the
// plan (op=gemm cases keep their names; grouped-only limits say why).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "bench/core/plan.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/grouped.hpp"
#include "bench/suites/gemm/routing.hpp"
#include "fake_suite.hpp"
#include "kernels/gemm/gemm_reference.hpp"
#include "kernels/memory/host_pool.hpp"

namespace gpubench {
namespace {

using suites::gemm::GemmCaseSpec;
using suites::gemm::Routing;
using suites::gemm::route_tokens;

std::int64_t sum(const std::vector<std::int64_t>& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{0}); }

TEST(GemmRouting, SplitMix64MatchesTheReferenceGenerator) {
  // The first outputs of splitmix64 seeded with 0 (Vigna's splitmix64.c).
  suites::gemm::SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ull);
  suites::gemm::SplitMix64 u(7);
  for (int i = 0; i < 1000; ++i) {
    const double x = u.uniform();
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
  }
}

TEST(GemmRouting, DeterministicAndPinned) {
  for (Routing r : {Routing::Uniform, Routing::Zipf}) {
    EXPECT_EQ(route_tokens(r, 4096, 8), route_tokens(r, 4096, 8));
    EXPECT_EQ(route_tokens(r, 4096, 8, 5), route_tokens(r, 4096, 8, 5));
    EXPECT_NE(route_tokens(r, 4096, 8, 5), route_tokens(r, 4096, 8, 6));  // the seed matters
  }
  // Pinned: the same counts on every platform and standard library (no std:: distributions).
  EXPECT_EQ(route_tokens(Routing::Uniform, 1000, 8), (std::vector<std::int64_t>{120, 126, 147, 125, 125, 119, 118, 120}));
  EXPECT_EQ(route_tokens(Routing::Zipf, 1000, 8), (std::vector<std::int64_t>{386, 186, 114, 90, 72, 57, 53, 42}));
}

TEST(GemmRouting, CountsSumExactlyToTheTokens) {
  for (Routing r : {Routing::Uniform, Routing::Zipf}) {
    for (std::int64_t tokens : {0, 1, 2, 7, 100, 1023, 4096, 65537}) {
      for (std::int64_t experts : {1, 2, 3, 8, 64, 257}) {
        const auto c = route_tokens(r, tokens, experts);
        ASSERT_EQ(c.size(), static_cast<std::size_t>(experts));
        EXPECT_EQ(sum(c), tokens) << suites::gemm::routing_name(r) << " " << tokens << " over " << experts;
        EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](std::int64_t x) { return x >= 0; }));
      }
    }
  }
  // More experts than tokens: some get none, which is legal.
  const auto sparse = route_tokens(Routing::Uniform, 5, 64);
  EXPECT_GE(std::count(sparse.begin(), sparse.end(), 0), 59);
  EXPECT_THROW(route_tokens(Routing::Uniform, -1, 8), std::invalid_argument);
  EXPECT_THROW(route_tokens(Routing::Uniform, 8, 0), std::invalid_argument);
}

TEST(GemmRouting, ProbabilitiesAreStated) {
  const auto u = suites::gemm::routing_probabilities(Routing::Uniform, 8);
  for (double p : u) EXPECT_DOUBLE_EQ(p, 0.125);
  const auto z = suites::gemm::routing_probabilities(Routing::Zipf, 8);
  const double h8 = 1 + 1 / 2. + 1 / 3. + 1 / 4. + 1 / 5. + 1 / 6. + 1 / 7. + 1 / 8.;
  for (int e = 0; e < 8; ++e) EXPECT_NEAR(z[static_cast<std::size_t>(e)], 1.0 / (e + 1) / h8, 1e-15);
  EXPECT_DOUBLE_EQ(suites::gemm::kZipfExponent, 1.0);
}

TEST(GemmRouting, ZipfIsSkewedTowardTheFirstExpert) {
  // On average over seeds, expert 1 (index 0) gets the most tokens and the counts fall with e.
  std::vector<double> mean(8, 0.0);
  constexpr int kSeeds = 20;
  for (int s = 0; s < kSeeds; ++s) {
    const auto c = route_tokens(Routing::Zipf, 512, 8, static_cast<std::uint64_t>(s));
    for (std::size_t e = 0; e < 8; ++e) mean[e] += static_cast<double>(c[e]) / kSeeds;
  }
  EXPECT_EQ(std::max_element(mean.begin(), mean.end()) - mean.begin(), 0);
  EXPECT_GT(mean[0], 2.5 * mean[7]);  // 1/1 against 1/8 in expectation
  // Large M: every share within 2% (relative) of its probability.
  const auto big = route_tokens(Routing::Zipf, 400000, 8);
  const auto p = suites::gemm::routing_probabilities(Routing::Zipf, 8);
  for (std::size_t e = 0; e < 8; ++e) EXPECT_NEAR(static_cast<double>(big[e]) / 400000, p[e], 0.02 * p[e]) << e;
}

TEST(GemmRouting, UniformIsBalancedForLargeM) {
  const auto c = route_tokens(Routing::Uniform, 400000, 8);
  for (std::int64_t x : c) EXPECT_NEAR(static_cast<double>(x), 50000.0, 1000.0);
}

Point grouped_point(const std::string& dtype, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t experts,
                    const std::string& routing, const std::string& layout = "nn", const std::string& beta = "0") {
  Point pt;
  pt.set("provider", "openblas");
  pt.set("dtype", dtype);
  pt.set("layout", layout);
  pt.set("m", m);
  pt.set("n", n);
  pt.set("k", k);
  pt.set("beta", beta);
  pt.set("op", "grouped");
  pt.set("experts", experts);
  pt.set("routing", routing);
  return pt;
}

TEST(GemmGrouped, OpenblasGroupsVerifyAgainstTheirReferences) {
  auto suite = suites::gemm::make_suite();
  const DeviceInfo cpu = testing::fake_cpu();
  for (const char* dtype : {"fp32", "fp64"}) {
    for (const char* routing : {"uniform", "zipf"}) {
      for (std::int64_t experts : {1, 3, 8, 64}) {  // 64 experts over 100 tokens: some get none
        for (const char* layout : {"nn", "tn", "nt", "tt"}) {
          Point pt = grouped_point(dtype, 100, 24, 40, experts, routing, layout, experts == 3 ? "1" : "0");
          ASSERT_FALSE(suite->unsupported(cpu, pt)) << pt.label();
          auto c = suite->make_case(cpu, pt);
          c->setup();
          const Verification v = c->verify();
          EXPECT_TRUE(v.passed) << pt.label() << ": " << v.detail;
          EXPECT_GT(v.checked, 0);
          const double flops = 2.0 * 100 * 24 * 40 + (experts == 3 ? 2.0 * 100 * 24 : 0.0);
          EXPECT_DOUBLE_EQ(c->metrics().flops, flops) << pt.label();
        }
      }
    }
  }
}

// The reference tells the experts apart: a provider that gave expert e the answer of expert
// e+1 (wrong weights or slices), or one wrong entry in one expert, fails and names the expert.
TEST(GemmGrouped, WrongGroupsFailNamingTheExpert) {
  GemmCaseSpec spec;
  spec.provider = "openblas";
  spec.problem = kernels::GemmProblem{64, 16, 32, kernels::GemmPrecision::FP64};
  spec.op = suites::gemm::GemmOp::Grouped;
  spec.grouped.experts = 4;
  const auto layout = suites::gemm::grouped_layout(spec);
  ASSERT_EQ(layout.tokens(), 64);
  auto exact = [&](std::size_t e, std::int64_t i, std::int64_t j) {
    const kernels::GemmProblem& g = layout.groups[e];
    double s = 0;
    for (std::int64_t l = 0; l < g.k; ++l) s += kernels::gemm_a(g, i, l) * kernels::gemm_b(g, l, j);
    return s;
  };
  EXPECT_TRUE(suites::gemm::check_groups(layout, exact).passed);
  const auto shifted = suites::gemm::check_groups(layout, [&](std::size_t e, std::int64_t i, std::int64_t j) {
    const std::size_t other = (e + 1) % layout.groups.size();
    return exact(other, std::min(i, layout.groups[other].m - 1), j);
  });
  EXPECT_FALSE(shifted.passed);
  const auto one = suites::gemm::check_groups(layout, [&](std::size_t e, std::int64_t i, std::int64_t j) {
    return exact(e, i, j) + (e == 2 && i == 0 && j == 0 ? 0.5 : 0.0);
  });
  EXPECT_FALSE(one.passed);
  EXPECT_EQ(one.detail.rfind("expert 2 (", 0), 0u) << one.detail;
}

TEST(GemmGrouped, DetailsTimeTheDenseGemmAndAnnotatePctOfDense) {
  auto suite = suites::gemm::make_suite();
  const DeviceInfo cpu = testing::fake_cpu();
  auto c = suite->make_case(cpu, grouped_point("fp32", 64, 32, 32, 8, "zipf"));
  c->setup();
  ASSERT_TRUE(c->verify().passed);
  c->run();
  nlohmann::ordered_json g;
  g["details"] = c->details(1);
  const nlohmann::ordered_json& d = g["details"];
  EXPECT_EQ(d["routing"], "zipf");
  EXPECT_EQ(d["zipf_exponent"], 1.0);
  EXPECT_EQ(d["tokens"], 64);
  EXPECT_EQ(d["tokens_per_expert"].size(), 8u);
  std::int64_t total = 0;
  for (const auto& x : d["tokens_per_expert"]) total += x.get<std::int64_t>();
  EXPECT_EQ(total, 64);
  EXPECT_EQ(d["tokens_max"], d["tokens_per_expert"][0]);  // zipf: expert 1 the busiest here
  EXPECT_EQ(d["dense_shape"], "64x32x32");
  ASSERT_TRUE(d.contains("dense_time_s"));
  const double dense_s = d["dense_time_s"].get<double>();
  EXPECT_GT(dense_s, 0);
  EXPECT_GT(d["dense_verification"]["checked"].get<std::int64_t>(), 0);
  c->annotate(g, 2 * dense_s);
  EXPECT_DOUBLE_EQ(g["metrics"]["pct_of_dense"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(g["metrics"]["dense_tflops"].get<double>(), 2.0 * 64 * 32 * 32 / dense_s / 1e12);
  // threads=0 on a host of several CPUs: blocks of rows over the host's threads (else the loop).
  if (kernels::HostPool::shared().threads() > 1) {
    EXPECT_EQ(c->metrics().extra["grouped_impl"],
              "blocks of an expert's rows, single-threaded OpenBLAS sgemm/dgemm calls shared out over the host's threads");
    std::size_t with_tokens = 0;  // 64 tokens in blocks of at least 32 rows: one block per expert with tokens
    for (const auto& x : g["details"]["tokens_per_expert"]) with_tokens += x.get<std::int64_t>() > 0;
    EXPECT_EQ(c->metrics().extra["row_blocks"].get<std::size_t>(), with_tokens);
  } else {
    EXPECT_EQ(c->metrics().extra["grouped_impl"], "loop of OpenBLAS sgemm/dgemm calls, one per expert with tokens");
  }
  // threads=N: one call per expert on OpenBLAS's N threads.
  Point one = grouped_point("fp32", 64, 32, 32, 8, "zipf");
  one.set("threads", std::int64_t{1});
  auto looped = suite->make_case(cpu, one);
  looped->setup();
  EXPECT_TRUE(looped->verify().passed);
  EXPECT_EQ(looped->metrics().extra["grouped_impl"], "loop of OpenBLAS sgemm/dgemm calls, one per expert with tokens");
}

TEST(GemmGrouped, PlainGemmCasesKeepTheirNames) {
  auto suite = suites::gemm::make_suite();
  PlanRequest quick;
  const auto plan = make_plan({suite.get()}, quick, {testing::fake_cpu()});
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan.front().name(),
            "gemm/shape=mnk/model=none/tp=1/provider=openblas/dtype=fp32/layout=nn/m=256/n=256/k=256/batch=1/pad=0/"
            "alpha=1/beta=0/epilogue=none/fusion=fused/threads=0/cpu");
  // Grouped-only axes do not multiply op=gemm cases.
  PlanRequest r;
  r.axis_overrides = {"m=64", "dtype=fp32", "op=gemm,grouped", "experts=4,8", "routing=uniform,zipf"};
  const auto mixed = make_plan({suite.get()}, r, {testing::fake_cpu()});
  std::vector<std::string> names;
  for (const PlannedCase& c : mixed) names.push_back(c.name());
  EXPECT_EQ(mixed.size(), 1u + 4u) << ::testing::PrintToString(names);
  EXPECT_EQ(names.front(), "gemm/shape=mnk/model=none/tp=1/provider=openblas/dtype=fp32/layout=nn/m=64/n=64/k=64/batch=1/"
                           "pad=0/alpha=1/beta=0/epilogue=none/fusion=fused/threads=0/cpu");
  EXPECT_NE(std::find(names.begin(), names.end(),
                      "gemm/shape=mnk/model=none/tp=1/provider=openblas/dtype=fp32/layout=nn/m=64/n=64/k=64/batch=1/pad=0/"
                      "alpha=1/beta=0/epilogue=none/fusion=fused/threads=0/op=grouped/experts=8/routing=zipf/cpu"),
            names.end())
      << ::testing::PrintToString(names);
  for (const PlannedCase& c : mixed) EXPECT_FALSE(c.skip_reason) << c.name();
}

TEST(GemmGrouped, LimitsSayWhy) {
  auto suite = suites::gemm::make_suite();
  const DeviceInfo cpu = testing::fake_cpu(), gpu = testing::fake_gpu(0);
  auto with = [](Point p, const std::string& axis, AxisValue v) {
    p.set(axis, std::move(v));
    return p;
  };
  const Point base = grouped_point("fp32", 256, 256, 256, 8, "uniform");
  EXPECT_EQ(suite->unsupported(cpu, with(base, "batch", std::int64_t{2})),
            "op=grouped routes the tokens over experts: batch=1 only (the experts are its batch)");
  EXPECT_EQ(suite->unsupported(cpu, with(base, "pad", std::int64_t{8})), "op=grouped takes packed operands (pad=0)");
  EXPECT_EQ(suite->unsupported(gpu, with(with(base, "provider", "cublaslt"), "epilogue", "bias")),
            "op=grouped computes plain GEMMs (epilogue=none)");
  EXPECT_EQ(suite->unsupported(cpu, with(base, "dtype", "bf16")), "OpenBLAS has no bf16 GEMM");
  const auto cublas = suite->unsupported(gpu, with(base, "provider", "cublas"));
  ASSERT_TRUE(cublas);
  EXPECT_NE(cublas->find("op=grouped runs through cuBLASLt on GPUs (provider=cublaslt)"), std::string::npos);
  const Point lt = with(with(base, "provider", "cublaslt"), "dtype", "bf16");
  EXPECT_FALSE(suite->unsupported(gpu, lt));
  const auto fp8 = suite->unsupported(gpu, with(with(lt, "dtype", "fp8-e4m3"), "layout", "tn"));
  ASSERT_TRUE(fp8);
  EXPECT_NE(fp8->find("op=grouped on GPUs runs fp64, fp32, tf32, fp16, bf16 and fp16-acc16"), std::string::npos);
}

TEST(GemmGrouped, SizeChecksCountEveryExpertsWeights) {
  auto suite = suites::gemm::make_suite();
  // 4096 experts of 65536 x 65536 fp32 weights: far beyond any machine, refused at planning.
  EXPECT_THROW(suite->check_sizes(testing::fake_cpu(), grouped_point("fp32", 1024, 65536, 65536, 4096, "uniform")),
               UsageError);
  EXPECT_NO_THROW(suite->check_sizes(testing::fake_cpu(), grouped_point("fp32", 1024, 1024, 1024, 8, "uniform")));
}

}  // namespace
}  // namespace gpubench
