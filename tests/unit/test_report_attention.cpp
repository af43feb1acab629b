// The report's attention section and finding (reports/attention_section.hpp): prefill and decode
// tables with one line per device, % of the measured memory ceiling from the same file's memory
// suite, and the fused-vs-unfused training step finding.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reports/markdown.hpp"
#include "reports/report.hpp"

namespace gpubench::reports {
namespace {

using nlohmann::json;

json entry(const std::string& suite, const std::string& device, const std::string& name, json axes, json metrics,
           json details = json::object()) {
  return {{"name", suite + "/" + device + "/" + axes.dump()},
          {"run_type", "iteration"},
          {"real_time", 1},
          {"time_unit", "ms"},
          {"gpubench",
           {{"suite", suite},
            {"device", device},
            {"device_name", name},
            {"status", "ok"},
            {"axes", axes},
            {"metrics", metrics},
            {"details", details}}}};
}

json prefill(double seq) {
  return {{"provider", "flash"}, {"dtype", "fp32"}, {"phase", "prefill"}, {"direction", "fwd"}, {"causal", 1},
          {"batch", 1},          {"heads", 8},       {"kv_heads", 2},        {"seq_q", seq},      {"seq_kv", seq},
          {"head_dim", 64},      {"page_size", 0}};
}

json decode(double context) {
  return {{"provider", "flash"}, {"dtype", "fp32"}, {"phase", "decode"}, {"direction", "fwd"}, {"causal", 0},
          {"batch", 16},         {"heads", 32},      {"kv_heads", 8},       {"seq_q", 1},         {"seq_kv", context},
          {"head_dim", 128},     {"page_size", 16}};
}

json train(const std::string& attention) {
  return {{"model", "transformer"}, {"seq", 2048}, {"hidden", 256}, {"attention", attention}};
}

ResultsFile file(const std::string& host, double scale) {
  json b = json::array();
  b.push_back(entry("attention", "cpu", "Test CPU", prefill(1024), {{"tflops", 0.05 * scale}}));
  b.push_back(entry("attention", "cpu", "Test CPU", prefill(2048), {{"tflops", 0.07 * scale}}));
  b.push_back(entry("attention", "cpu", "Test CPU", decode(4096), {{"gbps", 6.0 * scale}, {"gb_per_s", 6.0 * scale}}));
  b.push_back(entry("attention", "cpu", "Test CPU", decode(8192), {{"gbps", 9.0 * scale}, {"gb_per_s", 9.0 * scale}}));
  b.push_back(entry("train", "cpu", "Test CPU", train("unfused"), {{"tokens_per_s", 4369.0}},
                    {{"step_split", {{"attention_fraction", 0.39}}}}));
  b.push_back(entry("train", "cpu", "Test CPU", train("fused"), {{"tokens_per_s", 5391.0}},
                    {{"step_split", {{"attention_fraction", 0.36}}}}));
  json doc{{"context", {{"host_name", host}, {"gpubench", {{"schema_version", 1}}}}},
           {"benchmarks", b},
           {"gpubench", {{"summaries", {{"memory", {{"devices", {{"cpu", {{"memory_bandwidth", {{"gbps", 12.0}}}}}}}}}}}}}};
  return read_results_text(doc.dump(), host + ".json");
}

TEST(ReportAttention, TablesPerDevicePercentOfTheMeasuredCeilingAndTheFusedFinding) {
  const std::string md = to_markdown(build_report({file("a", 1.0), file("b", 1.5)}, SpecSheet::builtin(), {}).doc);
  ASSERT_NE(md.find("## Attention"), std::string::npos) << md;
  EXPECT_NE(md.find("### Prefill"), std::string::npos);
  EXPECT_NE(md.find("### Decode"), std::string::npos);
  // Both files' devices, named with their file.
  EXPECT_NE(md.find("Test CPU (cpu) \\[a.json\\]"), std::string::npos) << md;  // Markdown escapes the brackets
  EXPECT_NE(md.find("Test CPU (cpu) \\[b.json\\]"), std::string::npos);
  // Decode at 9 GB/s on a device whose memory suite measured 12 GB/s: 75.0% of the ceiling; the
  // second file's 13.5 GB/s is 112.5%.
  EXPECT_NE(md.find("75.0%"), std::string::npos) << md;
  EXPECT_NE(md.find("112.5%"), std::string::npos);
  EXPECT_NE(md.find("TFLOP/s vs sequence length"), std::string::npos);
  EXPECT_NE(md.find("GB/s vs cached context"), std::string::npos);
  // The finding: 5391 / 4369 = 1.23x, with the attention share of each step.
  EXPECT_NE(md.find("### Fused attention in the training step"), std::string::npos) << md;
  EXPECT_NE(md.find("fused attention beats unfused, 1.23x (5391 against 4369 tokens/s); attention takes 36% of "
                    "the step fused, 39% unfused"),
            std::string::npos)
      << md;
}

TEST(ReportAttention, NothingWithoutAttentionCases) {
  json doc{{"context", {{"host_name", "h"}, {"gpubench", {{"schema_version", 1}}}}},
           {"benchmarks", json::array({entry("gemm", "cpu", "Test CPU", {{"m", 256}}, {{"tflops", 0.1}})})}};
  const std::string md = to_markdown(build_report({read_results_text(doc.dump(), "g.json")}, SpecSheet::builtin(), {}).doc);
  EXPECT_EQ(md.find("## Attention"), std::string::npos);
  EXPECT_EQ(md.find("Fused attention"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::reports
