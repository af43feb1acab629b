// The report's inference section (reports/infer_section.hpp) on the serving fixtures
// (tests/fixtures/serving, make_serving_fixtures.py): prefill and decode tables with both
// devices side by side, the % of the memory ceiling, the charts' numbers and the measured serve
// cases' percentiles.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "reports/markdown.hpp"
#include "reports/report.hpp"

namespace gpubench::reports {
namespace {

const std::filesystem::path kFixtures = std::filesystem::path(GPUBENCH_FIXTURES_DIR) / "serving";

TEST(ReportInfer, PrefillDecodeAndServeSideBySide) {
  const std::string md = to_markdown(
      build_report({read_results(kFixtures / "infer_cpu.json"), read_results(kFixtures / "infer_gpu.json")},
                   SpecSheet::builtin(), {})
          .doc);
  const std::size_t at = md.find("## Inference");
  ASSERT_NE(at, std::string::npos) << md;
  const std::string s = md.substr(at, md.find("\n## ", at + 1) - at);
  EXPECT_NE(s.find("### Prefill"), std::string::npos);
  // Batch 4 of 128 tokens in 68 ms: 7529 tokens/s on the CPU, ten times that on the GPU.
  EXPECT_NE(s.find("| 4 | 128 | 68.0 ms | 7529 |"), std::string::npos) << s;
  EXPECT_NE(s.find("| 4 | 128 | 6.80 ms | 75294 |"), std::string::npos) << s;
  EXPECT_NE(s.find("Synthetic CPU (cpu) \\[infer\\_cpu.json\\]"), std::string::npos) << s;
  EXPECT_NE(s.find("Synthetic GPU (cuda:0) \\[infer\\_gpu.json\\]"), std::string::npos) << s;
  // Decode at batch 16, context 64: 10 + 32 + 10.24 = 52.24 ms, 16 / 0.05224 = 306 tokens/s,
  // 19.1 per user, the fixture's 56.0% of the memory ceiling.
  EXPECT_NE(s.find("| 16 | 64 | 52.2 ms | 306 | 19.1 | 56.0% |"), std::string::npos) << s;
  EXPECT_NE(s.find("Decode tokens/s vs batch"), std::string::npos);
  EXPECT_NE(s.find("Decode step time vs cached context"), std::string::npos);
  // The measured serve case at rate 4: TTFT p50 28, p99 36 ms.
  EXPECT_NE(s.find("### Serving (measured)"), std::string::npos);
  EXPECT_NE(s.find("| 4 | 3 | 128 | 4 | 4 | 28.0 | 36.0 | 15.0 | 16.0 | 18.0 | 72.0 |"), std::string::npos) << s;
  // Without telemetry no tokens-per-joule column.
  EXPECT_EQ(s.find("tok/J"), std::string::npos) << s;
}

// The fixtures with telemetry's per-joule figures added, as the telemetry instrument writes them
// (profile.telemetry.<items_unit>_per_joule): a column per table, empty where an entry has none.
TEST(ReportInfer, TokensPerJouleFromTelemetry) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gpubench-report-infer-joule";
  std::filesystem::create_directories(dir);
  auto with_energy = [&](const char* name) {
    nlohmann::json d;
    std::ifstream(kFixtures / name) >> d;
    for (auto& b : d["benchmarks"]) {
      auto& g = b["gpubench"];
      const std::string phase = g["axes"]["phase"];
      const double batch = g["axes"]["batch"];
      if (phase == "prefill" && batch == 4) {
        g["metrics"]["items_unit"] = "tokens";
        g["profile"]["telemetry"] = {{"energy_j", 2.0}, {"tokens_per_joule", 1250.0}};
      } else if (phase == "decode" && batch == 16 && g["axes"]["context_len"] == 64) {
        g["metrics"]["items_unit"] = "tokens";
        g["profile"]["telemetry"] = {{"energy_j", 2.0}, {"tokens_per_joule", 7.25}};
      } else if (phase == "serve" && g["axes"]["rate"] == "4") {
        g["metrics"]["items_unit"] = "output_tokens";
        // A figure under another unit's name is not this entry's: only output_tokens_per_joule.
        g["profile"]["telemetry"] = {{"energy_j", 100.0}, {"output_tokens_per_joule", 0.12}, {"tokens_per_joule", 99.0}};
      }
    }
    const std::filesystem::path out = dir / name;
    std::ofstream(out) << d.dump();
    return read_results(out);
  };
  const std::string md =
      to_markdown(build_report({with_energy("infer_cpu.json"), with_energy("infer_gpu.json")}, SpecSheet::builtin(), {}).doc);
  std::filesystem::remove_all(dir);
  const std::size_t at = md.find("## Inference");
  ASSERT_NE(at, std::string::npos) << md;
  const std::string s = md.substr(at, md.find("\n## ", at + 1) - at);
  EXPECT_NE(s.find("prompt tok/J"), std::string::npos) << s;
  EXPECT_NE(s.find("| 4 | 128 | 6.80 ms | 75294 | - | 1250 |"), std::string::npos) << s;
  EXPECT_NE(s.find("| 4 | 128 | 68.0 ms | 7529 | - | 1250 |"), std::string::npos) << s;
  EXPECT_NE(s.find("| 1 | 128 | 2.00 ms | 64000 | - | - |"), std::string::npos) << s;  // none: a dash
  EXPECT_NE(s.find("| 16 | 64 | 52.2 ms | 306 | 19.1 | 56.0% | 7.25 |"), std::string::npos) << s;
  EXPECT_NE(s.find("output tok/J"), std::string::npos) << s;
  EXPECT_NE(s.find("| 4 | 3 | 128 | 4 | 4 | 28.0 | 36.0 | 15.0 | 16.0 | 18.0 | 72.0 |"), std::string::npos) << s;
  EXPECT_NE(s.find("| 0.120 |"), std::string::npos) << s;
  EXPECT_EQ(s.find("| 99.0 |"), std::string::npos) << s;
}

TEST(ReportInfer, NoSectionWithoutInferCases) {
  const std::string md =
      to_markdown(build_report({read_results(std::filesystem::path(GPUBENCH_FIXTURES_DIR) / "results_small.json")},
                               SpecSheet::builtin(), {})
                      .doc);
  EXPECT_EQ(md.find("## Inference"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::reports
