// The infer suite end to end on the CPU (issue 29's CLI contract): the quick preset's verified
// prefill, decode and serve entries, `serving` over them with validation rows, shards and
// slices, what the CPU cannot run, and the usage errors.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct Infer : CliTest {
  std::vector<nlohmann::json> entries(const fs::path& file) { return iteration_entries(file); }
};

TEST_F(Infer, QuickPresetAndServingWithValidation) {
  const fs::path out = dir / "I.json";
  const Output o = gpubench(fmt::format("run --device cpu --suite infer --preset quick -q --out {}", out.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto es = entries(out);
  int prefill = 0, decode = 0, serve = 0;
  for (const auto& g : es) {
    ASSERT_EQ(g["status"], "ok") << g.dump();
    EXPECT_TRUE(g["verification"]["passed"].get<bool>()) << g.dump();
    EXPECT_GT(g["verification"]["checked"].get<int>(), 0);
    const std::string phase = g["axes"]["phase"];
    const auto& m = g["metrics"];
    if (phase == "prefill") {
      ++prefill;
      EXPECT_GT(m["tokens_per_s"].get<double>(), 0);
      EXPECT_GT(m["tflops"].get<double>(), 0);
    } else if (phase == "decode") {
      ++decode;
      EXPECT_GT(m["tokens_per_s"].get<double>(), 0);
      EXPECT_GT(m["pct_of_memory_ceiling"].get<double>(), 0);
      EXPECT_LT(m["pct_of_memory_ceiling"].get<double>(), 200);  // a step cannot beat DRAM by 2x
      EXPECT_GT(m["bytes_per_step"].get<double>(), m["weight_bytes"].get<double>());
    } else {
      ++serve;
      const auto& s = g["details"]["serve"];
      EXPECT_EQ(s["summary"]["completed"], s["trace"]["requests"]);
      EXPECT_EQ(s["requests"].size(), s["trace"]["requests"].get<std::size_t>());
      EXPECT_GT(s["summary"]["ttft_ms"]["p50"].get<double>(), 0);
      EXPECT_GE(s["summary"]["ttft_ms"]["p99"].get<double>(), s["summary"]["ttft_ms"]["p50"].get<double>());
      EXPECT_GT(m["output_tokens_per_s"].get<double>(), 0);
      EXPECT_EQ(g["measurement"]["headline"]["statistic"], "single run");
      // The untimed warm-up pass of the same trace ran first: the timed pass's steps have shapes
      // it already ran (on the CPU, batching is the same in both passes but for timing).
      const auto& w = s["warmup"];
      ASSERT_TRUE(w.is_object()) << s.dump();
      EXPECT_GT(w["steps"].get<int>(), 0);
      EXPECT_GT(w["shapes"].get<int>(), 0);
      EXPECT_LE(w["shapes"].get<int>(), w["steps"].get<int>());
      EXPECT_GT(w["timed_steps"].get<int>(), 0);
      EXPECT_LE(w["timed_steps_of_a_new_shape"].get<int>(), w["timed_steps"].get<int>());
      EXPECT_TRUE(w["method"].get<std::string>().find("untimed pass") != std::string::npos);
    }
  }
  EXPECT_EQ(prefill, 12);
  EXPECT_EQ(decode, 8);
  EXPECT_EQ(serve, 6);  // rates 1 and 4, prompts of 64, 128 and 256 tokens on average

  const Output p = gpubench(fmt::format("serving {} --rate 1,4 --slo ttft=2s,tpot=200ms --format json", out.string()));
  ASSERT_EQ(p.code, 0) << p.err;
  const nlohmann::json j = nlohmann::json::parse(p.out);
  ASSERT_EQ(j["points"].size(), 2u) << p.out;
  for (const auto& pt : j["points"]) {
    for (const char* k : {"ttft_ms", "tpot_ms"})
      for (const char* q : {"p50", "p90", "p99"}) EXPECT_TRUE(pt[k][q].is_number()) << k << q << pt.dump();
    EXPECT_TRUE(pt["itl_ms"]["p99"].is_number());
    EXPECT_TRUE(pt["e2el_ms"]["p50"].is_number());
    EXPECT_TRUE(pt["goodput_rps"].is_number());
    EXPECT_GT(pt["output_tokens_per_s"].get<double>(), 0);
  }
  // Both rates were measured by the quick preset's serve cases: validation rows for each.
  ASSERT_FALSE(j["validation"].empty()) << p.out;
  for (const auto& v : j["validation"]) EXPECT_TRUE(v["error_pct"].is_number()) << v.dump();
}

TEST_F(Infer, ShardsSlicesAndBothArchitecturesRun) {
  const fs::path out = dir / "S.json";
  const Output o = gpubench(fmt::format(
      "run --device cpu --suite infer -a model=llama-small,gpt-small -a phase=prefill,decode -a batch=2 "
      "-a prompt_len=24 -a context_len=40 -a layers=2 -a kv_page=0,8 -q --out {}",
      out.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto es = entries(out);
  EXPECT_EQ(es.size(), 8u);
  for (const auto& g : es) EXPECT_EQ(g["status"], "ok") << g.dump();
  const fs::path shard = dir / "T.json";
  const Output t = gpubench(fmt::format(
      "run --device cpu --suite infer -a model=llama-small -a tp=2 -a phase=decode -a batch=3 -a context_len=17 -q --out {}",
      shard.string()));
  ASSERT_EQ(t.code, 0) << t.err;
  const auto ts = entries(shard);
  ASSERT_EQ(ts.size(), 1u);
  EXPECT_EQ(ts[0]["status"], "ok") << ts[0].dump();
}

TEST_F(Infer, WhatTheCpuCannotRunIsSkippedWithTheReason) {
  const fs::path out = dir / "C.json";
  const Output o = gpubench(fmt::format(
      "run --device cpu --suite infer -a phase=decode -a batch=1 -a context_len=16 -a dtype=bf16,fp32 -a graphs=0,1 -q --out {}",
      out.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  int skipped = 0;
  for (const auto& g : entries(out)) {
    if (g["axes"]["dtype"] == "fp32" && g["axes"]["graphs"] == 0) {
      EXPECT_EQ(g["status"], "ok") << g.dump();
      continue;
    }
    ++skipped;
    EXPECT_EQ(g["status"], "skipped") << g.dump();
    const std::string reason = g["reason"];
    EXPECT_TRUE(reason.find("fp32") != std::string::npos || reason.find("CUDA") != std::string::npos) << reason;
  }
  EXPECT_EQ(skipped, 3);
  // Lengths beyond what the CPU path verifies in reasonable time: skipped, saying so.
  const fs::path longer = dir / "L.json";
  const Output l = gpubench(fmt::format(
      "run --device cpu --suite infer -a phase=decode -a batch=1 -a context_len=5000 -q --out {}", longer.string()));
  ASSERT_EQ(l.code, 0) << l.err;
  const auto ls = entries(longer);
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(ls[0]["status"], "skipped");
  EXPECT_NE(ls[0]["reason"].get<std::string>().find("4096"), std::string::npos) << ls[0].dump();
  // On a GPU: the llama models in bf16 are planned to run; what the CUDA path lacks is skipped,
  // saying what.
  const Output plan = gpubench("run --dry-run --assume h200 --suite infer --preset quick");
  EXPECT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("model=llama3-8b/phase=decode/dtype=bf16"), std::string::npos) << plan.out;
  EXPECT_EQ(plan.out.find("cuda:0  [infer model=llama3-8b phase=decode dtype=bf16 batch=1 prompt_len=0 context_len=512 "
                          "output_len=0 rate=- requests=0 max_batch=0 kv_budget=0 kv_page=16 graphs=0 tp=1 layers=4 "
                          "threads=0]  skipped"),
            std::string::npos)
      << plan.out;
  // fp8 weights: planned to run on an H200 (sm_90), skipped on an A100 naming its sm_80; the plan
  // counts the linear layers' weights at 1 byte (one Llama 3 8B layer: 218 MB of fp8 codes and
  // the 1.05 GB bf16 head = 1.27 GB, against 1.49 GB in bf16).
  const std::string fp8_axes = "-a model=llama3-8b -a layers=1 -a phase=prefill -a dtype=fp8,bf16 -a batch=1 -a prompt_len=512";
  const Output h200 = gpubench("run --dry-run --assume h200 --suite infer " + fp8_axes);
  EXPECT_EQ(h200.code, 0) << h200.err;
  EXPECT_NE(h200.out.find("dtype=fp8 batch=1 prompt_len=512 context_len=0 output_len=0 rate=- requests=0 max_batch=0 "
                          "kv_budget=0 kv_page=16 graphs=0 tp=1 layers=1 threads=0]  (227 GFLOP per step, 1.27e+03 MB "
                          "of weights)"),
            std::string::npos)
      << h200.out;
  EXPECT_NE(h200.out.find("dtype=bf16 batch=1 prompt_len=512 context_len=0 output_len=0 rate=- requests=0 max_batch=0 "
                          "kv_budget=0 kv_page=16 graphs=0 tp=1 layers=1 threads=0]  (227 GFLOP per step, 1.49e+03 MB "
                          "of weights)"),
            std::string::npos)
      << h200.out;
  EXPECT_NE(h200.out.find("2 to run"), std::string::npos) << h200.out;
  const Output a100 = gpubench("run --dry-run --assume a100-sxm-80gb --suite infer " + fp8_axes);
  EXPECT_EQ(a100.code, 0) << a100.err;
  EXPECT_NE(a100.out.find("skipped: dtype=fp8 needs fp8 Tensor Cores (cuBLASLt's fp8 GEMMs: compute capability 8.9 or "
                          "newer); this GPU is sm_80"),
            std::string::npos)
      << a100.out;
  EXPECT_NE(a100.out.find("1 to run"), std::string::npos) << a100.out;  // the bf16 one
  const Output gpt = gpubench("run --dry-run --assume h200 --suite infer -a model=gpt-small -a dtype=bf16,fp8");
  EXPECT_EQ(gpt.code, 0) << gpt.err;
  EXPECT_NE(gpt.out.find("llama models"), std::string::npos) << gpt.out;
}

TEST_F(Infer, EveryPresetPlans) {
  for (const char* preset : {"quick", "standard", "full"}) {
    for (const char* where : {"--device cpu", "--assume h200"}) {
      const Output o = gpubench(fmt::format("run --dry-run --suite infer --preset {} {}", preset, where));
      EXPECT_EQ(o.code, 0) << preset << " " << where << ": " << o.err;
    }
  }
}

// One line naming what was wrong, exit 2, nothing run.
TEST_F(Infer, BadInputIsAUsageErrorNamingIt) {
  struct Bad {
    std::string axes, names;
  };
  const std::vector<Bad> bad = {
      {"-a model=llama3-9b", "model"},
      {"-a batch=0", "batch"},
      {"-a phase=serve -a rate=0", "rate"},
      {"-a phase=serve -a rate=-2", "rate"},
      {"-a phase=serve -a rate=fast", "rate"},
      {"-a model=llama-small -a tp=3", "tp=3"},
      {"-a phase=serve -a kv_budget=10", "kv_budget"},
      {"-a model=gpt-small -a prompt_len=5000", "positions"},
      {"-a model=llama-small -a layers=99", "layers=99"},
      {"-a phase=serve -a rate=0.0001 -a requests=100", "more than a day"},
      {"-a phase=serve -a rate=1000000 -a requests=1000000 -a output_len=1000", "for one trace"},
  };
  for (const Bad& b : bad) {
    const fs::path out = dir / "bad.json";
    const Output o = gpubench(fmt::format("run --device cpu --suite infer {} -q --out {}", b.axes, out.string()));
    EXPECT_EQ(o.code, 2) << b.axes << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << b.axes << ": " << o.err;
    EXPECT_NE(o.err.find(b.names), std::string::npos) << b.axes << ": " << o.err;
    EXPECT_FALSE(fs::exists(out)) << b.axes;
  }
}

}  // namespace
}  // namespace gpubench::e2e
