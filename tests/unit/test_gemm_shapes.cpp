// The gemm suite's named shapes: DeepBench's lists, transformer GEMMs derived from a model
// description (checked against shapes computed by hand), model-description errors, and the
// presets that plan them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "bench/core/errors.hpp"
#include "bench/core/plan.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/shapes.hpp"
#include "fake_suite.hpp"
#include "test_util.hpp"

namespace gpubench {
namespace {

using namespace suites::gemm;
using gpubench::testing::usage_error;

struct Expected {
  std::int64_t m, n, k;
  const char* layout;
};

std::map<std::string, Expected> by_role(const std::vector<LlmGemm>& gemms) {
  std::map<std::string, Expected> out;
  for (const LlmGemm& g : gemms) out[g.role] = {g.shape.m, g.shape.n, g.shape.k, nullptr};
  return out;
}

void expect_gemms(const std::vector<LlmGemm>& got, const std::vector<std::pair<std::string, Expected>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].first);
    EXPECT_EQ(got[i].role, want[i].first);
    EXPECT_EQ(got[i].shape.m, want[i].second.m);
    EXPECT_EQ(got[i].shape.n, want[i].second.n);
    EXPECT_EQ(got[i].shape.k, want[i].second.k);
    EXPECT_EQ(got[i].shape.layout(), want[i].second.layout);
  }
}

// Llama-2-7B-like at tp = 1: hidden 4096, FFN 11008, 32 heads (head_dim 4096/32 = 128), 32 KV
// heads, sequence 4096, micro-batch 1 (tokens T = 4096 * 1 = 4096), vocabulary 32000, gated MLP.
// By hand, for each linear layer [out, in] (forward m=out n=T k=in tn; dgrad m=in n=T k=out nn;
// wgrad m=in n=out k=T nt):
//   qkv       in 4096, out (32 + 2*32) * 128 = 12288
//   attn_out  in 32 * 128 = 4096, out 4096
//   mlp_up    in 4096, out 11008;  mlp_gate the same
//   mlp_down  in 11008, out 4096
//   lm_head   in 4096, out 32000
TEST(GemmShapes, Llama7bMatchesTheHandComputation) {
  const ModelSpec llama = parse_model("llama-7b");
  expect_gemms(derive_llm_gemms(llama, 1), {
                                               {"qkv.fwd", {12288, 4096, 4096, "tn"}},
                                               {"qkv.dgrad", {4096, 4096, 12288, "nn"}},
                                               {"qkv.wgrad", {4096, 12288, 4096, "nt"}},
                                               {"attn_out.fwd", {4096, 4096, 4096, "tn"}},
                                               {"attn_out.dgrad", {4096, 4096, 4096, "nn"}},
                                               {"attn_out.wgrad", {4096, 4096, 4096, "nt"}},
                                               {"mlp_up.fwd", {11008, 4096, 4096, "tn"}},
                                               {"mlp_up.dgrad", {4096, 4096, 11008, "nn"}},
                                               {"mlp_up.wgrad", {4096, 11008, 4096, "nt"}},
                                               {"mlp_gate.fwd", {11008, 4096, 4096, "tn"}},
                                               {"mlp_gate.dgrad", {4096, 4096, 11008, "nn"}},
                                               {"mlp_gate.wgrad", {4096, 11008, 4096, "nt"}},
                                               {"mlp_down.fwd", {4096, 4096, 11008, "tn"}},
                                               {"mlp_down.dgrad", {11008, 4096, 4096, "nn"}},
                                               {"mlp_down.wgrad", {11008, 4096, 4096, "nt"}},
                                               {"lm_head.fwd", {32000, 4096, 4096, "tn"}},
                                               {"lm_head.dgrad", {4096, 4096, 32000, "nn"}},
                                               {"lm_head.wgrad", {4096, 32000, 4096, "nt"}},
                                           });
}

// Llama-2-70B-like at tp = 8 (GQA): hidden 8192, 64 heads (head_dim 128), 8 KV heads, FFN
// 28672, T = 4096, vocabulary 32000. Per GPU:
//   qkv       out (64 + 2*8) * 128 / 8 = 1280 (column-parallel), in 8192
//   attn_out  in 64 * 128 / 8 = 1024 (row-parallel), out 8192
//   mlp_up    out 28672 / 8 = 3584;  mlp_down in 3584, out 8192
//   lm_head   out 32000 / 8 = 4000
TEST(GemmShapes, Llama70bTensorParallelWithGqa) {
  const auto g = by_role(derive_llm_gemms(parse_model("llama-70b"), 8));
  EXPECT_EQ(g.at("qkv.fwd").m, 1280);
  EXPECT_EQ(g.at("qkv.fwd").k, 8192);
  EXPECT_EQ(g.at("qkv.wgrad").n, 1280);
  EXPECT_EQ(g.at("attn_out.fwd").k, 1024);
  EXPECT_EQ(g.at("attn_out.fwd").m, 8192);
  EXPECT_EQ(g.at("attn_out.dgrad").m, 1024);
  EXPECT_EQ(g.at("mlp_gate.fwd").m, 3584);
  EXPECT_EQ(g.at("mlp_down.fwd").k, 3584);
  EXPECT_EQ(g.at("mlp_down.wgrad").m, 3584);
  EXPECT_EQ(g.at("lm_head.fwd").m, 4000);
  for (const auto& [role, e] : g) {
    // Tokens: n of fwd and dgrad, k of wgrad.
    if (role.ends_with(".wgrad")) {
      EXPECT_EQ(e.k, 4096) << role;
    } else {
      EXPECT_EQ(e.n, 4096) << role;
    }
  }
  // Without GQA (kv = heads) the QKV output would be 3 * 8192 / 8 = 3072.
  EXPECT_EQ(by_role(derive_llm_gemms(parse_model("llama-70b-kv64"), 8)).at("qkv.fwd").m, 3072);
}

// GPT-2 small: plain MLP (no gate), T = 1024 * 8 = 8192; qkv out 3 * 768 = 2304. At tp = 2 the
// vocabulary 50257 is split into shards of ceil(50257 / 2) = 25129.
TEST(GemmShapes, Gpt2HasNoGateAndPadsTheVocabularyShard) {
  const auto gemms = derive_llm_gemms(parse_model("gpt2-124m"), 1);
  EXPECT_EQ(gemms.size(), 15u);  // 5 layers x 3 passes
  const auto g = by_role(gemms);
  EXPECT_FALSE(g.contains("mlp_gate.fwd"));
  EXPECT_EQ(g.at("qkv.fwd").m, 2304);
  EXPECT_EQ(g.at("qkv.fwd").n, 8192);
  EXPECT_EQ(g.at("mlp_up.fwd").m, 3072);
  EXPECT_EQ(g.at("lm_head.wgrad").n, 50257);
  EXPECT_EQ(by_role(derive_llm_gemms(parse_model("gpt2-124m"), 2)).at("lm_head.fwd").m, 25129);
}

TEST(GemmShapes, ModelDescriptions) {
  const ModelSpec a = parse_model("h1024-f4096-a16-s512-b4-v1000");
  EXPECT_EQ(a.hidden, 1024);
  EXPECT_EQ(a.ffn, 4096);
  EXPECT_EQ(a.heads, 16);
  EXPECT_EQ(a.kv_heads, 16);  // default: multi-head attention
  EXPECT_EQ(a.tokens(), 2048);
  EXPECT_EQ(a.vocab, 1000);
  EXPECT_FALSE(a.gated_mlp);
  EXPECT_EQ(a.name, "h1024-f4096-a16-s512-b4-v1000");

  const ModelSpec b = parse_model("v1000-glu-kv4-a16-h1024-f4096-b1-s8");  // any order
  EXPECT_EQ(b.kv_heads, 4);
  EXPECT_TRUE(b.gated_mlp);
  EXPECT_EQ(b.head_dim(), 64);

  const ModelSpec c = parse_model("llama-7b-s8192-b2");  // a preset with overrides
  EXPECT_EQ(c.hidden, 4096);
  EXPECT_EQ(c.seq, 8192);
  EXPECT_EQ(c.batch, 2);
  EXPECT_TRUE(c.gated_mlp);
  EXPECT_EQ(c.name, "llama-7b-s8192-b2");

  // Presets: the dimensions their sources give.
  ASSERT_EQ(model_presets().size(), 3u);
  for (const ModelPreset& p : model_presets()) {
    EXPECT_FALSE(p.source.empty()) << p.spec.name;
    EXPECT_EQ(parse_model(p.spec.name).hidden, p.spec.hidden);
  }
  const ModelSpec l70 = parse_model("llama-70b");
  EXPECT_EQ(std::vector<std::int64_t>({l70.hidden, l70.ffn, l70.heads, l70.kv_heads, l70.vocab}),
            std::vector<std::int64_t>({8192, 28672, 64, 8, 32000}));
}

TEST(GemmShapes, BadModelDescriptionsAreOneLineUsageErrors) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"h4096-f11008-a30-s2048-b1-v32000", "the 30 heads do not divide the hidden size 4096"},
      {"h4096-f11008-a32-kv5-s2048-b1-v32000", "the 5 KV heads do not divide the 32 heads"},
      {"h4096-f11008-a32-kv64-s2048-b1-v32000", "the 64 KV heads do not divide the 32 heads"},
      {"h0-f11008-a32-s2048-b1-v32000", "field 'h0' must be at least 1"},
      {"h4096-f11008-a32-s2048-b0-v32000", "field 'b0' must be at least 1"},
      {"h4096-f11008-a32-s2048-v32000", "missing field 'b'"},
      {"h4096-h4096-f1-a1-s1-b1-v1", "field 'h' given twice"},
      {"h4096-f11008-a32-s2048-b1-v32000-x7", "unknown field 'x7'"},
      {"h4096-f12x-a32-s2048-b1-v32000", "field 'f12x' needs a whole number after 'f'"},
      {"h4096--f1", "empty field"},
      {"llama-8b", "not a model preset or description"},
      {"llama-7b-a30", "the 30 heads do not divide the hidden size 4096"},
      {"h99999999999-f1-a1-s1-b1-v1", "is larger than"},
      {"", "expected a preset"},
  };
  for (const auto& c : cases) {
    const char* text = c.first;
    const char* expected = c.second;
    const std::string msg = usage_error([&] { parse_model(text); });
    EXPECT_NE(msg.find(expected), std::string::npos) << text << " -> " << msg;
    EXPECT_EQ(msg.rfind(fmt::format("model '{}': ", text), 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(GemmShapes, TensorParallelMustDivideHeadsKvHeadsAndFfn) {
  const ModelSpec llama = parse_model("llama-7b");
  EXPECT_EQ(usage_error([&] { derive_llm_gemms(llama, 3); }),
            "model 'llama-7b': tp 3 does not divide the 32 attention heads");
  EXPECT_EQ(usage_error([&] { derive_llm_gemms(parse_model("llama-70b"), 16); }),
            "model 'llama-70b': tp 16 does not divide the 8 KV heads");
  EXPECT_EQ(usage_error([&] { derive_llm_gemms(parse_model("h64-f100-a8-s1-b1-v10"), 8); }),
            "model 'h64-f100-a8-s1-b1-v10': tp 8 does not divide the 100 FFN columns");
  EXPECT_NO_THROW(derive_llm_gemms(llama, 32));
}

TEST(GemmShapes, DeepBenchSubsets) {
  // Entries checked against DeepBench's code/kernels/gemm_problems.h (positions in its lists).
  const auto& train = deepbench_train();
  const auto& infer = deepbench_infer();
  EXPECT_EQ(train.size(), 30u);
  EXPECT_EQ(infer.size(), 23u);
  auto find = [](const std::vector<DeepBenchShape>& list, int index) {
    for (const DeepBenchShape& s : list) {
      if (s.index == index) return s.shape;
    }
    ADD_FAILURE() << "no entry " << index;
    return GemmShape{};
  };
  auto expect_shape = [](const GemmShape& s, std::int64_t m, std::int64_t n, std::int64_t k, const char* layout) {
    EXPECT_EQ(s.m, m);
    EXPECT_EQ(s.n, n);
    EXPECT_EQ(s.k, k);
    EXPECT_EQ(s.layout(), layout);
  };
  expect_shape(find(train, 4), 1760, 7000, 1760, "nn");      // training_set[4]
  expect_shape(find(train, 40), 1760, 7133, 1760, "nt");     // first with b_t
  expect_shape(find(train, 56), 5124, 9124, 2560, "tn");
  expect_shape(find(train, 85), 1024, 16, 500000, "tn");
  expect_shape(find(train, 158), 512, 32, 512, "nt");        // last N,T entry of the list
  expect_shape(find(infer, 8), 7680, 1, 2560, "nn");         // inference_server_set[8]
  expect_shape(find(infer, 14), 512, 1, 500000, "nn");
  expect_shape(find(infer, 34), 8448, 6000, 2816, "nn");
  std::set<std::string> layouts;
  for (const auto* list : {&train, &infer}) {
    std::set<int> seen;
    for (const DeepBenchShape& s : *list) {
      EXPECT_TRUE(seen.insert(s.index).second) << s.index;
      layouts.insert(s.shape.layout());
    }
  }
  EXPECT_EQ(layouts, (std::set<std::string>{"nn", "nt", "tn"}));  // DeepBench never uses tt
}

TEST(GemmShapes, ShapeAxisAndNamedShapes) {
  const auto choices = shape_choices();
  EXPECT_EQ(choices.front(), "mnk");
  EXPECT_EQ(choices.size(), 1 + 30 + 23 + llm_roles().size());
  EXPECT_EQ(llm_roles().size(), 18u);
  const auto db = named_shape("deepbench-train.40", "none", 1);
  ASSERT_TRUE(db);
  EXPECT_EQ(db->n, 7133);
  EXPECT_FALSE(named_shape("mlp_gate.fwd", "gpt2-124m", 1));  // plain MLP
  EXPECT_EQ(named_shape("qkv.fwd", "llama-7b", 1)->m, 12288);
  EXPECT_NE(usage_error([] { named_shape("qkv.fwd", "none", 1); }).find("name the model with -a model="),
            std::string::npos);
  // The model axis checks descriptions when the axis is parsed.
  const AxisSpec model = model_axis();
  EXPECT_EQ(parse_axis_values(model, "none,llama-7b-s128").size(), 2u);
  EXPECT_EQ(usage_error([&] { parse_axis_values(model, "h4096-f1-a3-s1-b1-v1"); }),
            "axis model: 'h4096-f1-a3-s1-b1-v1': the 3 heads do not divide the hidden size 4096");
}

std::vector<PlannedCase> plan_for(const Suite& suite, const std::string& preset, const DeviceInfo& device,
                                  std::vector<std::string> overrides = {}) {
  PlanRequest r;
  r.preset = preset;
  r.axis_overrides = std::move(overrides);
  return make_plan({&suite}, r, {device});
}

TEST(GemmShapes, LlmPresetPlansEveryRoleWithResolvedShapes) {
  auto suite = make_suite();
  const auto plan = plan_for(*suite, "llm", testing::fake_gpu(0));
  EXPECT_EQ(plan.size(), 15u + 18u + 18u);  // gpt2 (no gate), llama-7b, llama-70b
  std::set<std::string> names;
  for (const PlannedCase& c : plan) {
    EXPECT_FALSE(c.skip_reason) << c.name();
    names.insert(c.name());
  }
  EXPECT_EQ(names.size(), plan.size());
  EXPECT_TRUE(names.contains("gemm/shape=qkv.fwd/model=llama-7b/tp=1/provider=cublas/dtype=bf16/layout=tn/m=12288/n=4096/k=4096/batch=1/pad=0/alpha=1/beta=0/epilogue=none/fusion=fused/threads=0/cuda:0"));
  EXPECT_TRUE(
      names.contains("gemm/shape=mlp_down.wgrad/model=llama-70b/tp=1/provider=cublas/dtype=bf16/layout=nt/m=28672/n=8192/k=4096/batch=1/pad=0/alpha=1/beta=0/epilogue=none/fusion=fused/threads=0/cuda:0"));

  // tp from the command line; a tp that does not divide a model is a usage error.
  const auto tp8 = plan_for(*suite, "llm", testing::fake_gpu(0), {"model=llama-70b", "tp=8"});
  EXPECT_EQ(tp8.size(), 18u);
  EXPECT_EQ(tp8.front().point.integer("m"), 1280);
  EXPECT_EQ(usage_error([&] { plan_for(*suite, "llm", testing::fake_gpu(0), {"tp=8"}); }),
            "model 'gpt2-124m': tp 8 does not divide the 12 attention heads");

  // The resolved problem carries the transposes.
  const GemmProblem p = problem_from(tp8.front().point);
  EXPECT_TRUE(p.trans_a);
  EXPECT_FALSE(p.trans_b);

  // On the CPU: GPT-2 small at sequence 128, fp32.
  const auto cpu = plan_for(*suite, "llm", testing::fake_cpu());
  EXPECT_EQ(cpu.size(), 15u);
  EXPECT_EQ(cpu.front().point.integer("n"), 128);
}

TEST(GemmShapes, DeepBenchPresetsAndMeaninglessCombinations) {
  auto suite = make_suite();
  EXPECT_EQ(plan_for(*suite, "deepbench-train", testing::fake_gpu(0)).size(), 30u);
  EXPECT_EQ(plan_for(*suite, "deepbench-infer", testing::fake_gpu(0)).size(), 23u);
  for (const char* preset : {"deepbench-train", "deepbench-infer"}) {
    const auto cpu = plan_for(*suite, preset, testing::fake_cpu());
    EXPECT_FALSE(cpu.empty());
    for (const PlannedCase& c : cpu) {
      EXPECT_LE(2.0 * c.point.integer("m") * c.point.integer("n") * c.point.integer("k"), kCpuPresetFlops) << c.name();
    }
  }
  const auto train = plan_for(*suite, "deepbench-train", testing::fake_gpu(0), {"shape=deepbench-train.40"});
  ASSERT_EQ(train.size(), 1u);
  EXPECT_EQ(train[0].name(), "gemm/shape=deepbench-train.40/model=none/tp=1/provider=cublas/dtype=fp16/layout=nt/m=1760/n=7133/k=1760/batch=1/pad=0/alpha=1/beta=0/epilogue=none/fusion=fused/threads=0/cuda:0");

  // Named shapes ignore m, n, k and layout: sweeping them plans each shape once.
  EXPECT_EQ(plan_for(*suite, "deepbench-infer", testing::fake_gpu(0), {"m=1,2,3", "layout=nn,tt"}).size(), 23u);
  // model and tp mean nothing for mnk shapes: those combinations are dropped, not duplicated.
  EXPECT_EQ(plan_for(*suite, "quick", testing::fake_cpu(), {"model=none,llama-7b", "tp=1,2"}).size(), 4u);
  // The square preset: 256 to 16384 by x2 on GPUs, in five precisions.
  EXPECT_EQ(plan_for(*suite, "square", testing::fake_gpu(0)).size(), 7u * 5u);
}

}  // namespace
}  // namespace gpubench
