// The dataload suite's decode=gpu (nvJPEG) plan rules: the CPU decode's case names stay what they
// were, decode=gpu is planned on a CUDA device with its hw_load split and skipped on the cpu
// device with the reason, and a stage that does not decode is not planned for it.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/core/plan.hpp"
#include "bench/suites/all_suites.hpp"
#include "fake_suite.hpp"

namespace gpubench {
namespace {

std::vector<PlannedCase> plan(std::vector<std::string> axes, const DeviceInfo& d) {
  PlanRequest r;
  r.suites = {"dataload"};
  r.axis_overrides = std::move(axes);
  return make_plan(suites::all(), r, {d});
}

TEST(DataloadGpuDecode, CpuDecodeNamesCarryNeitherNewAxis) {
  for (const PlannedCase& c : plan({}, testing::fake_cpu())) {
    EXPECT_EQ(c.name().find("decode="), std::string::npos) << c.name();
    EXPECT_EQ(c.name().find("hw_load="), std::string::npos) << c.name();
  }
}

TEST(DataloadGpuDecode, OnTheCpuItIsPlannedAndSkippedWithTheReason) {
  const std::vector<PlannedCase> p = plan({"decode=gpu"}, testing::fake_cpu());
  ASSERT_FALSE(p.empty());
  for (const PlannedCase& c : p) {
    EXPECT_EQ(c.point.text("stage"), "decode") << c.name();  // only the stage that decodes
    EXPECT_NE(c.name().find("/decode=gpu/hw_load=0/"), std::string::npos) << c.name();
    ASSERT_TRUE(c.skip_reason.has_value()) << c.name();
    EXPECT_NE(c.skip_reason->find("decode=gpu needs a CUDA device"), std::string::npos) << *c.skip_reason;
  }
}

TEST(DataloadGpuDecode, OnAGpuTheQuickPresetSplitsBetweenTheDecoders) {
  std::vector<std::int64_t> loads;
  std::size_t other = 0;
  for (const PlannedCase& c : plan({}, testing::fake_gpu(0))) {
    if (c.point.text("stage") != "decode") {
      ++other;
      EXPECT_EQ(c.name().find("decode="), std::string::npos) << c.name();  // augment, h2d, pipeline keep their names
      continue;
    }
    EXPECT_EQ(c.point.text("decode"), "gpu");
    EXPECT_EQ(c.point.integer("workers"), 1);
    EXPECT_EQ(c.point.integer("scale"), 1);
    loads.push_back(c.point.integer("hw_load"));
  }
  EXPECT_GT(other, 0u);
  std::sort(loads.begin(), loads.end());
  EXPECT_EQ(loads, (std::vector<std::int64_t>{0, 65}));
  // Asked for alone, only decodes are planned; a split without decode=gpu is nothing.
  for (const PlannedCase& c : plan({"decode=gpu", "hw_load=0,100"}, testing::fake_gpu(0))) EXPECT_EQ(c.point.text("stage"), "decode");
  EXPECT_TRUE(plan({"stage=decode", "decode=cpu", "hw_load=50"}, testing::fake_cpu()).empty());
  EXPECT_TRUE(plan({"stage=pipeline", "decode=gpu"}, testing::fake_gpu(0)).empty());
  EXPECT_TRUE(plan({"stage=decode", "decode=gpu", "scale=2"}, testing::fake_gpu(0)).empty());  // nvJPEG decodes at full size
}

}  // namespace
}  // namespace gpubench
