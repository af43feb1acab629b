// The report's video section (reports/video_section.hpp) on synthetic video entries built from
// results_small.json's entry: the table per codec and the cores a GPU case stands in for, by
// hand; no section without a video case.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "reports/markdown.hpp"
#include "reports/report.hpp"

namespace gpubench::reports {
namespace {

const std::filesystem::path kSmall = std::filesystem::path(GPUBENCH_FIXTURES_DIR) / "results_small.json";

nlohmann::json video_entry(const nlohmann::json& like, const std::string& device, const std::string& preset, double fps, double psnr,
                           double cores) {
  nlohmann::json b = like;
  auto& g = b["gpubench"];
  g["suite"] = "video";
  g["status"] = "ok";
  g["device"] = device;
  g["device_name"] = device == "cpu" ? "AMD EPYC" : "NVIDIA L40S";
  g["axes"] = {{"op", "encode"}, {"codec", "h264"}, {"res", "1080p"}, {"preset", preset}, {"qp", 23}, {"sessions", 1}};
  g["metrics"] = {{"fps", fps},      {"psnr_db", psnr},       {"psnr_floor_db", 39.0}, {"bits_per_pixel", 0.1},
                  {"cpu_cores", cores}, {"codec", device == "cpu" ? "libx264" : "h264_nvenc"}, {"items_unit", "frames"}};
  b["name"] = fmt::format("video/{}/{}", preset, device);
  b["run_name"] = b["name"];
  return b;
}

std::string video_part(const nlohmann::json& doc) {
  const ResultsFile f = read_results_text(doc.dump(), "v.json");
  const std::string md = to_markdown(build_report({f}, SpecSheet::builtin(), {}).doc);
  const std::size_t at = md.find("## Video encode and decode");
  if (at == std::string::npos) return "";
  return md.substr(at, md.find("\n## ", at + 1) - at);
}

TEST(ReportVideo, CoresAGpuStandsInForByHand) {
  nlohmann::json doc;
  std::ifstream(kSmall) >> doc;
  const nlohmann::json like = doc["benchmarks"][0];
  doc["benchmarks"] = nlohmann::json::array();
  // x264 veryfast: 120 fps on 2 cores at 41.0 dB (60 per core); medium: 40 fps on 2 cores at
  // 42.0 dB (20 per core). NVENC at 41.5 dB and 600 fps: the CPU case at that PSNR or better is
  // medium, so it stands in for 600 / 20 = 30 cores; at 40.0 dB, veryfast (the most frames per
  // core among those at least as good): 600 / 60 = 10.
  doc["benchmarks"].push_back(video_entry(like, "cpu", "veryfast", 120, 41.0, 2));
  doc["benchmarks"].push_back(video_entry(like, "cpu", "medium", 40, 42.0, 2));
  doc["benchmarks"].push_back(video_entry(like, "cuda:0", "p3", 600, 41.5, 0.2));
  doc["benchmarks"].push_back(video_entry(like, "cuda:0", "p1", 600, 40.0, 0.2));
  const std::string s = video_part(doc);
  ASSERT_FALSE(s.empty());
  EXPECT_NE(s.find("### h264"), std::string::npos) << s;
  EXPECT_NE(s.find("| encode | 1080p | veryfast | 23 | 1 | 120 | 41.00 | 39.0 | 0.100 | 2.00 | 60.0 |"), std::string::npos) << s;
  EXPECT_NE(s.find("| p3 | 23 | 1 | 600 | 41.50 | 39.0 | 0.100 | 0.200 | - | 30.0 |"), std::string::npos) << s;
  EXPECT_NE(s.find("| p1 | 23 | 1 | 600 | 40.00 | 39.0 | 0.100 | 0.200 | - | 10.0 |"), std::string::npos) << s;
  EXPECT_NE(s.find("the work of 30.0 cores of AMD EPYC running libx264 medium (42.00 dB, 20.0 fps per core)"), std::string::npos) << s;
}

TEST(ReportVideo, NoSectionWithoutAVideoCase) {
  nlohmann::json doc;
  std::ifstream(kSmall) >> doc;
  EXPECT_EQ(video_part(doc), "");
}

}  // namespace
}  // namespace gpubench::reports
