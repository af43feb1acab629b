#include "team.hpp"

#include <algorithm>
#include <numeric>

namespace gpubench {

double team_max(Team& team, double value, const std::string& step) {
  const std::vector<double> all = team.all_gather(value, step);
  return *std::max_element(all.begin(), all.end());
}

double team_sum(Team& team, double value, const std::string& step) {
  const std::vector<double> all = team.all_gather(value, step);
  return std::accumulate(all.begin(), all.end(), 0.0);
}

}  // namespace gpubench
