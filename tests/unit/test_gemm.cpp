#include <gtest/gtest.h>

#include <cmath>

#include "bench/core/plan.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "fake_suite.hpp"
#include "kernels/gemm/gemm_reference.hpp"

namespace gpubench {
namespace {

using kernels::GemmPrecision;
using kernels::GemmProblem;

// D computed in double from the stored inputs, then rounded to the storage type: what a
// correct provider with exact accumulation would return.
std::vector<double> exact_product(const GemmProblem& p) {
  std::vector<double> d(static_cast<std::size_t>(p.m * p.n));
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) {
      double s = 0;
      for (std::int64_t l = 0; l < p.k; ++l) s += kernels::gemm_a(p, i, l) * kernels::gemm_b(p, l, j);
      const auto storage = kernels::gemm_storage(p.precision);
      d[static_cast<std::size_t>(i + j * p.m)] = storage == kernels::Storage::F64
                                                     ? p.alpha * s
                                                     : kernels::round_to_storage(storage, static_cast<float>(p.alpha * s));
    }
  return d;
}

TEST(GemmReference, SampleEntries) {
  EXPECT_EQ(kernels::gemm_sample_entries(10, 20).size(), 200u);  // small: every entry
  auto big = kernels::gemm_sample_entries(5000, 3000);
  ASSERT_EQ(big.size(), 1024u);
  EXPECT_EQ(big[3], (std::pair<std::int64_t, std::int64_t>{4999, 2999}));  // corners first
  for (auto [i, j] : big) {
    ASSERT_LT(i, 5000);
    ASSERT_LT(j, 3000);
  }
  EXPECT_EQ(big, kernels::gemm_sample_entries(5000, 3000));  // fixed seed
}

TEST(GemmReference, CorrectProductPassesEveryPrecision) {
  for (GemmPrecision prec : {GemmPrecision::FP64, GemmPrecision::FP32, GemmPrecision::TF32, GemmPrecision::FP16,
                             GemmPrecision::BF16}) {
    GemmProblem p{37, 29, 301, prec};
    auto d = exact_product(p);
    auto r = kernels::check_gemm(p, kernels::gemm_sample_entries(p.m, p.n),
                                 [&](std::int64_t i, std::int64_t j) { return d[static_cast<std::size_t>(i + j * p.m)]; });
    EXPECT_TRUE(r.passed) << static_cast<int>(prec) << ": " << r.detail;
    EXPECT_EQ(r.checked, 1024);  // 37 x 29 > 1024: sampled
  }
}

TEST(GemmReference, WrongAnswersFail) {
  GemmProblem p{40, 30, 512, GemmPrecision::BF16};
  auto d = exact_product(p);
  auto entries = kernels::gemm_sample_entries(p.m, p.n);
  auto value = [&](std::int64_t i, std::int64_t j) { return d[static_cast<std::size_t>(i + j * p.m)]; };

  // Transposed output (a layout bug).
  auto r = kernels::check_gemm(p, entries, [&](std::int64_t i, std::int64_t j) { return value(j % p.m, i % p.n); });
  EXPECT_FALSE(r.passed);

  // NaN never passes.
  r = kernels::check_gemm(p, entries, [&](std::int64_t, std::int64_t) { return std::nan(""); });
  EXPECT_FALSE(r.passed);

  // One fp32 entry off by 0.01 (|D| is about 10 here): a single bad entry is caught.
  GemmProblem f{30, 30, 512, GemmPrecision::FP32};  // 900 entries: all checked
  auto df = exact_product(f);
  r = kernels::check_gemm(f, kernels::gemm_sample_entries(f.m, f.n), [&](std::int64_t i, std::int64_t j) {
    return df[static_cast<std::size_t>(i + j * f.m)] + ((i == 7 && j == 5) ? 0.01 : 0.0);
  });
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("D(7,5)"), std::string::npos);

  // Inputs one ulp-of-fp16 off everywhere (wrong precision path) for an fp32 problem.
  GemmProblem p32{16, 16, 2048, GemmPrecision::FP32};
  auto d32 = exact_product(p32);
  r = kernels::check_gemm(p32, kernels::gemm_sample_entries(16, 16), [&](std::int64_t i, std::int64_t j) {
    return d32[static_cast<std::size_t>(i + j * 16)] * (1 + 0x1p-9);
  });
  EXPECT_FALSE(r.passed);
}

TEST(GemmSuite, OpenblasCasesVerify) {
  auto suite = suites::gemm::make_suite();
  DeviceInfo cpu = testing::fake_cpu();
  for (const char* dtype : {"fp32", "fp64"}) {
    for (auto [m, n, k] : {std::tuple{100, 100, 100}, std::tuple{64, 48, 80}, std::tuple{1, 7, 3}}) {
      Point pt;
      pt.set("m", std::int64_t{m});
      pt.set("n", std::int64_t{n});
      pt.set("k", std::int64_t{k});
      pt.set("dtype", std::string(dtype));
      pt.set("provider", std::string("openblas"));
      ASSERT_FALSE(suite->unsupported(cpu, pt));
      auto c = suite->make_case(cpu, pt);
      c->setup();
      Verification v = c->verify();
      EXPECT_TRUE(v.passed) << dtype << " " << m << "x" << n << "x" << k << ": " << v.detail;
      EXPECT_EQ(v.checked, std::min<std::int64_t>(std::int64_t{m} * n, 1024));
      EXPECT_DOUBLE_EQ(c->metrics().flops, 2.0 * m * n * k);
    }
  }
}

TEST(GemmSuite, UnsupportedCombinationsHaveReasons) {
  auto suite = suites::gemm::make_suite();
  Point pt;
  pt.set("m", std::int64_t{64});
  pt.set("n", std::int64_t{64});
  pt.set("k", std::int64_t{64});
  pt.set("dtype", std::string("bf16"));
  pt.set("provider", std::string("cublas"));
  EXPECT_EQ(suite->unsupported(testing::fake_cpu(), pt), "OpenBLAS has no bf16 GEMM");
  EXPECT_FALSE(suite->unsupported(testing::fake_gpu(0), pt));
  DeviceInfo volta = testing::fake_gpu(0);
  volta.cc_major = 7;
  EXPECT_TRUE(suite->unsupported(volta, pt));
}

TEST(GemmSuite, EveryPresetPlansOnBothDeviceKindsWithoutSkips) {
  auto suite = suites::gemm::make_suite();
  for (const Preset& preset : suite->presets()) {
    PlanRequest r;
    r.preset = preset.name;
    auto plan = make_plan({suite.get()}, r, {testing::fake_gpu(0), testing::fake_cpu()});
    EXPECT_FALSE(plan.empty());
    for (const PlannedCase& c : plan) {
      EXPECT_FALSE(c.skip_reason) << c.name();
      EXPECT_EQ(c.point.integer("m"), c.point.integer("n"));  // presets are square
    }
  }
  PlanRequest quick;
  auto plan = make_plan({suite.get()}, quick, {testing::fake_cpu()});
  EXPECT_EQ(plan.size(), 4u);  // quick on the CPU: 256 and 1024, fp32 and fp64
}

TEST(GemmSuite, PeakKeysAndFlops) {
  EXPECT_EQ(suites::gemm::peak_key(GemmPrecision::BF16), "bf16_tensor");
  EXPECT_EQ(suites::gemm::peak_key(GemmPrecision::FP32), "fp32");
  GemmProblem p{10, 20, 30, GemmPrecision::FP32};
  EXPECT_DOUBLE_EQ(suites::gemm::gemm_flops(p), 12000.0);
  p.beta = 1;
  EXPECT_DOUBLE_EQ(suites::gemm::gemm_flops(p), 12400.0);
}

}  // namespace
}  // namespace gpubench
