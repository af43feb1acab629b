// gpubench.summaries.gemm: fusion and tuning rows from synthetic entries.
#include <gtest/gtest.h>

#include "bench/suites/gemm/gemm.hpp"

namespace gpubench::suites::gemm {
namespace {

using Json = nlohmann::ordered_json;

Json entry(const std::string& provider, const std::string& epilogue, const std::string& fusion, double mean_s,
           const std::string& status = "ok") {
  Json axes = {{"provider", provider}, {"dtype", "bf16"}, {"layout", "tn"}, {"m", 4096}, {"n", 4096}, {"k", 4096},
               {"epilogue", epilogue}, {"fusion", fusion}};
  Json g = {{"suite", "gemm"}, {"device", "cuda:0"}, {"axes", axes}, {"status", status}};
  if (status == "ok") g["measurement"] = {{"mean_s", mean_s}};
  if (provider == "cublaslt-tuned") g["metrics"] = {{"gain_pct", 4.0}, {"algorithm", "id=2"}, {"heuristic_algorithm", "id=1"}};
  return {{"name", provider + epilogue + fusion}, {"run_type", "iteration"}, {"gpubench", g}};
}

TEST(GemmSummary, FusionPairsAndTuningGains) {
  const std::vector<Json> entries = {
      entry("cublaslt", "bias-gelu", "fused", 1.0e-3),
      entry("cublaslt", "bias-gelu", "separate", 1.25e-3),
      entry("cublaslt", "gelu", "fused", 1.0e-3),  // no separate partner: no row
      entry("cublaslt", "none", "fused", 0.9e-3),
      entry("cublaslt-tuned", "none", "fused", 0.8e-3),
      entry("cublaslt-tuned", "bias", "fused", 0.8e-3, "skipped"),  // ignored
  };
  const Json s = summarize_gemm(entries);
  ASSERT_EQ(s["fusion"].size(), 1u);
  const Json& f = s["fusion"][0];
  EXPECT_EQ(f["epilogue"], "bias-gelu");
  EXPECT_EQ(f["device"], "cuda:0");
  EXPECT_FALSE(f.contains("fusion"));
  EXPECT_DOUBLE_EQ(f["fusion_speedup"].get<double>(), 1.25);
  // Tuning: the tuned none/fused case pairs with cublaslt's none/fused case.
  ASSERT_EQ(s["tuning"].size(), 1u);
  const Json& t = s["tuning"][0];
  EXPECT_EQ(t["gain_pct"], 4.0);
  EXPECT_EQ(t["algorithm"], "id=2");
  EXPECT_DOUBLE_EQ(t["cublaslt_s"].get<double>(), 0.9e-3);
  EXPECT_NEAR(t["measured_gain_pct"].get<double>(), 12.5, 1e-9);
  EXPECT_FALSE(t.contains("provider"));
}

TEST(GemmSummary, NothingToSummarize) {
  EXPECT_TRUE(summarize_gemm({}).empty());
  EXPECT_TRUE(summarize_gemm({entry("openblas", "none", "fused", 1.0)}).empty());
  EXPECT_TRUE(summarize_gemm({Json::object(), Json{{"run_type", "aggregate"}}}).empty());
}

}  // namespace
}  // namespace gpubench::suites::gemm
