// End-to-end: `gpubench serving` through the real binary on the synthetic fixtures in
// tests/fixtures/serving (make_serving_fixtures.py): the JSON contract of issue 29, the
// Markdown tables, several files side by side, and exit 2 with one line on bad input.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

const fs::path kServing = fs::path(GPUBENCH_FIXTURES_DIR) / "serving";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

using ServingCli = CliTest;

TEST_F(ServingCli, JsonContract) {
  Output r = gpubench(fmt::format("serving {} --rate 1,4 --slo ttft=2s,tpot=200ms --format json",
                                  (kServing / "infer_cpu.json").string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["points"].size(), 2u);
  for (const auto& p : j["points"]) {
    EXPECT_TRUE(p["rate"].is_number());
    for (const char* q : {"p50", "p90", "p99"}) {
      EXPECT_TRUE(p["ttft_ms"][q].is_number()) << q;
      EXPECT_TRUE(p["tpot_ms"][q].is_number()) << q;
    }
    EXPECT_TRUE(p["itl_ms"]["p99"].is_number());
    EXPECT_TRUE(p["e2el_ms"]["p50"].is_number());
    EXPECT_TRUE(p["goodput_rps"].is_number());
    EXPECT_TRUE(p["output_tokens_per_s"].is_number());
    EXPECT_TRUE(p["output_tokens_per_s_per_user"].is_number());
    EXPECT_TRUE(p["requests_per_s"].is_number());
    EXPECT_EQ(p["device"], "Synthetic CPU");
    EXPECT_EQ(p["model"], "llama-small");
    EXPECT_FALSE(p["pareto"].empty());
    ASSERT_EQ(p["validation"].size(), 12u);  // a serve case at each rate
    for (const auto& v : p["validation"]) EXPECT_TRUE(v["error_pct"].is_number()) << v.dump();
  }
  // The rate-1 case by hand (tests/unit/test_serving.cpp): TTFT 20 ms projected, 25 measured.
  EXPECT_NEAR(j["points"][0]["ttft_ms"]["p50"].get<double>(), 20, 1e-9);
  EXPECT_NEAR(j["points"][0]["validation"][0]["error_pct"].get<double>(), -20, 1e-9);
  EXPECT_FALSE(j["assumptions"].empty());
  EXPECT_TRUE(j["notes"].is_array());
  EXPECT_EQ(j["slo"]["tpot_ms"], 200.0);
}

TEST_F(ServingCli, MarkdownSideBySide) {
  Output r = gpubench(fmt::format("serving {} {} --rate 2 --requests 16 --max-batch 8 --prompt-len 64 --output-len 8",
                                  (kServing / "infer_cpu.json").string(), (kServing / "infer_gpu.json").string()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# gpubench serving", 0), 0u);
  EXPECT_TRUE(has(r.out, "### Projection per rate"));
  EXPECT_TRUE(has(r.out, "Synthetic CPU"));
  EXPECT_TRUE(has(r.out, "Synthetic GPU"));
  EXPECT_TRUE(has(r.out, "### Validation"));
  EXPECT_TRUE(has(r.out, "No phase=serve case"));  // none at rate 2
  EXPECT_TRUE(has(r.out, "### Pareto frontier"));
  EXPECT_TRUE(has(r.out, "### Assumptions"));
  EXPECT_TRUE(r.err.empty()) << r.err;
  const fs::path html = dir / "serving.html";
  Output h = gpubench(fmt::format("serving {} --rate 1 --format html --out {}", (kServing / "infer_cpu.json").string(),
                                  html.string()));
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_TRUE(fs::exists(html));
}

TEST_F(ServingCli, BadInputExits2WithOneLine) {
  const std::string cpu = (kServing / "infer_cpu.json").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"serving " + cpu + " --rate 0", "--rate"},
      // Hours of simulation (a million requests of a million tokens) refused before it starts.
      {"serving " + cpu + " --rate 1,2,3 --requests 1048576 --output-len 1048576", "tokens to simulate"},
      {"serving " + cpu + " --rate -1", "--rate"},
      {"serving " + cpu + " --rate 1,x", "--rate 'x'"},
      {"serving " + cpu + " --rate 1,1", "'1' is given twice"},
      {"serving " + cpu, "--rate is required"},
      {"serving " + cpu + " --rate 1 --slo ttft=2", "needs a unit"},
      {"serving " + cpu + " --rate 1 --slo ttft=2h", "needs a unit"},
      {"serving " + cpu + " --rate 1 --slo ttft=xms", "not a number"},
      {"serving " + cpu + " --rate 1 --slo latency=2ms", "unknown key 'latency'"},
      {"serving " + cpu + " --rate 1 --slo ttft", "KEY=VALUE"},
      {"serving " + cpu + " --rate 1 --slo ttft=1s,ttft=2s", "given twice"},
      {"serving " + cpu + " --rate 1 --max-batch 0", "--max-batch"},
      {"serving " + cpu + " --rate 1 --requests 0", "--requests"},
      {"serving " + cpu + " --rate 1 --format csv", "csv"},
      {"serving " + (kServing / "infer_prefill_only.json").string() + " --rate 1", "phase=decode"},
      {"serving " + (dir / "missing.json").string() + " --rate 1", "missing.json: cannot open"},
      {"serving --rate 1", "no results file"},
  };
  for (const auto& [args, message] : cases) {
    Output r = gpubench(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_TRUE(has(r.err, message)) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

}  // namespace
}  // namespace gpubench::e2e
