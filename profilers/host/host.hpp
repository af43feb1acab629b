#pragma once
// The host sampler: this process's CPU use and resident memory while each case is measured
// (a data-loading pipeline starved by its CPU workers shows here, not on the GPU). CPU time
// comes from getrusage at the start and end of the measure phase (exact, no sampling); resident
// memory from /proc/self/statm, sampled in a background thread. On by default: one thread
// waking every interval costs nothing measurable (perf/instrument_overhead).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "bench/core/instrument.hpp"

namespace gpubench::profilers {

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

// Also recorded per case, in the profile's "host" object: other_cpu_pct and steal_pct (above),
// and cpu_clock_mhz, the effective clock of the measuring thread (cycles / task clock through
// perf_event_open), or cpu_clock: "unavailable: ..." where the machine has no cycle counter
// (most virtual machines).
std::unique_ptr<Instrument> make_host_instrument(double interval_ms);

}  // namespace gpubench::profilers
