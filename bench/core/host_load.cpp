// Host figures from /proc (see host_load.hpp).
#include "bench/core/host_load.hpp"

#include <algorithm>
#include <sstream>

namespace gpubench {

std::optional<std::uint64_t> parse_statm_resident(const std::string& statm, std::uint64_t page_bytes) {
  std::istringstream in(statm);
  std::uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return std::nullopt;
  return resident * page_bytes;
}

double cpu_percent(double user_s, double system_s, double wall_s) {
  return wall_s > 0 ? (user_s + system_s) / wall_s * 100 : 0;
}

std::optional<MachineCpuTicks> parse_proc_stat_cpu(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu ", 0) != 0) continue;
    std::istringstream f(line.substr(4));
    // user nice system idle iowait irq softirq steal (guest time is inside user already)
    std::uint64_t v[8] = {};
    int n = 0;
    while (n < 8 && (f >> v[n])) ++n;
    if (n < 8) return std::nullopt;
    return MachineCpuTicks{v[0] + v[1] + v[2] + v[5] + v[6], v[7]};
  }
  return std::nullopt;
}

OutsideLoad outside_load(const MachineCpuTicks& before, const MachineCpuTicks& after, double ticks_per_s, double own_s,
                         double wall_s, int cpus) {
  OutsideLoad l;
  if (!(wall_s > 0) || cpus <= 0 || !(ticks_per_s > 0) || after.busy < before.busy || after.steal < before.steal) return l;
  const double capacity = wall_s * cpus;
  const double busy_s = static_cast<double>(after.busy - before.busy) / ticks_per_s;
  l.other_cpu_pct = std::clamp((busy_s - own_s) / capacity * 100, 0.0, 100.0);
  l.steal_pct = std::clamp(static_cast<double>(after.steal - before.steal) / ticks_per_s / capacity * 100, 0.0, 100.0);
  return l;
}

}  // namespace gpubench
