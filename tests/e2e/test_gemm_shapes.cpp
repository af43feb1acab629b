// End-to-end: the gemm suite's named shapes through the real binary: `list --preset llm` shows
// the transformer GEMMs by role, a bad model description is one line and exit code 2, and a
// transformer GEMM with a transpose runs and verifies on the CPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench {
namespace {

using e2e::Output;

struct GemmShapesCli : e2e::CliTest {};

TEST_F(GemmShapesCli, ListLlmPresetShowsRoles) {
  Output list = gpubench("list --device cpu --suite gemm --preset llm");
  ASSERT_EQ(list.code, 0) << list.err;
  for (const char* role : {"qkv.fwd", "qkv.dgrad", "qkv.wgrad", "attn_out.fwd", "mlp_up.wgrad", "mlp_down.dgrad",
                           "lm_head.fwd"}) {
    EXPECT_NE(list.out.find(fmt::format("gemm/shape={}/model=gpt2-124m-s128-b1/", role)), std::string::npos) << role;
  }
  // GPT-2 at sequence 128: Q, K and V are 3 x 768 = 2304 wide; forward is m=out, n=tokens, k=in.
  EXPECT_NE(list.out.find("gemm/shape=qkv.fwd/model=gpt2-124m-s128-b1/tp=1/provider=openblas/dtype=fp32/layout=tn/m=2304/n=128/k=768/"),
            std::string::npos)
      << list.out;
  EXPECT_NE(list.err.find("15 case(s)"), std::string::npos) << list.err;

  Output axes = gpubench("list --axes --suite gemm");
  ASSERT_EQ(axes.code, 0) << axes.err;
  EXPECT_NE(axes.out.find("model    transformer for the LLM shapes"), std::string::npos) << axes.out;
  EXPECT_NE(axes.out.find("(text)"), std::string::npos) << axes.out;
  EXPECT_NE(axes.out.find("deepbench-train.40"), std::string::npos) << axes.out;
  EXPECT_NE(axes.out.find("llm       cuda: shape=qkv.fwd,"), std::string::npos) << axes.out;

  Output tp = gpubench("list --device cpu --suite gemm --preset llm -a model=llama-70b -a tp=8");
  ASSERT_EQ(tp.code, 0) << tp.err;
  EXPECT_NE(tp.out.find("gemm/shape=qkv.fwd/model=llama-70b/tp=8/provider=openblas/dtype=fp32/layout=tn/m=1280/n=4096/k=8192/"), std::string::npos)
      << tp.out;
}

TEST_F(GemmShapesCli, BadModelDescriptionsAreOneLineAndExitTwo) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-a model=h4096-f11008-a30-s2048-b1-v32000",
       "gpubench list: axis model: 'h4096-f11008-a30-s2048-b1-v32000': the 30 heads do not divide the hidden size 4096"},
      {"-a model=h4096-f11008-a32-kv6-s2048-b1-v32000", "the 6 KV heads do not divide the 32 heads"},
      {"-a model=h4096-f0-a32-s2048-b1-v32000", "field 'f0' must be at least 1"},
      {"-a model=llama-7b -a tp=3", "gpubench list: model 'llama-7b': tp 3 does not divide the 32 attention heads"},
      {"-a model=llamma-7b", "not a model preset or description"},
  };
  for (const auto& [args, expected] : cases) {
    Output o = gpubench("list --device cpu --suite gemm --preset llm " + args);
    EXPECT_EQ(o.code, 2) << args;
    EXPECT_NE(o.err.find(expected), std::string::npos) << args << ": " << o.err;
    EXPECT_EQ(o.out, "") << args;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;  // one line
  }
}

TEST_F(GemmShapesCli, TransformerGemmRunsAndVerifiesOnTheCpu) {
  const auto results = dir / "r.json";
  Output run = gpubench(fmt::format(
      "run --device cpu --suite gemm --preset llm -a model=h64-f256-a4-kv2-s32-b2-v100-glu -a shape=qkv.fwd,"
      "mlp_gate.wgrad --min-time 0.01 --warmup 0.001 --min-samples 3 -q -o {}",
      results.string()));
  ASSERT_EQ(run.code, 0) << run.err;
  const auto doc = nlohmann::json::parse(e2e::slurp(results));
  ASSERT_EQ(doc["benchmarks"].size(), 2u);
  // qkv.fwd: out (4 + 2*2) * 16 = 128, tokens 64, in 64, layout tn.
  const auto& qkv = doc["benchmarks"][0]["gpubench"];
  EXPECT_EQ(qkv["axes"]["shape"], "qkv.fwd");
  EXPECT_EQ(qkv["axes"]["m"], 128);
  EXPECT_EQ(qkv["axes"]["n"], 64);
  EXPECT_EQ(qkv["axes"]["layout"], "tn");
  EXPECT_EQ(qkv["verification"]["passed"], true);
  // mlp_gate.wgrad: m = in 64, n = out 256, k = tokens 64, layout nt.
  const auto& gate = doc["benchmarks"][1]["gpubench"];
  EXPECT_EQ(gate["axes"]["n"], 256);
  EXPECT_EQ(gate["axes"]["layout"], "nt");
  EXPECT_EQ(gate["verification"]["passed"], true);
}

}  // namespace
}  // namespace gpubench
