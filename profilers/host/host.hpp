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

#include "bench/core/host_load.hpp"
#include "bench/core/instrument.hpp"

namespace gpubench::profilers {

// The host figures (statm, CPU percent, the outside load) are bench/core/host_load.hpp's, shared
// with soak's sampler; named here as before.
using ::gpubench::cpu_percent;
using ::gpubench::MachineCpuTicks;
using ::gpubench::outside_load;
using ::gpubench::OutsideLoad;
using ::gpubench::parse_proc_stat_cpu;
using ::gpubench::parse_statm_resident;

// Also recorded per case, in the profile's "host" object: other_cpu_pct and steal_pct (above),
// and cpu_clock_mhz, the effective clock of the measuring thread (cycles / task clock through
// perf_event_open), or cpu_clock: "unavailable: ..." where the machine has no cycle counter
// (most virtual machines).
std::unique_ptr<Instrument> make_host_instrument(double interval_ms);

}  // namespace gpubench::profilers
