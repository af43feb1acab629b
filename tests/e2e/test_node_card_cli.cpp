// End-to-end: the node card of `gpubench evaluate` results through the real binary on the
// synthetic fixtures of tests/fixtures/evaluate: Markdown begins with the card, the JSON summary
// carries it, and the HTML page rendered by headless Chromium (skipped when chromium is not
// installed; CI installs it) shows the card's title and the outlier line, with a PNG screenshot.
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

const fs::path kEvaluate = fs::path(GPUBENCH_FIXTURES_DIR) / "evaluate";
const std::string kTitle = "Node card: 8 x NVIDIA H100 80GB HBM3 (evaluate, budget 30m, 27.5 min measured)";
const std::string kOutlier = "outlier: h100-node-07 GPU 3 (UUID GPU-006866a0-0003-4000-8000-0000005a1703)";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

using NodeCardCli = CliTest;

TEST_F(NodeCardCli, MarkdownBeginsWithTheCard) {
  const Output r = gpubench("report " + (kEvaluate / "h100-node-slow-gpu.json").string() + " --format md");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# gpubench report\n\n## " + kTitle + "\n", 0), 0u) << r.out.substr(0, 500);
  EXPECT_TRUE(contains(r.out, kOutlier)) << r.out.substr(0, 4000);
  // The existing report follows: the run lead and the per-suite tables.
  EXPECT_TRUE(contains(r.out, "## What the run measured"));
  EXPECT_TRUE(contains(r.out, "\n## gemm\n"));
}

TEST_F(NodeCardCli, JsonSummaryCarriesTheCards) {
  const fs::path out = dir / "cards.json";
  const Output r = gpubench(fmt::format("report {} {} --format json --price H100=2.5 --price H200=3.5 -o {}",
                                        (kEvaluate / "h100-node-slow-gpu.json").string(),
                                        (kEvaluate / "h200-node.json").string(), out.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json s = nlohmann::json::parse(slurp(out));
  ASSERT_EQ(s["node_cards"].size(), 2u);
  EXPECT_EQ(s["node_cards"][0]["gpus"], 8);
  EXPECT_FALSE(s["node_cards"][0]["health"]["outliers"].empty());
  EXPECT_TRUE(s["node_cards"][1]["cost"]["usd_per_million_output_tokens"].is_number());
}

TEST_F(NodeCardCli, HtmlRendersTheCardInHeadlessChromium) {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium; CI installs it)";
  }
  const fs::path html = dir / "card.html", png = dir / "card.png";
  const Output r = gpubench(fmt::format("report {} --format html -o {}", (kEvaluate / "h100-node-slow-gpu.json").string(),
                                        html.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string chromium = fmt::format("timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir={}",
                                           (dir / "chromium").string());
  const Output dom = sh(fmt::format("{} --dump-dom file://{}", chromium, html.string()));
  ASSERT_EQ(dom.code, 0) << dom.err;
  EXPECT_TRUE(contains(dom.out, kTitle)) << dom.out.substr(0, 2000);
  EXPECT_TRUE(contains(dom.out, kOutlier));
  EXPECT_LT(dom.out.find(kTitle), dom.out.find("What the run measured"));
  const Output shot = sh(fmt::format("{} --window-size=1400,2400 --screenshot={} file://{}", chromium, png.string(),
                                     html.string()));
  ASSERT_EQ(shot.code, 0) << shot.err;
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 1000u);
  const std::string bytes = slurp(png);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace
}  // namespace gpubench::e2e
