// Fleet screening (reports/fleet.hpp): the outlier rule (MADs and percent, both), small fleets,
// models kept apart, a device seen in two files counted once, per-rank figures of a gathered
// file, and the report section.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reports/fleet.hpp"
#include "reports/report.hpp"
#include "reports/markdown.hpp"

namespace gpubench::reports {
namespace {

using nlohmann::json;

// One node's file: one gemm case per GPU with the given TFLOP/s.
ResultsFile node_file(const std::string& host, const std::vector<double>& tflops, const std::string& model = "NVIDIA H100",
                      const std::string& file = "") {
  json devices = json::array(), benchmarks = json::array();
  for (std::size_t i = 0; i < tflops.size(); ++i) {
    const std::string id = "cuda:" + std::to_string(i);
    devices.push_back({{"id", id}, {"name", model}, {"uuid", "GPU-" + host + "-" + std::to_string(i)},
                       {"pci_bus_id", "0000:1" + std::to_string(i) + ":00.0"}});
    benchmarks.push_back({{"name", "gemm/dtype:bf16/" + id},
                          {"run_type", "iteration"},
                          {"real_time", 1},
                          {"time_unit", "ms"},
                          {"gpubench",
                           {{"suite", "gemm"},
                            {"device", id},
                            {"device_name", model},
                            {"status", "ok"},
                            {"axes", {{"dtype", "bf16"}}},
                            {"metrics", {{"tflops", tflops[i]}}}}}});
  }
  json doc{{"context", {{"host_name", host}, {"gpubench", {{"schema_version", 1}, {"devices", devices}}}}},
           {"benchmarks", benchmarks}};
  return read_results_text(doc.dump(), file.empty() ? host + ".json" : file);
}

std::vector<ResultsFile> fleet(std::size_t nodes, double base = 800) {
  std::vector<ResultsFile> files;
  for (std::size_t n = 0; n < nodes; ++n) {
    std::vector<double> v;
    // Spread of about +-0.5% around the base.
    for (std::size_t g = 0; g < 8; ++g) v.push_back(base * (1 + 0.001 * (static_cast<double>((n * 8 + g) % 11) - 5)));
    files.push_back(node_file("node-" + std::to_string(n + 1), v));
  }
  return files;
}

TEST(Fleet, NamesTheSlowGpu) {
  auto files = fleet(4);
  files[2] = node_file("node-3", {800, 801, 799, 736, 800, 802, 798, 800});  // GPU 3 is 8% slow
  const auto groups = rank_fleet(fleet_samples(files), {});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].rows.size(), 32u);
  EXPECT_EQ(groups[0].rows.back().sample.label(), "node-3 GPU 3 (UUID GPU-node-3-3)");
  const auto out = fleet_outliers(groups);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].sample.host, "node-3");
  EXPECT_NEAR(out[0].pct_below, 8, 0.2);
  ASSERT_TRUE(out[0].mads.has_value());
  EXPECT_GT(*out[0].mads, 3);
  EXPECT_EQ(out[0].text.rfind("node-3 GPU 3 (UUID GPU-node-3-3): gemm dtype=bf16 8% below the fleet median (", 0), 0u)
      << out[0].text;
  EXPECT_NE(out[0].text.find(" MADs)"), std::string::npos);
}

TEST(Fleet, BothConditionsAreNeeded) {
  auto files = fleet(4);
  // 2% below: many MADs in this tight fleet, but not more than 3% below.
  files[0] = node_file("node-1", {800, 800, 800, 784, 800, 800, 800, 800});
  EXPECT_TRUE(fleet_outliers(rank_fleet(fleet_samples(files), {})).empty());
  EXPECT_EQ(fleet_outliers(rank_fleet(fleet_samples(files), {3, 1.5})).size(), 1u);
  // 10% below but the fleet itself is spread +-15%: few MADs.
  std::vector<ResultsFile> wide;
  for (int n = 0; n < 4; ++n) {
    wide.push_back(node_file("w" + std::to_string(n), {680, 720, 760, 800, 840, 880, 920, 720}));
  }
  const auto groups = rank_fleet(fleet_samples(wide), {});
  for (const auto& r : groups[0].rows) EXPECT_FALSE(r.outlier) << r.sample.label();
}

TEST(Fleet, IdenticalFleetDoesNotExplode) {
  auto files = fleet(1);
  files[0] = node_file("n", {800, 800, 800, 800, 800, 800, 800, 799});
  const auto groups = rank_fleet(fleet_samples(files), {});
  EXPECT_DOUBLE_EQ(groups[0].mad, 0);
  EXPECT_TRUE(fleet_outliers(groups).empty());  // 0.1% below: the MAD floor and the percent rule
  EXPECT_NEAR(*groups[0].rows.back().mads_below, 1.25, 1e-9);  // 1 / (0.001 * 800)
}

TEST(Fleet, TwoDevicesUseTheBest) {
  const auto groups = rank_fleet(fleet_samples({node_file("a", {800}), node_file("b", {600})}), {});
  ASSERT_EQ(groups.size(), 1u);
  const auto out = fleet_outliers(groups);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "b GPU 0 (UUID GPU-b-0): gemm dtype=bf16 25% below the best of 2 devices (too few for the MAD rule)");
  EXPECT_FALSE(out[0].mads.has_value());
}

TEST(Fleet, ModelsAreComparedApart) {
  std::vector<ResultsFile> files = fleet(2);
  files.push_back(node_file("a100-1", {300, 301, 299, 300}, "NVIDIA A100"));
  const auto groups = rank_fleet(fleet_samples(files), {});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].model, "NVIDIA H100");
  EXPECT_EQ(groups[1].model, "NVIDIA A100");
  EXPECT_TRUE(fleet_outliers(groups).empty());  // the A100s are not "60% below" the H100s
}

TEST(Fleet, TheSameDeviceInTwoFilesIsOneDevice) {
  // A before/after comparison of one machine is not a fleet.
  const auto groups = rank_fleet(fleet_samples({node_file("a", {800}, "NVIDIA H100", "before.json"),
                                                node_file("a", {700}, "NVIDIA H100", "after.json")}),
                                 {});
  EXPECT_TRUE(groups.empty());
}

TEST(Fleet, PerRankFiguresOfAGatheredFile) {
  // Two ranks on one host measured the CPU each; rank 1 was slowed.
  const json doc = json::parse(R"({"context": {"host_name": "h", "gpubench": {"schema_version": 1}},
    "benchmarks": [{"name": "memory/op:triad/cpu", "run_type": "iteration", "real_time": 1, "time_unit": "ms",
      "gpubench": {"suite": "memory", "device": "cpu", "device_name": "Xeon", "status": "ok",
        "axes": {"op": "triad"}, "metrics": {"bytes": 3e6, "gbps": 2.0},
        "ranks": [
          {"rank": 0, "host": "h", "device": "cpu", "device_name": "Xeon", "mean_s": 0.001, "metrics": {"bytes": 3e6, "gbps": 3.0}},
          {"rank": 1, "host": "h", "device": "cpu", "device_name": "Xeon", "mean_s": 0.002, "metrics": {"bytes": 3e6, "gbps": 1.5}}]}},
      {"name": "collectives/op:all_reduce/cpu", "run_type": "iteration", "real_time": 1, "time_unit": "ms",
      "gpubench": {"suite": "collectives", "device": "cpu", "device_name": "Xeon", "status": "ok",
        "axes": {"op": "all_reduce"}, "metrics": {"busbw_gbps": 1}}}]})");
  const ResultsFile f = read_results_text(doc.dump(), "fleet.json");
  const auto samples = fleet_samples({f});
  ASSERT_EQ(samples.size(), 2u);  // the collective is the team's, not a device's
  EXPECT_EQ(samples[1].label(), "h cpu (rank 1)");
  const auto out = fleet_outliers(rank_fleet(samples, {}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "h cpu (rank 1): memory op=triad 50% below the best of 2 devices (too few for the MAD rule)");
}

TEST(Fleet, AFileWithASoakCountsItsOtherEntriesToo) {
  // An evaluation's file: the screen's gemm entry per GPU beside a soak (its summary entry and its
  // per-device trends). The soak's summary entry is not a device's figure; everything else is.
  ResultsFile f = node_file("h", {800, 500});
  const json soak = json::parse(R"({"load": "gemm", "series": [], "trends": [
      {"device": "cuda:0", "load": "gemm", "unit": "TFLOP/s", "mean": 700},
      {"device": "cuda:1", "load": "gemm", "unit": "TFLOP/s", "mean": 690}]})");
  json doc = json::parse(R"({"context": {"host_name": "h", "gpubench": {"schema_version": 1}}, "benchmarks": []})");
  doc["gpubench"]["soak"] = soak;  // where a soak writes it: the file's top-level gpubench block
  // The soak's summary entries: one plain, one as a launcher's rank names it.
  for (const char* name : {"soak/gemm/x", "rank1/soak/gemm/x"}) {
    doc["benchmarks"].push_back({{"name", name}, {"run_type", "iteration"}, {"real_time", 1}, {"time_unit", "ms"},
                                 {"gpubench", {{"suite", "gemm"}, {"device", "cuda:0"}, {"device_name", "NVIDIA H100"},
                                               {"status", "ok"}, {"axes", {{"dtype", "bf16"}}},
                                               {"metrics", {{"tflops", 1.0}}}}}});
  }
  for (const ResultEntry& e : f.entries) {
    json b{{"name", e.name}, {"run_type", "iteration"}, {"real_time", 1}, {"time_unit", "ms"},
           {"gpubench", {{"suite", "gemm"}, {"device", e.device}, {"device_name", e.device_name}, {"status", "ok"},
                         {"axes", {{"dtype", "bf16"}}}, {"metrics", e.metrics}}}};
    doc["benchmarks"].push_back(b);
  }
  const auto samples = fleet_samples({read_results_text(doc.dump(), "evaluate.json")});
  std::size_t gemm = 0, soaked = 0;
  for (const FleetSample& s : samples) {
    if (s.metric.rfind("soak ", 0) == 0) {
      ++soaked;
    } else {
      ++gemm;
      EXPECT_NE(s.value, 1.0) << "the soak's summary entry counted as a device's figure";
    }
  }
  EXPECT_EQ(soaked, 2u);
  EXPECT_EQ(gemm, 2u);  // the screen's entries were dropped before
}

TEST(Fleet, ReportSection) {
  auto files = fleet(3);
  files[1] = node_file("node-2", {800, 801, 799, 800, 800, 802, 650, 800});
  const Report r = build_report(files, SpecSheet::builtin(), {});
  const std::string md = to_markdown(r.doc);
  EXPECT_NE(md.find("## Fleet"), std::string::npos);
  EXPECT_NE(md.find("node-2 GPU 6 (UUID GPU-node-2-6): gemm dtype=bf16 19% below the fleet median"), std::string::npos)
      << md.substr(md.find("## Fleet"), 2000);
  EXPECT_NE(md.find("### Nodes"), std::string::npos);
  ASSERT_TRUE(r.summary.contains("fleet"));
  EXPECT_EQ(r.summary["fleet"]["devices"], 24);
  ASSERT_EQ(r.summary["fleet"]["outliers"].size(), 1u);
  EXPECT_EQ(r.summary["fleet"]["outliers"][0]["uuid"], "GPU-node-2-6");
  // One machine: no fleet section.
  const std::string single = to_markdown(build_report({files[0]}, SpecSheet::builtin(), {}).doc);
  EXPECT_NE(single.find("## Fleet"), std::string::npos);  // 8 GPUs of one node are a fleet too
  const std::string one_gpu = to_markdown(build_report({node_file("x", {800})}, SpecSheet::builtin(), {}).doc);
  EXPECT_EQ(one_gpu.find("## Fleet"), std::string::npos);
}

// The power-sweep section (reports/power_sweep.hpp) from a soak's gpubench.soak.sweep.
TEST(PowerSweepReport, TableBestSettingAndCurve) {
  const json doc = json::parse(R"({"context": {"host_name": "gpu-1", "gpubench": {"schema_version": 1}},
    "gpubench": {"soak": {"load": "gemm", "series": [], "trends": [],
      "sweep": {"kind": "power_limit", "best_perf_per_watt": "70%", "points": [
        {"setting": "100%", "status": "on", "limit_w": [700], "throughput": 800, "unit": "TFLOP/s", "power_w": 690,
         "perf_per_watt": 1.159, "relative_throughput": 1, "relative_perf_per_watt": 1},
        {"setting": "70%", "status": "on", "limit_w": [490], "throughput": 700, "unit": "TFLOP/s", "power_w": 485,
         "perf_per_watt": 1.443, "relative_throughput": 0.875, "relative_perf_per_watt": 1.245}]}}},
    "benchmarks": [{"name": "soak/gemm/x", "run_type": "iteration", "real_time": 1, "time_unit": "ms",
      "gpubench": {"suite": "gemm", "device": "cuda:0", "device_name": "NVIDIA H100", "status": "ok",
        "axes": {"dtype": "bf16"}, "metrics": {"tflops": 750}}}]})");
  const ResultsFile f = read_results_text(doc.dump(), "sweep.json");
  const Report r = build_report({f}, SpecSheet::builtin(), {});
  const std::string md = to_markdown(r.doc);
  EXPECT_NE(md.find("## Power and clock sweeps"), std::string::npos) << md;
  EXPECT_NE(md.find("| 70% | on | 490 | 700 | 485 | 1.4430 | 0.875 | 1.245 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Best perf per watt at 70%."), std::string::npos);
  const std::string html = to_html(r.doc);
  EXPECT_NE(html.find("the efficiency curve"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::reports
