#include <gtest/gtest.h>

#include <cmath>

#include "bench/core/plan.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "fake_suite.hpp"
#include "kernels/gemm/epilogue_reference.hpp"
#include "kernels/gemm/gemm_reference.hpp"

namespace gpubench {
namespace {

using kernels::GemmPrecision;
using kernels::GemmProblem;

// D computed in double from the stored inputs (scales and epilogue included), then rounded to
// D's storage type: what a correct provider with exact accumulation would return.
double exact_entry(const GemmProblem& p, std::int64_t i, std::int64_t j, std::int64_t b) {
  double s = 0;
  for (std::int64_t l = 0; l < p.k; ++l) s += kernels::gemm_a(p, i, l, b) * kernels::gemm_b(p, l, j, b);
  double x = p.alpha * p.scale_a * p.scale_b * s + (p.beta != 0 ? p.beta * kernels::gemm_c(p, i, j, b) : 0.0);
  const bool bias = p.epilogue == kernels::GemmEpilogue::Bias || p.epilogue == kernels::GemmEpilogue::BiasGelu;
  const bool gelu = p.epilogue == kernels::GemmEpilogue::Gelu || p.epilogue == kernels::GemmEpilogue::BiasGelu;
  x = kernels::apply_epilogue(x, bias ? kernels::gemm_bias(p, i) : 0.0, bias, gelu);
  const auto storage = kernels::gemm_storages(p.precision).c;
  if (storage == kernels::Storage::F64 || kernels::gemm_is_integer(p.precision)) return x;
  return kernels::round_to_storage(storage, static_cast<float>(x));
}

std::vector<double> exact_product(const GemmProblem& p) {
  std::vector<double> d(static_cast<std::size_t>(p.m * p.n));
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) d[static_cast<std::size_t>(i + j * p.m)] = exact_entry(p, i, j, 0);
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
                             GemmPrecision::BF16, GemmPrecision::FP16_ACC16, GemmPrecision::FP8_E4M3,
                             GemmPrecision::FP8_E5M2, GemmPrecision::INT8}) {
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

Point gemm_point(const std::string& provider, const std::string& dtype, std::int64_t m, std::int64_t n, std::int64_t k) {
  Point pt;
  pt.set("provider", provider);
  pt.set("dtype", dtype);
  pt.set("m", m);
  pt.set("n", n);
  pt.set("k", k);
  return pt;
}

TEST(GemmSuite, OpenblasCasesVerify) {
  auto suite = suites::gemm::make_suite();
  DeviceInfo cpu = testing::fake_cpu();
  for (const char* dtype : {"fp32", "fp64"}) {
    for (auto [m, n, k] : {std::tuple{100, 100, 100}, std::tuple{64, 48, 80}, std::tuple{1, 7, 3}}) {
      Point pt = gemm_point("openblas", dtype, m, n, k);
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

// Every layout, batches, padded leading dimensions, alpha/beta and a thread count through
// OpenBLAS: the reference's indexing agrees with a real BLAS on all of them.
TEST(GemmSuite, OpenblasLayoutsBatchesAndPaddingVerify) {
  auto suite = suites::gemm::make_suite();
  DeviceInfo cpu = testing::fake_cpu();
  for (const char* layout : {"nn", "nt", "tn", "tt"}) {
    for (std::int64_t batch : {1, 3}) {
      for (std::int64_t pad : {0, 5}) {
        Point pt = gemm_point("openblas", "fp32", 33, 21, 17);
        pt.set("layout", std::string(layout));
        pt.set("batch", batch);
        pt.set("pad", pad);
        pt.set("alpha", std::string("-1"));
        pt.set("beta", std::string("0.5"));
        pt.set("threads", std::int64_t{1});
        ASSERT_FALSE(suite->unsupported(cpu, pt));
        auto c = suite->make_case(cpu, pt);
        c->setup();
        Verification v = c->verify();
        EXPECT_TRUE(v.passed) << pt.label() << ": " << v.detail;
        const Metrics m = c->metrics();
        EXPECT_DOUBLE_EQ(m.flops, static_cast<double>(batch) * (2.0 * 33 * 21 * 17 + 2.0 * 33 * 21)) << pt.label();
        EXPECT_EQ(m.extra["threads"], 1);
      }
    }
  }
}

// A reference that ignores the layout must not pass: a transposed-A problem checked with a
// provider that computed the untransposed product fails.
TEST(GemmReference, WrongLayoutOrBatchFails) {
  GemmProblem p{24, 20, 64, GemmPrecision::FP32};
  p.trans_a = true;
  GemmProblem wrong = p;
  wrong.trans_a = false;
  wrong.lda = 64;  // same buffer, read as if it were not transposed
  auto r = kernels::check_gemm(p, kernels::gemm_sample_entries(p.m, p.n),
                               [&](std::int64_t i, std::int64_t j) { return exact_entry(wrong, i, j, 0); });
  EXPECT_FALSE(r.passed);

  GemmProblem batched{16, 16, 32, GemmPrecision::BF16};
  batched.batch = 4;
  // Every batch answered with batch 0's values: caught on the entries sampled in batches 1-3.
  r = kernels::check_gemm_batched(batched, kernels::gemm_sample_entries(16, 16),
                                  [&](std::int64_t i, std::int64_t j, std::int64_t) { return exact_entry(batched, i, j, 0); });
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("of batch"), std::string::npos) << r.detail;
  r = kernels::check_gemm_batched(batched, kernels::gemm_sample_entries(16, 16),
                                  [&](std::int64_t i, std::int64_t j, std::int64_t b) { return exact_entry(batched, i, j, b); });
  EXPECT_TRUE(r.passed) << r.detail;
}

TEST(GemmReference, Fp8ScalesMustBeApplied) {
  for (GemmPrecision prec : {GemmPrecision::FP8_E4M3, GemmPrecision::FP8_E5M2}) {
    GemmProblem p{32, 32, 256, prec};
    p.trans_a = true;
    p.scale_a = 0.5;
    p.scale_b = 4.0;
    GemmProblem unscaled = p;
    unscaled.scale_a = unscaled.scale_b = 1.0;
    const auto entries = kernels::gemm_sample_entries(p.m, p.n);
    EXPECT_TRUE(kernels::check_gemm(p, entries, [&](std::int64_t i, std::int64_t j) { return exact_entry(p, i, j, 0); }).passed);
    EXPECT_FALSE(
        kernels::check_gemm(p, entries, [&](std::int64_t i, std::int64_t j) { return exact_entry(unscaled, i, j, 0); }).passed);
    // Inputs stay in range and are fp8 values: |A| <= 1 and representable.
    for (std::int64_t l = 0; l < 8; ++l) {
      const double a = kernels::gemm_a(p, 0, l);
      EXPECT_LE(std::abs(a), 1.0);
      EXPECT_EQ(a, kernels::round_to_storage(kernels::gemm_storages(prec).a, static_cast<float>(a)));
    }
  }
}

TEST(GemmReference, Int8IsExact) {
  GemmProblem p{16, 16, 4096, GemmPrecision::INT8};
  p.trans_a = true;
  p.beta = 1;
  const auto entries = kernels::gemm_sample_entries(p.m, p.n);
  EXPECT_TRUE(kernels::check_gemm(p, entries, [&](std::int64_t i, std::int64_t j) { return exact_entry(p, i, j, 0); }).passed);
  // Off by one anywhere fails: integer sums are exact.
  auto r = kernels::check_gemm(p, entries, [&](std::int64_t i, std::int64_t j) {
    return exact_entry(p, i, j, 0) + ((i == 3 && j == 4) ? 1.0 : 0.0);
  });
  EXPECT_FALSE(r.passed);
  EXPECT_LE(std::abs(kernels::gemm_a(p, 2, 3)), 16.0);
  EXPECT_EQ(kernels::gemm_a(p, 2, 3), std::floor(kernels::gemm_a(p, 2, 3)));
}

TEST(GemmReference, EpiloguesFollowTheirMath) {
  for (auto e : {kernels::GemmEpilogue::Bias, kernels::GemmEpilogue::Gelu, kernels::GemmEpilogue::BiasGelu}) {
    GemmProblem p{20, 12, 128, GemmPrecision::BF16};
    p.epilogue = e;
    const auto entries = kernels::gemm_sample_entries(p.m, p.n);
    EXPECT_TRUE(kernels::check_gemm(p, entries, [&](std::int64_t i, std::int64_t j) { return exact_entry(p, i, j, 0); }).passed);
    GemmProblem plain = p;
    plain.epilogue = kernels::GemmEpilogue::None;  // the epilogue forgotten
    EXPECT_FALSE(
        kernels::check_gemm(p, entries, [&](std::int64_t i, std::int64_t j) { return exact_entry(plain, i, j, 0); }).passed)
        << static_cast<int>(e);
  }
}

TEST(GemmSuite, SupportMatrixAndReasons) {
  using suites::gemm::Fusion;
  using suites::gemm::GemmCaseSpec;
  using suites::gemm::gemm_unsupported;
  const DeviceInfo cpu = testing::fake_cpu();
  DeviceInfo h100 = testing::fake_gpu(0);  // cc 9.0
  DeviceInfo a100 = h100;
  a100.cc_major = 8;
  DeviceInfo volta = h100;
  volta.cc_major = 7;
  auto spec = [](const std::string& provider, GemmPrecision prec, bool ta = false, bool tb = false) {
    GemmCaseSpec s;
    s.provider = provider;
    s.problem = GemmProblem{256, 256, 256, prec};
    s.problem.trans_a = ta;
    s.problem.trans_b = tb;
    return s;
  };
  // OpenBLAS: fp32 and fp64 on the CPU only.
  EXPECT_FALSE(gemm_unsupported(cpu, spec("openblas", GemmPrecision::FP64)));
  EXPECT_EQ(gemm_unsupported(cpu, spec("openblas", GemmPrecision::BF16)), "OpenBLAS has no bf16 GEMM");
  EXPECT_EQ(gemm_unsupported(h100, spec("openblas", GemmPrecision::FP32)), "openblas runs on the CPU");
  EXPECT_EQ(gemm_unsupported(cpu, spec("cublas", GemmPrecision::FP32)), "cublas needs a CUDA device");
  // Too old a GPU.
  EXPECT_NE(gemm_unsupported(volta, spec("cublaslt", GemmPrecision::FP16)).value_or("").find("sm_80"), std::string::npos);
  // fp8: cuBLASLt only, sm_89+, TN only.
  EXPECT_FALSE(gemm_unsupported(h100, spec("cublaslt", GemmPrecision::FP8_E4M3, true, false)));
  EXPECT_FALSE(gemm_unsupported(h100, spec("cublaslt-tuned", GemmPrecision::FP8_E5M2, true, false)));
  EXPECT_EQ(gemm_unsupported(h100, spec("cublaslt", GemmPrecision::FP8_E4M3)),
            "cuBLASLt runs fp8-e4m3 only in the TN layout (layout=tn: A transposed, B not)");
  EXPECT_NE(gemm_unsupported(a100, spec("cublaslt", GemmPrecision::FP8_E4M3, true, false)).value_or("").find("8.9"),
            std::string::npos);
  EXPECT_NE(gemm_unsupported(h100, spec("cublas", GemmPrecision::FP8_E4M3, true, false)).value_or("").find("no fp8"),
            std::string::npos);
  // int8: TN in cuBLASLt, integer alpha/beta, no epilogues.
  EXPECT_FALSE(gemm_unsupported(a100, spec("cublaslt", GemmPrecision::INT8, true, false)));
  EXPECT_TRUE(gemm_unsupported(a100, spec("cublaslt", GemmPrecision::INT8, false, true)));
  EXPECT_FALSE(gemm_unsupported(a100, spec("cublas", GemmPrecision::INT8)));
  auto half_alpha = spec("cublas", GemmPrecision::INT8);
  half_alpha.problem.alpha = 0.5;
  EXPECT_NE(gemm_unsupported(a100, half_alpha).value_or("").find("integer alpha"), std::string::npos);
  auto int_gelu = spec("cublaslt", GemmPrecision::INT8, true, false);
  int_gelu.problem.epilogue = kernels::GemmEpilogue::Gelu;
  EXPECT_NE(gemm_unsupported(a100, int_gelu).value_or("").find("floating-point"), std::string::npos);
  // Epilogues: fused through cuBLASLt only; cuBLAS measures them separately.
  auto bias = spec("cublas", GemmPrecision::BF16);
  bias.problem.epilogue = kernels::GemmEpilogue::BiasGelu;
  EXPECT_NE(gemm_unsupported(a100, bias).value_or("").find("no fused epilogues"), std::string::npos);
  bias.fusion = Fusion::Separate;
  EXPECT_FALSE(gemm_unsupported(a100, bias));
  bias.provider = "cublaslt";
  bias.fusion = Fusion::Fused;
  EXPECT_FALSE(gemm_unsupported(a100, bias));
  auto cpu_bias = spec("openblas", GemmPrecision::FP32);
  cpu_bias.problem.epilogue = kernels::GemmEpilogue::Bias;
  EXPECT_EQ(gemm_unsupported(cpu, cpu_bias), "epilogues are measured on GPUs only");
  // Every fp type runs every layout through cuBLAS and cuBLASLt.
  for (GemmPrecision prec : {GemmPrecision::FP64, GemmPrecision::FP32, GemmPrecision::TF32, GemmPrecision::FP16,
                             GemmPrecision::BF16, GemmPrecision::FP16_ACC16}) {
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const char* provider : {"cublas", "cublaslt", "cublaslt-tuned"})
          EXPECT_FALSE(gemm_unsupported(a100, spec(provider, prec, ta, tb))) << provider;
  }
  // 32-bit limits, unknown providers, custom kernels asked through their own hook.
  auto huge = spec("cublas", GemmPrecision::FP32);
  huge.problem.n = std::int64_t{1} << 31;
  EXPECT_TRUE(gemm_unsupported(a100, huge));
  EXPECT_EQ(gemm_unsupported(a100, spec("mkl", GemmPrecision::FP32)), "unknown provider mkl");
  EXPECT_FALSE(gemm_unsupported(a100, spec("custom:naive", GemmPrecision::FP32)));
  EXPECT_EQ(gemm_unsupported(a100, spec("custom:naive", GemmPrecision::FP32, true, false)),
            "gpubench's own kernels compute the NN layout only (layout=nn)");
}

// MXFP8 and NVFP4 (issue 30): planned everywhere, skipped naming what the device lacks (the CPU,
// a GPU before Blackwell, a toolkit without block scaling), then what cuBLASLt's block scaling
// and the case need; on Blackwell with a CUDA 12.8+ build the TN cublaslt case runs.
TEST(GemmSuite, BlockScaledDtypesSayWhatTheDeviceLacks) {
  using suites::gemm::GemmCaseSpec;
  using suites::gemm::gemm_unsupported;
  DeviceInfo h200 = testing::fake_gpu(0);  // cc 9.0
  DeviceInfo b200 = h200;
  b200.cc_major = 10;
  auto spec = [](const std::string& provider, GemmPrecision prec, bool ta, bool tb, std::int64_t k = 256) {
    GemmCaseSpec s;
    s.provider = provider;
    s.problem = GemmProblem{256, 256, k, prec};
    s.problem.trans_a = ta;
    s.problem.trans_b = tb;
    return s;
  };
  EXPECT_EQ(suites::gemm::parse_precision("mxfp8"), GemmPrecision::MXFP8);
  EXPECT_EQ(suites::gemm::precision_name(GemmPrecision::NVFP4), "nvfp4");
  EXPECT_EQ(suites::gemm::peak_key(GemmPrecision::MXFP8), "fp8_tensor");
  EXPECT_EQ(suites::gemm::peak_key(GemmPrecision::NVFP4), "fp4_tensor");
  EXPECT_TRUE(kernels::gemm_is_block_scaled(GemmPrecision::NVFP4));
  EXPECT_FALSE(kernels::gemm_is_block_scaled(GemmPrecision::FP8_E4M3));
  for (GemmPrecision prec : {GemmPrecision::MXFP8, GemmPrecision::NVFP4}) {
    const std::string name = suites::gemm::precision_name(prec);
    SCOPED_TRACE(name);
    EXPECT_EQ(gemm_unsupported(testing::fake_cpu(), spec("openblas", prec, false, false)),
              name + " is a block-scaled Tensor Core format: the CPU has no block-scaled matrix unit (cuBLASLt runs it "
                     "on sm_100 and sm_120 GPUs, CUDA 12.8+)");
    EXPECT_EQ(gemm_unsupported(h200, spec("cublaslt", prec, true, false)),
              name + " needs block-scaled Tensor Cores (sm_100 or sm_120, CUDA 12.8+); this GPU is sm_90");
    DeviceInfo rtx5090 = b200;  // sm_120: block-scaled Tensor Cores too
    rtx5090.cc_major = 12;
    if (!suites::gemm::block_scaled_gemm_built()) {  // a CUDA < 12.8 (or CUDA-less) build says so on Blackwell
      EXPECT_NE(gemm_unsupported(b200, spec("cublaslt", prec, true, false)).value_or("").find("build's toolkit lacks"),
                std::string::npos);
      continue;
    }
    EXPECT_FALSE(gemm_unsupported(b200, spec("cublaslt", prec, true, false)));
    EXPECT_FALSE(gemm_unsupported(rtx5090, spec("cublaslt", prec, true, false)));
    for (const char* other : {"cublas", "cublaslt-tuned"}) {
      EXPECT_EQ(gemm_unsupported(b200, spec(other, prec, true, false)),
                name + " runs through cuBLASLt's block scaling with its heuristic algorithm only (provider=cublaslt)");
    }
    EXPECT_NE(gemm_unsupported(b200, spec("cublaslt", prec, false, false)).value_or("").find("TN layout"),
              std::string::npos);
    EXPECT_NE(gemm_unsupported(b200, spec("cublaslt", prec, true, false, 264)).value_or("").find("not a multiple"),
              std::string::npos);
    GemmCaseSpec batched = spec("cublaslt", prec, true, false);
    batched.problem.batch = 2;
    EXPECT_NE(gemm_unsupported(b200, batched).value_or("").find("batch=1"), std::string::npos);
    GemmCaseSpec accumulate = spec("cublaslt", prec, true, false);
    accumulate.problem.beta = 1;
    EXPECT_NE(gemm_unsupported(b200, accumulate).value_or("").find("beta=0"), std::string::npos);
  }
  // The case's inputs are the bf16 tensors it quantises; the product is bf16.
  EXPECT_EQ(kernels::gemm_storages(GemmPrecision::MXFP8).a, kernels::Storage::BF16);
  EXPECT_EQ(kernels::gemm_storages(GemmPrecision::NVFP4).c, kernels::Storage::BF16);
}

// The planner's side: a block-scaled dtype takes the TN layout and the cublaslt provider where
// the user left those axes to the preset; an explicit --axis layout or provider is kept (and
// skipped with the support matrix's reason). On the CPU nothing changes.
TEST(GemmSuite, BlockScaledDtypesAdaptDefaultLayoutAndProviders) {
  auto suite = suites::gemm::make_suite();
  DeviceInfo b200 = testing::fake_gpu(0);
  b200.cc_major = 10;
  auto plan = [&](std::vector<std::string> axes, const DeviceInfo& device) {
    PlanRequest r;
    r.axis_overrides = std::move(axes);
    return make_plan({suite.get()}, r, {device});
  };
  // Defaults: quick's providers are cublas,cublaslt and the layout nn.
  const auto defaults = plan({"dtype=mxfp8,nvfp4", "m=8192"}, b200);
  ASSERT_EQ(defaults.size(), 2u);
  for (const PlannedCase& c : defaults) {
    EXPECT_EQ(c.point.text("provider"), "cublaslt") << c.name();
    EXPECT_EQ(c.point.text("layout"), "tn") << c.name();
    EXPECT_EQ(c.skip_reason.has_value(), !suites::gemm::block_scaled_gemm_built()) << c.skip_reason.value_or("");
  }
  // Asked for explicitly: kept, skipped with the reason (when the build has block scaling).
  const auto asked = plan({"dtype=mxfp8", "m=256", "layout=nn", "provider=cublas,cublaslt"}, b200);
  ASSERT_EQ(asked.size(), 2u);
  for (const PlannedCase& c : asked) {
    EXPECT_EQ(c.point.text("layout"), "nn");
    EXPECT_TRUE(c.skip_reason.has_value()) << c.name();
  }
  // Other dtypes keep the defaults.
  const auto bf16 = plan({"dtype=bf16", "m=256"}, b200);
  ASSERT_EQ(bf16.size(), 2u);
  EXPECT_EQ(bf16[0].point.text("layout"), "nn");
  // The CPU: openblas planned and skipped naming what the CPU lacks.
  const auto cpu = plan({"dtype=mxfp8,nvfp4", "m=256"}, testing::fake_cpu());
  ASSERT_EQ(cpu.size(), 2u);
  for (const PlannedCase& c : cpu) {
    EXPECT_NE(c.skip_reason.value_or("").find("the CPU has no block-scaled"), std::string::npos);
    EXPECT_EQ(c.point.text("layout"), "nn");  // the CPU keeps its default
  }
}

TEST(GemmSuite, PointsBecomeSpecs) {
  Point pt = gemm_point("cublaslt-tuned", "fp8-e5m2", 64, 32, 128);
  pt.set("layout", std::string("tn"));
  pt.set("batch", std::int64_t{4});
  pt.set("pad", std::int64_t{8});
  pt.set("alpha", std::string("2"));
  pt.set("beta", std::string("1"));
  pt.set("epilogue", std::string("bias-gelu"));
  pt.set("fusion", std::string("separate"));
  const auto s = suites::gemm::spec_from(pt);
  EXPECT_EQ(s.provider, "cublaslt-tuned");
  EXPECT_EQ(s.problem.precision, GemmPrecision::FP8_E5M2);
  EXPECT_TRUE(s.problem.trans_a);
  EXPECT_FALSE(s.problem.trans_b);
  EXPECT_EQ(s.problem.batch, 4);
  EXPECT_EQ(s.problem.lda, 128 + 8);  // A stored k x m
  EXPECT_EQ(s.problem.ldb, 128 + 8);  // B stored k x n
  EXPECT_EQ(s.problem.ldc, 64 + 8);
  EXPECT_EQ(s.problem.alpha, 2.0);
  EXPECT_EQ(s.problem.beta, 1.0);
  EXPECT_EQ(s.problem.epilogue, kernels::GemmEpilogue::BiasGelu);
  EXPECT_EQ(s.fusion, suites::gemm::Fusion::Separate);
  EXPECT_EQ(s.problem.scale_a * s.problem.scale_b, 2.0);  // fp8 scales that verification can see
  EXPECT_EQ(suites::gemm::layout_name(s.problem), "tn");
}

TEST(GemmSuite, EveryPresetPlansAndSkipsOnlyWithReasons) {
  auto suite = suites::gemm::make_suite();
  for (const Preset& preset : suite->presets()) {
    PlanRequest r;
    r.preset = preset.name;
    auto plan = make_plan({suite.get()}, r, {testing::fake_gpu(0), testing::fake_cpu()});
    EXPECT_FALSE(plan.empty()) << preset.name;
    for (const PlannedCase& c : plan) {
      if (c.skip_reason) {
        EXPECT_FALSE(c.skip_reason->empty()) << c.name();
      }
      if (preset.name == "quick") {
        EXPECT_FALSE(c.skip_reason) << c.name();
      }
      if (!c.device.is_cuda()) {
        EXPECT_FALSE(c.skip_reason) << c.name();  // CPU presets run everything they plan
      }
      if (c.point.text("shape") == "mnk") {
        EXPECT_EQ(c.point.integer("m"), c.point.integer("n"));  // square unless named
      }
      EXPECT_EQ(c.point.text("provider") == "openblas", !c.device.is_cuda()) << c.name();
    }
  }
  PlanRequest quick;
  auto plan = make_plan({suite.get()}, quick, {testing::fake_cpu()});
  EXPECT_EQ(plan.size(), 4u);  // quick on the CPU: 256 and 1024, fp32 and fp64
}

TEST(GemmSuite, MeaninglessCombinationsAreDropped) {
  auto suite = suites::gemm::make_suite();
  PlanRequest r;
  r.axis_overrides = {"provider=cublas,openblas", "dtype=fp32", "m=64", "epilogue=none,bias", "fusion=fused,separate",
                      "threads=0,2"};
  auto plan = make_plan({suite.get()}, r, {testing::fake_gpu(0), testing::fake_cpu()});
  std::vector<std::string> names;
  for (const auto& c : plan) names.push_back(c.name());
  // GPU: cublas x {none fused, bias fused (skipped: no fused epilogue), bias separate}, threads 0 only.
  // CPU: openblas x {none fused, bias fused, bias separate (both skipped: no CPU epilogues)} x threads {0, 2}.
  EXPECT_EQ(plan.size(), 3u + 6u) << ::testing::PrintToString(names);
  for (const auto& c : plan) {
    if (c.device.is_cuda()) {
      EXPECT_EQ(c.point.integer("threads"), 0);
    }
    if (c.point.text("epilogue") == "none") {
      EXPECT_EQ(c.point.text("fusion"), "fused");
    }
  }
}

TEST(GemmSuite, PeakKeysAndFlops) {
  EXPECT_EQ(suites::gemm::peak_key(GemmPrecision::BF16), "bf16_tensor");
  EXPECT_EQ(suites::gemm::peak_key(GemmPrecision::FP32), "fp32");
  EXPECT_EQ(suites::gemm::peak_key(GemmPrecision::FP8_E5M2), "fp8_tensor");
  EXPECT_EQ(suites::gemm::peak_key(GemmPrecision::INT8), "int8_tensor");
  EXPECT_EQ(suites::gemm::peak_key(GemmPrecision::FP16_ACC16), "fp16_tensor");
  GemmProblem p{10, 20, 30, GemmPrecision::FP32};
  EXPECT_DOUBLE_EQ(suites::gemm::gemm_flops(p), 12000.0);
  p.beta = 1;
  EXPECT_DOUBLE_EQ(suites::gemm::gemm_flops(p), 12400.0);
  p.batch = 3;
  EXPECT_DOUBLE_EQ(suites::gemm::gemm_flops(p), 3 * 12400.0);
}

TEST(GemmSuite, MetricsTrafficFootprintAndUnits) {
  GemmProblem p{64, 32, 128, GemmPrecision::INT8};
  p.trans_a = true;
  Metrics m = suites::gemm::gemm_metrics(p, /*separate_c=*/true);
  EXPECT_TRUE(m.integer_ops);
  EXPECT_EQ(m.peak_key, "int8_tensor");
  // A 64x128 and B 128x32 int8, D 64x32 int32 written (beta = 0: C not read).
  EXPECT_DOUBLE_EQ(m.bytes, 64.0 * 128 + 128.0 * 32 + 64.0 * 32 * 4);
  EXPECT_DOUBLE_EQ(m.footprint_bytes, 64.0 * 128 + 128.0 * 32 + 2 * 64.0 * 32 * 4);  // C and D
  GemmProblem f{64, 64, 64, GemmPrecision::BF16};
  f.ldc = 72;  // padding counts in the footprint, not in the traffic
  f.beta = 1;
  f.epilogue = kernels::GemmEpilogue::Bias;
  m = suites::gemm::gemm_metrics(f, /*separate_c=*/false);
  EXPECT_FALSE(m.integer_ops);
  EXPECT_DOUBLE_EQ(m.bytes, 2.0 * (64 * 64 * 4) + 2.0 * 64);
  EXPECT_DOUBLE_EQ(m.footprint_bytes, 2.0 * (64 * 64 * 2 + 72 * 64) + 2.0 * 64);
}

}  // namespace
}  // namespace gpubench
