#pragma once
// Host figures read from /proc: this process's resident memory and CPU use, and the load that
// was not this process's (other processes, the hypervisor's steal). Plain functions over the
// files' text, shared by the host instrument (profilers/host) and soak's sampler (bench/soak),
// which therefore need not reach into each other.
#include <cstdint>
#include <optional>
#include <string>

namespace gpubench {

// Resident bytes from the text of /proc/self/statm ("size resident shared ..." in pages).
std::optional<std::uint64_t> parse_statm_resident(const std::string& statm, std::uint64_t page_bytes);

// CPU utilization in percent of one core: (user + system CPU seconds) / wall seconds * 100
// (a process keeping 4 cores busy shows 400).
double cpu_percent(double user_s, double system_s, double wall_s);

// The machine's CPU time from the "cpu " line of /proc/stat (USER_HZ ticks): busy (user, nice,
// system, irq, softirq) and steal (taken by the hypervisor for other guests).
struct MachineCpuTicks {
  std::uint64_t busy = 0, steal = 0;
};
std::optional<MachineCpuTicks> parse_proc_stat_cpu(const std::string& text);

// The load that was not this process's while a case was timed (issue 27: two identical CPU runs
// here differed by 26-41% with nothing of ours running): other processes' CPU time and steal
// time in % of the machine's CPUs over the wall time. `own_s`: this process's CPU seconds.
struct OutsideLoad {
  double other_cpu_pct = 0, steal_pct = 0;
};
OutsideLoad outside_load(const MachineCpuTicks& before, const MachineCpuTicks& after, double ticks_per_s, double own_s,
                         double wall_s, int cpus);

}  // namespace gpubench
