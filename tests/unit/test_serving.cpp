// `gpubench serving` (reports/serving.hpp): the step-time curves by hand, a projection checked
// by hand against a fixture serve case, the Pareto sweep and the usage errors. Fixtures:
// tests/fixtures/serving (made by make_serving_fixtures.py: prefill 4 ms + 0.125 ms per prompt
// token, decode 10 ms + 2 ms per sequence + 0.01 ms per sequence and cached token).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bench/core/errors.hpp"
#include "reports/markdown.hpp"
#include "reports/serving.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gpubench::reports;
using namespace gpubench::reports::serving;
using gpubench::testing::usage_error;

const fs::path kFixtures = fs::path(GPUBENCH_FIXTURES_DIR) / "serving";

std::vector<ResultsFile> load(std::initializer_list<const char*> names) {
  std::vector<ResultsFile> out;
  for (const char* n : names) out.push_back(read_results(kFixtures / n));
  return out;
}

ServingOptions at_rates(std::vector<double> rates) {
  ServingOptions o;
  o.rates = std::move(rates);
  return o;
}

TEST(Serving, CurvesFromTheFixture) {
  const std::vector<ResultsFile> files = load({"infer_cpu.json", "infer_gpu.json"});
  std::vector<std::string> notes;
  const std::vector<Config> c = configs(files, &notes);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].device, "Synthetic CPU");
  EXPECT_EQ(c[1].device, "Synthetic GPU");
  EXPECT_EQ(c[0].model, "llama-small");
  EXPECT_NE(c[0].key, c[1].key);
  EXPECT_NE(c[0].key.find("dtype=fp32"), std::string::npos) << c[0].key;
  EXPECT_EQ(c[0].key.find("batch="), std::string::npos) << c[0].key;  // a step's size is no configuration
  ASSERT_EQ(c[0].curves.prefill.size(), 3u);
  EXPECT_DOUBLE_EQ(c[0].curves.prefill[1].batch, 4);
  EXPECT_DOUBLE_EQ(c[0].curves.prefill[1].prompt_len, 128);
  EXPECT_NEAR(c[0].curves.prefill[1].seconds, 0.068, 1e-12);
  ASSERT_EQ(c[0].curves.decode.size(), 6u);
  EXPECT_EQ(c[0].curves.largest_decode_batch(), 16);
  EXPECT_TRUE(notes.empty());
  const std::vector<ServeCase> cases = serve_cases(files);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].key, c[0].key);
  EXPECT_DOUBLE_EQ(cases[0].trace.rate, 1);
  EXPECT_EQ(cases[0].trace.requests, 3);
  EXPECT_EQ(cases[0].limits.max_batch, 4);
  EXPECT_NEAR(cases[0].measured.ttft_s.p50, 0.025, 1e-12);
}

// By hand: a prefill of 2 prompts of 128 tokens lies between the measured batch 1 (20 ms) and
// batch 4 (68 ms): 20 + (2 - 1) / 3 * 48 = 36 ms; one prompt of 300 tokens, with only 128 measured
// at batch 1, scales proportionally: 20 * 300 / 128 = 46.875 ms (extrapolated). Decode at batch 2, context 100: along context at batch 1
// 12.64 + 36/192 * 1.92 = 13.0 ms, at batch 4 20.56 + 36/192 * 7.68 = 22.0 ms; across batch
// 13.0 + (2 - 1)/3 * 9.0 = 16.0 ms.
TEST(Serving, InterpolationByHand) {
  const Config c = configs(load({"infer_cpu.json"})).at(0);
  bool out = false;
  EXPECT_NEAR(c.curves.prefill_s(2, 128, &out), 0.036, 1e-12);
  EXPECT_FALSE(out);
  EXPECT_NEAR(c.curves.prefill_s(1, 300, &out), 0.046875, 1e-12);
  EXPECT_TRUE(out);
  out = false;
  EXPECT_NEAR(c.curves.decode_s(2, 100, &out), 0.016, 1e-12);
  EXPECT_FALSE(out);
  EXPECT_NEAR(c.curves.decode_s(4, 256, &out), 0.02824, 1e-12);  // a measured point
  EXPECT_FALSE(out);
  // Beyond the range: linear from the last two points (the fixture is linear, so exact).
  EXPECT_NEAR(c.curves.prefill_s(32, 128, &out), 0.004 + 0.000125 * 4096, 1e-12);
  EXPECT_TRUE(out);
  out = false;
  EXPECT_NEAR(c.curves.decode_s(32, 512, &out), 0.010 + 0.002 * 32 + 0.00001 * 32 * 512, 1e-12);
  EXPECT_TRUE(out);
}

TEST(Serving, ExtrapolationRules) {
  StepCurves one;
  one.prefill = {{1, 100, 0.01}};
  one.decode = {{4, 64, 0.02}};
  EXPECT_NEAR(one.prefill_s(1, 300), 0.03, 1e-15);  // one point: proportional along each axis
  EXPECT_NEAR(one.prefill_s(3, 100), 0.03, 1e-15);
  EXPECT_NEAR(one.decode_s(8, 512), 0.02, 1e-15);  // one point: constant
  StepCurves steep;
  // Superlinear: linear extrapolation down to 50 tokens would give 0.01 - 0.015 < 0; the floor
  // is proportional scaling from the first point, 0.005.
  steep.prefill = {{1, 100, 0.01}, {1, 200, 0.04}};
  EXPECT_NEAR(steep.prefill_s(1, 50), 0.005, 1e-15);
  // A falling pair (noise) never extrapolates to less time for more work.
  StepCurves falling;
  falling.prefill = {{1, 100, 0.02}, {1, 200, 0.019}};
  EXPECT_NEAR(falling.prefill_s(1, 1000), 0.019, 1e-15);
}

// The fixture's rate-1 serve case by hand with the same step times. Its trace (seed 1, rate 1,
// 3 requests of 128 + 4 tokens) arrives at 0.459, 2.506 and 2.696 s, far enough apart (more than
// the 59.87 ms a request takes) that each runs alone: prefill of 128 tokens 4 + 16 = 20 ms, then
// decode steps at batch 1 over 128, 129, 130 cached tokens of 12 + 0.01 * C = 13.28, 13.29,
// 13.30 ms. TTFT 20 ms, TPOT 13.29 ms, ITL p50 13.29 (9 gaps: 13.28 x3, 13.29 x3, 13.30 x3, the
// 5th of 9), p90 13.30, E2EL 59.87 ms. The file says TTFT 25, TPOT 14, ITL 14, E2EL 67 ms:
// errors -20%, -5.07%, -5.07% / -5.0%, -10.64%.
TEST(Serving, ValidationAgainstAServeCaseByHand) {
  const ServingResult r = project(load({"infer_cpu.json"}), at_rates({1}));
  ASSERT_EQ(r.points.size(), 1u);
  const Point& p = r.points[0];
  EXPECT_NEAR(p.summary.ttft_s.p50, 0.020, 1e-12);
  EXPECT_NEAR(p.summary.tpot_s.p99, 0.01329, 1e-12);
  EXPECT_NEAR(p.summary.e2el_s.p50, 0.05987, 1e-12);
  EXPECT_EQ(p.largest_batch, 1);
  ASSERT_EQ(p.validation.size(), 12u);  // 4 metrics x p50, p90, p99
  ASSERT_EQ(r.validation.size(), 12u);
  auto row = [&](const std::string& metric, const std::string& pct) {
    for (const ValidationRow& v : p.validation) {
      if (v.metric == metric && v.percentile == pct) return v;
    }
    ADD_FAILURE() << metric << " " << pct;
    return ValidationRow{};
  };
  EXPECT_NEAR(row("ttft_ms", "p50").measured, 25, 1e-12);
  EXPECT_NEAR(row("ttft_ms", "p50").projected, 20, 1e-9);
  EXPECT_NEAR(*row("ttft_ms", "p99").error_pct, -20, 1e-9);
  EXPECT_NEAR(*row("tpot_ms", "p50").error_pct, 100 * (13.29 - 14) / 14, 1e-9);
  EXPECT_NEAR(row("itl_ms", "p50").projected, 13.29, 1e-9);
  EXPECT_NEAR(row("itl_ms", "p90").projected, 13.30, 1e-9);
  EXPECT_NEAR(*row("e2el_ms", "p90").error_pct, 100 * (59.87 - 67) / 67, 1e-9);
  // The projected point at rate 1 uses the same trace (the default seed 1 is the case's).
  EXPECT_EQ(p.trace.requests, 3);
  EXPECT_EQ(p.trace.output_len, 4);
  EXPECT_EQ(p.limits.max_batch, 4);
}

TEST(Serving, RatesConfigurationsAndSlo) {
  ServingOptions o = at_rates({1, 4, 16});
  o.slo.ttft_s = 0.019;  // below every projected TTFT on the CPU
  const ServingResult r = project(load({"infer_cpu.json", "infer_gpu.json"}), o);
  ASSERT_EQ(r.points.size(), 6u);  // 3 rates x 2 configurations, by rate
  EXPECT_EQ(r.points[0].rate, 1);
  EXPECT_EQ(r.points[0].device, "Synthetic CPU");
  EXPECT_EQ(r.points[1].device, "Synthetic GPU");
  EXPECT_EQ(r.points[5].rate, 16);
  EXPECT_EQ(r.points[0].summary.good, 0);
  EXPECT_EQ(r.points[0].summary.goodput_rps, 0);
  // Every GPU step is 10x faster: TTFT 2 ms at rate 1 (requests alone), all good.
  EXPECT_NEAR(r.points[1].summary.ttft_s.p50, 0.002, 1e-12);
  EXPECT_EQ(r.points[1].summary.good, 3);
  EXPECT_GT(r.points[1].summary.goodput_rps, 0);
  EXPECT_TRUE(r.points[1].validation.empty());  // no serve case on the GPU
  EXPECT_EQ(r.validation.size(), 24u);           // the CPU's cases at rate 1 and 4
  EXPECT_TRUE(r.points[4].validation.empty());   // no case at rate 16
  // The Pareto sweep: max_batch 1, 2, 4, 8, 16 (the largest measured decode batch).
  ASSERT_EQ(r.points[0].pareto.size(), 5u);
  EXPECT_EQ(r.points[0].pareto.back().max_batch, 16);
  bool any = false;
  for (const ParetoPoint& q : r.points[4].pareto) any = any || q.frontier;
  EXPECT_TRUE(any);
  EXPECT_FALSE(r.assumptions.empty());
}

TEST(Serving, ParetoTradesUserForDeviceThroughput) {
  // Many requests at a high rate: a larger batch limit raises tokens/s per device and lowers
  // tokens/s per user (each decode step is slower at a larger batch).
  ServingOptions o = at_rates({200});
  o.requests = 64;
  o.output_len = 32;
  const ServingResult r = project(load({"infer_cpu.json"}), o);
  const std::vector<ParetoPoint>& q = r.points.at(0).pareto;
  ASSERT_EQ(q.size(), 5u);
  EXPECT_GT(q.back().output_tokens_per_s, q.front().output_tokens_per_s);
  EXPECT_LT(q.back().output_tokens_per_s_per_user, q.front().output_tokens_per_s_per_user);
  EXPECT_TRUE(q.front().frontier);
  EXPECT_TRUE(q.back().frontier);
}

TEST(Serving, ParetoFrontierByHand) {
  // A limit the trace never reaches repeats the figures of the smaller one: only the smallest is
  // on the frontier; a point worse on both figures is off it.
  ServingOptions o = at_rates({1});  // the fixture's rate-1 trace: requests run alone
  const ServingResult r = project(load({"infer_cpu.json"}), o);
  const std::vector<ParetoPoint>& q = r.points.at(0).pareto;
  ASSERT_EQ(q.size(), 5u);
  EXPECT_TRUE(q[0].frontier);
  for (std::size_t i = 1; i < q.size(); ++i) {
    EXPECT_DOUBLE_EQ(q[i].output_tokens_per_s, q[0].output_tokens_per_s);
    EXPECT_FALSE(q[i].frontier) << q[i].max_batch;
  }
}

TEST(Serving, DefaultsWithoutAServeCase) {
  const ServingResult r = project(load({"infer_gpu.json"}), at_rates({2}));
  const Point& p = r.points.at(0);
  EXPECT_EQ(p.trace.prompt_len, 128);
  EXPECT_EQ(p.trace.output_len, 32);
  EXPECT_EQ(p.trace.requests, 64);
  EXPECT_EQ(p.limits.max_batch, 16);
  EXPECT_EQ(p.trace.seed, 1u);
  EXPECT_EQ(p.summary.completed, 64);
}

TEST(Serving, OutputsCarryTheContract) {
  ServingOptions o = at_rates({1, 4});
  o.slo.ttft_s = 2;
  o.slo.tpot_s = 0.2;
  const ServingResult r = project(load({"infer_cpu.json"}), o);
  const nlohmann::ordered_json j = to_json(r);
  ASSERT_EQ(j["points"].size(), 2u);
  for (const auto& p : j["points"]) {
    for (const char* k : {"ttft_ms", "tpot_ms"}) {
      for (const char* q : {"p50", "p90", "p99"}) EXPECT_TRUE(p[k][q].is_number()) << k << q;
    }
    EXPECT_TRUE(p["itl_ms"]["p99"].is_number());
    EXPECT_TRUE(p["e2el_ms"]["p50"].is_number());
    EXPECT_TRUE(p["goodput_rps"].is_number());
    EXPECT_TRUE(p["output_tokens_per_s"].is_number());
    EXPECT_TRUE(p["output_tokens_per_s_per_user"].is_number());
    EXPECT_TRUE(p["pareto"].is_array());
    ASSERT_FALSE(p["validation"].empty());
    EXPECT_TRUE(p["validation"][0]["error_pct"].is_number());
  }
  EXPECT_EQ(j["slo"]["ttft_ms"], 2000.0);
  const std::string md = to_markdown(to_document(r));
  EXPECT_NE(md.find("### Validation"), std::string::npos);
  EXPECT_NE(md.find("-20.0%"), std::string::npos);
  EXPECT_NE(md.find("Pareto"), std::string::npos);
}

TEST(Serving, AServeCaseWithoutDetailsIsNotedNotUsed) {
  std::vector<ResultsFile> files = load({"infer_cpu.json"});
  for (ResultEntry& e : files[0].entries) {
    if (e.details.contains("serve")) e.details["serve"].erase("limits");
  }
  const ServingResult r = project(files, at_rates({1}));
  EXPECT_TRUE(r.validation.empty());
  std::size_t noted = 0;
  for (const std::string& n : r.notes) noted += n.find("lacks a valid trace, limits or summary") != std::string::npos;
  EXPECT_EQ(noted, 2u);
}

TEST(Serving, UsageErrors) {
  const std::vector<ResultsFile> cpu = load({"infer_cpu.json"});
  EXPECT_NE(usage_error([&] { project(load({"infer_prefill_only.json"}), at_rates({1})); }).find("phase=decode"),
            std::string::npos);
  EXPECT_NE(usage_error([&] { project(load({"../results_small.json"}), at_rates({1})); }).find("phase=prefill and phase=decode"),
            std::string::npos);
  EXPECT_NE(usage_error([&] { project(cpu, at_rates({0})); }).find("--rate"), std::string::npos);
  EXPECT_NE(usage_error([&] { project(cpu, at_rates({-1})); }).find("--rate"), std::string::npos);
  EXPECT_NE(usage_error([&] { project(cpu, at_rates({})); }).find("--rate"), std::string::npos);
  ServingOptions big = at_rates({1});
  big.requests = 20'000'000;
  EXPECT_NE(usage_error([&] { project(cpu, big); }).find("requests"), std::string::npos);
}

}  // namespace
