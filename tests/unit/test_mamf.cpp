// The MAMF search (bench/tune/mamf.hpp) on a fake cost model: it finds the optimum, prunes by
// tile and wave quantisation before measuring, and keeps to its budget.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/core/errors.hpp"
#include "bench/tune/mamf.hpp"

namespace gpubench::tune {
namespace {

TEST(Mamf, RangesListsAndNumbers) {
  EXPECT_EQ(parse_mamf_range("256:1024:256", "--mamf-m"), (std::vector<long long>{256, 512, 768, 1024}));
  EXPECT_EQ(parse_mamf_range("4096", "--mamf-m"), (std::vector<long long>{4096}));
  EXPECT_EQ(parse_mamf_range("1024,2048", "--mamf-m"), (std::vector<long long>{1024, 2048}));
  for (const char* bad : {"", "0", "1024:512:256", "1:2", "1:2:3:4", "a:b:c", "1024:2048:0", "2048,2048"}) {
    EXPECT_THROW((void)parse_mamf_range(bad, "--mamf-m"), UsageError) << bad;
  }
}

// 132 SMs (H100 SXM), 128x128 tiles: 8192x8192 is 4096 tiles = 31.03 waves -> 4096 / (32 x 132)
// = 97.0% (kept); 1152x1152 is 81 tiles, one wave of 132: 61.4% (pruned); a k that is not a
// multiple of 64 is pruned whatever the waves.
TEST(Mamf, TileAndWaveQuantisationPruneBeforeMeasuring) {
  Quantisation q;
  q.units = 132;
  EXPECT_NEAR(wave_efficiency({8192, 8192, 8192}, q), 4096.0 / (32 * 132), 1e-12);
  EXPECT_NEAR(wave_efficiency({1152, 1152, 1024}, q), 81.0 / 132, 1e-12);
  std::size_t pruned = 0;
  const auto kept = mamf_candidates({8192, 1152}, {8192, 1152}, {8192, 8200}, q, &pruned);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0], (MamfShape{8192, 8192, 8192}));
  EXPECT_EQ(pruned, 7u);
}

// A fake device whose rate peaks at 4096x6144x2048 (an ellipsoid around it), each measurement
// costing its min-time plus a set-up proportional to the shape's size on a fake clock.
struct FakeDevice {
  double now = 0;
  int calls = 0;
  double rate(const MamfShape& s) const {
    const double dm = (s.m - 4096) / 4096.0, dn = (s.n - 6144) / 4096.0, dk = (s.k - 2048) / 4096.0;
    return 800 * std::exp(-(dm * dm + dn * dn + dk * dk));
  }
  std::optional<double> measure(const MamfShape& s, int stage, std::string& why) {
    ++calls;
    now += (stage == 0 ? 0.1 : 0.3) + s.flops() / 1e14;
    if (s.m == 8192 && s.n == 8192) {
      why = "out of device memory";  // a failure is logged and never the MAMF
      return std::nullopt;
    }
    return rate(s);
  }
};

TEST(Mamf, FindsTheOptimumOfAFakeCostModelWithinItsBudget) {
  Quantisation q;
  q.units = 1;
  const auto range = parse_mamf_range("1024:8192:1024", "--mamf-m");
  const auto candidates = mamf_candidates(range, range, range, q, nullptr);
  ASSERT_EQ(candidates.size(), 512u);
  FakeDevice d;
  MamfSearchOptions o;
  o.budget_s = 1000;  // room for every shape
  const MamfResult r = mamf_search(
      candidates, [&](const MamfShape& s, int stage, std::string& why) { return d.measure(s, stage, why); },
      [&] { return d.now; }, o);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(*r.best, (MamfShape{4096, 6144, 2048}));
  EXPECT_DOUBLE_EQ(r.tflops, 800);
  EXPECT_EQ(r.measured, 512u);
  EXPECT_EQ(r.finalists, 4u);
  EXPECT_EQ(r.failed, 8u);  // 8192x8192 at every k
  EXPECT_FALSE(r.budget_exhausted);
  EXPECT_LE(r.elapsed_s, o.budget_s);

  // A budget for about a tenth of the shapes: it stops the sweep at 60% of it, keeps the best of
  // what it measured, and ends within the budget.
  FakeDevice small;
  o.budget_s = 60;
  const MamfResult s = mamf_search(
      candidates, [&](const MamfShape& x, int stage, std::string& why) { return small.measure(x, stage, why); },
      [&] { return small.now; }, o);
  EXPECT_TRUE(s.budget_exhausted);
  EXPECT_LT(s.measured, 512u);
  EXPECT_LE(s.elapsed_s, o.budget_s);
  ASSERT_TRUE(s.best.has_value());
  EXPECT_GT(s.tflops, 0);
  ASSERT_EQ(s.log.size(), s.measured + s.finalists);
}

}  // namespace
}  // namespace gpubench::tune
