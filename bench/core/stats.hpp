#pragma once
// Summary statistics of timing samples.
#include <cstddef>
#include <vector>

namespace gpubench {

struct SampleStats {
  std::size_t count = 0;
  double mean = 0, median = 0, min = 0, max = 0;
  double stddev = 0;     // sample standard deviation (n - 1); 0 for fewer than 2 samples
  double rel_noise = 0;  // stddev / mean; 0 when mean is 0
  double p90 = 0, p99 = 0;  // percentiles (see percentile)
};

SampleStats summarize(std::vector<double> samples);

// The p-th percentile (0 <= p <= 100) of ascending `sorted` samples, interpolated linearly
// between the two nearest ranks: rank (n - 1) x p / 100 from 0, as numpy.percentile's default
// ("linear", Hyndman and Fan's type 7). p50 is the median; p100 the maximum. 0 when empty.
double percentile_of_sorted(const std::vector<double>& sorted, double p);

}  // namespace gpubench
