// End-to-end: `gpubench scaling` and the report's data-parallel section through the real
// binary on the synthetic fixtures in tests/fixtures/scaling (make_scaling_fixtures.py): the
// JSON contract (issue 17), the Markdown tables, exit 2 with one line on bad input, and the
// HTML scaling chart in headless Chromium (skipped when chromium is not installed).
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

const fs::path kScaling = fs::path(GPUBENCH_FIXTURES_DIR) / "scaling";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

using ScalingCli = CliTest;

TEST_F(ScalingCli, JsonHasProjectionsAndValidation) {
  Output r = gpubench(fmt::format("scaling {} --gpus 8,64,512 --format json", (kScaling / "cpu_dp.json").string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["projections"].size(), 3u);
  int previous = 0;
  for (const auto& p : j["projections"]) {
    for (const char* key : {"gpus", "step_s", "scaling_efficiency", "samples_per_s", "exposed_comm_s", "overlap_pct"}) {
      EXPECT_TRUE(p.contains(key)) << key << " in " << p.dump();
    }
    EXPECT_GT(p["gpus"].get<int>(), previous);
    previous = p["gpus"].get<int>();
    EXPECT_GT(p["step_s"].get<double>(), 0);
    EXPECT_LE(p["scaling_efficiency"].get<double>(), 1.0);
  }
  ASSERT_EQ(j["validation"].size(), 1u);
  const auto& v = j["validation"][0];
  EXPECT_EQ(v["ranks"], 2);
  EXPECT_DOUBLE_EQ(v["measured_s"].get<double>(), 0.0215);
  for (const char* key : {"projected_s", "error_pct"}) EXPECT_TRUE(v.contains(key)) << key;
  EXPECT_FALSE(j["assumptions"].empty());
}

TEST_F(ScalingCli, MarkdownByDefaultUpTo4096Gpus) {
  Output r = gpubench(fmt::format("scaling {} --price Synthetic=1.5 --train-samples 1e9", (kScaling / "cpu_dp.json").string()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# gpubench scaling", 0), 0u);
  EXPECT_TRUE(contains(r.out, "| GPUs | nodes | step |")) << r.out;
  EXPECT_TRUE(contains(r.out, "| 4096 |")) << r.out;
  EXPECT_TRUE(contains(r.out, "cost (USD)")) << r.out;
  EXPECT_TRUE(contains(r.out, "### Validation"));
  EXPECT_TRUE(contains(r.out, "### Assumptions"));
  EXPECT_TRUE(contains(r.out, "No contention"));
  EXPECT_TRUE(r.err.empty()) << r.err;
  // Nodes from the command line: 64 GPUs as 8 nodes of 8.
  Output h = gpubench(fmt::format("scaling {} --gpus 64 --gpus-per-node 8 --inter-node-gbps 12.5 --inter-node-latency-us 5 -f json",
                                  (kScaling / "cpu_dp.json").string()));
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_EQ(nlohmann::json::parse(h.out)["projections"][0]["nodes"], 8);
}

TEST_F(ScalingCli, BadInputExits2WithOneLine) {
  const std::string dp = (kScaling / "cpu_dp.json").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"scaling " + (kScaling / "collectives_only.json").string(), "no train case"},
      {"scaling " + (kScaling / "train_only.json").string(), "collectives suite"},
      {"scaling " + dp + " --gpus 8,x", "--gpus 'x': expected a whole number from 1 to"},
      {"scaling " + dp + " --gpus 0", "--gpus '0': expected a whole number from 1 to"},
      {"scaling " + dp + " --gpus 0x10", "--gpus '0x10': expected a whole number"},
      {"scaling " + dp + " --gpus ' 8'", "--gpus ' 8': expected a whole number"},
      {"scaling " + dp + " --gpus 8,8,8", "'8' is given twice"},
      {"scaling " + dp + " " + dp, "is given twice"},
      {"scaling " + dp + " --inter-node-gbps 50", "--inter-node-gbps: needs --gpus-per-node"},
      {"scaling " + dp + " --gpus 8,,64", "--gpus"},
      {"scaling " + dp + " --gpus-per-node 8", "no inter-node curve"},
      {"scaling " + dp + " --gpus 12 --gpus-per-node 8 --inter-node-gbps 10", "not a whole number of nodes"},
      {"scaling " + dp + " --inter-node-latency-us 3", "needs --inter-node-gbps"},
      {"scaling " + dp + " --dp fsdp", "--dp: 'fsdp'"},
      {"scaling " + dp + " --format csv", "csv"},
      {"scaling " + (dir / "missing.json").string(), "missing.json: cannot open"},
      {"scaling", "no results file"},
  };
  for (const auto& [args, message] : cases) {
    Output r = gpubench(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, message)) << args << "\n" << r.err;
    EXPECT_EQ(count(r.err, "\n"), 1u) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

TEST_F(ScalingCli, ReportShowsTheDataParallelSection) {
  Output r = gpubench("report " + (kScaling / "cpu_dp.json").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "## Data-parallel scaling")) << r.out;
  EXPECT_TRUE(contains(r.out, "exposed share"));
  EXPECT_TRUE(contains(r.out, "projected efficiency (efficiency %)")) << r.out;  // the chart's numbers
  EXPECT_TRUE(contains(r.out, "### Data-parallel scaling"));                      // the finding
  EXPECT_TRUE(contains(r.out, "projected scaling efficiency drops below 80% at") ||
              contains(r.out, "projected scaling efficiency stays at or above 80%"))
      << r.out;
  // Data-parallel cases without collectives curves: the measured table, and why there is no projection.
  Output n = gpubench("report " + (kScaling / "train_only.json").string());
  ASSERT_EQ(n.code, 0) << n.err;
  EXPECT_TRUE(contains(n.out, "## Data-parallel scaling")) << n.out;
  EXPECT_TRUE(contains(n.out, "No projection to more GPUs: no all")) << n.out;
}

TEST_F(ScalingCli, HtmlChartRendersInHeadlessChromium) {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium; CI installs it)";
  }
  const fs::path html = dir / "report.html";
  Output r = gpubench(fmt::format("report {} -f html -o {}", (kScaling / "cpu_dp.json").string(), html.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(count(slurp(html), "<svg class=\"chart line multi\""), 1u);
  Output dom = sh(fmt::format("timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr "
                              "--v=0 --user-data-dir={} --dump-dom file://{}",
                              (dir / "chromium").string(), html.string()));
  ASSERT_EQ(dom.code, 0) << dom.err;
  EXPECT_FALSE(contains(dom.err, "CONSOLE")) << dom.err;
  EXPECT_EQ(count(dom.out, "<svg class=\"chart line multi\""), 1u);
  EXPECT_GT(count(dom.out, "<polyline"), 0u);
  EXPECT_TRUE(contains(dom.out, "measured at 2:")) << "the measured point at 2 ranks";
}

}  // namespace
}  // namespace gpubench::e2e
