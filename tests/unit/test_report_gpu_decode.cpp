// The report's GPU JPEG decode table (reports/gpu_decode_section.hpp) on synthetic dataload
// entries built from results_small.json's entry: nvJPEG's rate over one CPU core's libjpeg-turbo
// decode, by hand; and the AU section's verdict (reports/storage_section.cpp) from a
// gpubench.storage_au object.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "reports/markdown.hpp"
#include "reports/report.hpp"

namespace gpubench::reports {
namespace {

const std::filesystem::path kSmall = std::filesystem::path(GPUBENCH_FIXTURES_DIR) / "results_small.json";

nlohmann::json decode_entry(const nlohmann::json& like, const std::string& device, bool gpu, int hw_load, double rate,
                            double cores) {
  nlohmann::json b = like;
  auto& g = b["gpubench"];
  g["suite"] = "dataload";
  g["status"] = "ok";
  g["device"] = device;
  g["axes"] = {{"stage", "decode"}, {"workers", 1}, {"scale", 1}, {"batch", 32}};
  if (gpu) {
    g["axes"]["decode"] = "gpu";
    g["axes"]["hw_load"] = hw_load;
  }
  g["metrics"] = {{"items_per_s", rate}, {"items_unit", "images"}};
  if (gpu) {
    g["metrics"]["cpu_cores"] = cores;
    g["metrics"]["batch_latency_ms_p99"] = 32 / rate * 1e3 * 1.5;
  }
  b["name"] = fmt::format("dataload/decode/{}/{}/{}", gpu ? "gpu" : "cpu", hw_load, device);
  b["run_name"] = b["name"];
  return b;
}

std::string report_of(const nlohmann::json& doc) {
  const ResultsFile f = read_results_text(doc.dump(), "d.json");
  return to_markdown(build_report({f}, SpecSheet::builtin(), {}).doc);
}

TEST(ReportGpuDecode, CoresItStandsInForByHand) {
  nlohmann::json doc;
  std::ifstream(kSmall) >> doc;
  const nlohmann::json like = doc["benchmarks"][0];
  doc["benchmarks"] = nlohmann::json::array();
  // One core decodes 400 images/s; nvJPEG 8000 with 0.5 host cores busy: it stands in for
  // 8000 / 400 = 20 cores and saves 20 - 0.5 = 19.5.
  doc["benchmarks"].push_back(decode_entry(like, "cpu", false, 0, 400, 0));
  doc["benchmarks"].push_back(decode_entry(like, "cuda:0", true, 65, 8000, 0.5));
  const std::string md = report_of(doc);
  const std::size_t at = md.find("## GPU JPEG decode");
  ASSERT_NE(at, std::string::npos) << md;
  const std::string s = md.substr(at, md.find("\n## ", at + 1) - at);
  EXPECT_NE(s.find("(400 images/s)"), std::string::npos) << s;
  EXPECT_NE(s.find("| 65 | 32 | 8000 | 6.00 | 0.500 | 20.0 | 19.5 |"), std::string::npos) << s;
}

TEST(ReportGpuDecode, NoSectionWithoutAGpuDecode) {
  nlohmann::json doc;
  std::ifstream(kSmall) >> doc;
  const nlohmann::json like = doc["benchmarks"][0];
  doc["benchmarks"] = nlohmann::json::array();
  doc["benchmarks"].push_back(decode_entry(like, "cpu", false, 0, 400, 0));
  EXPECT_EQ(report_of(doc).find("## GPU JPEG decode"), std::string::npos);
}

TEST(ReportStorageAu, CurveAndVerdict) {
  nlohmann::json doc;
  std::ifstream(kSmall) >> doc;  // its entries kept: a file with none has no report body
  doc["gpubench"]["storage_au"] = {
      {"workload", "unet3d"}, {"accelerator", "h100"}, {"sample_bytes", 146600628}, {"batch", 7}, {"step_s", 0.323},
      {"au_threshold_pct", 90}, {"demand_gbps_per_accelerator", 3.177}, {"direct", 1}, {"step_from", "published"},
      {"largest_passing", 2}, {"bounded_by", "failure"}, {"finished", true},
      {"verdict", "verdict: this storage feeds 2 GPUs at AU >= 90% (unet3d on emulated h100)"},
      {"curve", {{{"accelerators", 4}, {"au_pct", 61.0}, {"au_min_pct", 60.0}, {"samples_per_s", 50.0}, {"gbps", 7.7}, {"wait_ms_p99", 300.0}, {"passed", false}},
                 {{"accelerators", 1}, {"au_pct", 99.0}, {"au_min_pct", 99.0}, {"samples_per_s", 21.0}, {"gbps", 3.1}, {"wait_ms_p99", 1.0}, {"passed", true}},
                 {{"accelerators", 2}, {"au_pct", 93.0}, {"au_min_pct", 92.0}, {"samples_per_s", 40.0}, {"gbps", 5.9}, {"wait_ms_p99", 30.0}, {"passed", true}}}}};
  const std::string md = report_of(doc);
  const std::size_t at = md.find("## Storage: how many GPUs it feeds");
  ASSERT_NE(at, std::string::npos) << md;
  const std::string s = md.substr(at);
  const std::size_t one = s.find("| 1 | 99.0 |"), two = s.find("| 2 | 93.0 |"), four = s.find("| 4 | 61.0 |");
  ASSERT_NE(one, std::string::npos) << s;
  ASSERT_NE(four, std::string::npos) << s;
  EXPECT_LT(one, two);  // in N order, not the order tried
  EXPECT_LT(two, four);
  EXPECT_NE(s.find("verdict: this storage feeds 2 GPUs at AU &gt;= 90%"), std::string::npos) << s;
  EXPECT_NE(s.find("unet3d on h100, 7 samples of 146600628 B"), std::string::npos) << s;
}

}  // namespace
}  // namespace gpubench::reports
