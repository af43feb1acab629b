// The report's storage table (reports/storage_section.hpp) on synthetic storage entries built
// from results_small.json's CPU entry: one row per ok case, sorted by rw, bs, numjobs and
// iodepth, with GB/s, IOPS and the latency percentiles; no section without storage cases.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "reports/markdown.hpp"
#include "reports/report.hpp"

namespace gpubench::reports {
namespace {

const std::filesystem::path kSmall = std::filesystem::path(GPUBENCH_FIXTURES_DIR) / "results_small.json";

nlohmann::json storage_entry(const nlohmann::json& like, const std::string& rw, int bs, int iodepth, double gbps, double iops,
                             double p50, double p99, double p999, const std::string& status = "ok") {
  nlohmann::json b = like;
  auto& g = b["gpubench"];
  g["suite"] = "storage";
  g["status"] = status;
  g["axes"] = {{"rw", rw}, {"bs", bs}, {"iodepth", iodepth}, {"numjobs", 1}, {"direct", 1}, {"ioengine", "io_uring"},
               {"filesize", 268435456}};
  g["metrics"] = {{"bytes", 8388608}, {"gbps", gbps}, {"iops", iops}, {"latency_us_p50", p50}, {"latency_us_p99", p99},
                  {"latency_us_p999", p999}};
  g["details"] = {{"file", {{"filesystem", "ext4"}}}};
  b["name"] = "storage/" + rw + "/" + std::to_string(bs) + "/" + std::to_string(iodepth);
  b["run_name"] = b["name"];
  return b;
}

std::string report_of(const nlohmann::json& doc) {
  const ResultsFile f = read_results_text(doc.dump(), "s.json");
  return to_markdown(build_report({f}, SpecSheet::builtin(), {}).doc);
}

TEST(ReportStorage, OneRowPerOkCaseWithBandwidthIopsAndLatency) {
  nlohmann::json doc;
  std::ifstream(kSmall) >> doc;
  const nlohmann::json like = doc["benchmarks"][0];
  doc["benchmarks"] = nlohmann::json::array();
  doc["benchmarks"].push_back(storage_entry(like, "randread", 4096, 32, 0.345, 84300, 350, 502, 881));
  doc["benchmarks"].push_back(storage_entry(like, "read", 1048576, 1, 1.49, 1418, 640, 881, 1020));
  doc["benchmarks"].push_back(storage_entry(like, "randread", 4096, 1, 0.0766, 18690, 51.2, 71.2, 96.0));
  doc["benchmarks"].push_back(storage_entry(like, "read", 1048576, 32, 0, 0, 0, 0, 0, "skipped"));
  const std::string md = report_of(doc);
  const std::size_t at = md.find("## Storage reads");
  ASSERT_NE(at, std::string::npos) << md;
  const std::string s = md.substr(at, md.find("\n## ", at + 1) - at);
  const std::size_t seq = s.find("| read | 1048576 | 1 | 1 | direct | io\\_uring | ext4 | 1.49 | 1418 | 640 | 881 | 1020 |");
  const std::size_t rand1 = s.find("| randread | 4096 | 1 | 1 | direct | io\\_uring | ext4 | 0.0766 | 18690 | 51.2 | 71.2 | 96.0 |");
  const std::size_t rand32 = s.find("| randread | 4096 | 32 | 1 | direct | io\\_uring | ext4 | 0.345 | 84300 | 350 | 502 | 881 |");
  ASSERT_NE(seq, std::string::npos) << s;
  ASSERT_NE(rand1, std::string::npos) << s;
  ASSERT_NE(rand32, std::string::npos) << s;
  EXPECT_LT(seq, rand1);    // read before randread
  EXPECT_LT(rand1, rand32); // depth 1 before 32
  EXPECT_EQ(s.find("| read | 1048576 | 32 |"), std::string::npos) << "a skipped case has no row";
}

TEST(ReportStorage, NoSectionWithoutStorageCases) {
  nlohmann::json doc;
  std::ifstream(kSmall) >> doc;
  EXPECT_EQ(report_of(doc).find("## Storage reads"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::reports
