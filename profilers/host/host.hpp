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

std::unique_ptr<Instrument> make_host_instrument(double interval_ms);

}  // namespace gpubench::profilers
