// What each soak load runs (bench/soak/loads.hpp): the gemm precision chosen from the datasheet
// peaks and the device's support, the triad size, the train step; planning only, no device.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/core/errors.hpp"
#include "bench/soak/loads.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::soak {
namespace {

DeviceInfo gpu(const std::string& name, int major, int minor, std::int64_t memory) {
  DeviceInfo d;
  d.kind = DeviceKind::Cuda;
  d.ordinal = 0;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = 100;
  d.memory_bytes = memory;
  return d;
}

PeakLookup sheet() {
  static const reports::SpecSheet specs = reports::SpecSheet::builtin();
  return [](const std::string& device, const std::string& key) { return specs.peak(device, key); };
}

TEST(SoakLoads, GemmTakesTheHighestDatasheetTensorPeakTheGpuSupports) {
  std::string why;
  // H200: fp8 and int8 both 1979 (data/gpus.json); ties go to fp8.
  EXPECT_EQ(choose_gemm_dtype(gpu("NVIDIA H200", 9, 0, 141LL << 30), sheet(), &why), "fp8-e4m3");
  EXPECT_NE(why.find("highest datasheet"), std::string::npos) << why;
  // A100: no fp8 below compute capability 8.9, so int8 (624 TOP/s) over bf16 (312).
  EXPECT_EQ(choose_gemm_dtype(gpu("NVIDIA A100-SXM4-80GB", 8, 0, 80LL << 30), sheet()), "int8");
  // A GPU the sheet does not know: bf16, said so.
  EXPECT_EQ(choose_gemm_dtype(gpu("NVIDIA Future GPU", 9, 0, 80LL << 30), sheet(), &why), "bf16");
  EXPECT_NE(why.find("no datasheet figure"), std::string::npos) << why;
  EXPECT_EQ(choose_gemm_dtype(describe_cpu(), sheet()), "fp32");
}

// The precisions the soak falls back to when the library refuses the first at run time (the
// first H200 run: cuBLASLt answered "not supported" to fp8 in setup): best datasheet peak first,
// then whatever else the suite plans there.
TEST(SoakLoads, GemmFallsBackThroughThePrecisionsBestFirst) {
  std::vector<std::string> order;
  for (const GemmChoice& c : gemm_dtype_choices(gpu("NVIDIA H200", 9, 0, 141LL << 30), sheet())) order.push_back(c.dtype);
  EXPECT_EQ(order, (std::vector<std::string>{"fp8-e4m3", "int8", "bf16", "fp16", "tf32", "fp32"}));
  const std::vector<GemmChoice> h200 = gemm_dtype_choices(gpu("NVIDIA H200", 9, 0, 141LL << 30), sheet());
  EXPECT_NE(h200[1].why.find("next highest datasheet"), std::string::npos) << h200[1].why;
  EXPECT_NE(h200.back().why.find("without a datasheet figure"), std::string::npos) << h200.back().why;
  // A100: no fp8 (compute capability 8.0), so it is not among them.
  order.clear();
  for (const GemmChoice& c : gemm_dtype_choices(gpu("NVIDIA A100-SXM4-80GB", 8, 0, 80LL << 30), sheet())) order.push_back(c.dtype);
  EXPECT_EQ(order.front(), "int8");
  EXPECT_EQ(std::count(order.begin(), order.end(), "fp8-e4m3"), 0);
  EXPECT_EQ(plan_gemm_load(gpu("NVIDIA H200", 9, 0, 141LL << 30), "bf16").point.text("dtype"), "bf16");
}

TEST(SoakLoads, EachLoadIsOneCaseOfItsSuite) {
  const DeviceInfo cpu = describe_cpu();
  PlannedCase g = plan_load("gemm", cpu, sheet());
  ASSERT_FALSE(g.skip_reason) << *g.skip_reason;
  EXPECT_EQ(g.suite->name(), "gemm");
  EXPECT_EQ(g.point.text("provider"), "openblas");
  EXPECT_EQ(g.point.integer("m"), 1024);
  PlannedCase m = plan_load("memory", cpu, sheet());
  EXPECT_EQ(m.point.text("test"), "triad");
  EXPECT_EQ(m.point.integer("size"), 64LL << 20);
  PlannedCase t = plan_load("train", cpu, sheet());
  EXPECT_EQ(t.point.text("model"), "transformer");
  EXPECT_EQ(t.point.text("precision"), "fp32");
  // On a GPU: cuBLASLt TN at 8192, triad over three quarters of the memory.
  const DeviceInfo h200 = gpu("NVIDIA H200", 9, 0, 80LL << 30);
  g = plan_load("gemm", h200, sheet());
  EXPECT_EQ(g.point.text("provider"), "cublaslt");
  EXPECT_EQ(g.point.text("layout"), "tn");
  EXPECT_EQ(g.point.integer("m"), 8192);
  EXPECT_EQ(plan_load("memory", h200, sheet()).point.integer("size"), 20LL << 30);
}

TEST(SoakLoads, LoadNames) {
  EXPECT_EQ(parse_load("gemm"), (std::vector<std::string>{"gemm"}));
  EXPECT_EQ(parse_load("mixed"), (std::vector<std::string>{"gemm", "memory", "train"}));
  EXPECT_THROW(parse_load("burn"), UsageError);
}

}  // namespace
}  // namespace gpubench::soak
