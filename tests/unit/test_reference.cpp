// data/reference.json (issue 27): every row's fields, and the matching of results to rows.
#include <gtest/gtest.h>

#include <set>

#include "bench/core/errors.hpp"
#include "reports/cases.hpp"
#include "reports/reference.hpp"
#include "reports/report.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::reports {
namespace {

TEST(Reference, EveryRowIsCompleteAndNamesAKnownGpu) {
  const ReferenceTable& t = ReferenceTable::builtin();
  ASSERT_GE(t.rows().size(), 30u);
  const SpecSheet sheet = SpecSheet::builtin();
  std::set<std::string> keys, ids, gpus;
  for (const GpuSpec& g : sheet.gpus()) keys.insert(g.key);
  for (const ReferenceRow& r : t.rows()) {
    EXPECT_TRUE(ids.insert(r.id).second) << "duplicate id " << r.id;
    EXPECT_TRUE(keys.count(r.gpu)) << r.id << ": gpu '" << r.gpu << "' is not a key of data/gpus.json";
    gpus.insert(r.gpu);
    EXPECT_GT(r.value, 0) << r.id;
    EXPECT_TRUE(r.suite == "gemm" || r.suite == "memory" || r.suite == "collectives" || r.suite == "attention" ||
                r.suite == "infer" || r.suite == "video")
        << r.id;
    EXPECT_FALSE(r.axes.empty()) << r.id;
    EXPECT_EQ(r.source_url.rfind("https://", 0), 0u) << r.id;
    EXPECT_FALSE(r.stack.empty()) << r.id;
    EXPECT_FALSE(r.configuration.empty()) << r.id;
    EXPECT_FALSE(r.checked.empty()) << r.id;
    // Measured figures, never datasheet claims: none equals its GPU's datasheet peak.
    const GpuSpec* g = nullptr;
    for (const GpuSpec& x : sheet.gpus()) {
      if (x.key == r.gpu) g = &x;
    }
    ASSERT_NE(g, nullptr);
    for (const auto& [key, peak] : g->peaks) EXPECT_NE(r.value, peak) << r.id << " equals the datasheet's " << key;
  }
  for (const char* gpu : {"h100-sxm", "h200-sxm", "b200", "a100-sxm-80gb"}) EXPECT_TRUE(gpus.count(gpu)) << gpu;
}

TEST(Reference, MalformedTablesAreRefusedNamingTheRow) {
  EXPECT_THROW((void)ReferenceTable::from_json_text("{\"schema_version\": 1}", "t"), UsageError);
  EXPECT_THROW((void)ReferenceTable::from_json_text(
                   R"({"schema_version": 1, "rows": [{"id": "x", "gpu": "h100-sxm", "value": -1}]})", "t"),
               UsageError);
}

ResultEntry entry(const std::string& suite, const nlohmann::json& axes, const nlohmann::json& collective = {}) {
  ResultEntry e;
  e.suite = suite;
  e.axes = axes;
  e.collective = collective.is_null() ? nlohmann::json::object() : collective;
  e.status = "ok";
  return e;
}

TEST(Reference, MatchesTheMostSpecificRowAndNamesADifferentSize) {
  const ReferenceTable& t = ReferenceTable::builtin();
  // fp8 cuBLASLt 8192^3 on an H100: the exact row (1290.1), not the MAMF one (1402.6).
  auto m = t.match("h100-sxm", entry("gemm", {{"provider", "cublaslt"}, {"dtype", "fp8-e4m3"}, {"layout", "tn"},
                                              {"m", 8192}, {"n", 8192}, {"k", 8192}}),
                   "tflops", 1161.09);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->row->id, "h100-sxm/cublaslt-fp8-8192");
  EXPECT_NEAR(m->pct, 90.0, 0.01);
  // bf16 at a shape no row names: the MAMF row, the ceiling of every shape.
  m = t.match("h100-sxm", entry("gemm", {{"provider", "cublaslt"}, {"dtype", "bf16"}, {"m", 8192}, {"n", 8192}, {"k", 8192}}),
              "tflops", 700);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->row->id, "h100-sxm/mamf-bf16");
  EXPECT_NEAR(m->pct, 88.1, 0.05);
  // all_reduce at 1 GiB on 8 ranks: the 8 GiB row, with the difference named; on 4 ranks, none.
  m = t.match("h200-sxm", entry("collectives", {{"op", "all_reduce"}, {"size", 1073741824}}, {{"ranks", 8}}), "busbw_gbps",
              400);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->differs, "size 1 GiB, the published figure's 8 GiB");
  EXPECT_FALSE(t.match("h200-sxm", entry("collectives", {{"op", "all_reduce"}, {"size", 8589934592}}, {{"ranks", 4}}),
                       "busbw_gbps", 400));
  // Device-memory rows apply from 256 MiB per array: the first H200 run's console held triad at
  // 8 MiB (served by the L2) at 138% of the published HBM figure and a 4 KiB copy at 0%.
  m = t.match("h200-sxm", entry("memory", {{"test", "triad"}, {"size", 8388608}}), "gbps", 5724);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->differs, "size 8 MiB, under the 256 MiB the published figure applies from (a smaller size measures caches or latency, not the sustained rate)");
  m = t.match("h200-sxm", entry("memory", {{"test", "triad"}, {"size", 268435456}}), "gbps", 4015);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->differs.empty()) << m->differs;
  EXPECT_THROW((void)ReferenceTable::from_json_text(
                   R"({"schema_version": 1, "rows": [{"id": "x", "gpu": "h100-sxm", "measures": "m", "selector": {"suite": "memory", "axes": {}, "min_size": -4}}]})",
                   "t"),
               UsageError);
  // Another GPU, another metric, another suite: no row.
  EXPECT_FALSE(t.match("l4", entry("memory", {{"test", "triad"}}), "gbps", 250));
  EXPECT_FALSE(t.match("h100-sxm", entry("memory", {{"test", "triad"}}), "tflops", 1));
}

// Every row, on its own GPU, is what an entry of exactly its selector is held against (or, where
// two rows share a selector, NVLS beside ring, the first of them): no row is unreachable, on any
// of the GPUs the table covers; and the % of published is the entry's value over the row's.
TEST(Reference, EveryRowIsReachedByAnEntryOfItsSelectorOnItsGpu) {
  const ReferenceTable& t = ReferenceTable::builtin();
  std::set<std::string> gpus;
  for (const ReferenceRow& r : t.rows()) {
    SCOPED_TRACE(r.id);
    nlohmann::json axes = r.axes;
    if (r.min_size) axes["size"] = *r.min_size;
    const nlohmann::json collective = r.ranks ? nlohmann::json{{"ranks", *r.ranks}} : nlohmann::json::object();
    const auto m = t.match(r.gpu, entry(r.suite, axes, collective), r.metric, 0.8 * r.value);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->row->axes, r.axes);
    EXPECT_TRUE(m->differs.empty()) << m->differs;
    if (m->row == &r) {
      EXPECT_NEAR(m->pct, 80.0, 1e-9);
      EXPECT_NEAR(t.match(r.gpu, entry(r.suite, axes, collective), r.metric, 1.15 * r.value)->pct, 115.0, 1e-9);
    }
    gpus.insert(r.gpu);
  }
  EXPECT_EQ(gpus, (std::set<std::string>{"a100-sxm-80gb", "b200", "h100-sxm", "h200-sxm", "l40s"}));
}

// Serving throughput (TensorRT-LLM's maximum-throughput table): an infer serve entry's headline is
// its output tokens/s (vLLM's definition), which the rows are held against; the rate must be the
// selector's (a low rate measures the arrivals, not the GPU), and a tp=2 shard meets the 70B TP2 row.
TEST(Reference, ServeEntriesAreHeldAgainstTheMaximumThroughputRowsOfTheirModelAndTp) {
  const ReferenceTable& t = ReferenceTable::builtin();
  auto serve = [](const std::string& model, int tp, const std::string& rate, double tokens_per_s) {
    ResultEntry e = entry("infer", {{"model", model}, {"phase", "serve"}, {"dtype", "fp8"}, {"batch", 0}, {"prompt_len", 128},
                                    {"context_len", 0}, {"output_len", 2048}, {"rate", rate}, {"requests", 3000},
                                    {"max_batch", 512}, {"kv_budget", 0}, {"kv_page", 16}, {"graphs", 1}, {"tp", tp},
                                    {"layers", 0}, {"threads", 0}});
    // What the harness writes for the serve case: the items rate and the scheduler's own figure.
    e.metrics = {{"items", 3000 * 2048}, {"items_unit", "output_tokens"}, {"items_per_s", tokens_per_s * 0.99},
                 {"output_tokens_per_s", tokens_per_s}};
    return e;
  };
  const ResultEntry h200 = serve("llama3-8b", 1, "1e6", 23598.9);
  const auto perf = entry_perf(h200);
  ASSERT_TRUE(perf.has_value());
  EXPECT_EQ(perf->metric, "output_tokens_per_s");
  EXPECT_EQ(perf->unit, "tokens/s");
  EXPECT_DOUBLE_EQ(perf->value, 23598.9);
  auto m = t.match("h200-sxm", h200, perf->metric, perf->value);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->row->id, "h200-sxm/serve-llama3-8b-fp8-128-2048");
  EXPECT_NEAR(m->pct, 90.0, 0.001);  // 23598.9 / 26221
  EXPECT_TRUE(m->differs.empty());
  // A trace at 4 requests/s is not a maximum-throughput run: no row.
  EXPECT_FALSE(t.match("h200-sxm", serve("llama3-8b", 1, "4", 8000), "output_tokens_per_s", 8000));
  // 70B: TP2 on the H100 (the system's figure, which a tp=2 shard's count of every token meets), TP1 on the H200.
  m = t.match("h100-sxm", serve("llama3-70b", 2, "1e6", 6651), "output_tokens_per_s", 6651);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->row->id, "h100-sxm/serve-llama3-70b-fp8-tp2-128-2048");
  EXPECT_FALSE(t.match("h100-sxm", serve("llama3-70b", 1, "1e6", 3000), "output_tokens_per_s", 3000));
  m = t.match("h200-sxm", serve("llama3-70b", 1, "1e6", 4336), "output_tokens_per_s", 4336);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->row->id, "h200-sxm/serve-llama3-70b-fp8-tp1-128-2048");
  // A 4-layer slice (the CUDA quick preset's) is not the model: no row.
  ResultEntry slice = serve("llama3-8b", 1, "1e6", 90000);
  slice.axes["layers"] = 4;
  EXPECT_FALSE(t.match("h100-sxm", slice, "output_tokens_per_s", 90000));
  // Other lengths or dtypes: no row.
  ResultEntry bf16 = serve("llama3-8b", 1, "1e6", 20000);
  bf16.axes["dtype"] = "bf16";
  EXPECT_FALSE(t.match("h100-sxm", bf16, "output_tokens_per_s", 20000));
}

// NVLink pair copies (memory p2p / p2p_bidir, any peer): from 256 MiB per copy the published pair
// figure applies; a smaller copy is named as differing.
TEST(Reference, PeerCopiesAreHeldAgainstTheNvlinkPairRows) {
  const ReferenceTable& t = ReferenceTable::builtin();
  auto m = t.match("h200-sxm", entry("memory", {{"test", "p2p"}, {"size", 536870912}, {"peer", 3}}), "gbps", 356.76);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->row->id, "h200-sxm/nvlink-p2p-uni");
  EXPECT_NEAR(m->pct, 90.0, 0.001);
  EXPECT_TRUE(m->differs.empty()) << m->differs;
  m = t.match("h100-sxm", entry("memory", {{"test", "p2p_bidir"}, {"size", 268435456}, {"peer", 1}}), "gbps", 700);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->row->id, "h100-sxm/nvlink-p2p-bidir");
  m = t.match("h100-sxm", entry("memory", {{"test", "p2p"}, {"size", 8388608}, {"peer", 1}}), "gbps", 200);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->row->id, "h100-sxm/nvlink-p2p-uni");
  EXPECT_FALSE(m->differs.empty());
  // Without peer access the copy goes through the host: no row.
  EXPECT_FALSE(t.match("h100-sxm", entry("memory", {{"test", "p2p_noaccess"}, {"size", 268435456}, {"peer", 1}}), "gbps", 40));
}

}  // namespace
}  // namespace gpubench::reports
