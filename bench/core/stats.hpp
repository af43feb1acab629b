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
};

SampleStats summarize(std::vector<double> samples);

}  // namespace gpubench
