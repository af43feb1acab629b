// The report's soak section (reports/soak.hpp) and its OpenMetrics gauges, on a made-up
// two-GPU soak: verdict and trend tables in Markdown, time-series charts in the HTML.
#include <gtest/gtest.h>

#include <string>

#include "reports/document.hpp"
#include "reports/openmetrics.hpp"
#include "reports/soak.hpp"

namespace gpubench::reports {
namespace {

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// Synthetic: two GPUs for 20 s, cuda:1 8 % slower and warmer; the verdict as a soak writes it.
ResultsFile two_gpu_soak() {
  ResultsFile f;
  f.path = "soak.json";
  f.context = {{"host_name", "node-17"}};
  nlohmann::json series = nlohmann::json::array();
  for (int t = 1; t <= 20; ++t) {
    for (int d = 0; d < 2; ++d) {
      series.push_back({{"t_s", t}, {"interval_s", 1}, {"device", "cuda:" + std::to_string(d)}, {"load", "gemm"},
                        {"rate", d == 0 ? 700.0 : 644.0}, {"unit", "TFLOP/s"}, {"runs", 400}, {"busy_s", 0.95},
                        {"sm_clock_mhz", 1980 - 10 * d}, {"memory_clock_mhz", 2619}, {"temperature_c", 60 + t / 2 + 5 * d},
                        {"memory_temperature_c", 70 + d}, {"power_w", 690 - d}, {"power_limit_w", 700},
                        {"ecc_uncorrected", 0}, {"pcie_replays", 0}});
    }
  }
  f.soak = {{"load", "gemm"},
            {"duration_s", 20},
            {"sample_interval_s", 1},
            {"thresholds", {{"max_drop_pct", 5}, {"max_spread_pct", 5}, {"warmup_s", 2}}},
            {"xid_watch", "on"},
            {"trends",
             {{{"device", "cuda:0"}, {"load", "gemm"}, {"unit", "TFLOP/s"}, {"samples", 18}, {"mean", 700},
               {"window", 3}, {"first", 700}, {"last", 700}, {"drop_pct", 0}},
              {{"device", "cuda:1"}, {"load", "gemm"}, {"unit", "TFLOP/s"}, {"samples", 18}, {"mean", 644},
               {"window", 3}, {"first", 644}, {"last", 644}, {"drop_pct", 0}}}},
            {"verdict",
             {{"passed", false},
              {"failures",
               {{{"device", "cuda:1"}, {"rule", "spread"}, {"measured", 4.17}, {"threshold", 4},
                 {"message", "cuda:1: gemm: 4.17 % below the median device >= --max-spread 4 %"}}}}}},
            {"series", series}};
  return f;
}

TEST(SoakReport, MarkdownHasTheVerdictAndTrendTables) {
  Document doc;
  soak_section(doc, {two_gpu_soak()});
  const std::string md = to_markdown(doc);
  EXPECT_NE(md.find("## Soak"), std::string::npos) << md;
  EXPECT_NE(md.find("Verdict: FAILED (1 rule(s))"), std::string::npos) << md;
  EXPECT_NE(md.find("| cuda:1 | spread | 4.17 | 4.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| cuda:0 | gemm | 18 | 700 TFLOP/s | 700 TFLOP/s | 0.00 % | 700 TFLOP/s |"), std::string::npos) << md;
  EXPECT_NE(md.find("Charts are in the HTML report"), std::string::npos) << md;
}

TEST(SoakReport, HtmlHasTimeSeriesChartsWithASeriesPerDevice) {
  Document doc;
  soak_section(doc, {two_gpu_soak()});
  const std::string html = to_html(doc);
  // Throughput, SM clock, memory clock, power, temperature.
  EXPECT_EQ(count(html, "<svg class=\"chart line multi\""), 5u) << html;
  for (const char* title : {"Throughput, gemm (TFLOP/s)", "SM clock (MHz)", "Power (W)", "Temperature (C)"}) {
    EXPECT_NE(html.find(title), std::string::npos) << title;
  }
  EXPECT_NE(html.find("cuda:1 mem"), std::string::npos);  // memory temperature as its own series
  EXPECT_GE(count(html, "<polyline class=\"series\""), 5u * 2);
  EXPECT_NE(html.find("20.0 s</text>"), std::string::npos);  // the time axis ends at the last sample
}

TEST(SoakReport, NoSoakNoSection) {
  ResultsFile f;
  Document doc;
  soak_section(doc, {f});
  EXPECT_TRUE(doc.blocks.empty());
}

TEST(SoakReport, OpenMetricsHasTheVerdictAndLastSamples) {
  const std::string om = to_openmetrics({two_gpu_soak()});
  EXPECT_NE(om.find("gpubench_soak_passed{host=\"node-17\"} 0"), std::string::npos) << om;
  EXPECT_NE(om.find("gpubench_soak_failed_rules{host=\"node-17\"} 1"), std::string::npos) << om;
  EXPECT_NE(om.find("gpubench_soak_rate{device=\"cuda:1\",load=\"gemm\",unit=\"TFLOP/s\",host=\"node-17\"} 644"),
            std::string::npos)
      << om;
  EXPECT_NE(om.find("gpubench_soak_temperature_celsius{device=\"cuda:1\",load=\"gemm\",host=\"node-17\"} 75"),
            std::string::npos)
      << om;
  EXPECT_NE(om.find("# TYPE gpubench_soak_power_watts gauge"), std::string::npos) << om;
}

}  // namespace
}  // namespace gpubench::reports
