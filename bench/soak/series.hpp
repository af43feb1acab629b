#pragma once
// A soak's time series: one Sample per device (and load) per sample interval. Plain data, so the
// rules (rules.hpp) are pure functions that tests feed with made-up series. Optional fields are
// the ones a device or driver may not report; they stay empty rather than hold a guess.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/nvml.hpp"

namespace gpubench::soak {

struct Sample {
  double t_s = 0;         // seconds since the soak started, at the end of this interval
  double interval_s = 0;  // the interval's length (the last one may be short)
  std::string phase;      // the phase's label (a sweep's setting), empty for a plain soak
  std::string device;     // "cpu", "cuda:0"
  std::string load;       // gemm, memory, train (mixed: the load that ran in this interval)
  // Throughput of the load over the interval's timed batches (work / time in those batches);
  // empty when no batch finished inside the interval.
  std::optional<double> rate;
  std::string unit;       // TFLOP/s, TOP/s, GB/s, tokens/s, samples/s
  std::int64_t runs = 0;  // runs of the load's work finished in the interval
  double busy_s = 0;      // seconds spent in those runs' timed batches (rate = runs x work / busy_s)
  int verifications = 0;  // answers checked against the reference in the interval
  int mismatches = 0;     // of which wrong
  std::string mismatch_detail;  // the first wrong one: what was expected and what came back
  std::string error;            // the load stopped on this device: why (an exception's text)
  // NVML (GPUs)
  std::optional<double> sm_clock_mhz, memory_clock_mhz, temperature_c, memory_temperature_c, fan_pct;
  std::optional<double> power_w, power_limit_w, gpu_utilization_pct;
  std::optional<std::uint64_t> clocks_event_reasons;
  std::optional<std::uint64_t> ecc_corrected, ecc_uncorrected;
  std::optional<std::uint64_t> retired_pages, remapped_rows_corrected, remapped_rows_uncorrected;
  std::optional<bool> row_remap_failure;
  std::optional<std::uint64_t> pcie_replays;
  std::vector<std::uint64_t> xids;  // XID events NVML reported during the interval
  // Host (the CPU device; also recorded beside GPUs): this process's CPU use in % of one core,
  // resident memory, and the 1-minute load average.
  std::optional<double> cpu_pct, rss_bytes, load_avg_1m;
  // The load that was not this process's over the interval, in % of the machine's CPUs (other
  // processes' CPU time; the hypervisor's steal time): a drop that coincides with it is named.
  std::optional<double> other_cpu_pct, steal_pct;
};

nlohmann::ordered_json to_json(const Sample& s);
Sample sample_from_json(const nlohmann::ordered_json& j);  // the inverse (reports, tests)

// Throttle reasons that the rules count as a problem: not the power cap (a GPU at its power
// limit under full load is expected to hold its clocks there) but slowdowns that mean heat,
// an external power brake or a hardware protection (NVML clock event reason bits).
constexpr std::uint64_t kBadThrottleMask = nvml::kClocksEventHwSlowdown | nvml::kClocksEventSwThermalSlowdown |
                                           nvml::kClocksEventHwThermalSlowdown | nvml::kClocksEventHwPowerBrakeSlowdown;
// "hw_slowdown,sw_thermal,..." for the bits of `reasons` in kBadThrottleMask.
std::string bad_throttle_names(std::uint64_t reasons);

}  // namespace gpubench::soak
