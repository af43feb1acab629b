// bench/core extensions for derived shapes: Text axes (free-form words a suite checks) and
// Suite::resolve (axes filled in from others, with the planner merging points that become equal).
#include <gtest/gtest.h>

#include "bench/core/axis.hpp"
#include "bench/core/plan.hpp"
#include "fake_suite.hpp"
#include "test_util.hpp"

namespace gpubench {
namespace {

using testing::usage_error;

TEST(TextAxis, ParsesWordsAndAppliesTheSuiteCheck) {
  AxisSpec spec{"model", AxisKind::Text, "a word", {}, 1};
  EXPECT_EQ(parse_axis_values(spec, "llama-7b, h64-a2.5_x:y+z,llama-7b"),
            (std::vector<AxisValue>{std::string("llama-7b"), std::string("h64-a2.5_x:y+z")}));
  EXPECT_EQ(usage_error([&] { parse_axis_values(spec, "a/b"); }),
            "axis model: 'a/b' may hold only letters, digits and . _ : + -");
  EXPECT_EQ(usage_error([&] { parse_axis_values(spec, "a=b"); }),
            "axis model: 'a=b' may hold only letters, digits and . _ : + -");
  EXPECT_EQ(usage_error([&] { parse_axis_values(spec, "a,,b"); }), "axis model: empty item in 'a,,b'");
  EXPECT_EQ(usage_error([&] { parse_axis_values(spec, " "); }), "axis model: empty value list");

  spec.check = [](std::string_view word) -> std::optional<std::string> {
    if (word.starts_with("ok")) return std::nullopt;
    return "must start with ok";
  };
  EXPECT_EQ(parse_axis_values(spec, "ok1,ok2").size(), 2u);
  EXPECT_EQ(usage_error([&] { parse_axis_values(spec, "ok1,bad"); }), "axis model: 'bad': must start with ok");
}

// `base` picks a size; `size` is derived as base * 10 whatever the preset says, so sweeping
// size gives equal points after resolve.
class DerivingSuite final : public Suite {
 public:
  std::string name() const override { return "derive"; }
  std::string description() const override { return "test"; }
  std::vector<AxisSpec> axes() const override {
    return {{"base", AxisKind::Int, "", {}, 1}, {"size", AxisKind::Int, "", {}, 1}, {"tag", AxisKind::Text, "", {}, 1}};
  }
  std::vector<Preset> presets() const override {
    return {{"quick", {{"base", "1,2"}, {"size", "1,2,3"}, {"tag", "x"}}, {{"base", "1,2"}, {"size", "1,2,3"}, {"tag", "x"}}}};
  }
  std::optional<std::string> unsupported(const DeviceInfo&, const Point&) const override { return std::nullopt; }
  Point resolve(const DeviceInfo&, Point p) const override {
    if (p.text("tag") == "bad") throw UsageError("tag bad cannot be resolved");
    p.set("size", p.integer("base") * 10);
    return p;
  }
  std::unique_ptr<Case> make_case(const DeviceInfo&, const Point& p) const override {
    return std::make_unique<testing::FakeCase>("ok", p.integer("size"));
  }
};

TEST(Resolve, DerivedAxesAppearInNamesAndEqualPointsArePlannedOnce) {
  DerivingSuite suite;
  PlanRequest r;
  const auto plan = make_plan({&suite}, r, {testing::fake_cpu()});
  ASSERT_EQ(plan.size(), 2u);  // 2 bases x 3 sizes -> 2 distinct points
  EXPECT_EQ(plan[0].name(), "derive/base=1/size=10/tag=x/cpu");
  EXPECT_EQ(plan[1].name(), "derive/base=2/size=20/tag=x/cpu");

  r.axis_overrides = {"tag=x,bad"};
  EXPECT_EQ(usage_error([&] { make_plan({&suite}, r, {testing::fake_cpu()}); }), "tag bad cannot be resolved");
}

TEST(Resolve, DefaultLeavesPointsAlone) {
  testing::FakeSuite suite;
  PlanRequest r;
  EXPECT_EQ(make_plan({&suite}, r, {testing::fake_cpu()}).size(), 2u);  // sizes 64 and 128
}

}  // namespace
}  // namespace gpubench
