#include <gtest/gtest.h>

#include "gpubench/version.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/plan.hpp"
#include "fake_suite.hpp"

namespace gpubench {
namespace {

using testing::FakeSuite;

struct PlanTest : ::testing::Test {
  FakeSuite suite;
  std::vector<const Suite*> all{&suite};
  std::vector<PlannedCase> plan(PlanRequest r, std::vector<DeviceInfo> devices = {testing::fake_cpu()}) {
    return make_plan(all, r, devices);
  }
};

TEST_F(PlanTest, PresetValuesPerDeviceKind) {
  auto p = plan({}, {testing::fake_gpu(0), testing::fake_cpu()});
  ASSERT_EQ(p.size(), 3u);  // cuda: size 1024; cpu: 64, 128
  EXPECT_EQ(p[0].name(), "fake/size=1024/twin=1024/mode=ok/cuda:0");
  EXPECT_EQ(p[1].name(), "fake/size=64/twin=64/mode=ok/cpu");
  EXPECT_EQ(p[2].point.integer("twin"), 128);  // @size follows size
}

TEST_F(PlanTest, OverridesExpandCartesian) {
  PlanRequest r;
  r.axis_overrides = {"size=1:4:x2", "mode=ok,wrong"};
  auto p = plan(r);
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0].point.label(), "size=1/twin=1/mode=ok");
  EXPECT_EQ(p[1].point.label(), "size=1/twin=1/mode=wrong");
  EXPECT_EQ(p[5].point.label(), "size=4/twin=4/mode=wrong");
}

TEST_F(PlanTest, BreakingTheTie) {
  PlanRequest r;
  r.axis_overrides = {"size=8,16", "twin=3"};
  auto p = plan(r);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].point.label(), "size=16/twin=3/mode=ok");
}

TEST_F(PlanTest, LastOverrideWins) {
  PlanRequest r;
  r.axis_overrides = {"size=8", "size=9"};
  EXPECT_EQ(plan(r).at(0).point.integer("size"), 9);
}

TEST_F(PlanTest, UnsupportedPointsAreKeptAsSkipped) {
  PlanRequest r;
  r.axis_overrides = {"mode=gpuonly"};
  auto p = plan(r, {testing::fake_gpu(0), testing::fake_cpu()});
  ASSERT_EQ(p.size(), 3u);
  EXPECT_FALSE(p[0].skip_reason);
  ASSERT_TRUE(p[1].skip_reason);
  EXPECT_EQ(*p[1].skip_reason, "needs a GPU");
}

TEST_F(PlanTest, FilterUsesGoogleBenchmarkSyntax) {
  PlanRequest r;
  r.filter = "size=128";
  EXPECT_EQ(plan(r).size(), 1u);
  r.filter = "-size=128";
  auto p = plan(r);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].point.integer("size"), 64);
  r.filter = "([";
  EXPECT_THROW(plan(r), UsageError);
}

// Found by tests/fuzz/fuzz_cli: each axis within its limit, the product not (16M points, GBs).
TEST_F(PlanTest, TooManyCombinationsAreRefusedBeforeExpanding) {
  PlanRequest r;
  r.axis_overrides = {"size=1:4096:1", "twin=1:4096:1"};
  try {
    plan(r);
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 4194304 combinations"), std::string::npos) << e.what();
  }
  r.axis_overrides = {"size=1:4096:1", "twin=1:16:1"};  // 65536 cases: at the limit
  EXPECT_EQ(plan(r).size(), kMaxPlannedCases);
  // The cases are capped summed over devices.
  try {
    plan(r, {testing::fake_cpu(), testing::fake_cpu()});
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the plan has more than 65536 cases"), std::string::npos) << e.what();
  }
  r.axis_overrides = {"size=1:4096:1", "twin=1:8:1"};  // 32768 a device: two devices fit
  EXPECT_EQ(plan(r, {testing::fake_cpu(), testing::fake_cpu()}).size(), kMaxPlannedCases);
}

// Combinations that applies() drops do not count as cases: a product far above the case limit
// plans when few of its points exist (the standard and full presets on 8 GPUs: issue 41).
TEST_F(PlanTest, CombinationsDroppedByAppliesAreNotCases) {
  PlanRequest r;
  r.axis_overrides = {"size=1:4096:1", "twin=1:256:1"};  // 1M combinations, 4096 cases
  struct Sparse final : Suite {
    FakeSuite base;
    std::string name() const override { return "sparse"; }
    std::string description() const override { return "fake, only where twin == size % 256 + 1"; }
    std::vector<AxisSpec> axes() const override { return base.axes(); }
    std::vector<Preset> presets() const override { return base.presets(); }
    std::optional<std::string> unsupported(const DeviceInfo& d, const Point& p) const override { return base.unsupported(d, p); }
    bool applies(const DeviceInfo&, const Point& p) const override {
      return p.integer("twin") == p.integer("size") % 256 + 1;
    }
    std::unique_ptr<Case> make_case(const DeviceInfo& d, const Point& p) const override { return base.make_case(d, p); }
  } sparse;
  const std::vector<PlannedCase> p = make_plan({&sparse}, r, {testing::fake_cpu(), testing::fake_cpu()});
  EXPECT_EQ(p.size(), 2u * 4096u);
}

TEST_F(PlanTest, UsageErrors) {
  auto error = [&](PlanRequest r) {
    try {
      plan(r);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  PlanRequest r;
  r.suites = {"nope"};
  EXPECT_EQ(error(r), "--suite 'nope': unknown suite (available: fake)");
  r = {};
  r.preset = "huge";
  EXPECT_NE(error(r).find("--preset 'huge': suite fake has no such preset (available: quick, standard)"), std::string::npos);
  r = {};
  r.axis_overrides = {"q=1"};
  EXPECT_NE(error(r).find("unknown axis 'q' (axes: fake.size, fake.twin, fake.mode)"), std::string::npos);
  r.axis_overrides = {"size=x"};
  EXPECT_NE(error(r).find("'x' is not an integer"), std::string::npos);
  r.axis_overrides = {"twin=@mode"};
  EXPECT_NE(error(r).find("must name an earlier axis of the same kind"), std::string::npos);
  r.axis_overrides = {"mode=fp8"};
  EXPECT_NE(error(r).find("unknown value 'fp8'"), std::string::npos);
}

TEST(DeviceSelection, ParsesSpecs) {
  DeviceInventory inv;
  inv.cpu = testing::fake_cpu();
  inv.cuda = {testing::fake_gpu(0), testing::fake_gpu(1)};
  EXPECT_EQ(select_devices("all", inv).devices.size(), 3u);
  EXPECT_EQ(select_devices("cuda", inv).devices.size(), 2u);
  auto one = select_devices("cuda:1,cpu", inv);
  ASSERT_EQ(one.devices.size(), 2u);
  EXPECT_EQ(one.devices[0].id(), "cuda:1");
  EXPECT_EQ(one.devices[1].id(), "cpu");
  EXPECT_THROW(select_devices("cuda:2", inv), UsageError);
  EXPECT_THROW(select_devices("gpu", inv), UsageError);
  EXPECT_THROW(select_devices("cuda:x", inv), UsageError);
  EXPECT_THROW(select_devices("", inv), UsageError);
}

TEST(DeviceSelection, NoCudaGivesOneLineNotice) {
  DeviceInventory inv;
  inv.cpu = testing::fake_cpu();
  inv.cuda_unavailable_reason = "no NVIDIA driver is loaded (cudaErrorInsufficientDriver)";
  auto all = select_devices("all", inv);
  ASSERT_EQ(all.devices.size(), 1u);
  EXPECT_EQ(all.notice, "no CUDA device: no NVIDIA driver is loaded (cudaErrorInsufficientDriver); GPU cases skipped");
  EXPECT_FALSE(all.cuda_requested_explicitly);
  EXPECT_TRUE(select_devices("cuda:0", inv).cuda_requested_explicitly);
  EXPECT_TRUE(select_devices("cpu", inv).notice.empty());
}

TEST(DeviceDiscovery, WorksWithoutADriver) {
  // On the build machines there is no driver: discovery must still describe the CPU and
  // explain the absence of CUDA devices instead of crashing.
  DeviceInventory inv = discover_devices();
  EXPECT_FALSE(inv.cpu.name.empty());
  EXPECT_GE(inv.cpu.logical_cpus, 1);
  // A build without CUDA has no runtime and says so.
  EXPECT_EQ(inv.runtime_version > 0, kBuiltWithCuda);
  if (!kBuiltWithCuda) {
    EXPECT_EQ(inv.cuda_unavailable_reason, kNotBuiltWithCuda);
  }
  if (inv.cuda.empty()) {
    EXPECT_FALSE(inv.cuda_unavailable_reason.empty());
  }
}

}  // namespace
}  // namespace gpubench
