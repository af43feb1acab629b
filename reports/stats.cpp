// Statistics for reports (see stats.hpp).
#include "reports/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace gpubench::reports {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2;
}

std::optional<double> geomean(const std::vector<double>& values) {
  double sum = 0;
  std::size_t n = 0;
  for (double v : values) {
    if (std::isfinite(v) && v > 0) sum += std::log(v), ++n;
  }
  if (n == 0) return std::nullopt;
  return std::exp(sum / static_cast<double>(n));
}

namespace {

// P(U >= u) under H0 for sample sizes m, n, no ties: the counts of U are the coefficients of
// the Gaussian binomial [m+n choose m](q) = prod_{i=1..m} (1 - q^{n+i}) / (1 - q^i).
long double exact_upper_tail(std::size_t m, std::size_t n, double u) {
  if (m > n) std::swap(m, n);
  const std::size_t top = m * n;
  std::vector<long double> c(top + 1, 0.0L);
  c[0] = 1;
  for (std::size_t i = 1; i <= m; ++i) {
    // Dividing by (1 - q^i) first keeps every intermediate coefficient non-negative.
    for (std::size_t j = i; j <= top; ++j) c[j] += c[j - i];
    const std::size_t k = n + i;
    for (std::size_t j = top; j >= k; --j) {
      c[j] -= c[j - k];
      if (j == k) break;
    }
  }
  long double total = 0, tail = 0;
  for (std::size_t j = 0; j <= top; ++j) {
    total += c[j];
    if (static_cast<double>(j) >= u) tail += c[j];
  }
  return tail / total;
}

}  // namespace

MannWhitney mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n1 = x.size(), n2 = y.size(), n = n1 + n2;
  MannWhitney r;
  if (n1 == 0 || n2 == 0) return r;
  // Mid-ranks over the pooled sample.
  std::vector<std::pair<double, int>> all;
  all.reserve(n);
  for (double v : x) all.emplace_back(v, 0);
  for (double v : y) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double r1 = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && all[j].first == all[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k) {
      if (all[k].second == 0) r1 += rank;
    }
    if (t > 1) ties = true, tie_term += t * t * t - t;
    i = j;
  }
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2), dn = static_cast<double>(n);
  r.u = r1 - d1 * (d1 + 1) / 2;
  const double u = std::max(r.u, d1 * d2 - r.u);
  r.exact = (n1 <= 8 || n2 <= 8) && !ties;
  if (r.exact) {
    r.p = static_cast<double>(2 * exact_upper_tail(n1, n2, u));
  } else {
    const double mu = d1 * d2 / 2;
    const double s = std::sqrt(d1 * d2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1))));
    if (s == 0) {
      r.p = 1;
    } else {
      const double z = (u - mu - 0.5) / s;
      r.p = std::erfc(z / std::sqrt(2.0));  // 2 * normal survival function at z
    }
  }
  r.p = std::clamp(r.p, 0.0, 1.0);
  return r;
}

namespace {

struct Cusum {
  double range = 0;       // max |S_i|: Taylor's max S - min S is nearly the same for a shifted
                          // series and its rotations, which costs power on short series
  std::size_t split = 0;  // first index after the largest |S|
};

Cusum cusum(const double* x, std::size_t n) {
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<double>(n);
  double s = 0, best = -1;
  Cusum c;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    s += x[i] - mean;
    if (std::fabs(s) > best) best = std::fabs(s), c.split = i + 1;
  }
  c.range = std::max(best, 0.0);
  return c;
}

void segment(const std::vector<double>& x, std::size_t begin, std::size_t end, double alpha, double min_shift,
             int permutations, std::size_t min_segment, std::mt19937_64& rng, std::vector<ChangePoint>& out) {
  const std::size_t n = end - begin;
  if (n < 2 * min_segment) return;
  const Cusum observed = cusum(x.data() + begin, n);
  const std::size_t split = begin + observed.split;
  if (observed.range <= 0 || split - begin < min_segment || end - split < min_segment) return;
  std::vector<double> shuffled(x.begin() + static_cast<std::ptrdiff_t>(begin), x.begin() + static_cast<std::ptrdiff_t>(end));
  int at_least = 0;
  for (int p = 0; p < permutations; ++p) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    if (cusum(shuffled.data(), n).range >= observed.range - 1e-12 * std::fabs(observed.range)) ++at_least;
  }
  const double pvalue = (1.0 + at_least) / (1.0 + permutations);
  auto mean = [&](std::size_t a, std::size_t b) {
    return std::accumulate(x.begin() + static_cast<std::ptrdiff_t>(a), x.begin() + static_cast<std::ptrdiff_t>(b), 0.0) /
           static_cast<double>(b - a);
  };
  const double before = mean(begin, split), after = mean(split, end);
  const double scale = std::max(std::fabs(before), std::fabs(after));
  if (pvalue >= alpha || scale == 0 || std::fabs(after - before) / scale < min_shift) return;
  out.push_back({split, pvalue, before, after});
  segment(x, begin, split, alpha, min_shift, permutations, min_segment, rng, out);
  segment(x, split, end, alpha, min_shift, permutations, min_segment, rng, out);
}

}  // namespace

std::vector<ChangePoint> cusum_change_points(const std::vector<double>& x, double alpha, double min_shift,
                                             int permutations, std::size_t min_segment, std::uint64_t seed) {
  std::vector<ChangePoint> out;
  for (double v : x) {
    if (!std::isfinite(v)) return out;
  }
  std::mt19937_64 rng(seed);
  segment(x, 0, x.size(), alpha, min_shift, permutations, std::max<std::size_t>(1, min_segment), rng, out);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  // Before/after of neighbouring points refer to the segments they were found in; recompute
  // them over the final segmentation so the table reads level to level.
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::size_t a = i == 0 ? 0 : out[i - 1].index, b = out[i].index;
    const std::size_t c = i + 1 < out.size() ? out[i + 1].index : x.size();
    out[i].before = std::accumulate(x.begin() + static_cast<std::ptrdiff_t>(a), x.begin() + static_cast<std::ptrdiff_t>(b), 0.0) /
                    static_cast<double>(b - a);
    out[i].after = std::accumulate(x.begin() + static_cast<std::ptrdiff_t>(b), x.begin() + static_cast<std::ptrdiff_t>(c), 0.0) /
                   static_cast<double>(c - b);
  }
  return out;
}

}  // namespace gpubench::reports
