#pragma once
// Statistics for reports: medians, geometric means, the Mann-Whitney U test (as SciPy's
// scipy.stats.mannwhitneyu computes it) and change-point detection for history.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpubench::reports {

double median(std::vector<double> values);  // NaN for none
// exp(mean(log v)) over the positive finite values; nullopt when there are none.
std::optional<double> geomean(const std::vector<double>& values);

struct MannWhitney {
  double u = 0;        // U statistic of the first sample (SciPy's `statistic`)
  double p = 1;        // two-sided p-value
  bool exact = false;  // exact distribution, else the normal approximation
};

// Two-sided Mann-Whitney U test, matching scipy.stats.mannwhitneyu(x, y) with its defaults
// (SciPy 1.7+: alternative='two-sided', use_continuity=True, method='auto'): the exact
// distribution when one sample has at most 8 values and there are no ties, otherwise the
// normal approximation with tie correction and continuity correction. Needs >= 1 value each.
MannWhitney mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);

// Change-point detection by CUSUM with a permutation test (W. A. Taylor, "Change-Point
// Analysis: A Powerful New Tool for Detecting Changes", 2000), applied by binary segmentation:
//  - S_0 = 0, S_i = S_{i-1} + (x_i - mean); the change is after the index where |S_i| is
//    largest, and that largest |S_i| is the statistic (Taylor uses max S - min S, which is
//    nearly the same for a shifted series and its rotations and so has less power on the short
//    series history sees; max |S_i| is the classic CUSUM magnitude).
//  - `permutations` shuffles of the segment (fixed seed: results are reproducible) give the
//    p-value (1 + #shuffles whose statistic >= the observed one) / (1 + permutations).
//  - A change is kept when p < alpha and the means before and after differ by at least
//    `min_shift` (relative, e.g. 0.05); both halves are then searched again.
// Returns the first index of each new level (the run where performance shifted), sorted.
struct ChangePoint {
  std::size_t index;     // first run of the new level
  double p;              // permutation p-value
  double before, after;  // segment means either side
};
std::vector<ChangePoint> cusum_change_points(const std::vector<double>& x, double alpha = 0.05,
                                             double min_shift = 0.05, int permutations = 1000,
                                             std::size_t min_segment = 2, std::uint64_t seed = 1);

}  // namespace gpubench::reports
