// The dataload variant of the report's "Tuning report" section (reports/tuning_dataload.cpp):
// the evidence table with the stall split, the stall-against-workers chart and its frontier, the
// search log, and the warnings (no setting met the target, nothing recommended).
#include <gtest/gtest.h>

#include "reports/document.hpp"
#include "reports/tuning.hpp"
#include "reports/tuning_dataload.hpp"

namespace gpubench::reports {
namespace {

TEST(TuningDataloadReport, StallFrontier) {
  // (workers, stall %): 1 -> 40, 2 -> 10, 2 -> 30 (dominated), 3 -> 12 (dominated), 4 -> 2.
  const std::vector<double> w = {2, 1, 2, 3, 4}, s = {10, 40, 30, 12, 2};
  EXPECT_EQ(stall_frontier(w, s), (std::vector<std::size_t>{1, 0, 4}));
  EXPECT_TRUE(stall_frontier({}, {}).empty());
}

ResultsFile tuned_file() {
  ResultsFile f;
  f.path = "D.json";
  f.tuning = nlohmann::json::parse(R"J({
    "target": "dataload", "objective": "samples_per_s", "knobs": ["workers", "prefetch", "scale", "format"],
    "fixed": {"device": "cpu", "batch": 16, "consumer": "spin", "step_s": 0.05, "consumer_samples_per_s": 320.0,
              "io": "cached", "max_stall_pct": 5.0, "max_workers": 4, "dataset": "generated", "ranks": 1},
    "recommended": {"workers": 2, "prefetch": 4, "scale": 1, "format": "shard", "samples_per_s": 318.0,
                    "data_stall_pct": 1.2, "meets_max_stall": true, "noise_pct": 2.0, "samples": 16, "prep_stall_pct": 3.5,
                    "fetch_stall_pct": 0.5, "loader_cores": 2, "search_meets_max_stall": true,
                    "pytorch": "DataLoader(batch_size=16, num_workers=2, prefetch_factor=2, pin_memory=False)",
                    "command": "gpubench run --suite dataload --device cpu --axis stage=pipeline --axis workers=2"},
    "default": {"workers": 1, "prefetch": 2, "scale": 1, "format": "files", "samples_per_s": 160.0,
                "data_stall_pct": 50.0, "meets_max_stall": false, "noise_pct": 3.0, "samples": 16, "prep_stall_pct": 48.0,
                "fetch_stall_pct": 2.0, "loader_cores": 1},
    "speedup_vs_default": 1.9875, "budget_s": 30, "search_s": 15, "final_s": 12, "wall_s": 29, "seed": 1,
    "configurations": {"candidates": 6, "measured": 5, "failed": 1, "skipped": 0, "pruned": 3},
    "search": [
      {"workers": 4, "prefetch": 4, "scale": 1, "format": "shard", "stage": "short", "status": "ok",
       "data_stall_pct": 0.5, "samples_per_s": 320.0, "cost_s": 1.0},
      {"workers": 2, "prefetch": 4, "scale": 1, "format": "shard", "stage": "short", "status": "ok",
       "data_stall_pct": 1.0, "samples_per_s": 319.0, "cost_s": 1.0},
      {"workers": 1, "prefetch": 4, "scale": 1, "format": "shard", "stage": "short", "status": "ok",
       "data_stall_pct": 45.0, "samples_per_s": 170.0, "cost_s": 1.0},
      {"workers": 2, "prefetch": 2, "scale": 1, "format": "files", "stage": "short", "status": "failed",
       "reason": "verification failed: <b>x</b>", "cost_s": 1.0},
      {"workers": 2, "prefetch": 4, "scale": 1, "format": "shard", "stage": "long", "status": "ok",
       "data_stall_pct": 1.1, "samples_per_s": 318.0, "cost_s": 3.0},
      {"workers": 2, "prefetch": 4, "scale": 1, "format": "shard", "stage": "final", "status": "ok", "io": "cached",
       "role": "recommended", "data_stall_pct": 1.2, "samples_per_s": 318.0, "cost_s": 2.0},
      {"workers": 2, "prefetch": 4, "scale": 1, "format": "shard", "stage": "final", "status": "ok", "io": "cold",
       "role": "recommended", "data_stall_pct": 3.2, "samples_per_s": 310.0, "cost_s": 2.0},
      {"workers": 1, "prefetch": 2, "scale": 1, "format": "files", "stage": "final", "status": "ok", "io": "cached",
       "role": "default", "data_stall_pct": 50.0, "samples_per_s": 160.0, "cost_s": 2.0}
    ]})J");
  return f;
}

TEST(TuningDataloadReport, SectionInMarkdownAndHtml) {
  Document doc;
  doc.title = "t";
  tuning_section(doc, {tuned_file()});
  const std::string md = to_markdown(doc);
  EXPECT_NE(md.find("## Tuning report"), std::string::npos) << md;
  EXPECT_NE(md.find("gpubench run --suite dataload --device cpu \\\n  --axis stage=pipeline \\\n  --axis workers=2"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| recommended | 2 | 4 | 1 | shard | 318 | 1.2 | 3.5 | 0.5 | 2.0 | 2 | yes | 1.988x |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| default | 1 | 2 | 1 | files | 160 | 50.0 | 48.0 | 2.0 | 3.0 | 1 | no | 1.000x |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("DataLoader(batch_size=16, num_workers=2"), std::string::npos) << md;
  // 2 x sqrt(0.02^2/16 + 0.03^2/16) x 1.9875 = 0.0358
  EXPECT_NE(md.find("Speed-up in samples/s 1.988 ± 0.036"), std::string::npos) << md;
  EXPECT_EQ(md.find("That includes 1"), std::string::npos) << md;
  EXPECT_NE(md.find("per rank"), std::string::npos) << md;
  EXPECT_NE(md.find("verification failed"), std::string::npos) << md;
  EXPECT_EQ(md.find("MFU"), std::string::npos) << md;  // not the train table
  const std::string html = to_html(doc);
  EXPECT_NE(html.find("<svg class=\"chart scatter\""), std::string::npos);
  EXPECT_NE(html.find("data stall against loader workers"), std::string::npos);
  EXPECT_EQ(html.find("<b>x</b>"), std::string::npos);  // the reason is escaped
  // Three searched points (the long measurement replaces its short one), two finals at the
  // searched io (the cold one is not drawn), plus the legend's two.
  std::size_t circles = 0;
  for (std::size_t p = html.find("<circle"); p != std::string::npos; p = html.find("<circle", p + 1)) ++circles;
  EXPECT_EQ(circles, 3u + 2u + 2u);
}

TEST(TuningDataloadReport, WarnsWhenNoSettingMetTheTargetOrNothingWasRecommended) {
  ResultsFile f = tuned_file();
  f.tuning["recommended"]["search_meets_max_stall"] = false;
  f.tuning["speedup_vs_default"] = 1.01;
  Document doc;
  tuning_section(doc, {f});
  EXPECT_NE(to_markdown(doc).find("no configuration kept the data stall under 5.0%"), std::string::npos);
  EXPECT_NE(to_markdown(doc).find("That includes 1"), std::string::npos);
  f.tuning.erase("recommended");
  Document none;
  tuning_section(none, {f});
  EXPECT_NE(to_markdown(none).find("nothing could be recommended"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::reports
