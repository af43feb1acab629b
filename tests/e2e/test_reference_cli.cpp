// Issue 27 items 1-2, end to end: every row of data/reference.json names a case gpubench can
// plan on that GPU (`run --dry-run --assume`), and `report` holds results against the rows.
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct ReferenceCli : CliTest {};

TEST_F(ReferenceCli, EverySelectorMatchesACaseGpubenchCanRunOnThatGpu) {
  const auto doc = nlohmann::json::parse(slurp(fs::path(GPUBENCH_FIXTURES_DIR) / ".." / ".." / "data" / "reference.json"));
  ASSERT_GE(doc["rows"].size(), 30u);
  for (const auto& r : doc["rows"]) {
    const auto& sel = r["selector"];
    std::string args = fmt::format("run --dry-run --assume {} --suite {}", r["gpu"].get<std::string>(),
                                   sel["suite"].get<std::string>());
    for (const auto& [axis, v] : sel["axes"].items()) {
      args += fmt::format(" -a {}={}", axis, v.is_string() ? v.get<std::string>() : v.dump());
    }
    const Output o = gpubench(args);
    EXPECT_EQ(o.code, 0) << r["id"] << ": " << args << "\n" << o.err;
    // At least one planned case that is not skipped on that GPU.
    EXPECT_NE(o.out.find("dry-run: "), std::string::npos) << o.out;  // the plan's closing line is on stdout
    EXPECT_EQ(o.out.find("dry-run: 0 to run"), std::string::npos) << r["id"] << ": " << args << "\n" << o.out << o.err;
  }
}

// The CLI contract: an H100 SXM file with gemm bf16 cuBLASLt 8192^3 at 700 TFLOP/s.
TEST_F(ReferenceCli, AReportShowsPercentOfPublishedAndNamesTheSource) {
  const fs::path f = fs::path(GPUBENCH_FIXTURES_DIR) / "reports" / "compare_base.json";
  const fs::path md = dir / "R.md";
  const Output o = gpubench(fmt::format("report {} --format md,json --out {}", f.string(), md.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string text = slurp(md);
  EXPECT_NE(text.find("% of published"), std::string::npos);
  EXPECT_NE(text.find("m=8192 n=8192 k=8192 dtype=bf16 provider=cublaslt on NVIDIA H100 80GB HBM3 @ ci-1: 700 TFLOP/s, 88% "
                      "of the published 794.5 TFLOP/s (ml-engineering MAMF, torch 2.7.0+cu126, CUDA 12.6"),
            std::string::npos)
      << text;
  const auto j = nlohmann::json::parse(slurp(dir / "R.json"));
  bool found = false;
  for (const auto& c : j["cases"]) {
    if (c["suite"] != "gemm" || c["axes"]["m"] != 8192 || c["axes"]["dtype"] != "bf16") continue;
    for (const auto& v : c["runs"]) {
      if (v.is_null() || !v.contains("pct_of_published")) continue;
      EXPECT_NEAR(v["pct_of_published"].get<double>(), 100 * 700 / 794.5, 0.01);
      EXPECT_EQ(v["published"]["id"], "h100-sxm/mamf-bf16");
      found = true;
    }
  }
  EXPECT_TRUE(found) << j.dump().substr(0, 3000);
  // OpenMetrics carries it too.
  const Output om = gpubench(fmt::format("report {} -f openmetrics", f.string()));
  EXPECT_NE(om.out.find("gpubench_pct_of_published{"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::e2e
