// Plausibility rules (reports/plausibility.hpp, docs/plausibility.md): figures above their
// datasheet peak or a measured ceiling are suspect, and so is a ceiling a workload beats; at run
// time (the results file) and in every report format.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/core/harness.hpp"
#include "reports/compare.hpp"
#include "reports/markdown.hpp"
#include "reports/plausibility.hpp"
#include "reports/report.hpp"
#include "reports/results_reader.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench {
namespace {

using OJ = nlohmann::ordered_json;
namespace pl = plausibility;

OJ entry(const std::string& name, const std::string& suite, const std::string& device, OJ axes, OJ metrics,
         const std::string& status = "ok") {
  return {{"name", name},
          {"run_name", name},
          {"run_type", "iteration"},
          {"repetitions", 1},
          {"repetition_index", 0},
          {"iterations", 100},
          {"real_time", 1000.0},
          {"cpu_time", 1000.0},
          {"time_unit", "us"},
          {"gpubench",
           {{"suite", suite},
            {"device", device},
            {"device_name", device == "cpu" ? "Test CPU" : "NVIDIA H100 80GB HBM3"},
            {"axes", axes},
            {"status", status},
            {"metrics", metrics},
            {"measurement", {{"samples", 10}, {"mean_s", 1e-3}, {"noise_pct", 1.0}}}}}};
}

// A CPU run where OpenBLAS sgemm reads 0.18 TFLOP/s and the memory suite's all-core FMA
// ceiling 0.118 (both threads stacked on one vCPU): issue 15's report.
OJ cpu_document() {
  OJ doc;
  doc["context"] = {{"host_name", "test"}, {"gpubench", {{"schema_version", 1}}}};
  doc["benchmarks"] = OJ::array({
      entry("memory/test=fma_fp32", "memory", "cpu", {{"test", "fma_fp32"}, {"size", 0}},
            {{"flops", 1e9}, {"tflops", 0.118}, {"peak_key", "fp32"}, {"rate_unit", "TFLOP/s"}}),
      entry("gemm/provider=openblas/m=1024", "gemm", "cpu", {{"provider", "openblas"}, {"m", 1024}},
            {{"flops", 2e9}, {"bytes", 1.2e7}, {"tflops", 0.18}, {"peak_key", "fp32"}, {"rate_unit", "TFLOP/s"}}),
      entry("gemm/provider=openblas/m=64", "gemm", "cpu", {{"provider", "openblas"}, {"m", 64}},
            {{"flops", 2e6}, {"tflops", 0.05}, {"peak_key", "fp32"}, {"rate_unit", "TFLOP/s"}}),
  });
  doc["gpubench"]["summaries"]["memory"] = {
      {"units", "..."},
      {"devices", {{"cpu", {{"device_name", "Test CPU"}, {"peak", {{"fp32", {{"tflops", 0.118}, {"test", "fma_fp32"}}}}}}}}}};
  return doc;
}

const OJ& suspect_of(const OJ& doc, std::size_t i) { return doc["benchmarks"][i]["gpubench"]["suspect"]; }

TEST(Plausibility, AWorkloadAboveTheMeasuredCeilingMarksBoth) {
  OJ doc = cpu_document();
  pl::mark_document(doc, nullptr);
  ASSERT_TRUE(doc["benchmarks"][1]["gpubench"].contains("suspect"));
  const std::string why = suspect_of(doc, 1)[0].get<std::string>();
  EXPECT_EQ(why.rfind(pl::kAboveCeiling, 0), 0u) << why;
  EXPECT_NE(why.find("152.5%"), std::string::npos) << why;
  EXPECT_NE(why.find("fma_fp32"), std::string::npos) << why;
  // The ceiling: in the summary and on the memory entry that set it.
  const OJ& ceiling = doc["gpubench"]["summaries"]["memory"]["devices"]["cpu"]["peak"]["fp32"];
  ASSERT_TRUE(ceiling.contains("suspect"));
  EXPECT_NE(ceiling["suspect"][0].get<std::string>().find("gemm/provider=openblas/m=1024"), std::string::npos);
  ASSERT_TRUE(doc["benchmarks"][0]["gpubench"].contains("suspect"));
  EXPECT_EQ(suspect_of(doc, 0)[0].get<std::string>().rfind(pl::kSuspectCeiling, 0), 0u);
  // Below the ceiling: nothing.
  EXPECT_FALSE(doc["benchmarks"][2]["gpubench"].contains("suspect"));
}

TEST(Plausibility, JudgingAgainRetractsItsOwnReasonsAndKeepsOthers) {
  OJ doc = cpu_document();
  doc["benchmarks"][1]["gpubench"]["suspect"] = {"measured while throttled"};  // another rule's reason
  pl::mark_document(doc, nullptr);
  pl::mark_document(doc, nullptr);  // idempotent
  EXPECT_EQ(suspect_of(doc, 1).size(), 2u);
  // A higher ceiling arrives (the memory suite measured again): the verdicts go away.
  doc["gpubench"]["summaries"]["memory"]["devices"]["cpu"]["peak"]["fp32"]["tflops"] = 0.236;
  doc["benchmarks"][0]["gpubench"]["metrics"]["tflops"] = 0.236;
  pl::mark_document(doc, nullptr);
  EXPECT_EQ(suspect_of(doc, 1), OJ::array({"measured while throttled"}));
  EXPECT_FALSE(doc["benchmarks"][0]["gpubench"].contains("suspect"));
  EXPECT_FALSE(doc["gpubench"]["summaries"]["memory"]["devices"]["cpu"]["peak"]["fp32"].contains("suspect"));
}

// An attention decode whose KV cache is smaller than one array of the DRAM ceiling's triad may be
// read from the caches, above DRAM speed, legitimately; one that is not small is judged.
TEST(Plausibility, ABandwidthFigureTheCachesHoldIsNotHeldToTheDramCeiling) {
  OJ doc;
  doc["context"] = {{"host_name", "test"}, {"gpubench", {{"schema_version", 1}}}};
  auto decode = [](double footprint) {
    return entry("attention/decode", "attention", "cpu", {{"phase", "decode"}, {"seq_kv", 512}},
                 {{"bytes", 1e6}, {"gbps", 30.0}, {"peak_key", "memory_bandwidth"}, {"footprint_bytes", footprint}});
  };
  doc["benchmarks"] = OJ::array({entry("memory/test=triad", "memory", "cpu", {{"test", "triad"}, {"size", 67108864}},
                                       {{"gbps", 12.0}, {"peak_key", "memory_bandwidth"}}),
                                 decode(524288.0), decode(2.1e9)});
  doc["gpubench"]["summaries"]["memory"] = {
      {"devices",
       {{"cpu", {{"device_name", "Test CPU"}, {"memory_bandwidth", {{"gbps", 12.0}, {"test", "triad"}, {"size", 67108864}}}}}}}};
  pl::mark_document(doc, nullptr);
  EXPECT_FALSE(doc["benchmarks"][1]["gpubench"].contains("suspect")) << doc["benchmarks"][1].dump();
  ASSERT_TRUE(doc["benchmarks"][2]["gpubench"].contains("suspect"));
  EXPECT_EQ(suspect_of(doc, 2)[0].get<std::string>().rfind(pl::kAboveCeiling, 0), 0u);
}

// The first H200 run: triad at 8 MiB per array (24 MiB moved, in a 60 MiB L2) ran at 5.2 TB/s,
// above the 4.8 TB/s HBM datasheet. With the device's L2 in the context the figure is not judged
// whatever other sizes ran (the console judged it suspect as the largest size so far, the
// finished file did not); a working set of at least twice the L2 is.
TEST(Plausibility, ABandwidthFigureInsideTheL2IsNotJudgedWhateverElseRan) {
  const pl::PeakLookup sheet = [](const std::string&, const std::string& key) -> std::optional<double> {
    return key == "memory_bandwidth" ? std::optional<double>(4800) : std::nullopt;
  };
  auto doc_with = [](std::vector<std::pair<std::int64_t, double>> sizes_and_rates) {
    OJ doc;
    doc["context"] = {{"gpubench", {{"devices", OJ::array({{{"id", "cuda:0"}, {"l2_bytes", 62914560}}})}}}};
    doc["benchmarks"] = OJ::array();
    for (const auto& [size, gbps] : sizes_and_rates) {
      doc["benchmarks"].push_back(entry("memory/triad/" + std::to_string(size), "memory", "cuda:0",
                                        {{"test", "triad"}, {"size", size}},
                                        {{"bytes", 3.0 * static_cast<double>(size)}, {"gbps", gbps}, {"peak_key", "memory_bandwidth"}}));
    }
    return doc;
  };
  OJ alone = doc_with({{8 << 20, 5212}});  // the largest (and only) size, yet inside the L2
  pl::mark_document(alone, sheet);
  EXPECT_FALSE(alone["benchmarks"][0]["gpubench"].contains("suspect")) << alone.dump();
  OJ both = doc_with({{8 << 20, 5212}, {256 << 20, 4004}, {1 << 30, 5100}});
  pl::mark_document(both, sheet);
  EXPECT_FALSE(both["benchmarks"][0]["gpubench"].contains("suspect"));
  EXPECT_FALSE(both["benchmarks"][1]["gpubench"].contains("suspect"));
  // 3 GiB moved, far beyond the L2: above the datasheet is suspect, even below the largest size rule's reach.
  ASSERT_TRUE(both["benchmarks"][2]["gpubench"].contains("suspect"));
  // 40 MiB per array (120 MiB moved): at twice the L2 it is judged.
  OJ edge = doc_with({{40 << 20, 5300}});
  pl::mark_document(edge, sheet);
  EXPECT_TRUE(edge["benchmarks"][0]["gpubench"].contains("suspect"));
  EXPECT_EQ(pl::l2_sizes(nlohmann::json::parse(alone["context"].dump())).at("cuda:0"), 62914560.0);
  // A CPU's last-level cache plays the L2's part.
  const nlohmann::json cpu_context = {
      {"gpubench", {{"devices", nlohmann::json::array({{{"id", "cpu"}, {"last_level_cache_bytes", 33554432}}})}}}};
  EXPECT_EQ(pl::l2_sizes(cpu_context).at("cpu"), 33554432.0);
}

TEST(Plausibility, WithinTheMarginsNothingIsSuspect) {
  OJ doc = cpu_document();
  doc["benchmarks"][1]["gpubench"]["metrics"]["tflops"] = 0.118 * 1.049;  // within 5% of the ceiling
  pl::mark_document(doc, nullptr);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_FALSE(doc["benchmarks"][i]["gpubench"].contains("suspect")) << i;
}

// Rule 4: a CPU figure above the theoretical peak the run recorded in the context is suspect,
// with no measured ceiling in the file; one below it is not; a file without the peak as before.
OJ cpu_peak_document(double attention_tflops, std::optional<double> peak_fp32) {
  OJ cpu = {{"id", "cpu"}, {"kind", "cpu"}, {"name", "Test CPU"}, {"logical_cpus", 2}};
  if (peak_fp32) {
    cpu["peak_tflops"] = {{"fp32", *peak_fp32}, {"fp64", *peak_fp32 / 2}};
    cpu["peak_derivation"] = "2 cores x 2 FMA units per core x 16 fp32 lanes x 2 FLOP x 5192 MHz";
  }
  OJ doc;
  doc["context"] = {{"host_name", "test"}, {"gpubench", {{"schema_version", 1}, {"devices", OJ::array({cpu})}}}};
  doc["benchmarks"] = OJ::array({
      entry("attention/flash/causal", "attention", "cpu", {{"provider", "flash"}, {"causal", 1}},
            {{"flops", 2.1e9}, {"tflops", attention_tflops}, {"peak_key", "fp32"}}),
      entry("attention/flash/plain", "attention", "cpu", {{"provider", "flash"}, {"causal", 0}},
            {{"flops", 4.3e9}, {"tflops", 0.149}, {"peak_key", "fp32"}}),
      entry("gemm/openblas/fp64", "gemm", "cpu", {{"provider", "openblas"}, {"dtype", "fp64"}},
            {{"flops", 2e9}, {"tflops", 0.5}, {"peak_key", "fp64_tensor"}}),
  });
  return doc;
}

TEST(Plausibility, ACpuFigureAboveTheRecordedTheoreticalPeakIsSuspect) {
  OJ doc = cpu_peak_document(0.806, 0.6646);
  ASSERT_FALSE(doc["gpubench"].contains("summaries"));  // no memory-suite ceiling in this file
  pl::mark_document(doc, nullptr);
  ASSERT_TRUE(doc["benchmarks"][0]["gpubench"].contains("suspect")) << doc.dump();
  const std::string reason = suspect_of(doc, 0)[0].get<std::string>();
  EXPECT_EQ(reason.rfind(pl::kAboveCpuPeak, 0), 0u) << reason;
  EXPECT_NE(reason.find("0.6646 TFLOP/s"), std::string::npos) << reason;
  EXPECT_FALSE(doc["benchmarks"][1]["gpubench"].contains("suspect"));  // 0.149 is below it
  // A double GEMM (fp64_tensor) is held to the CPU's fp64 peak: 0.5 > 0.3323 x 1.03.
  ASSERT_TRUE(doc["benchmarks"][2]["gpubench"].contains("suspect"));
  EXPECT_NE(suspect_of(doc, 2)[0].get<std::string>().find("fp64_tensor"), std::string::npos);
  // Below the peak (within the margin too): not suspect.
  OJ below = cpu_peak_document(0.6646 * 1.029, 0.6646);
  below["benchmarks"][2]["gpubench"]["metrics"]["tflops"] = 0.1;
  pl::mark_document(below, nullptr);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_FALSE(below["benchmarks"][i]["gpubench"].contains("suspect")) << i;
  // A file without the peak: as before (no ceiling, no datasheet for a CPU: nothing to judge by).
  OJ old = cpu_peak_document(0.806, std::nullopt);
  pl::mark_document(old, nullptr);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_FALSE(old["benchmarks"][i]["gpubench"].contains("suspect")) << i;
  // The reports judge the same from the file as read.
  const reports::ResultsFile file = reports::read_results_text(cpu_peak_document(0.806, 0.6646).dump(), "cpu.json");
  const pl::FileSuspects judged = pl::judge_file(file, nullptr);
  ASSERT_NE(judged.of(0), nullptr);
  EXPECT_EQ((*judged.of(0))[0].rfind(pl::kAboveCpuPeak, 0), 0u);
  EXPECT_EQ(judged.of(1), nullptr);
  EXPECT_EQ(pl::cpu_peaks(nlohmann::json::parse(doc["context"].dump())).at("cpu").at("fp32"), 0.6646);
  // Judging again after the peak went away retracts the reason (it is this rule's own).
  doc["context"]["gpubench"]["devices"][0].erase("peak_tflops");
  pl::mark_document(doc, nullptr);
  EXPECT_FALSE(doc["benchmarks"][0]["gpubench"].contains("suspect"));
}

TEST(Plausibility, ACpuCeilingAboveTheTheoreticalPeakIsASuspectCeiling) {
  OJ doc = cpu_document();  // the all-core FMA ceiling 0.118, sgemm 0.18
  doc["context"]["gpubench"]["devices"] = OJ::array({{{"id", "cpu"}, {"peak_tflops", {{"fp32", 0.1}}}}});
  pl::mark_document(doc, nullptr);
  const OJ& ceiling = doc["gpubench"]["summaries"]["memory"]["devices"]["cpu"]["peak"]["fp32"];
  ASSERT_TRUE(ceiling.contains("suspect"));
  bool theoretical = false;
  for (const auto& r : ceiling["suspect"]) theoretical |= r.get<std::string>().find("theoretical peak") != std::string::npos;
  EXPECT_TRUE(theoretical) << ceiling.dump();
  // The FMA entry itself is above it too.
  ASSERT_TRUE(doc["benchmarks"][0]["gpubench"].contains("suspect"));
  EXPECT_EQ(suspect_of(doc, 0)[0].get<std::string>().rfind(pl::kAboveCpuPeak, 0), 0u);
}

TEST(Plausibility, DatasheetPeakOfFiguresAndCeilings) {
  const pl::PeakLookup sheet = [](const std::string& name, const std::string& key) -> std::optional<double> {
    if (name == "NVIDIA H100 80GB HBM3" && key == "bf16_tensor") return 989.4;
    if (name == "NVIDIA H100 80GB HBM3" && key == "memory_bandwidth") return 3350;
    return std::nullopt;
  };
  OJ doc;
  doc["context"] = OJ::object();
  doc["benchmarks"] = OJ::array({
      // 2 PFLOP/s "bf16": a loop the compiler emptied (issue 15 item 1's kind of figure).
      entry("memory/test=mma_bf16", "memory", "cuda:0", {{"test", "mma_bf16"}, {"size", 0}},
            {{"tflops", 2000.0}, {"peak_key", "bf16_tensor"}}),
      entry("gemm/bf16", "gemm", "cuda:0", {{"dtype", "bf16"}}, {{"tflops", 1100.0}, {"peak_key", "bf16_tensor"}}),
      entry("gemm/bf16-ok", "gemm", "cuda:0", {{"dtype", "bf16"}, {"m", 1}}, {{"tflops", 700.0}, {"peak_key", "bf16_tensor"}}),
      // The L2 holds 8 MiB buffers: far above DRAM, and not judged; the largest size is.
      entry("memory/triad/8M", "memory", "cuda:0", {{"test", "triad"}, {"size", 8 << 20}},
            {{"gbps", 7000.0}, {"peak_key", "memory_bandwidth"}}),
      entry("memory/triad/1G", "memory", "cuda:0", {{"test", "triad"}, {"size", 1 << 30}},
            {{"gbps", 3000.0}, {"peak_key", "memory_bandwidth"}}),
      entry("memory/triad/2G-failed", "memory", "cuda:0", {{"test", "triad"}, {"size", 2147483647}},
            {{"gbps", 9000.0}, {"peak_key", "memory_bandwidth"}}, "failed"),
  });
  doc["gpubench"]["summaries"]["memory"]["devices"]["cuda:0"] = {
      {"device_name", "NVIDIA H100 80GB HBM3"},
      {"memory_bandwidth", {{"gbps", 3000.0}, {"test", "triad"}, {"size", 1 << 30}}},
      {"peak", {{"bf16_tensor", {{"tflops", 2000.0}, {"test", "mma_bf16"}}}}}};
  pl::mark_document(doc, sheet);
  ASSERT_TRUE(doc["benchmarks"][0]["gpubench"].contains("suspect"));
  EXPECT_EQ(suspect_of(doc, 0)[0].get<std::string>().rfind(pl::kAboveDatasheet, 0), 0u);
  // The ceiling itself is above the datasheet: a suspect ceiling, on its entry too.
  const OJ& ceiling = doc["gpubench"]["summaries"]["memory"]["devices"]["cuda:0"]["peak"]["bf16_tensor"];
  ASSERT_TRUE(ceiling.contains("suspect"));
  EXPECT_NE(ceiling["suspect"][0].get<std::string>().find("datasheet"), std::string::npos);
  // gemm at 1100 > 989.4 x 1.03: above the datasheet, not above the (bogus) ceiling.
  ASSERT_EQ(suspect_of(doc, 1).size(), 1u);
  EXPECT_EQ(suspect_of(doc, 1)[0].get<std::string>().rfind(pl::kAboveDatasheet, 0), 0u);
  EXPECT_FALSE(doc["benchmarks"][2]["gpubench"].contains("suspect"));
  EXPECT_FALSE(doc["benchmarks"][3]["gpubench"].contains("suspect"));  // cache resident
  EXPECT_FALSE(doc["benchmarks"][4]["gpubench"].contains("suspect"));
  EXPECT_FALSE(doc["benchmarks"][5]["gpubench"].contains("suspect"));  // failed: no figure
  EXPECT_FALSE(doc["gpubench"]["summaries"]["memory"]["devices"]["cuda:0"]["memory_bandwidth"].contains("suspect"));
}

// Issue 25 item 2: Hopper's tensor figures assume 1830 MHz, and the GPU boosts to 1980. A correct
// GPU at its maximum clock delivers 989.5 x 1980 / 1830 = 1071 TFLOP/s bf16 (fp8 2141), so the
// datasheet rule allows the figure scaled to the device's maximum clock, plus the margin.
OJ boosting_document(const std::string& device_name, double max_mhz, double gemm_tflops, double fp8_ceiling) {
  OJ doc;
  doc["context"] = {{"gpubench", {{"devices", OJ::array({{{"id", "cuda:0"}, {"name", device_name},
                                                          {"max_sm_clock_mhz", max_mhz}}})}}}};
  OJ e = entry("gemm/bf16", "gemm", "cuda:0", {{"dtype", "bf16"}}, {{"tflops", gemm_tflops}, {"peak_key", "bf16_tensor"}});
  e["gpubench"]["device_name"] = device_name;
  OJ peak = entry("memory/test=wgmma_fp8", "memory", "cuda:0", {{"test", "wgmma_fp8"}, {"size", 0}},
                  {{"tflops", fp8_ceiling}, {"peak_key", "fp8_tensor"}});
  peak["gpubench"]["device_name"] = device_name;
  doc["benchmarks"] = OJ::array({e, peak});
  doc["gpubench"]["summaries"]["memory"]["devices"]["cuda:0"] = {
      {"device_name", device_name}, {"peak", {{"fp8_tensor", {{"tflops", fp8_ceiling}, {"test", "wgmma_fp8"}}}}}};
  return doc;
}

TEST(Plausibility, TheDatasheetRuleKnowsTheClockEachFigureAssumes) {
  const reports::SpecSheet sheet = reports::SpecSheet::builtin();
  const pl::PeakLookup peak = [&](const std::string& n, const std::string& k) { return sheet.peak(n, k); };
  const pl::ClockLookup clock = [&](const std::string& n, const std::string& k) { return sheet.peak_clock(n, k); };
  for (const char* name : {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(sheet.peak_clock(name, "bf16_tensor"), std::optional<double>(1830));
    // 1040 bf16 (105% of 989.5) and the fp8 loop at 2141 (108% of 1979) at 1980 MHz: not suspect.
    OJ doc = boosting_document(name, 1980, 1040, 2141);
    pl::mark_document(doc, peak, clock);
    EXPECT_FALSE(doc["benchmarks"][0]["gpubench"].contains("suspect")) << doc["benchmarks"][0]["gpubench"].dump();
    EXPECT_FALSE(doc["benchmarks"][1]["gpubench"].contains("suspect")) << doc["benchmarks"][1]["gpubench"].dump();
    EXPECT_FALSE(doc["gpubench"]["summaries"]["memory"]["devices"]["cuda:0"]["peak"]["fp8_tensor"].contains("suspect"));
    // Above 1071 x 1.03 = 1103 stays suspect, and the reason names the scaled figure.
    doc = boosting_document(name, 1980, 1200, 2141);
    pl::mark_document(doc, peak, clock);
    ASSERT_TRUE(doc["benchmarks"][0]["gpubench"].contains("suspect"));
    const std::string why = suspect_of(doc, 0)[0].get<std::string>();
    EXPECT_NE(why.find("1071 TFLOP/s at the device's maximum clock"), std::string::npos) << why;
    // A device that cannot boost above 1830 gets no allowance: 1040 is suspect there.
    doc = boosting_document(name, 1830, 1040, 1900);
    pl::mark_document(doc, peak, clock);
    EXPECT_TRUE(doc["benchmarks"][0]["gpubench"].contains("suspect"));
    // Nor without the clock lookup (an older caller), nor without the device's maximum clock.
    doc = boosting_document(name, 1980, 1040, 1900);
    pl::mark_document(doc, peak);
    EXPECT_TRUE(doc["benchmarks"][0]["gpubench"].contains("suspect"));
    doc = boosting_document(name, 1980, 1040, 1900);
    doc["context"] = OJ::object();
    pl::mark_document(doc, peak, clock);
    EXPECT_TRUE(doc["benchmarks"][0]["gpubench"].contains("suspect"));
  }
}

TEST(Plausibility, PctOfPeakAtClockUsesTheClockTheFigureAssumes) {
  Metrics m;
  m.flops = 989.5e12;
  m.peak_key = "bf16_tensor";
  // At 1830 MHz measured, against a figure that assumes 1830: 100% at clock (not 92% of 1980's).
  const auto j = derive_metrics(m, 1.0, 989.5, ClockScale{1830, 1830});
  EXPECT_NEAR(j["pct_of_peak_at_clock"].get<double>(), 100.0, 1e-9);
}

TEST(Plausibility, ResultsFileJudgesOnEveryAddAndTheConsoleSaysSo) {
  ResultsFile file("", {{"host_name", "test"}});
  file.set_judge([](OJ& doc) { pl::mark_document(doc, nullptr); });
  OJ doc = cpu_document();
  file.set_summary("memory", doc["gpubench"]["summaries"]["memory"]);
  file.add(doc["benchmarks"][0]);
  EXPECT_FALSE(recorded_entries(file, 1).at(0)["gpubench"].contains("suspect"));
  file.add(doc["benchmarks"][1]);
  const std::vector<OJ> recorded = recorded_entries(file, 1);  // what the console's table shows
  ASSERT_EQ(recorded.size(), 1u);
  const std::string why = recorded[0]["gpubench"]["suspect"].at(0).get<std::string>();
  EXPECT_EQ(why.rfind("above the measured ceiling: ", 0), 0u) << why;
  // The earlier entry (the ceiling's) was marked when the workload arrived.
  EXPECT_TRUE(file.document()["benchmarks"][0]["gpubench"].contains("suspect"));
}

// Issue 15's done-when: a report of a results file where gemm beats the measured ceiling marks
// both suspect, in every format.
TEST(Plausibility, ReportMarksTheWorkloadAndTheCeilingInEveryFormat) {
  const std::string text = cpu_document().dump();  // as written before plausibility existed: no marks
  const reports::ResultsFile file = reports::read_results_text(text, "cpu.json");
  const reports::Report r = reports::build_report({file}, reports::SpecSheet::builtin(), {});
  const std::string md = reports::to_markdown(r.doc);
  EXPECT_NE(md.find("(suspect)"), std::string::npos) << md;
  EXPECT_NE(md.find("Suspect figures"), std::string::npos) << md;
  EXPECT_NE(md.find("ceiling fp32"), std::string::npos) << md;
  // The workload and the memory entry that set the ceiling; and the ceiling itself.
  EXPECT_NE(md.find("2 figure(s) and 1 measured ceiling(s) are suspect"), std::string::npos) << md;
  const std::string html = reports::to_html(r.doc);
  EXPECT_NE(html.find("Suspect figures"), std::string::npos);
  EXPECT_NE(html.find("fp32 (measured, suspect)"), std::string::npos);  // the roofline's ceiling line
  EXPECT_NE(r.csv.find(",suspect,"), std::string::npos);
  EXPECT_NE(r.csv.find("above the measured ceiling: "), std::string::npos);
  bool gemm = false;
  for (const auto& c : r.summary["cases"]) {
    if (c["suite"] == "gemm" && c["axes"]["m"] == 1024) {
      gemm = true;
      ASSERT_EQ(c["runs"][0]["suspect"].size(), 1u);
    }
  }
  EXPECT_TRUE(gemm);
  EXPECT_EQ(r.summary["runs"][0]["suspect_ceilings"]["fp32"].size(), 1u);
}

TEST(Plausibility, CompareShowsTheReasons) {
  const reports::ResultsFile base = reports::read_results_text(cpu_document().dump(), "base.json");
  const reports::ResultsFile next = reports::read_results_text(cpu_document().dump(), "new.json");
  const reports::Comparison c = reports::compare_results(base, next, {});
  std::size_t suspect = 0;
  for (const auto& x : c.cases) suspect += x.suspect.empty() ? 0 : 1;
  EXPECT_EQ(suspect, 2u);  // the gemm case and the memory case whose ceiling it beats
  const std::string md = reports::to_markdown(reports::comparison_document(c, base, next, {}));
  EXPECT_NE(md.find("Suspect figures"), std::string::npos) << md;
  EXPECT_NE(reports::comparison_junit(c, {}).find("[suspect: base: above the measured ceiling"), std::string::npos);
  const auto j = reports::comparison_json(c, {});
  bool found = false;
  for (const auto& x : j["cases"]) found = found || !x["suspect"].empty();
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace gpubench
