// The spec sheet: the built-in data/gpus.json, device-name matching and validation errors.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_util.hpp"
#include "bench/core/errors.hpp"
#include "reports/spec_sheet.hpp"

namespace {

using gpubench::UsageError;
using gpubench::reports::GpuSpec;
using gpubench::reports::SpecSheet;

using gpubench::testing::usage_error;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string key_for(const SpecSheet& sheet, const std::string& device_name) {
  const GpuSpec* spec = sheet.find(device_name);
  return spec == nullptr ? "(none)" : spec->key;
}

TEST(SpecSheet, BuiltinHasTheRequiredGpusWithSources) {
  const SpecSheet sheet = SpecSheet::builtin();
  for (const char* key : {"v100-sxm2-32gb", "v100-sxm2-16gb", "a100-sxm-80gb", "a100-pcie-80gb", "a40", "l40s", "l4",
                          "t4", "rtx-4090", "h100-sxm", "h100-pcie", "h200-sxm", "b200"}) {
    bool found = false;
    for (const auto& gpu : sheet.gpus()) {
      if (gpu.key != key) continue;
      found = true;
      EXPECT_FALSE(gpu.name.empty()) << key;
      EXPECT_FALSE(gpu.source.empty()) << key;
      EXPECT_TRUE(gpu.peaks.contains("memory_bandwidth")) << key;
      EXPECT_TRUE(gpu.peaks.contains("fp16_tensor")) << key;
    }
    EXPECT_TRUE(found) << "no entry " << key;
  }
}

// Every built-in entry gives each figure the issue asks for, or says why it has none; every
// figure names a document with a title and an NVIDIA URL.
TEST(SpecSheet, EveryBuiltinFigureHasASourceOrAReasonForItsAbsence) {
  const SpecSheet sheet = SpecSheet::builtin();
  const std::vector<std::string> required = {"fp64",        "fp32",        "tf32_tensor", "fp16_tensor",
                                             "bf16_tensor", "fp8_tensor",  "int8_tensor", "memory_bandwidth",
                                             "tdp_w",       "memory_gb",   "sm_count",    "boost_clock_mhz"};
  for (const auto& gpu : sheet.gpus()) {
    SCOPED_TRACE(gpu.key);
    auto given = [&](const std::string& f) {
      if (f == "tdp_w") return gpu.tdp_w.has_value();
      if (f == "memory_gb") return gpu.memory_gb.has_value();
      if (f == "sm_count") return gpu.sm_count.has_value();
      if (f == "boost_clock_mhz") return gpu.boost_clock_mhz.has_value();
      return gpu.peaks.contains(f);
    };
    for (const std::string& f : required) {
      if (given(f)) {
        ASSERT_TRUE(gpu.sources.contains(f)) << f;
        const auto& doc = sheet.documents().at(gpu.sources.at(f));
        EXPECT_FALSE(doc.title.empty()) << f;
        EXPECT_TRUE(doc.url.starts_with("https://")) << doc.url;
        // NVIDIA's own hosts (nvdam.widen.net is NVIDIA's document store).
        EXPECT_TRUE(doc.url.find("nvidia.com/") != std::string::npos || doc.url.starts_with("https://nvdam.widen.net/"))
            << doc.url;
      } else {
        EXPECT_TRUE(gpu.absent.contains(f)) << f << " is neither given nor explained in \"absent\"";
      }
    }
    for (const auto& [figure, doc] : gpu.sources) EXPECT_TRUE(sheet.documents().contains(doc)) << figure;
  }
}

TEST(SpecSheet, MatchesRealCudaDeviceNames) {
  const SpecSheet sheet = SpecSheet::builtin();
  EXPECT_EQ(key_for(sheet, "NVIDIA H100 80GB HBM3"), "h100-sxm");
  EXPECT_EQ(key_for(sheet, "NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(key_for(sheet, "NVIDIA H200"), "h200-sxm");
  EXPECT_EQ(key_for(sheet, "NVIDIA A100-SXM4-80GB"), "a100-sxm-80gb");
  EXPECT_EQ(key_for(sheet, "NVIDIA A100-SXM4-40GB"), "a100-sxm-40gb");
  EXPECT_EQ(key_for(sheet, "NVIDIA A100 80GB PCIe"), "a100-pcie-80gb");
  EXPECT_EQ(key_for(sheet, "NVIDIA A100-PCIE-40GB"), "a100-pcie-40gb");
  EXPECT_EQ(key_for(sheet, "NVIDIA L40S"), "l40s");
  EXPECT_EQ(key_for(sheet, "NVIDIA GeForce RTX 4090"), "rtx-4090");
  EXPECT_EQ(key_for(sheet, "Tesla V100-SXM2-32GB"), "v100-sxm2-32gb");
  EXPECT_EQ(key_for(sheet, "Tesla V100-SXM2-16GB"), "v100-sxm2-16gb");
  EXPECT_EQ(key_for(sheet, "Tesla T4"), "t4");
  EXPECT_EQ(key_for(sheet, "NVIDIA A40"), "a40");
  EXPECT_EQ(key_for(sheet, "NVIDIA L4"), "l4");
  EXPECT_EQ(key_for(sheet, "NVIDIA B200"), "b200");
}

TEST(SpecSheet, DoesNotMatchOtherProductsWithSimilarNames) {
  const SpecSheet sheet = SpecSheet::builtin();
  // Each of these is a different configuration from every entry in the sheet; a wrong match
  // would report a misleading % of peak.
  for (const char* name : {"NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA GH200 480GB",
                           "NVIDIA L40", "NVIDIA GeForce RTX 4090 D",
                           "NVIDIA GeForce RTX 4090 Laptop GPU", "Tesla V100-PCIE-32GB",
                           "NVIDIA A10", "NVIDIA L40", "NVIDIA GB200", "NVIDIA B200 NVL", "Tesla T4G", ""}) {
    EXPECT_EQ(sheet.find(name), nullptr) << name << " matched " << key_for(sheet, name);
  }
}

TEST(SpecSheet, H100PcieAndSxmHaveTheirOwnFigures) {
  const SpecSheet sheet = SpecSheet::builtin();
  // Dense figures: half of the datasheets' with-sparsity 1979 (SXM) and 1513 (PCIe).
  EXPECT_EQ(sheet.peak("NVIDIA H100 80GB HBM3", "bf16_tensor"), 989.5);
  EXPECT_EQ(sheet.peak("NVIDIA H100 PCIe", "bf16_tensor"), 756.5);
  EXPECT_EQ(sheet.peak("NVIDIA H100 80GB HBM3", "memory_bandwidth"), 3350);
  EXPECT_EQ(sheet.peak("NVIDIA H100 PCIe", "memory_bandwidth"), 2000);
  EXPECT_EQ(sheet.peak("NVIDIA H200", "memory_bandwidth"), 4800);
}

TEST(SpecSheet, PeakIsEmptyForUnknownDeviceOrPath) {
  const SpecSheet sheet = SpecSheet::builtin();
  EXPECT_FALSE(sheet.peak("NVIDIA A100-SXM4-80GB", "fp8_tensor").has_value());  // no FP8 on A100
  EXPECT_FALSE(sheet.peak("NVIDIA L40S", "fp64").has_value());  // no published figure
  EXPECT_FALSE(sheet.peak("Some CPU", "fp32").has_value());
  EXPECT_EQ(sheet.peak("NVIDIA GeForce RTX 4090", "fp16_tensor"), 165.2);  // FP32 accumulate
  EXPECT_EQ(sheet.peak("NVIDIA A100-SXM4-80GB", "fp64_tensor"), 19.5);
}

// A with-sparsity figure pasted for one precision but not another would break these ratios,
// which hold on every architecture in the sheet.
TEST(SpecSheet, TensorFiguresAreConsistentlyDense) {
  const SpecSheet sheet = SpecSheet::builtin();
  for (const auto& gpu : sheet.gpus()) {
    const auto& p = gpu.peaks;
    ASSERT_TRUE(p.contains("fp16_tensor")) << gpu.key;
    const double fp16 = p.at("fp16_tensor");
    if (p.contains("bf16_tensor")) {
      EXPECT_EQ(p.at("bf16_tensor"), fp16) << gpu.key;
    }
    if (p.contains("tf32_tensor")) {
      // 0.02: NVIDIA prints B200's TF32 rounded (2.2 for 2.25 PFLOPS with sparsity).
      EXPECT_NEAR(p.at("tf32_tensor") / fp16, 0.5, 0.02) << gpu.key;
    }
    if (p.contains("fp8_tensor")) {
      EXPECT_NEAR(p.at("fp8_tensor") / fp16, 2.0, 0.03) << gpu.key;
    }
    if (p.contains("fp32")) {
      EXPECT_LT(p.at("fp32"), fp16) << gpu.key;
    }
  }
}

TEST(SpecSheet, PcieVariantsComeBeforeSxm) {
  const SpecSheet sheet = SpecSheet::builtin();
  auto index_of = [&](const std::string& key) {
    for (std::size_t i = 0; i < sheet.gpus().size(); ++i) {
      if (sheet.gpus()[i].key == key) return i;
    }
    return sheet.gpus().size();
  };
  EXPECT_LT(index_of("h100-pcie"), index_of("h100-sxm"));
  EXPECT_LT(index_of("a100-pcie-80gb"), index_of("a100-sxm-80gb"));
}

TEST(SpecSheet, FirstMatchInFileOrderWins) {
  const SpecSheet sheet = SpecSheet::from_json_text(R"({"schema_version": 1, "gpus": [
      {"key": "narrow", "name": "N", "match": ["X PCIe"], "peaks": {"fp32": 1}, "source": "s"},
      {"key": "broad", "name": "B", "match": ["X"], "peaks": {"fp32": 2}, "source": "s"}]})",
                                                    "order.json");
  EXPECT_EQ(key_for(sheet, "X PCIe"), "narrow");
  EXPECT_EQ(key_for(sheet, "X SXM"), "broad");
  EXPECT_EQ(sheet.peak("X PCIe", "fp32"), 1.0);
}

TEST(SpecSheet, InvalidJsonIsAUsageErrorNamingTheOrigin) {
  const std::string msg =
      usage_error([] { SpecSheet::from_json_text("{\"gpus\": [", "mine.json"); });
  EXPECT_EQ(msg.rfind("spec sheet mine.json: not valid JSON (", 0), 0u) << msg;
  EXPECT_FALSE(contains(msg, "\n")) << msg;
  EXPECT_FALSE(contains(msg, "json.exception")) << msg;
}

// A valid entry; each case below breaks one thing in it.
nlohmann::json valid_gpu() {
  return {{"key", "g"},
          {"name", "G"},
          {"match", {"^G$"}},
          {"peaks", {{"fp32", 1.0}}},
          {"source", "s"}};
}

std::string sheet_error(const std::vector<nlohmann::json>& gpus) {
  const nlohmann::json doc = {{"schema_version", 1},
                              {"documents", {{"doc", {{"title", "T"}, {"url", "https://example"}}}}},
                              {"gpus", gpus}};
  return usage_error([&] { SpecSheet::from_json_text(doc.dump(), "bad.json"); });
}

TEST(SpecSheet, RejectsBadEntries) {
  struct Case {
    const char* field;
    nlohmann::json value;  // null: remove the field
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"key", nullptr, "spec sheet bad.json: gpus[0]: \"key\" must be a non-empty string"},
      {"name", "", "spec sheet bad.json: gpus[0] (g): \"name\" must be a non-empty string"},
      {"match", nlohmann::json::array(), "gpus[0] (g): \"match\" must be a non-empty list"},
      {"match", {"H100("}, "match regex \"H100(\" does not compile"},
      {"peaks", {{"fp32", -1}}, "peaks.fp32 must be a positive number"},
      {"peaks", {{"fp32", "67"}}, "peaks.fp32 must be a positive number"},
      {"peaks", {{"BF16 Tensor", 1}}, "peak key \"BF16 Tensor\""},
      {"peaks", nlohmann::json::object(), "\"peaks\" must be a non-empty object"},
      {"tdp", 700, "unknown field \"tdp\""},
      {"tdp_w", 0, "\"tdp_w\" must be a positive number"},
      {"source", nullptr, "\"source\" must be a non-empty string"},
      {"boost_clock_mhz", -5, "\"boost_clock_mhz\" must be a positive number"},
      {"sources", {{"fp32", "nodoc"}}, "sources.fp32 names unknown document \"nodoc\""},
      {"sources", {{"fp64", "doc"}}, "sources.fp64 cites a figure the entry does not give"},
      {"sources", {{"fp32", 3}}, "sources.fp32 must be a non-empty string"},
      {"absent", {{"fp32", "why"}}, "absent.fp32 names a figure the entry gives"},
      {"absent", "x", "\"absent\" must be an object"},
      {"peak_clock_mhz", {{"bf16_tensor", 1830}}, "peak_clock_mhz.bf16_tensor names a peak the entry does not give"},
      {"peak_clock_mhz", {{"fp32", 0}}, "peak_clock_mhz.fp32 must be a positive number"},
      {"peak_clock_mhz", {{"fp32", 1830}}, "\"peak_clock_derivation\" must be a non-empty string"},
      {"peak_clock_derivation", "x", "\"peak_clock_derivation\" without \"peak_clock_mhz\""},
  };
  for (const auto& c : cases) {
    nlohmann::json gpu = valid_gpu();
    if (c.value.is_null()) {
      gpu.erase(c.field);
    } else {
      gpu[c.field] = c.value;
    }
    const std::string msg = sheet_error({gpu});
    EXPECT_TRUE(contains(msg, c.expected)) << c.field << ": " << msg;
    EXPECT_FALSE(contains(msg, "\n")) << msg;
  }
  EXPECT_EQ(sheet_error({valid_gpu(), valid_gpu()}),
            "spec sheet bad.json: gpus[1]: key \"g\" appears twice");
  // With "sources", every figure needs one.
  nlohmann::json partial = valid_gpu();
  partial["tdp_w"] = 100;
  partial["sources"] = {{"fp32", "doc"}};
  EXPECT_TRUE(contains(sheet_error({partial}), "gpus[0] (g): tdp_w has no entry in \"sources\""));
  partial["sources"]["tdp_w"] = "doc";
  const nlohmann::json ok = {{"schema_version", 1},
                             {"documents", {{"doc", {{"title", "T"}, {"url", "https://example"}}}}},
                             {"gpus", {partial}}};
  const SpecSheet sheet = SpecSheet::from_json_text(ok.dump(), "ok.json");
  EXPECT_EQ(sheet.gpus()[0].sources.at("tdp_w"), "doc");
  EXPECT_EQ(sheet.documents().at("doc").url, "https://example");
}

// Issue 25 item 2: the clock each tensor figure assumes. Hopper's are 1830 MHz (989.5 = 132 SMs x
// 4096 FLOP/clk x 1.83 GHz) below its 1980 MHz maximum; Ampere's and Volta's are their boost clocks.
TEST(SpecSheet, BuiltinStatesTheClockEachTensorFigureAssumes) {
  const SpecSheet sheet = SpecSheet::builtin();
  for (const char* name : {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}) {
    for (const char* key : {"tf32_tensor", "fp16_tensor", "bf16_tensor", "fp8_tensor", "int8_tensor"}) {
      EXPECT_EQ(sheet.peak_clock(name, key), std::optional<double>(1830)) << name << " " << key;
    }
    EXPECT_FALSE(sheet.peak_clock(name, "memory_bandwidth").has_value());
  }
  EXPECT_EQ(sheet.peak_clock("NVIDIA H100 PCIe", "bf16_tensor"), std::optional<double>(1620));
  for (const auto& gpu : sheet.gpus()) {
    SCOPED_TRACE(gpu.key);
    if (gpu.peak_clock_mhz.empty()) continue;
    EXPECT_FALSE(gpu.peak_clock_derivation.empty());
    // Where the document states a boost clock, the figures assume it.
    for (const auto& [key, mhz] : gpu.peak_clock_mhz) {
      if (gpu.boost_clock_mhz) {
        EXPECT_EQ(mhz, *gpu.boost_clock_mhz) << key;
      }
      EXPECT_NE(gpu.peak_clock_derivation.find(key), std::string::npos) << key;
    }
  }
}

TEST(SpecSheet, RejectsBadTopLevel) {
  auto error = [](const char* text) {
    return usage_error([&] { SpecSheet::from_json_text(text, "top.json"); });
  };
  EXPECT_EQ(error(R"({"schema_version": 2, "gpus": []})"),
            "spec sheet top.json: schema_version 2 is not supported (this gpubench reads 1)");
  EXPECT_EQ(error(R"({"gpus": []})"), "spec sheet top.json: \"schema_version\" must be an integer");
  EXPECT_EQ(error(R"({"schema_version": 1, "gpus": {}})"),
            "spec sheet top.json: \"gpus\" must be a list");
  EXPECT_EQ(error(R"([1, 2])"), "spec sheet top.json: the top level must be an object");
  EXPECT_EQ(error(R"({"schema_version": 1, "gpus": [], "gpu": []})"),
            "spec sheet top.json: unknown top-level field \"gpu\"");
  EXPECT_EQ(error(R"({"schema_version": 1, "gpus": [], "documents": {"d": {"title": "T"}}})"),
            "spec sheet top.json: documents.d: \"url\" must be a non-empty string");
  EXPECT_EQ(error(R"({"schema_version": 1, "gpus": [], "documents": {"d": {"title": "T", "url": "u", "x": 1}}})"),
            "spec sheet top.json: documents.d: unknown field \"x\"");
}

TEST(SpecSheet, FromFileReadsAndNamesTheFile) {
  const auto dir = std::filesystem::path(testing::TempDir());
  const auto good = dir / "gpubench_test_sheet.json";
  {
    std::ofstream out(good);
    out << R"({"schema_version": 1, "gpus": [{"key": "x", "name": "X", "match": ["^Fake GPU$"],
              "peaks": {"memory_bandwidth": 100}, "source": "test"}]})";
  }
  const SpecSheet sheet = SpecSheet::from_file(good);
  EXPECT_EQ(sheet.peak("Fake GPU", "memory_bandwidth"), 100.0);

  const auto missing = dir / "gpubench_no_such_sheet.json";
  EXPECT_EQ(usage_error([&] { SpecSheet::from_file(missing); }),
            "spec sheet " + missing.string() + ": cannot open: it does not exist");
  std::filesystem::remove(good);
}

}  // namespace
