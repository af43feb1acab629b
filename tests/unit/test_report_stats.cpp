// Statistics of the reports against reference values computed once with SciPy 1.10.1
// (Debian python3-scipy), and the change-point detection of `gpubench history`.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "reports/stats.hpp"

namespace {

using gpubench::reports::cusum_change_points;
using gpubench::reports::geomean;
using gpubench::reports::mann_whitney_u;
using gpubench::reports::median;

struct MwuCase {
  std::vector<double> x, y;
  double u, p;
  bool exact;
};

// Produced by:
//   /usr/bin/python3 -c "from scipy.stats import mannwhitneyu as m; r = m(x, y); print(repr(r.statistic), repr(r.pvalue))"
// for each (x, y) below (SciPy defaults: two-sided, use_continuity=True, method='auto').
const MwuCase kScipy[] = {
    {{1, 2, 3}, {4, 5, 6, 7}, 0.0, 0.05714285714285714, true},
    {{1.1, 2.2, 3.3, 4.4, 5.5}, {2.5, 6.1, 7.2, 8.3}, 3.0, 0.1111111111111111, true},
    // Ties: the normal approximation with tie correction.
    {{1, 2, 2, 3, 4}, {2, 3, 3, 5, 6, 7}, 6.0, 0.11390314458853068, false},
    // 9 vs 9: both samples above 8, the normal approximation.
    {{10.0, 10.4, 9.7, 10.6, 9.5, 10.2, 9.9, 10.3, 9.6}, {9.0, 9.36, 8.73, 9.54, 8.55, 9.18, 8.91, 9.27, 8.64}, 80.0,
     0.0005736335109885613, false},
    // 3 vs 20 without ties: exact, the small side decides.
    {{0.5, 1.5, 2.5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 3.0,
     0.007905138339920948, true},
    {{3.0, 1.0}, {2.0, 4.0}, 1.0, 0.6666666666666666, true},
};

TEST(ReportStats, MannWhitneyMatchesScipy) {
  for (const auto& c : kScipy) {
    const auto r = mann_whitney_u(c.x, c.y);
    EXPECT_DOUBLE_EQ(r.u, c.u);
    EXPECT_NEAR(r.p, c.p, 1e-12 + 1e-9 * c.p) << "x size " << c.x.size() << ", y size " << c.y.size();
    EXPECT_EQ(r.exact, c.exact);
  }
}

TEST(ReportStats, MannWhitneyIsSymmetricInPValue) {
  for (const auto& c : kScipy) {
    EXPECT_NEAR(mann_whitney_u(c.y, c.x).p, c.p, 1e-12 + 1e-9 * c.p);
  }
}

TEST(ReportStats, MannWhitneyAllEqualIsNotSignificant) {
  const auto r = mann_whitney_u({5, 5, 5}, {5, 5, 5, 5});
  EXPECT_DOUBLE_EQ(r.p, 1.0);
}

TEST(ReportStats, MedianAndGeomean) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_NEAR(*geomean({1, 4, 16}), 4, 1e-12);
  EXPECT_NEAR(*geomean({2, 8, -1, 0, NAN}), 4, 1e-12);  // only positive finite values count
  EXPECT_FALSE(geomean({0, -1}).has_value());
}

TEST(ReportStats, CusumFindsTheRunWhereTheLevelShifted) {
  // 700 for four runs, then 595 (-15%), small wiggles.
  const std::vector<double> x = {702.8, 697.9, 701.4, 697.2, 594.8, 593.8, 595.5, 594.4};
  const auto cps = cusum_change_points(x);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 4u);  // the fifth run is the first at the new level
  EXPECT_LT(cps[0].p, 0.05);
  EXPECT_NEAR(cps[0].before, 699.825, 1e-9);
  EXPECT_NEAR(cps[0].after, 594.625, 1e-9);
}

TEST(ReportStats, CusumFindsTwoShifts) {
  std::vector<double> x;
  for (int i = 0; i < 10; ++i) x.push_back(100 + (i % 3) * 0.5);
  for (int i = 0; i < 10; ++i) x.push_back(80 + (i % 3) * 0.5);
  for (int i = 0; i < 10; ++i) x.push_back(100 + (i % 3) * 0.5);
  const auto cps = cusum_change_points(x);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].index, 10u);
  EXPECT_EQ(cps[1].index, 20u);
}

TEST(ReportStats, CusumIgnoresNoiseAndSmallShifts) {
  // A flat series with +-1% alternating noise: nothing to report.
  std::vector<double> flat;
  for (int i = 0; i < 20; ++i) flat.push_back(100 + ((i * 7) % 5 - 2) * 0.5);
  EXPECT_TRUE(cusum_change_points(flat).empty());
  // A real but 2% shift is below the default 5% minimum.
  std::vector<double> small(10, 100.0);
  small.insert(small.end(), 10, 98.0);
  EXPECT_TRUE(cusum_change_points(small).empty());
  EXPECT_EQ(cusum_change_points(small, 0.05, 0.01).size(), 1u);
  // Too short to test.
  EXPECT_TRUE(cusum_change_points({1, 2, 3}).empty());
}

TEST(ReportStats, CusumIsReproducible) {
  const std::vector<double> x = {10, 10.2, 9.9, 10.1, 12, 12.1, 11.9, 12.2};
  const auto a = cusum_change_points(x), b = cusum_change_points(x);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].p, b[i].p);
}

}  // namespace
